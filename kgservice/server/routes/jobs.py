"""Ingest through durable jobs (kb.jobs): 202 + job id, Idempotency-Key, status, SSE events,
listing and cancelling."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Annotated

import anyio
import anyio.to_thread
from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import JSONResponse
from fastapi.sse import EventSourceResponse

from kgservice.jobs.model import JobStatus as JobStatusName
from kgservice.server import ops
from kgservice.server.auth import Principal
from kgservice.server.deps import ADMIN, READER, WRITER
from kgservice.server.models import IngestIn, JobAccepted, JobsPruned, JobsPruneIn
from kgservice.server.routes import ctx_of, sse
from kgservice.stores import causal

router = APIRouter(prefix="/v1", tags=["jobs"])
FINAL = ("done", "failed", "cancelled")
POLL = 0.5  # seconds between job-event polls of one SSE stream
STREAM_MAX = 600.0  # seconds one SSE stream stays open; the client resumes with Last-Event-ID


@router.post("/ingest", status_code=202, response_model=JobAccepted)
def ingest(body: IngestIn, request: Request, who: Principal = Depends(WRITER),
           idempotency_key: Annotated[str | None, Header(max_length=200)] = None) -> JobAccepted:
    """Queue text (LLM extraction) or unit notation (parsed now: errors are 422 naming line:column).
    The same Idempotency-Key from the same user returns the existing job."""
    sc = ctx_of(request)
    payload = ops.validate_ingest(sc.kb, body, who)
    job = sc.kb.jobs.submit("ingest", payload, who.user, idempotency_key)
    return ops.job_accepted(job, who)


@router.get("/jobs")
def jobs(request: Request, who: Principal = Depends(WRITER),
         status: Annotated[JobStatusName | None, Query(description="only jobs in this status")] = None,
         limit: Annotated[int, Query(ge=1, le=1000)] = 100,
         user: Annotated[str | None, Query(description="admins: only this user's jobs")] = None) -> JSONResponse:
    """Jobs newest first: your own (admins: everyone's, or one user's with `user`), optionally
    of one status (queued, running, done, failed, cancelled)."""
    found = ops.list_jobs(ctx_of(request).kb, who, status=status, limit=limit, user=user)
    return JSONResponse({"jobs": [ops.job_dict(j, ctx_of(request).settings) for j in found], "count": len(found)})


@router.post("/jobs/prune", response_model=JobsPruned, dependencies=[Depends(ADMIN)])
def prune(body: JobsPruneIn, request: Request) -> JobsPruned:
    """Delete finished jobs (done, failed, cancelled) last changed more than `older_than_days`
    days ago, with their events (`kg jobs prune --older-than DAYS`); queued and running jobs
    are kept."""
    return JobsPruned(pruned=ctx_of(request).kb.jobs.prune(body.older_than_days),
                      older_than_days=body.older_than_days)


@router.post("/jobs/{job_id}/cancel")
def cancel(job_id: str, request: Request, who: Principal = Depends(WRITER)) -> JSONResponse:
    """Cancel a job you submitted (admins: any job). Queued: `cancelled` at once, never run.
    Running: `cancel_requested` (best effort: the worker stops if it has not started storing;
    an ingest already being stored completes and its events say so). Finished: 409."""
    job = ops.cancel_job(ctx_of(request).kb, job_id, who)
    return JSONResponse(ops.job_dict(job, ctx_of(request).settings))


@router.get("/jobs/{job_id}")
def job(job_id: str, request: Request, who: Principal = Depends(READER)) -> JSONResponse:
    """A job you submitted (admins: any job): status, attempts, error, result. A finished job's
    result carries the bookmark of its writes (``result.bookmark``, also the X-KG-Bookmark
    header): send it back and the next read on any server sees what the job stored."""
    found = ops.visible_job(ctx_of(request).kb, job_id, who)
    causal.pass_on((found.result or {}).get("bookmark"))
    return JSONResponse(ops.job_dict(found, ctx_of(request).settings))


@router.get("/jobs/{job_id}/events", response_model=None,
            responses={200: {"content": {"text/event-stream": {}}, "description": "SSE `status` events, then `end`"}})
async def job_events(job_id: str, request: Request, who: Principal = Depends(READER),
                     last_event_id: Annotated[str | None, Header()] = None) -> EventSourceResponse:
    """SSE `status` events (id = the event's seq) until the job is done or failed; reconnect
    with `Last-Event-ID` to resume after the last event seen."""
    sc = ctx_of(request)
    await anyio.to_thread.run_sync(ops.visible_job, sc.kb, job_id, who)  # 404 before the stream starts
    try:
        after = int(last_event_id) if last_event_id else 0
    except ValueError:
        after = 0
    jobs = sc.kb.jobs

    async def stream() -> AsyncIterator[bytes]:
        nonlocal after
        t0 = time.monotonic()
        while True:
            events = await anyio.to_thread.run_sync(jobs.events, job_id, after)
            for e in events:
                after = max(after, int(e.seq))
                yield sse("status", ops.job_dict(e, sc.settings), id=str(e.seq))
            current = await anyio.to_thread.run_sync(jobs.get, job_id)
            if current is None or current.status in FINAL:
                yield sse("end", {"job_id": job_id, "status": None if current is None else current.status})
                return
            if time.monotonic() - t0 > STREAM_MAX or await request.is_disconnected():
                return
            await anyio.sleep(POLL)

    return EventSourceResponse(stream())

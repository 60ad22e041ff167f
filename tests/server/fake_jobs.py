"""FAKE job queue for the server tests only — NOT the product's queue.

The durable queue (``kb.jobs``: ``:KgJob`` nodes, ``kg worker``) is built separately; the
server is written against its agreed interface (submit / get / events; Job and JobEvent
fields), and this in-memory fake implements just that interface so the routes and tools can
be tested before the real queue lands. ``run_all`` stands in for a worker: it ingests each
queued job through the real library and records the events a worker would.
"""

from __future__ import annotations

import itertools
import threading
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel

from kgservice.errors import InputError


class FakeJob(BaseModel):
    id: str
    kind: str
    status: Literal["queued", "running", "done", "failed"]
    user: str
    created_at: str
    updated_at: str
    attempts: int = 0
    error: str | None = None
    result: dict[str, Any] | None = None


class FakeJobEvent(BaseModel):
    seq: int
    job_id: str
    at: str
    status: str
    message: str


class FakeIdempotencyConflict(InputError):
    http_status = 409


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class FakeJobQueue:
    def __init__(self) -> None:
        self.jobs: dict[str, FakeJob] = {}
        self.payloads: dict[str, dict[str, Any]] = {}
        self.log: list[FakeJobEvent] = []
        self.idem: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def _event(self, job: FakeJob, message: str) -> None:
        self.log.append(FakeJobEvent(seq=len(self.log) + 1, job_id=job.id, at=_now(), status=job.status,
                                     message=message))

    def submit(self, kind: str, payload: dict[str, Any], user: str, idempotency_key: str | None) -> FakeJob:
        with self._lock:
            if idempotency_key is not None:
                prev = self.idem.get((user, idempotency_key))
                if prev is not None:
                    if prev[1] != payload:
                        raise FakeIdempotencyConflict("Idempotency-Key reused for a different request")
                    return self.jobs[prev[0]]
            now = _now()
            job = FakeJob(id=f"job-{next(self._ids)}", kind=kind, status="queued", user=user, created_at=now,
                          updated_at=now)
            self.jobs[job.id] = job
            self.payloads[job.id] = payload
            if idempotency_key is not None:
                self.idem[(user, idempotency_key)] = (job.id, payload)
            self._event(job, "queued")
            return job

    def get(self, job_id: str) -> FakeJob | None:
        return self.jobs.get(job_id)

    def events(self, job_id: str, after: int = 0) -> list[FakeJobEvent]:
        return [e for e in self.log if e.job_id == job_id and e.seq > after]

    def run_all(self, kb: Any) -> None:
        from kgservice.notation import parse_units

        for job in list(self.jobs.values()):
            if job.status != "queued":
                continue
            job.status, job.attempts, job.updated_at = "running", job.attempts + 1, _now()
            self._event(job, "running")
            payload = self.payloads[job.id]
            try:
                units = parse_units(payload["units"], kb.lexicon, doc=payload.get("doc"))
                report = kb.ingest_units(units)
                job.status, job.result = "done", {"units_added": report.units_added}
            except Exception as exc:  # noqa: BLE001 - a worker records every failure
                job.status, job.error = "failed", str(exc)
            job.updated_at = _now()
            self._event(job, job.status)

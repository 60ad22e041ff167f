"""The job queue on Neo4j: ``(:KgJob)`` nodes, one Cypher file per operation (``cypher/jobs_*``).

Jobs live in the same database as the graph, so they survive restarts of every server and
worker (graphiti#1177 lost its in-memory queue). Times are the server's clock
(``timestamp()``), so leases mean the same to workers on different machines. Every state
change locks the job node and then re-checks it (docs/SERVICE.md §3).
"""

from __future__ import annotations

import json
import random
import time
import uuid
from datetime import datetime, timezone
from typing import Any

from kgservice.jobs.model import Job, JobEvent
from kgservice.jobs.queue import LEASE_LOST, JobQueue, submitted_message

CLAIM_TRIES = 50  # a claim that lost the race to another worker tries the next job
PRUNE_BATCH = 5000  # jobs deleted per transaction by prune


def _dt(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, timezone.utc)


def _job(p: dict[str, Any], with_payload: bool = True) -> Job:
    return Job(id=p["id"], kind=p["kind"], status=p["status"], user=p["user"], created_at=_dt(p["created_ms"]),
               updated_at=_dt(p["updated_ms"]), attempts=p.get("attempts", 0), error=p.get("error"),
               result=json.loads(p["result"]) if p.get("result") else None,
               max_attempts=p.get("max_attempts", 1), owner=p.get("owner"), lease_until=_dt(p.get("lease_until")),
               idempotency_key=p.get("idempotency_key"), input_sha256=p.get("input_sha256", ""),
               cancel_requested=bool(p.get("cancel_requested") or False),
               payload=json.loads(p["payload"]) if with_payload and p.get("payload") else None)


class Neo4jJobQueue(JobQueue):
    backend = "neo4j"

    def __init__(self, store: Any, **kw: Any):
        """``store``: the knowledge base's :class:`~kgservice.stores.neo4j.Neo4jStore`
        (its named reads and writes; the schema it applies holds the job constraints)."""
        super().__init__(**kw)
        self.store = store

    def _write(self, name: str, **params: Any) -> list[dict[str, Any]]:
        return self.store.write(name, **params)

    # -- submitting and reading ------------------------------------------------------------
    def _submit(self, kind: str, payload: dict[str, Any], user: str, key: str | None,
                digest: str) -> tuple[Job, bool]:
        job_id = uuid.uuid4().hex
        idem = f"key\x1f{user}\x1f{key}" if key is not None else f"job\x1f{job_id}"
        (row,) = self._write("jobs_submit", idem=idem, id=job_id, kind=kind, user=user, key=key,
                             payload=json.dumps(payload, ensure_ascii=False), sha=digest,
                             max_attempts=self.max_attempts, message=submitted_message(user))
        return _job(row["job"]), bool(row["created"])

    def get(self, job_id: str) -> Job | None:
        rows = self.store.read("jobs_get", id=job_id)
        return _job(dict(rows[0]["job"])) if rows else None

    def events(self, job_id: str, after: int = 0) -> list[JobEvent]:
        rows = self.store.read("jobs_get", id=job_id)
        if not rows:
            return []
        p = rows[0]["job"]
        evs = zip(p.get("ev_status") or [], p.get("ev_msg") or [], p.get("ev_at") or [])
        return [JobEvent(seq=i, job_id=job_id, at=_dt(at), status=st, message=msg)
                for i, (st, msg, at) in enumerate(evs, 1) if i > after]

    def _list(self, user: str | None, status: str | None, limit: int) -> list[Job]:
        return [_job(dict(r["job"]), with_payload=False)
                for r in self.store.read("jobs_list", user=user, status=status, limit=int(limit))]

    def _cancel(self, job_id: str, by: str) -> tuple[str, Job]:
        rows = self._write("jobs_cancel", id=job_id, by=by)
        if not rows:
            raise KeyError(job_id)
        return rows[0]["outcome"], _job(rows[0]["job"], with_payload=False)

    def _prune(self, age_s: float) -> int:
        total = 0
        while True:  # in bounded transactions: a year of jobs is not one delete
            n = int(self._write("jobs_prune", age_ms=int(age_s * 1000), batch=PRUNE_BATCH)[0]["pruned"])
            total += n
            if n < PRUNE_BATCH:
                return total

    # -- the worker side --------------------------------------------------------------------
    def _reap(self) -> int:
        self._write("jobs_cancel_expired")
        return int(self._write("jobs_reap", message=LEASE_LOST)[0]["failed"])

    def _claim(self, worker_id: str, lease_s: float) -> Job | None:
        for _ in range(CLAIM_TRIES):
            rows = self._write("jobs_claim", worker=worker_id, lease_ms=int(lease_s * 1000))
            if rows:
                return _job(rows[0]["job"])
            if not self.store.read("jobs_claimable")[0]["n"]:
                return None
            time.sleep(random.uniform(0, 0.01))  # lost the race for the oldest job: try the next one
        return None

    def heartbeat(self, job_id: str, worker_id: str, lease_s: float) -> bool:
        return bool(self._write("jobs_heartbeat", id=job_id, worker=worker_id,
                                lease_ms=int(float(lease_s) * 1000))[0]["ok"])

    def progress(self, job_id: str, worker_id: str, message: str) -> bool:
        return bool(self._write("jobs_progress", id=job_id, worker=worker_id, message=message)[0]["ok"])

    def _finish(self, job_id: str, worker_id: str, status: str, *, result: dict[str, Any] | None,
                error: str | None, message: str | None = None) -> bool:
        return bool(self._write("jobs_finish", id=job_id, worker=worker_id, status=status,
                                result=json.dumps(result, ensure_ascii=False) if result is not None else None,
                                error=error, message=message or error or status)[0]["ok"])

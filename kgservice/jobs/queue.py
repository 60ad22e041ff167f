"""What every job store does the same way: check, deduplicate, count; the backends store.

The claim protocol (one job, one lease holder at a time) is the backends' part: Neo4j
locks then re-checks the job node (docs/SERVICE.md §3: a naive MATCH … SET claim hands one job to
several workers), SQLite claims inside ``BEGIN IMMEDIATE``. A lease that
expires (a killed worker) makes the job claimable again, up to ``max_attempts`` claims;
then it fails with the reason. :meth:`fail` is terminal: a job whose work failed is
``failed`` with its error, never back in ``queued``.

Cancelling (:meth:`cancel`): a queued job becomes ``cancelled`` at once and is never
claimed. A running job is marked ``cancel_requested`` (best effort): its worker checks the
mark before it starts the work and at every lease renewal, and then stops with the job
``cancelled`` if the work has not stored anything yet; an ingest whose store step has begun
runs to the end (it is one idempotent write, never half-done) and the job ends ``done`` with
an event saying the cancel came too late. A running job whose worker died (lease expired)
with a cancel requested becomes ``cancelled`` instead of running again.
"""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from kgservice.jobs import metrics
from kgservice.jobs.model import (
    STATUSES,
    IdempotencyConflict,
    InvalidJob,
    Job,
    JobEvent,
    JobNotCancellable,
    JobNotFound,
    check_submission,
    payload_sha256,
)
from kgservice.errors import ReadOnlyError

DEFAULT_MAX_ATTEMPTS = 3


def submitted_message(user: str) -> str:
    """A job's first event: who submitted it and, through a server, the request's id (the
    X-Request-ID of the 202: what links a client's report, the server's log and the job)."""
    from kgservice.request_context import current_request_id

    rid = current_request_id()
    return f"submitted by {user}" + (f" (request {rid})" if rid else "")
LEASE_LOST = "lease expired {n} time(s) without the job finishing (worker killed or stuck?)"


class JobQueue(ABC):
    backend = "abstract"

    def __init__(self, *, validate: Callable[[str, dict[str, Any]], None] | None = None,
                 max_attempts: int = DEFAULT_MAX_ATTEMPTS, read_only: bool = False):
        """``validate`` checks a payload more deeply than its shape (the unit notation parses)
        before anything is queued; ``max_attempts`` bounds claims of one job."""
        self.validate = validate
        self.max_attempts = max(1, int(max_attempts))
        self.read_only = read_only

    # -- submitting and reading ------------------------------------------------------------
    def submit(self, kind: str, payload: dict[str, Any], user: str, idempotency_key: str | None = None) -> Job:
        """Queue a job; the same user with the same key gets the same job back (a different
        payload under that key is an :class:`IdempotencyConflict`)."""
        if self.read_only:
            raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); jobs cannot be submitted")
        clean = check_submission(kind, payload, user, idempotency_key)
        if self.validate is not None:
            self.validate(kind, clean)
        digest = payload_sha256(kind, clean)
        job, created = self._submit(kind, clean, user, idempotency_key, digest)
        if not created and job.input_sha256 != digest:
            raise IdempotencyConflict(f"idempotency key {idempotency_key!r} was already used by {user!r} for a "
                                      f"different payload (job {job.id}); use a new key for new work")
        if created:
            metrics.SUBMITTED.labels(kind).inc()
        return job

    @abstractmethod
    def _submit(self, kind: str, payload: dict[str, Any], user: str, key: str | None,
                digest: str) -> tuple[Job, bool]:
        """(the job, whether this call created it)."""

    @abstractmethod
    def get(self, job_id: str) -> Job | None: ...

    @abstractmethod
    def events(self, job_id: str, after: int = 0) -> list[JobEvent]: ...

    def list(self, user: str | None = None, status: str | None = None, limit: int = 100) -> list[Job]:
        """Newest first, optionally one user's and/or one status's (payloads left out)."""
        if status is not None and status not in STATUSES:
            raise InvalidJob(f"status: must be one of {', '.join(STATUSES)}, got {status!r}")
        if not 1 <= int(limit) <= 1000:
            raise InvalidJob(f"limit: must be 1..1000, got {limit}")
        return self._list(user, status, int(limit))

    @abstractmethod
    def _list(self, user: str | None, status: str | None, limit: int) -> builtins.list[Job]: ...

    def cancel(self, job_id: str, by: str) -> Job:
        """Cancel a queued job (now ``cancelled``) or ask a running one to stop (``cancel_requested``,
        best effort: see the module doc). A finished job is :class:`JobNotCancellable`;
        an unknown id returns None from :meth:`get` first (the caller's 404)."""
        if self.read_only:
            raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); jobs cannot be cancelled")
        try:
            outcome, job = self._cancel(job_id, by)
        except KeyError:
            raise JobNotFound(f"no job {job_id!r}") from None
        if outcome == "final":
            raise JobNotCancellable(f"job {job_id} is already {job.status if job else 'finished'}; nothing to cancel")
        if outcome == "cancelled":
            metrics.CANCELLED.inc()
        return job

    @abstractmethod
    def _cancel(self, job_id: str, by: str) -> tuple[str, Job]:
        """('cancelled' | 'requested' | 'final', the job after the change). Lock, then check."""

    def prune(self, older_than_days: float) -> int:
        """Delete finished jobs (done, failed, cancelled) last changed more than
        ``older_than_days`` days ago, with their events; how many. Queued and running jobs are
        never touched. Once pruned, a job's id is 404 and its idempotency key is free again."""
        if self.read_only:
            raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); jobs cannot be pruned")
        days = float(older_than_days)
        if not days >= 0 or days == float("inf"):
            raise InvalidJob(f"older_than_days: must be a number of days >= 0, got {older_than_days!r}")
        return self._prune(days * 86_400)

    @abstractmethod
    def _prune(self, age_s: float) -> int:
        """Delete finished jobs whose last change is more than ``age_s`` seconds old."""

    def cancelled(self, job_id: str, worker_id: str, message: str) -> bool:
        """The worker holding a job stops it as cancelled (it saw ``cancel_requested``)."""
        ok = self._finish(job_id, worker_id, "cancelled", result=None, error=None, message=message)
        if ok:
            metrics.CANCELLED.inc()
        return ok

    # -- the worker side --------------------------------------------------------------------
    def claim(self, worker_id: str, lease_s: float) -> Job | None:
        """The oldest claimable job (queued, or running with an expired lease), now running
        under ``worker_id`` until ``lease_s`` seconds from now; None if there is none."""
        failed = self._reap()
        if failed:
            metrics.FAILED.inc(failed)
        job = self._claim(worker_id, float(lease_s))
        if job is not None:
            metrics.CLAIMED.inc()
        return job

    @abstractmethod
    def _reap(self) -> int:
        """Fail jobs whose lease expired on their last allowed attempt; returns how many."""

    @abstractmethod
    def _claim(self, worker_id: str, lease_s: float) -> Job | None: ...

    @abstractmethod
    def heartbeat(self, job_id: str, worker_id: str, lease_s: float) -> bool:
        """Extend the lease; False if ``worker_id`` no longer holds the job (it was reclaimed)."""

    @abstractmethod
    def progress(self, job_id: str, worker_id: str, message: str) -> bool:
        """Add a progress event to a running job held by ``worker_id``."""

    def complete(self, job_id: str, worker_id: str, result: dict[str, Any]) -> bool:
        """Mark done; False (and nothing changed) if ``worker_id`` no longer holds the job."""
        ok = self._finish(job_id, worker_id, "done", result=dict(result), error=None)
        if ok:
            metrics.DONE.inc()
        return ok

    def fail(self, job_id: str, worker_id: str, error: str) -> bool:
        """Mark failed with ``error`` (terminal); False if ``worker_id`` no longer holds the job."""
        ok = self._finish(job_id, worker_id, "failed", result=None, error=str(error) or "failed")
        if ok:
            metrics.FAILED.inc()
        return ok

    @abstractmethod
    def _finish(self, job_id: str, worker_id: str, status: str, *, result: dict[str, Any] | None,
                error: str | None, message: str | None = None) -> bool: ...

    def close(self) -> None:
        pass

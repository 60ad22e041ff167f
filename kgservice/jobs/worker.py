"""The worker loop behind ``kg worker``: claim, run under a renewed lease, report.

The worker owns its own :class:`~kgservice.service.KnowledgeBase` (never a request's; see
graphiti PR #1392). While a job runs, a heartbeat thread renews the lease every third of
its length; if the renewal is refused (the lease expired and another worker took the job),
this worker's result is refused too — the other run, on an idempotent ingest, stores the
same units. Any exception from the work fails the job with the error text (terminal);
a killed worker's job runs again once its lease expires, up to the queue's max attempts.

Cancelling is best effort (:meth:`JobQueue.cancel`): the worker checks ``cancel_requested``
after claiming (then the job ends ``cancelled`` without running) and at each lease renewal;
an ingest already running is not interrupted (it would have to be undone), so it completes
and the job's events say the cancel came too late.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kgservice.jobs.model import Job
from kgservice.jobs.queue import JobQueue
from kgservice.jobs.run import run_job
from kgservice.outage import is_outage, transient
from kgservice.stores import causal

if TYPE_CHECKING:
    from kgservice.parts import Parts

DEFAULT_LEASE_S = 600.0
DEFAULT_POLL_S = 2.0
OUTAGE_WAIT_MAX_S = 30.0  # longest pause between attempts to reach a store that is down
WORK_RETRIES = 4  # extra runs of a job's work after a transient failure, before the job fails
WORK_RETRY_WAIT_S = 0.5  # first pause; doubled each time


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class Worker:
    def __init__(self, parts: Parts, queue: JobQueue | None = None, *, worker_id: str | None = None,
                 lease_s: float = DEFAULT_LEASE_S, work: Callable[[Parts, Job], dict[str, Any]] = run_job,
                 log: Callable[[str], None] | None = None):
        self.parts = parts
        self.queue = queue if queue is not None else parts.jobs
        self.worker_id = worker_id or default_worker_id()
        self.lease_s = float(lease_s)
        self.work = work
        self.log = log or (lambda msg: None)
        self.stop = threading.Event()

    def run_once(self) -> Job | None:
        """Claim and run at most one job; returns it as it ended (None if none was claimable)."""
        job = self.queue.claim(self.worker_id, self.lease_s)
        if job is None:
            return None
        self.log(f"job {job.id} ({job.kind}, by {job.user}): attempt {job.attempts} of {job.max_attempts}")
        current = self.queue.get(job.id)
        if current is not None and current.cancel_requested:  # cancelled between the claim and now
            self.queue.cancelled(job.id, self.worker_id, "cancelled before the work started")
            self.log(f"job {job.id}: cancelled before the work started")
            return self.queue.get(job.id)
        lost = threading.Event()
        done = threading.Event()
        cancel = threading.Event()  # a cancel was requested while the work ran (seen at a lease renewal)

        def beat() -> None:
            while not done.wait(max(0.05, self.lease_s / 3)):
                try:
                    if not self.queue.heartbeat(job.id, self.worker_id, self.lease_s):
                        lost.set()
                        return
                    now = self.queue.get(job.id)
                    if now is not None and now.cancel_requested:
                        cancel.set()
                except Exception as exc:  # a missed beat is retried on the next tick; the lease is long
                    self.log(f"job {job.id}: heartbeat failed ({type(exc).__name__}: {exc})")

        beater = threading.Thread(target=beat, name=f"kg-lease-{job.id[:8]}", daemon=True)
        beater.start()
        try:
            with causal.capturing() as wrote:
                result = self._work_retrying(job)
            if wrote.bookmark is not None and isinstance(result, dict):
                # a reader presents it (X-KG-Bookmark) to see what the job stored, on any server
                result = {**result, "bookmark": wrote.bookmark}
        except Exception as exc:
            done.set()
            error = f"{type(exc).__name__}: {exc}"
            ok = self.queue.fail(job.id, self.worker_id, error)
            self.log(f"job {job.id}: failed: {error}" + ("" if ok else " (lease lost: not recorded)"))
        else:
            done.set()
            if not cancel.is_set():
                now = self.queue.get(job.id)
                if now is not None and now.cancel_requested:
                    cancel.set()
            if cancel.is_set():  # too late to stop: the ingest is stored (one idempotent write); say so
                self.queue.progress(job.id, self.worker_id, "a cancel was requested while the ingest ran; "
                                                             "it had already been stored, so the job completes")
            ok = self.queue.complete(job.id, self.worker_id, result)
            self.log(f"job {job.id}: done {result}" if ok else
                     f"job {job.id}: finished, but the lease was lost to another worker; its run reports")
        finally:
            done.set()
            beater.join()
        return self.queue.get(job.id)

    def _work_retrying(self, job: Job) -> dict[str, Any]:
        """The job's work, run again after a transient failure (with a doubling pause) before
        the failure is the job's: two workers on one vector directory, or a store restart,
        end in a done job, not a failed one."""
        wait = WORK_RETRY_WAIT_S
        for attempt in range(WORK_RETRIES + 1):
            try:
                return self.work(self.parts, job)
            except Exception as exc:
                if attempt == WORK_RETRIES or not transient(exc) or self.stop.is_set():
                    raise
                self.log(f"job {job.id}: {type(exc).__name__} (transient); trying again in {wait:g}s")
                try:
                    self.queue.progress(job.id, self.worker_id, f"retrying after {type(exc).__name__}")
                except Exception:  # the queue may be down too; the retry matters, not the event
                    pass
                self.stop.wait(wait)
                wait = min(wait * 2, OUTAGE_WAIT_MAX_S)
        raise AssertionError("unreachable")

    def run_forever(self, poll_s: float = DEFAULT_POLL_S, *, drain: bool = False,
                    max_jobs: int | None = None) -> int:
        """Work until stopped (``drain``: until no job is claimable); returns jobs handled.
        While the store is down the worker waits (doubling pauses up to OUTAGE_WAIT_MAX_S,
        one log line per outage) and resumes when it answers again."""
        n = 0
        down_wait = 0.0
        while not self.stop.is_set() and (max_jobs is None or n < max_jobs):
            try:
                job = self.run_once()
            except Exception as exc:
                if not is_outage(exc):
                    raise
                if down_wait == 0.0:
                    self.log(f"the store is not answering ({type(exc).__name__}); waiting for it to come back")
                down_wait = min(max(down_wait * 2, poll_s), OUTAGE_WAIT_MAX_S)
                self.stop.wait(down_wait)
                continue
            if down_wait:
                self.log("the store answers again; claiming jobs")
                down_wait = 0.0
            if job is not None:
                n += 1
                self._prune()
                continue
            if drain:
                break
            self.stop.wait(poll_s)
        return n

    def _prune(self) -> None:
        """Keep the change log bounded (readers further behind clear their caches)."""
        changes = self.parts.caches.changes
        if changes is not None:
            try:
                changes.prune()
            except Exception as exc:  # never fail a job over housekeeping
                self.log(f"change-log pruning skipped ({type(exc).__name__}: {exc})")


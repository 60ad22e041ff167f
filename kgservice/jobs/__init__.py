"""Durable ingest jobs (docs/SERVICE.md §5.5): a queue in the graph store's own backend, claimed
safely by ``kg worker`` under leases that expire, failures visible as status, error and metric.

``kb.jobs`` is the queue of a knowledge base, supplied by its graph store
(``store.job_queue(...)``, implemented under ``kgservice/stores/``).
"""

from __future__ import annotations

from kgservice.jobs.model import (
    IdempotencyConflict,
    InvalidJob,
    Job,
    JobEvent,
    JobNotCancellable,
    JobNotFound,
    JobQueueError,
    JobStatus,
)
from kgservice.jobs.queue import DEFAULT_MAX_ATTEMPTS, JobQueue

__all__ = ["DEFAULT_MAX_ATTEMPTS", "IdempotencyConflict", "InvalidJob", "Job", "JobEvent", "JobQueue",
           "JobNotCancellable", "JobNotFound", "JobQueueError", "JobStatus"]

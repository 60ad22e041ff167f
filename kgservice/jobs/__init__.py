"""Durable ingest jobs (SERVICE.md §5.5): a queue in the graph store's own backend, claimed
safely by ``kg worker`` under leases that expire, failures visible as status, error and metric.

``kb.jobs`` (:func:`open_jobs`) is the queue of a knowledge base: Neo4j ``(:KgJob)`` nodes on
the Neo4j backend, a SQLite file in the data directory on the embedded one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from kgservice.service import KnowledgeBase

__all__ = ["DEFAULT_MAX_ATTEMPTS", "IdempotencyConflict", "InvalidJob", "Job", "JobEvent", "JobQueue",
           "JobNotCancellable", "JobNotFound", "JobQueueError", "JobStatus", "open_jobs"]


def open_jobs(kb: KnowledgeBase, max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> JobQueue:
    """The job queue of a knowledge base; a units payload is parsed at submit time, so bad
    notation is refused before it is queued."""
    from kgservice.jobs.run import validate_payload

    kw = dict(validate=lambda kind, payload: validate_payload(kb, kind, payload), max_attempts=max_attempts,
              read_only=kb.settings.read_only)
    if kb.settings.backend == "neo4j":
        from kgservice.jobs.neo4j_queue import Neo4jJobQueue

        return Neo4jJobQueue(kb.store, **kw)
    from kgservice.jobs.sqlite_queue import JOBS_FILE, SqliteJobQueue

    return SqliteJobQueue(kb.settings.data_dir / JOBS_FILE, **kw)

"""Prometheus counters for jobs (docs/SERVICE.md §5.7), in the default registry that ``/metrics``
and ``kg worker --metrics-port`` serve. Counted where the state changes, so a failed job is
visible as a metric as well as a status."""

from __future__ import annotations

from prometheus_client import Counter

SUBMITTED = Counter("kg_jobs_submitted_total", "Jobs queued (a repeated idempotency key is not counted)", ["kind"])
CLAIMED = Counter("kg_jobs_claimed_total", "Job claims by workers (a reclaim after an expired lease counts again)")
DONE = Counter("kg_jobs_done_total", "Jobs finished successfully")
FAILED = Counter("kg_jobs_failed_total", "Jobs that failed (error, or the lease expired on the last attempt)")
CANCELLED = Counter("kg_jobs_cancelled_total", "Jobs cancelled (queued ones at once, running ones when their worker stops)")

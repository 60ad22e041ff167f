"""``kg worker``: run queued ingest jobs (kgservice/jobs) until stopped; registered by :func:`register`."""

from __future__ import annotations

import signal
from typing import Annotated

import typer


def worker(
    ctx: typer.Context,
    once: Annotated[bool, typer.Option("--once", help="Claim and run at most one job, then exit.")] = False,
    drain: Annotated[bool, typer.Option("--drain", help="Run jobs until none is claimable, then exit.")] = False,
    poll: Annotated[float, typer.Option("--poll", min=0.05, help="Seconds between claims while the queue is empty.")] = 2.0,
    lease: Annotated[float, typer.Option("--lease", min=0.5, help="Lease in seconds, renewed every third of it; "
                                                               "a job whose worker dies runs again when it expires.")] = 600.0,
    worker_id: Annotated[str | None, typer.Option("--worker-id", help="Name in job events (default host:pid:random).")] = None,
    metrics_port: Annotated[int | None, typer.Option("--metrics-port", help="Serve Prometheus metrics "
                                                                             "(kg_jobs_*) on this port.")] = None,
) -> None:
    """Run queued ingest jobs (submitted through the service) with leases; failures are
    recorded on the job (status failed, error) and in kg_jobs_failed_total. Exit 0 when stopped."""
    from kgservice.cli.common import err, knowledge_base, out
    from kgservice.jobs.worker import Worker

    with knowledge_base(ctx) as kb:
        if metrics_port is not None:
            from prometheus_client import start_http_server

            start_http_server(metrics_port, addr="127.0.0.1")
        w = Worker(kb, worker_id=worker_id, lease_s=lease, log=lambda m: err.print(m, highlight=False, markup=False))

        def stop(signum: int, frame: object) -> None:
            w.stop.set()  # finish the job in hand, then exit

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        err.print(f"kg worker {w.worker_id} on {kb.store.backend} ({kb.jobs.backend} queue)", highlight=False,
                  markup=False)
        if kb.store.backend == "embedded":
            err.print("note: on the embedded backend the local vector store admits one process at a time and "
                      "other processes' stores do not see this worker's ingests until they reopen; for a server, "
                      "run the worker inside it", highlight=False, markup=False)
        n = w.run_forever(poll, drain=drain or once, max_jobs=1 if once else None)
        out.print(f"{n} job(s) handled", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("worker")(worker)

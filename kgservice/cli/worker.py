"""``kg worker`` (run queued ingest jobs until stopped) and ``kg jobs`` (list, show, cancel, prune):
registered by :func:`register`. The CLI talks to the job store directly, as the local operator
(every user's jobs, like an admin key); the server's routes and tools apply roles."""

from __future__ import annotations

import signal
from contextlib import ExitStack
from typing import Annotated, Any

import typer

from kgservice.cli.common import err, knowledge_base, out


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
    recorded on the job (status failed, error) and in kg_jobs_failed_total. Exit 0 when stopped.
    Every workspace's jobs, each in its own workspace, unless `kg --workspace NAME worker` names one."""
    from kgservice.cli.common import errors_reported, refuse_beside_server, settings_of
    from kgservice.deployment import require_shared_vectors
    from kgservice.jobs.worker import Worker
    from kgservice.stores.drivers import quiet_driver_logs

    quiet_driver_logs()
    with errors_reported():
        require_shared_vectors(settings_of(ctx), "kg worker")
    refuse_beside_server(ctx, "`kg worker`")  # a server of the whole data directory runs them all
    with errors_reported(), ExitStack() as opened:
        if ctx.obj.get("workspace_named", True):
            kb = opened.enter_context(knowledge_base(ctx))
            runner: Any = Worker(kb.parts, worker_id=worker_id, lease_s=lease, log=_log)
            banner = [f"kg worker {runner.worker_id} on {kb.store.backend} ({kb.jobs.backend} queue)"]
            if kb.store.in_process:
                banner.append("note: on the embedded backend a running `kg serve` runs its own jobs; this worker "
                              "is for jobs queued while no server runs")
        else:
            settings = settings_of(ctx)
            runner = _all_workspaces(settings, lease=lease, worker_id=worker_id)
            opened.callback(runner.close)
            banner = [f"kg worker on {settings.backend}: every workspace's jobs (kg --workspace NAME worker: one)"]
        if metrics_port is not None:
            from prometheus_client import start_http_server

            start_http_server(metrics_port, addr="127.0.0.1")

        def stop(signum: int, frame: object) -> None:
            runner.stop.set()  # finish the job in hand, then exit

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        for line in banner:
            err.print(line, highlight=False, markup=False)
        n = runner.run_forever(poll, drain=drain or once, max_jobs=1 if once else None)
        out.print(f"{n} job(s) handled", highlight=False)


def _log(m: str) -> None:
    err.print(m, highlight=False, markup=False)


def _all_workspaces(settings: Any, *, lease: float, worker_id: str | None) -> Any:
    """``kg worker`` with no workspace named: the jobs of every workspace, each run in its own
    (:class:`kgservice.jobs.workspaces.AllWorkspaces`); a workspace a server owns is skipped."""
    from kgservice.deployment import StoreOwned, refuse_if_served
    from kgservice.jobs.worker import Worker
    from kgservice.jobs.workspaces import AllWorkspaces

    def skip(ws_settings: Any) -> str | None:
        try:
            refuse_if_served(ws_settings, "`kg worker`")
        except StoreOwned:
            return "a kg serve owns it and runs its jobs"
        return None

    def start(ws_settings: Any) -> tuple[Any, Any]:
        from kgservice.service import KnowledgeBase

        kb = KnowledgeBase(ws_settings)
        # one id for every workspace's worker: each workspace has its own queue, so it names one process
        return Worker(kb.parts, worker_id=worker_id, lease_s=lease, log=_log), kb.close

    return AllWorkspaces(settings, start=start, skip=skip, log=_log)


jobs_app = typer.Typer(help="Durable ingest jobs (kg worker runs them): list, show, cancel, prune.", no_args_is_help=True)


@jobs_app.command("list")
def jobs_list(
    ctx: typer.Context,
    status: Annotated[str | None, typer.Option("--status", help="queued | running | done | failed | cancelled")] = None,
    user: Annotated[str | None, typer.Option("--user", help="Only this user's jobs.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=1000)] = 50,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Jobs newest first (every user's), optionally of one status and/or user."""
    from kgservice.cli.common import print_json, print_listing

    with knowledge_base(ctx) as kb:
        found = kb.jobs.list(user=user, status=status, limit=limit)
        if as_json:
            print_json([j.model_dump(mode="json") for j in found])
            return
        print_listing(f"jobs ({len(found)})", ("id", "status", "user", "created", "attempts", "error"),
                      [(j.id, j.status + (" (cancel requested)" if j.cancel_requested and j.status == "running" else ""),
                        j.user, j.created_at.isoformat(timespec="seconds"), str(j.attempts), (j.error or "")[:80])
                       for j in found])


@jobs_app.command("show")
def jobs_show(ctx: typer.Context, job_id: Annotated[str, typer.Argument(help="The job id (`kg jobs list`).")]) -> None:
    """One job with its events, as JSON."""
    from kgservice.cli.common import print_json
    from kgservice.jobs import JobNotFound

    with knowledge_base(ctx) as kb:
        job = kb.jobs.get(job_id)
        if job is None:
            raise JobNotFound(f"no job {job_id!r} (`kg jobs list` shows the ids)")
        print_json({**job.model_dump(mode="json"), "events": [e.model_dump(mode="json") for e in kb.jobs.events(job_id)]})


@jobs_app.command("cancel")
def jobs_cancel(ctx: typer.Context, job_id: Annotated[str, typer.Argument(help="The job id (`kg jobs list`).")]) -> None:
    """Cancel a job: queued -> cancelled now; running -> cancel requested (best effort: the
    worker stops if it has not started storing; an ingest being stored completes). Exit 2 if
    the job is unknown or already finished."""
    import getpass

    with knowledge_base(ctx) as kb:
        job = kb.jobs.cancel(job_id, f"local:{getpass.getuser()}")
        if job.status == "cancelled":
            out.print(f"job {job.id}: cancelled", highlight=False, markup=False)
        else:
            out.print(f"job {job.id}: running; cancel requested (its worker stops at its next check, best effort)",
                      highlight=False, markup=False)


@jobs_app.command("prune")
def jobs_prune(
    ctx: typer.Context,
    older_than: Annotated[float, typer.Option("--older-than", metavar="DAYS", min=0,
                                              help="Delete finished jobs last changed more than DAYS days ago.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Delete finished jobs (done, failed, cancelled) older than DAYS, with their events; queued
    and running jobs are kept. A pruned job's id is no longer found, and its idempotency key may
    be used again. The same as POST /v1/jobs/prune (admin)."""
    from kgservice.cli.common import print_json

    with knowledge_base(ctx) as kb:
        n = kb.jobs.prune(older_than)
        if as_json:
            print_json({"pruned": n, "older_than_days": older_than})
            return
        out.print(f"pruned {n} finished job(s) last changed more than {older_than:g} day(s) ago", highlight=False,
                  markup=False)


def register(app: typer.Typer) -> None:
    app.command("worker")(worker)
    app.add_typer(jobs_app, name="jobs")

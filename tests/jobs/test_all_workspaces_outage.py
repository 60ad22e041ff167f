"""`kg worker` over every workspace (kgservice.jobs.workspaces) when the store stops answering
while it lists the workspaces: it keeps running the workspaces it knows (each worker waits the
outage out itself) instead of exiting (CI: the worker died with "Neo4j ... did not answer")."""

from __future__ import annotations

from kgservice.config import Settings
from kgservice.errors import StoreUnavailable
from kgservice.jobs.workspaces import AllWorkspaces


class OneJobWorker:
    def __init__(self) -> None:
        self.turns = 0
        self.stop = None

    def run_forever(self, poll_s: float, *, drain: bool = False, max_jobs: int | None = None) -> int:
        self.turns += 1
        return 1 if self.turns == 1 else 0  # one job queued, then none


def test_an_outage_while_listing_workspaces_keeps_the_known_ones_running(monkeypatch, tmp_path):
    calls = {"n": 0}

    def listing(settings: Settings) -> list[str]:
        calls["n"] += 1
        if calls["n"] > 1:
            raise StoreUnavailable("Neo4j at bolt://127.0.0.1:1 did not answer after 5 attempts")
        return ["default"]

    monkeypatch.setattr("kgservice.workspaces.list_workspaces", listing)
    worker, said = OneJobWorker(), []
    run = AllWorkspaces(Settings(data_dir=tmp_path), start=lambda s: (worker, lambda: None),
                        skip=lambda s: None, log=said.append)
    assert run.run_forever(0.0, drain=True) == 1  # the job ran; the failed listing did not end the run
    assert worker.turns == 2 and calls["n"] == 2
    assert len(said) == 1 and "unavailable" in said[0]


class GoneWorker:
    """A workspace's worker whose store refuses to open: the workspace was deleted under it."""

    stop = None

    def run_forever(self, poll_s: float, *, drain: bool = False, max_jobs: int | None = None) -> int:
        from kgservice.errors import InputError

        raise InputError("no workspace 'team-b' in this deployment: `kg workspaces list` shows them")


def test_a_workspace_deleted_while_the_worker_runs_it_does_not_stop_the_others(monkeypatch, tmp_path):
    """`kg workspaces delete` is refused only while a server serves the workspace, and a worker is
    no server: a workspace can go between the worker's listing and its claim. The worker used to
    exit 2 on the refusal, leaving every other workspace's jobs unrun."""
    listed = [["default", "team-b"], ["default"]]  # team-b is deleted after the first listing
    monkeypatch.setattr("kgservice.workspaces.list_workspaces",
                        lambda settings: listed.pop(0) if len(listed) > 1 else listed[0])
    keeps, closed, said = OneJobWorker(), [], []

    def start(s: Settings):
        return (keeps if s.workspace == "default" else GoneWorker()), (lambda: closed.append(s.workspace))

    run = AllWorkspaces(Settings(data_dir=tmp_path), start=start, skip=lambda s: None, log=said.append)
    assert run.run_forever(0.0, drain=True) == 1  # default's job ran
    assert keeps.turns == 2 and list(run.workers) == ["default"]
    assert closed == ["team-b"] and any("team-b" in m and "no longer run" in m for m in said)
    run.close()
    assert closed == ["team-b", "default"]

"""``kg worker`` and workspaces (docs/workspaces.md): with no workspace named it runs the queued
jobs of every workspace, each in the workspace it was submitted to; ``kg --workspace NAME worker``
runs that workspace's only, leaving the others queued."""

from __future__ import annotations

from pathlib import Path

from kgservice.config import Settings
from kgservice.service import KnowledgeBase
from tests.processes import env_for, kg


def _queue(data: Path, ws: str, unit: str) -> str:
    with KnowledgeBase(Settings(data_dir=data, embedder="hash:256", workspace=ws)) as kb:
        kb.init()
        return kb.jobs.submit("ingest", {"units": unit, "doc": "q.units"}, "ann", None).id


def _state(data: Path, ws: str, job_id: str, unit: str) -> tuple[str, bool]:
    with KnowledgeBase(Settings(data_dir=data, embedder="hash:256", workspace=ws)) as kb:
        return kb.jobs.get(job_id).status, unit in {u.id for u in kb.store.get_units([unit])}


def test_kg_worker_runs_each_workspace_s_jobs_in_it(tmp_path: Path):
    data = tmp_path / "kg"
    env = env_for(data)
    env.pop("KG_WORKSPACE", None)
    ja, jb = _queue(data, "team-a", "#qa {tea} [contains] {caffeine}\n"), _queue(data, "team-b", "#qb {milk} [contains] {fat}\n")
    jd = _queue(data, "default", "#qd {water} [is a] {liquid}\n")
    only_b = kg(env, "--workspace", "team-b", "worker", "--drain", "--poll", "0.1")
    assert only_b.returncode == 0 and "1 job(s) handled" in only_b.stdout, only_b.stderr
    assert _state(data, "team-a", ja, "qa") == ("queued", False)
    assert _state(data, "team-b", jb, "qb") == ("done", True)
    every = kg(env, "worker", "--drain", "--poll", "0.1")
    assert every.returncode == 0 and "2 job(s) handled" in every.stdout, every.stderr
    assert _state(data, "team-a", ja, "qa") == ("done", True) and _state(data, "default", jd, "qd") == ("done", True)
    # each unit in its own workspace only (B never got A's or default's)
    with KnowledgeBase(Settings(data_dir=data, embedder="hash:256", workspace="team-b")) as b:
        assert [u.id for u in b.store.get_units(["qa", "qd"])] == []

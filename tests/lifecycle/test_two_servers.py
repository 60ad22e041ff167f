"""Two `kg serve` processes and one `kg worker` on one Neo4j: a document forgotten through server
B changes server A's cached answer, while A's cached answer to an unrelated question stays a
hit (the change log names exactly the touched nodes). On the embedded backend one server owns
a data directory, so this needs Neo4j."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.neo4j_helpers import wipe_all
from tests.processes import ask, kg, neo4j_env, new_key, serving, wait_job, working

pytestmark = pytest.mark.neo4j

SMOKING = "#s1 {smoking} [causes] {lung cancer}\n    ()[confidence] (high)\n#s3 {lung cancer} [leads to] {death}\n"
EXTRA = "#s9 {smoking} [causes] {heart disease}\n"
PYTHON = "#p1 {Python} [created by] {Guido van Rossum}\n#p2 {Python} [is a] {programming language}\n"


def test_forget_through_b_changes_a_cached_answer_and_spares_an_unrelated_one(tmp_path: Path,
                                                                              neo4j_connection) -> None:
    wipe_all(neo4j_connection)
    env_a, env_b, env_w = (neo4j_env(tmp_path / name) for name in ("a", "b", "w"))
    team = tmp_path / "team"
    team.mkdir()
    (team / "smoking.units").write_text(SMOKING, "utf-8")
    (team / "heart.units").write_text(EXTRA, "utf-8")
    (team / "python.units").write_text(PYTHON, "utf-8")
    done = kg(env_a, "ingest", str(team))
    assert done.returncode == 0, done.stderr
    h = {"X-API-Key": new_key(env_a, "wanda", "writer")}
    admin = {"X-API-Key": new_key(env_a, "root", "admin")}

    def cache_counts(base: str) -> dict[str, int]:
        """A's cache counters over every cache (GET /v1/admin/cache)."""
        r = httpx.get(base + "/v1/admin/cache", headers=admin, timeout=30)
        assert r.status_code == 200, r.text
        caches = r.json()["caches"].values()
        return {k: sum(c[k] for c in caches) for k in ("hits", "misses")}

    with working(env_w, tmp_path / "worker.log"), serving(env_a) as (a, _, _), serving(env_b) as (b, _, _):
        first = ask(a, "What does smoking cause?", h)
        assert "s9" in first["cited"] and first["llm"]["calls"] > 0, first
        assert {s["doc"] for s in first["sources"]} >= {"heart.units"}
        assert ask(a, "What does smoking cause?", h)["llm"]["calls"] == 0  # A's cache
        python_q = ask(a, "Who created Python?", h)
        assert python_q["cited"] == ["p1"]

        r = httpx.delete(b + "/v1/documents/heart.units", headers=h, timeout=60)
        assert r.status_code == 202, r.text
        job = wait_job(b, r.json()["job_id"], h, log=tmp_path / "worker.log")
        assert job["status"] == "done", job
        assert job["result"]["retracted"] == 1
        # read your writes on A (the write's bookmark): without it A may answer from the previous
        # version while it catches up, marked stale, which would skip the caches checked here
        h = {**h, "X-KG-Bookmark": job["result"]["bookmark"]}

        before = cache_counts(a)
        unrelated = ask(a, "Who created Python?", h)
        assert unrelated["llm"]["calls"] == 0 and unrelated["cited"] == ["p1"]  # still a cache hit
        after = cache_counts(a)
        assert after["hits"] > before["hits"] and after["misses"] == before["misses"], (before, after)
        changed = ask(a, "What does smoking cause?", h)
        assert "s9" not in changed["cited"] and changed["answer"] != first["answer"]
        assert "heart.units" not in {s["doc"] for s in changed["sources"]}

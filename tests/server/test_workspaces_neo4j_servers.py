"""Workspaces on a deployment of two `kg serve` and one `kg worker` sharing the test Neo4j
(docs/workspaces.md): every process serves every workspace, a key of A and B names each by the
`/w/<name>/` prefix, and the workspaces' change-log counters are their own. So an ingest into A,
submitted on server 1 and run by the worker, leaves every cache that B's repeated ask and expand
used on server 2 hitting (server 2's counters for B); the same ingest into B is the control:
server 2's caches for B miss again, so they do depend on that data. Reads after an ingest carry
the job's bookmark, so a server catching up never answers from the previous version (a stale
reply would count no miss). Counts, never timings; the deadlines only bound a hang."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from tests.neo4j_helpers import wipe_all
from tests.processes import kg, neo4j_env, serving, working
from tests.server.test_workspaces_rest import MARKER, ONLY_B, SHARED, workspace_key

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]

QUESTION = {"question": "What does smoking cause?"}
MORE = {"units": "#w9 {smoking} [causes] {cough}\n", "doc": "more.units"}


def test_an_ingest_into_a_leaves_b_s_cached_answers_hits_on_another_server(tmp_path: Path, neo4j_connection):
    wipe_all(neo4j_connection)
    env = neo4j_env(tmp_path / "kg", KG_VECTOR_BACKEND="neo4j")
    env.pop("KG_SINGLE_PROCESS")  # the vectors are shared in Neo4j: a real deployment's setting
    for ws, text in (("team-a", SHARED), ("team-b", SHARED + ONLY_B)):
        (tmp_path / f"{ws}.units").write_text(text, "utf-8")
        done = kg(env, "--workspace", ws, "ingest", str(tmp_path / f"{ws}.units"))
        assert done.returncode == 0, done.stderr
    key = workspace_key(env, "ann", "team-a:admin", "team-b:admin")
    h = {"Authorization": f"Bearer {key}"}
    with serving(env) as (one, _, _), serving(env) as (two, _, _), working(env, tmp_path / "worker.log"):
        def use(bookmark: str | None = None) -> dict[str, tuple[int, int]]:
            hb = {**h, "X-KG-Bookmark": bookmark} if bookmark else h
            r = httpx.post(f"{two}/w/team-b/v1/ask", json=QUESTION, headers=hb, timeout=120)
            assert r.status_code == 200 and r.json().get("stale") is not True, r.text
            r = httpx.post(f"{two}/w/team-b/v1/expand", json={"seeds": ["smoking"]}, headers=hb, timeout=120)
            assert r.status_code == 200, r.text
            stats = httpx.get(f"{two}/w/team-b/v1/admin/cache", headers=h, timeout=60).json()
            return {name: (c["hits"], c["misses"]) for name, c in stats["caches"].items()}

        def ingest(ws: str) -> str:
            r = httpx.post(f"{one}/w/{ws}/v1/ingest", json=MORE, headers=h, timeout=60)
            assert r.status_code == 202, r.text
            status_url = r.json()["status_url"]  # carries the workspace prefix: this key has several
            assert status_url.startswith(f"/w/{ws}/"), status_url
            deadline = time.monotonic() + 300  # only bounds a hang
            while (job := httpx.get(one + status_url, headers=h, timeout=60).json())["status"] not in (
                    "done", "failed", "cancelled"):
                assert time.monotonic() < deadline, (job, (tmp_path / "worker.log").read_text())
                time.sleep(0.2)
            assert job["status"] == "done", job
            return job["result"]["bookmark"]

        first = use()
        again = use()
        used = {n for n in again if again[n][0] > first[n][0]}  # the caches a repeated ask and expand hit
        assert {"expand", "key_nodes"} <= used, (first, again)
        after_a = use(ingest("team-a"))
        assert {n: m for n, (_, m) in after_a.items()} == {n: m for n, (_, m) in again.items()}  # no new miss
        assert {n for n in used if after_a[n][0] > again[n][0]} == used, (again, after_a)  # each hit again
        after_b = use(ingest("team-b"))
        assert any(after_b[n][1] > after_a[n][1] for n in after_b), (after_a, after_b)  # the control
        # and each workspace's graph is its own on either server: B's marker is in B's expansion only
        for base in (one, two):
            seen = {ws: httpx.post(f"{base}/w/{ws}/v1/expand", json={"seeds": ["smoking"]}, headers=h,
                                   timeout=120).text for ws in ("team-a", "team-b")}
            assert MARKER not in seen["team-a"] and MARKER in seen["team-b"], seen


def test_a_workspace_renamed_and_deleted_over_rest_on_neo4j_takes_its_keys_along(tmp_path: Path, neo4j_connection):
    """The admin routes on a Neo4j server serving every workspace: the rename is not refused by
    the server's own heartbeat, the keys of team-a are keys of blue afterwards (so a later
    team-a is not theirs), and deleting blue revokes a key left with no workspace."""
    wipe_all(neo4j_connection)
    env = neo4j_env(tmp_path / "kg", KG_VECTOR_BACKEND="neo4j")
    env.pop("KG_SINGLE_PROCESS")
    (tmp_path / "a.units").write_text(SHARED + ONLY_B, "utf-8")
    assert kg(env, "--workspace", "team-a", "ingest", str(tmp_path / "a.units")).returncode == 0
    root = {"Authorization": f"Bearer {workspace_key(env, 'root', 'default:admin')}"}
    ann = {"Authorization": f"Bearer {workspace_key(env, 'ann', 'team-a:reader')}"}
    with serving(env) as (base, _, _):
        assert httpx.get(f"{base}/v1/units/w2", headers=ann, timeout=60).status_code == 200  # her one workspace
        r = httpx.patch(f"{base}/v1/admin/workspaces/team-a", json={"name": "blue"}, headers=root, timeout=120)
        assert r.status_code == 200, r.text
        moved = httpx.get(f"{base}/v1/units/w2", headers=ann, timeout=60)
        assert moved.status_code == 200 and MARKER in moved.text, moved.text  # her key followed the workspace
        assert httpx.get(f"{base}/w/team-a/v1/units/w2", headers=ann, timeout=60).status_code == 404
        r = httpx.post(f"{base}/v1/admin/workspaces", json={"name": "team-a"}, headers=root, timeout=60)
        assert r.status_code in (200, 201), r.text
        assert httpx.get(f"{base}/w/team-a/v1/stats", headers=ann, timeout=60).status_code == 404  # not hers
        r = httpx.delete(f"{base}/v1/admin/workspaces/blue", headers=root, timeout=120)
        assert r.status_code == 200, r.text
        assert httpx.get(f"{base}/v1/stats", headers=ann, timeout=60).status_code == 401  # revoked: no workspace left
    listed = kg(env, "workspaces", "list", "--json")
    assert json.loads(listed.stdout) == ["default", "team-a"], listed.stderr

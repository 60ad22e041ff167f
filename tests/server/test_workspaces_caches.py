"""Caches per workspace on one server (docs/workspaces.md): the server holds one knowledge base
per workspace, each with its own change-log counter, so an ingest into A, run by the server's
own worker and touching the very node B's cached answers depend on, leaves every one of B's
caches hitting (B's counters, read at /w/team-b/v1/admin/cache); the same ingest into B is the
control: B's caches miss again, so they do depend on that node."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from tests.processes import serving
from tests.server.test_workspaces_rest import _two_workspaces, workspace_key

QUESTION = {"question": "What does smoking cause?"}
MORE = {"units": "#w9 {smoking} [causes] {cough}\n", "doc": "more.units"}


def test_an_ingest_into_a_leaves_b_s_cached_answers_hits_on_one_server(tmp_path: Path):
    env = _two_workspaces(tmp_path)
    key = workspace_key(env, "ann", "team-a:admin", "team-b:admin")
    h = {"Authorization": f"Bearer {key}"}
    with serving(env) as (base, _, _):
        def use() -> dict[str, tuple[int, int]]:
            assert httpx.post(f"{base}/w/team-b/v1/ask", json=QUESTION, headers=h, timeout=120).status_code == 200
            assert httpx.post(f"{base}/w/team-b/v1/expand", json={"seeds": ["smoking"]}, headers=h,
                              timeout=120).status_code == 200
            stats = httpx.get(f"{base}/w/team-b/v1/admin/cache", headers=h, timeout=60).json()
            return {name: (c["hits"], c["misses"]) for name, c in stats["caches"].items()}

        def ingest(ws: str) -> None:
            job = httpx.post(f"{base}/w/{ws}/v1/ingest", json=MORE, headers=h, timeout=60).json()
            deadline = time.monotonic() + 120
            while (status := httpx.get(f"{base}{job['status_url']}", headers=h, timeout=60).json()["status"]) \
                    not in ("done", "failed"):
                assert time.monotonic() < deadline, "the job did not finish"
                time.sleep(0.2)
            assert status == "done"

        first = use()
        again = use()
        used = {n for n in again if again[n][0] > first[n][0]}  # the caches a repeated ask and expand hit
        assert {"expand", "key_nodes"} <= used, (first, again)
        ingest("team-a")
        after_a = use()
        assert {n: m for n, (_, m) in after_a.items()} == {n: m for n, (_, m) in again.items()}  # no new miss
        assert {n for n in used if after_a[n][0] > again[n][0]} == used, (again, after_a)  # each hit again
        ingest("team-b")
        after_b = use()
        assert any(after_b[n][1] > after_a[n][1] for n in after_b), (after_a, after_b)  # the control

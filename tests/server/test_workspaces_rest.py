"""Workspaces over REST (docs/workspaces.md): one `kg serve` serves every workspace of the data
directory, and a key acts only within its own. With keys of A, of B and of A+B:

- every read route, with A's key, is searched for a marker ingested only into B (and B's unit
  ids): none holds it; the same reads with B's key find it, so the check cannot pass by reading
  nothing;
- B's ids, and B itself named in the path (/w/team-b/...), are 404 for A's key, exactly as a
  workspace or id that does not exist (not 403: a key learns nothing of other teams);
- the A+B key must name the workspace (400 otherwise) and sees each workspace's own data under
  its prefix, the same as the one-workspace keys see without one;
- a job runs in the workspace it was submitted to."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from tests.processes import env_for, kg, serving

MARKER = "zqxvortmarker"
SHARED = "#w1 {smoking} [causes] {lung cancer}\n"
ONLY_B = f"#w2 {{smoking}} [causes] {{{MARKER}}}\n#w3 {{{MARKER}}} [part of] {{tobacco smoke}}\n"


def _of_b(text: str) -> bool:
    return MARKER in text or '"w2"' in text or '"w3"' in text


def _reads(base: str, key: str) -> dict[str, httpx.Response]:
    h = {"Authorization": f"Bearer {key}"}
    get = lambda path: httpx.get(base + path, headers=h, timeout=120)  # noqa: E731
    post = lambda path, body: httpx.post(base + path, json=body, headers=h, timeout=120)  # noqa: E731
    return {
        "ask": post("/v1/ask", {"question": "What does smoking cause?"}),
        "search": post("/v1/search", {"query": "smoking", "threshold": 0.0}),
        "expand": post("/v1/expand", {"seeds": ["smoking"]}),
        "spread": post("/v1/expand", {"seeds": ["smoking"], "mode": "spread"}),
        "unit": get("/v1/units/w1"),
        "neighbors": get("/v1/nodes/smoking/neighbors"),
        "stats": get("/v1/stats"),
        "documents": get("/v1/documents"),
        "document": get("/v1/documents/notes.units"),
        "history": get("/v1/history"),
        "jobs": get("/v1/jobs"),
        "results": get("/v1/results"),
        "query": post("/v1/graphify/query", {"question": "smoking"}),
        "explain": post("/v1/graphify/explain", {"node": "smoking"}),
    }


def workspace_key(env: dict[str, str], user: str, *grants: str) -> str:
    done = kg(env, "keys", "create", "--user", user, *[a for g in grants for a in ("--workspace", g)])
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _two_workspaces(tmp_path: Path) -> dict[str, str]:
    env = env_for(tmp_path / "kg")
    for ws, text in (("team-a", SHARED), ("team-b", SHARED + ONLY_B)):
        folder = tmp_path / ws
        folder.mkdir()
        (folder / "notes.units").write_text(text, "utf-8")
        done = kg(env, "--workspace", ws, "ingest", str(folder / "notes.units"))
        assert done.returncode == 0, done.stderr
    return env


def test_one_server_answers_each_key_from_its_own_workspaces_only(tmp_path: Path):
    env = _two_workspaces(tmp_path)
    key_a = workspace_key(env, "ann", "team-a:admin")
    key_b = workspace_key(env, "bob", "team-b:admin")
    key_ab = workspace_key(env, "cy", "team-a:writer", "team-b:reader")
    with serving(env) as (base, _, _):
        seen_a, seen_b = _reads(base, key_a), _reads(base, key_b)
        assert {name: r.status_code for name, r in seen_a.items() if r.status_code != 200} == {}
        assert sorted(name for name, r in seen_a.items() if _of_b(r.text)) == []
        assert {"ask", "expand", "spread", "neighbors", "document", "query", "explain"} <= {
            name for name, r in seen_b.items() if _of_b(r.text)}
        # one document id, two documents: each workspace's own version with its own units
        assert [(d["id"], d["units"]) for d in seen_a["documents"].json()] == [("notes.units", 1)]
        assert [(d["id"], d["units"]) for d in seen_b["documents"].json()] == [("notes.units", 3)]
        assert [c["added"] for c in seen_a["history"].json()] == [1]

        ha, hb, hab = ({"Authorization": f"Bearer {k}"} for k in (key_a, key_b, key_ab))
        get = lambda path, h: httpx.get(base + path, headers=h, timeout=60)  # noqa: E731
        # B's ids are unknown in A (404), as they are to a store that never had them
        assert get("/v1/units/w2", ha).status_code == 404
        assert get("/v1/units/w2", hb).status_code == 200
        assert get(f"/v1/nodes/{MARKER}", ha).status_code == 404
        # B named in the path by A's key: 404, word for word what a workspace nobody made gets
        foreign, missing = get("/w/team-b/v1/stats", ha), get("/w/team-zz/v1/stats", ha)
        assert (foreign.status_code, missing.status_code) == (404, 404)
        assert foreign.json()["detail"].replace("team-b", "X") == missing.json()["detail"].replace("team-zz", "X")
        assert get("/w/team-b/v1/units/w2", ha).status_code == 404
        assert get("/w/team-a/v1/units/w1", ha).status_code == 200  # its own, named, is the same as unnamed

        # the A+B key: several workspaces, so the path names one; each answers from its own
        assert get("/v1/stats", hab).status_code == 400
        ab_a, ab_b = get("/w/team-a/v1/documents", hab), get("/w/team-b/v1/documents", hab)
        assert [(d["id"], d["units"]) for d in ab_a.json()] == [("notes.units", 1)]
        assert [(d["id"], d["units"]) for d in ab_b.json()] == [("notes.units", 3)]
        assert get("/w/team-a/v1/units/w2", hab).status_code == 404
        assert get("/w/team-b/v1/units/w2", hab).status_code == 200
        assert not _of_b(httpx.post(base + "/w/team-a/v1/ask", json={"question": "What does smoking cause?"},
                                    headers=hab, timeout=120).text)
        assert MARKER in httpx.post(base + "/w/team-b/v1/ask", json={"question": "What does smoking cause?"},
                                    headers=hab, timeout=120).text
        # its role is per workspace: writer in A, reader in B
        note = {"units": "#w9 {smoking} [stains] {teeth}\n", "doc": "more.units"}
        assert httpx.post(base + "/w/team-b/v1/ingest", json=note, headers=hab, timeout=60).status_code == 403
        listed = get("/v1/workspaces", hab).json()["workspaces"]
        assert sorted((w["name"], w["role"]) for w in listed) == [("team-a", "writer"), ("team-b", "reader")]
        assert [w["name"] for w in get("/v1/workspaces", ha).json()["workspaces"]] == ["team-a"]

        # a job runs in the workspace it was submitted to
        job = httpx.post(base + "/w/team-a/v1/ingest", json=note, headers=hab, timeout=60)
        assert job.status_code == 202, job.text
        job_id = job.json()["job_id"]
        assert job.json()["status_url"] == f"/w/team-a/v1/jobs/{job_id}"
        deadline = time.monotonic() + 120
        while get(f"/w/team-a/v1/jobs/{job_id}", hab).json()["status"] not in ("done", "failed"):
            assert time.monotonic() < deadline, "the job did not finish"
            time.sleep(0.2)
        assert get(f"/w/team-a/v1/jobs/{job_id}", hab).json()["status"] == "done"
        assert get("/v1/units/w9", ha).status_code == 200
        assert get("/v1/units/w9", hb).status_code == 404
        assert get(f"/v1/jobs/{job_id}", hb).status_code == 404  # B's jobs never held it

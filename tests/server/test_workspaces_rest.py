"""Workspaces over REST (docs/workspaces.md): a `kg serve` opened for workspace A, beside one for
B on the same data directory, answers every read from A only. Each response of A's server is
searched for a marker ingested only into B (and B's unit ids); the same reads on B's server
must find them, so the check cannot pass by reading nothing. A key made in A's workspace is
unknown to B's server (401), and B's ids are 404 in A, as any id A never had."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.processes import env_for, kg, new_key, serving

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
    }


def test_a_server_of_workspace_a_never_answers_from_b(tmp_path: Path):
    data = tmp_path / "kg"
    env_a = env_for(data, KG_WORKSPACE="team-a")
    env_b = env_for(data, KG_WORKSPACE="team-b")
    for env, text in ((env_a, SHARED), (env_b, SHARED + ONLY_B)):
        folder = tmp_path / env["KG_WORKSPACE"]
        folder.mkdir()
        (folder / "notes.units").write_text(text, "utf-8")
        done = kg(env, "ingest", str(folder / "notes.units"))
        assert done.returncode == 0, done.stderr
    key_a, key_b = new_key(env_a, "ann", "admin"), new_key(env_b, "bob", "admin")
    with serving(env_a) as (base_a, _, _), serving(env_b) as (base_b, _, _):
        seen_a, seen_b = _reads(base_a, key_a), _reads(base_b, key_b)
        assert {name: r.status_code for name, r in seen_a.items() if r.status_code != 200} == {}
        assert sorted(name for name, r in seen_a.items() if _of_b(r.text)) == []
        assert {"ask", "expand", "spread", "neighbors", "document"} <= {
            name for name, r in seen_b.items() if _of_b(r.text)}
        # one document id, two documents: each workspace's own version with its own units
        assert [(d["id"], d["units"]) for d in seen_a["documents"].json()] == [("notes.units", 1)]
        assert [(d["id"], d["units"]) for d in seen_b["documents"].json()] == [("notes.units", 3)]
        assert [c["added"] for c in seen_a["history"].json()] == [1]
        ha, hb = {"Authorization": f"Bearer {key_a}"}, {"Authorization": f"Bearer {key_b}"}
        # B's ids are unknown in A (404), as they are to a store that never had them
        assert httpx.get(base_a + "/v1/units/w2", headers=ha, timeout=60).status_code == 404
        assert httpx.get(base_b + "/v1/units/w2", headers=hb, timeout=60).status_code == 200
        assert httpx.get(f"{base_a}/v1/nodes/{MARKER}", headers=ha, timeout=60).status_code == 404
        assert httpx.get(f"{base_b}/v1/nodes/{MARKER}", headers=hb, timeout=60).status_code == 200
        # a key belongs to the workspace it was made in
        assert httpx.get(base_b + "/v1/stats", headers=ha, timeout=60).status_code == 401
        assert httpx.get(base_a + "/v1/stats", headers=hb, timeout=60).status_code == 401

"""The lifecycle over REST and MCP: documents listed and read, replaced, deleted, units retracted,
history, undo; get_unit carries the source lines."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from kgservice.config import Settings
from kgservice.jobs.worker import Worker
from kgservice.service import KnowledgeBase


def run_queued(client: TestClient, kb: KnowledgeBase, reply) -> dict:
    """Run the job a 202 reply queued (the real worker, in-process) and return its result."""
    job_id = reply.json()["job_id"]
    assert Worker(kb).run_once().id == job_id
    job = client.get(reply.json()["status_url"]).json()
    assert job["status"] == "done", job
    return job["result"]


def test_document_routes(tmp_path: Path) -> None:
    from kgservice.server.app import ServeOptions, create_app

    settings = Settings(data_dir=tmp_path / "kg", embedder="hash:64", local_role="admin", allowed_hosts=("testserver",))
    kb = KnowledgeBase(settings)
    app = create_app(settings, ServeOptions(kb=kb, no_auth=True))
    with TestClient(app) as c:
        r = c.put("/v1/documents/notes/a.units", json={"text": "{cat} [is a] {mammal}\n"})
        assert r.status_code == 202, r.text
        assert run_queued(c, kb, r)["added"] == 1
        assert [d["id"] for d in c.get("/v1/documents").json()] == ["notes/a.units"]
        doc = c.get("/v1/documents/notes/a.units").json()
        assert doc["text"] == "{cat} [is a] {mammal}\n"
        uid = next(iter(doc["unit_lines"]))
        unit = c.get(f"/v1/units/{uid}").json()
        assert unit["doc"] == "notes/a.units" and unit["lines"] == [1, 1] and unit["snippet"]
        assert c.get("/v1/documents/nope.md").status_code == 404
        assert c.delete("/v1/documents/nope.md").json()["detail"].startswith("no document 'nope.md'")
        r = c.delete("/v1/documents/notes/a.units")
        assert r.status_code == 202 and run_queued(c, kb, r)["retracted"] == 1
        hist = c.get("/v1/history").json()
        assert [h["kind"] for h in hist] == ["ingest", "forget"]
        assert c.post(f"/v1/changes/{hist[-1]['id']}/undo").status_code == 200
        assert c.post(f"/v1/units/{uid}/retract", json={"reason": "wrong"}).json()["retracted"] == 1
        assert c.post("/v1/changes/c-none/undo").status_code == 404

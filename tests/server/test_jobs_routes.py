"""Listing and cancelling jobs through REST, MCP and the CLI: who sees what, what each state
allows (expected values worked out by hand from the jobs submitted here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from kgservice.jobs.worker import Worker
from tests.server.conftest import auth
from tests.server.test_mcp import call, make, run

UNITS = "#cup{n} {{cup {n}}} [is a] {{vessel}}"


def _submit(kb, user: str, n: int):
    return kb.jobs.submit("ingest", {"units": UNITS.format(n=n), "doc": "t"}, user, None)


def test_rest_list_own_jobs_and_admin_sees_all(client, keys, kb):
    mine = [_submit(kb, "user-writer", 1), _submit(kb, "user-writer", 2)]
    other = _submit(kb, "someone", 3)
    w, a = auth(keys["writer"]), auth(keys["admin"])
    got = client.get("/v1/jobs", headers=w).json()
    assert [j["id"] for j in got["jobs"]] == [mine[1].id, mine[0].id] and got["count"] == 2
    assert "payload" not in got["jobs"][0]
    assert {j["id"] for j in client.get("/v1/jobs", headers=a).json()["jobs"]} >= {other.id, mine[0].id, mine[1].id}
    assert [j["id"] for j in client.get("/v1/jobs?user=someone", headers=a).json()["jobs"]] == [other.id]
    r = client.get("/v1/jobs?user=someone", headers=w)
    assert r.status_code == 403 and "only an admin" in r.json()["detail"]
    assert client.get("/v1/jobs?status=done", headers=w).json()["jobs"] == []
    r = client.get("/v1/jobs?status=finished", headers=w)
    assert r.status_code == 422 and "status" in r.text
    assert client.get("/v1/jobs", headers=auth(keys["reader"])).status_code == 403


def test_rest_cancel(client, keys, kb):
    w, a = auth(keys["writer"]), auth(keys["admin"])
    queued = _submit(kb, "user-writer", 1)
    other = _submit(kb, "someone", 2)
    r = client.post(f"/v1/jobs/{queued.id}/cancel", headers=w)
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    assert client.post(f"/v1/jobs/{queued.id}/cancel", headers=w).status_code == 409
    assert client.post(f"/v1/jobs/{other.id}/cancel", headers=w).status_code == 404  # not confirmed to exist
    assert client.post("/v1/jobs/nope/cancel", headers=a).status_code == 404
    assert Worker(kb).run_once().id == other.id  # the cancelled job was skipped
    assert client.post(f"/v1/jobs/{other.id}/cancel", headers=a).status_code == 409  # done
    running = _submit(kb, "someone", 3)
    kb.jobs.claim("w1", 60)
    r = client.post(f"/v1/jobs/{running.id}/cancel", headers=a)
    assert r.status_code == 200 and r.json()["status"] == "running" and r.json()["cancel_requested"] is True
    statuses = [j["status"] for j in client.get("/v1/jobs?status=cancelled", headers=a).json()["jobs"]]
    assert statuses == ["cancelled"]


def test_mcp_list_and_cancel(settings, kb):
    _, reader = make(settings, kb, "reader")
    r = run(call(reader, "list_jobs", {}))
    assert r.is_error and "403" in r.content[0].text
    _, writer = make(settings, kb, "writer")
    mine = _submit(kb, "local", 1)
    _submit(kb, "someone", 2)
    got = run(call(writer, "list_jobs", {})).structured_content["jobs"]
    assert [j["job_id"] for j in got] == [mine.id] and got[0]["status"] == "queued"
    r = run(call(writer, "cancel_job", {"job_id": mine.id}))
    assert not r.is_error and r.structured_content["status"] == "cancelled"
    r = run(call(writer, "cancel_job", {"job_id": mine.id}))
    assert r.is_error and "already cancelled" in r.content[0].text and "Traceback" not in r.content[0].text
    got = run(call(writer, "list_jobs", {"status": "cancelled"})).structured_content["jobs"]
    assert [j["job_id"] for j in got] == [mine.id]


def test_cli_jobs_list_show_cancel(settings, kb):
    job = _submit(kb, "alice", 1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    env.update(PYTHONPATH=os.getcwd(), KG_DATA_DIR=str(settings.data_dir), KG_EMBEDDER=settings.embedder,
               KG_LLM_MODEL=settings.llm_model, LITELLM_LOCAL_MODEL_COST_MAP="True")
    if settings.backend == "neo4j":
        env.update(KG_BACKEND="neo4j", KG_NEO4J_URI=settings.neo4j_uri)

    def kg(*args):
        return subprocess.run([sys.executable, "-c", "from kgservice.cli.app import main; main()", *args],
                              capture_output=True, text=True, timeout=120, env=env)

    r = kg("jobs", "list", "--json")
    assert r.returncode == 0, r.stderr
    assert [j["id"] for j in json.loads(r.stdout)] == [job.id]
    r = kg("jobs", "cancel", job.id)
    assert r.returncode == 0 and "cancelled" in r.stdout
    r = kg("jobs", "cancel", job.id)
    assert r.returncode == 2 and "already cancelled" in r.stderr
    r = kg("jobs", "show", job.id)
    assert r.returncode == 0 and [e["status"] for e in json.loads(r.stdout)["events"]] == ["queued", "cancelled"]
    assert kg("jobs", "show", "nope").returncode == 2
    r = kg("jobs", "list", "--status", "bogus")
    assert r.returncode == 2 and "status" in r.stderr

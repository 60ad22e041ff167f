"""Submit-time validation: what an ingest job would reject is refused with 422 before anything
is queued, and every error — the framework's own included — carries the envelope's status."""

from __future__ import annotations

import json

import pytest

from tests.server.conftest import auth
from tests.server.test_mcp import call, make, run


def _post_units(client, keys, units: str):
    return client.post("/v1/ingest", json={"units": units, "doc": "t.units"}, headers=auth(keys["writer"]))


@pytest.mark.parametrize("units, needle", [
    ("#nul1 {a\u0000b} [has] {c}\n", "U+0000"),
    ("#esc1 {a} [has] {b\u001bc}\n", "U+001B"),
    ("#s1 {smoking} [causes] {heart disease}\n", "#s1 already exists with different content"),
    ("#new1 {tea} [has] {x}\n#new1 {tea} [has] {y}\n", "already defined on line 1"),
    ("#up1 {tea} [has] {z}\n    ()[supersedes] #nowhere\n", "#nowhere"),
])
def test_what_a_job_would_reject_is_422_and_nothing_is_queued(client, keys, kb, units, needle):
    r = _post_units(client, keys, units)
    body = r.json()
    assert r.status_code == 422, body
    assert body["status"] == 422 and needle in body["detail"], body["detail"]
    assert kb.jobs.list() == []


def test_restating_a_stored_unit_unchanged_is_accepted(client, keys, kb):
    r = _post_units(client, keys, "#s1 {smoking} [causes] {lung cancer}\n    ()[confidence] (high)\n")
    assert r.status_code == 202 and len(kb.jobs.list()) == 1


def test_text_with_nul_is_422(client, keys, kb):
    r = client.post("/v1/ingest", json={"text": "Tea contains\u0000 caffeine.", "doc": "t.txt"},
                    headers=auth(keys["writer"]))
    assert r.status_code == 422 and "U+0000" in r.json()["detail"] and r.json()["status"] == 422
    assert kb.jobs.list() == []


def test_oversized_units_are_422(client, keys, kb):
    r = _post_units(client, keys, "#big {a} [has] {b}\n" * 20_000)
    assert r.status_code == 422 and r.json()["status"] == 422
    assert kb.jobs.list() == []


def test_mcp_ingest_text_refuses_nul_before_queueing(settings, kb):
    _, writer = make(settings, kb, "writer")
    r = run(call(writer, "ingest_text", {"text": "bad \u0000 text"}))
    assert r.is_error and "U+0000" in r.content[0].text
    assert kb.jobs.list() == []


def test_mcp_ingest_text_reply_names_user_and_time(settings, kb):
    _, writer = make(settings, kb, "writer")
    r = run(call(writer, "ingest_text", {"text": "Tea contains caffeine."})).structured_content
    job = kb.jobs.get(r["job_id"])
    assert r["user"] == job.user == "local"
    assert r["created_at"] == job.created_at.isoformat()


@pytest.mark.parametrize("raw, needle", [
    (b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
    (b'{"a":' * 50_000 + b"1" + b"}" * 50_000, "nested too deeply"),
    (b'{"query": "caf\xe9"}', "not valid UTF-8 (byte 0xe9"),
])
def test_unparseable_bodies_use_the_envelope(client, keys, raw, needle):
    r = client.post("/v1/search", content=raw, headers={**auth(keys["reader"]), "content-type": "application/json"})
    body = r.json()
    assert r.status_code == 422 and body["status"] == 422 and needle in body["detail"], body


@pytest.mark.parametrize("route, role, raw, where", [
    ("/v1/search", "reader", b'{"query": tobacco}', "Expecting value at line 1, column 11 (character offset 10)"),
    ("/v1/ingest", "writer", b'{"units": "#a {b} [c] {d}",\n  "doc": }',
     "Expecting value at line 2, column 10 (character offset 37)"),
    ("/v1/graphify/query", "reader", '{"question": "吸烟" "x"}'.encode(),
     "Expecting ',' delimiter at line 1, column 19 (character offset 18)"),  # characters, not bytes
    ("/v1/admin/keys", "admin", b'{"user": "bob", "role": "reader"', "Expecting ',' delimiter at line 1, column 33"),
])
def test_malformed_json_names_the_problem_and_where(client, keys, kb, route, role, raw, where):
    """Not "body.9: JSON decode error" (a field named 9?): the body is not JSON, at line:column."""
    r = client.post(route, content=raw, headers={**auth(keys[role]), "content-type": "application/json"})
    body = r.json()
    assert r.status_code == 422 and body["status"] == 422, body
    assert body["detail"].startswith("request body: not valid JSON: ") and where in body["detail"], body["detail"]
    assert body["errors"] == [{"type": "json_invalid", "loc": ["body"], "msg": body["detail"]}]
    assert kb.jobs.list() == []


def test_framework_refusals_carry_status(client, keys):
    r = client.post("/v1/ingest", json={"units": "#n1 {a} [has] {b}"}, headers=auth(keys["reader"]))
    assert r.status_code == 403 and r.json()["status"] == 403 and "writer" in r.json()["detail"]
    r = client.get("/v1/stats")
    assert r.status_code == 401 and r.json()["status"] == 401
    assert json.loads(r.content)["detail"]

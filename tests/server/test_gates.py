"""The gates and error codes: 401 / 403 / 404 / 409 / 413 / 421 / 422 / 429, revocation on the
next request, --no-auth only on loopback, and keys never in logs."""

from __future__ import annotations

import logging

import pytest
from fastapi.testclient import TestClient

from kgservice.config import ConfigError
from kgservice.jobs.worker import Worker
from kgservice.server import ServeOptions, create_app
from kgservice.server.middleware import host_allowed
from tests.server.conftest import BASE, auth, make_settings


def test_both_headers_and_bad_keys(client, keys):
    k = keys["reader"]
    assert client.get("/v1/stats", headers={"Authorization": f"Bearer {k}"}).status_code == 200
    assert client.get("/v1/stats", headers={"X-API-Key": k}).status_code == 200
    assert client.get("/v1/stats", headers={"Authorization": f"Basic {k}"}).status_code == 401
    forged = k[:-1] + ("A" if k[-1] != "A" else "B")  # right key id, wrong secret
    r = client.get("/v1/stats", headers=auth(forged))
    assert r.status_code == 401 and r.json()["detail"] == "invalid or revoked API key"
    assert client.get("/v1/stats", headers=auth("not-a-key")).status_code == 401


def test_revocation_takes_effect_on_the_next_request(client, keys):
    victim = client.post("/v1/admin/keys", json={"user": "dave", "role": "writer"}, headers=auth(keys["admin"]))
    assert victim.status_code == 201
    new = victim.json()
    assert new["key"].startswith("kg_" + new["key_id"] + "_")
    assert client.get("/v1/stats", headers=auth(new["key"])).status_code == 200
    listed = client.get("/v1/admin/keys", headers=auth(keys["admin"])).json()
    assert {"dave"} <= {k["user"] for k in listed} and all("key" not in k and "sha256" not in k for k in listed)
    r = client.delete(f"/v1/admin/keys/{new['key_id']}", headers=auth(keys["admin"]))
    assert r.status_code == 200 and r.json()["revoked_at"]
    assert client.get("/v1/stats", headers=auth(new["key"])).status_code == 401
    assert client.delete("/v1/admin/keys/nosuchid", headers=auth(keys["admin"])).status_code == 404


def test_body_limit_413_before_reading(tmp_path, kb):
    app = create_app(make_settings(tmp_path, max_body=2000), ServeOptions(kb=kb))
    with TestClient(app, base_url=BASE) as c:
        key = app.state.ctx.keys().create("w", "writer")[0]
        big = {"text": "x" * 5000}
        r = c.post("/v1/ingest", json=big, headers=auth(key))
        assert r.status_code == 413 and "2000" in r.json()["detail"]

        def chunks():  # no Content-Length: counted while streaming
            for _ in range(10):
                yield b"y" * 500

        r = c.post("/v1/ingest", content=chunks(), headers={**auth(key), "content-type": "application/json"})
        assert r.status_code == 413
        # refused before authentication work and before any job: nothing queued
        assert kb.jobs.list() == []


def test_malformed_json_and_fields_are_422_naming_them(client, keys):
    h = {**auth(keys["reader"]), "content-type": "application/json"}
    r = client.post("/v1/ask", content=b'{"question": ', headers=h)
    assert r.status_code == 422 and "json" in r.text.lower()
    r = client.post("/v1/ask", json={"max_rounds": 2}, headers=auth(keys["reader"]))
    assert r.status_code == 422 and "body.question" in r.json()["detail"]
    r = client.post("/v1/ask", json={"question": "x", "max_rounds": 99}, headers=auth(keys["reader"]))
    assert r.status_code == 422 and "body.max_rounds" in r.json()["detail"]
    r = client.post("/v1/search", json={"query": "x", "topk": 3}, headers=auth(keys["reader"]))
    assert r.status_code == 422 and "body.topk" in r.json()["detail"]  # misspelt field: named, not ignored
    r = client.post("/v1/ingest", json={"text": "a", "units": "b"}, headers=auth(keys["writer"]))
    assert r.status_code == 422 and "exactly one" in r.json()["detail"]


def test_bad_unit_notation_is_422_with_line_and_column_and_nothing_queued(client, keys, kb):
    r = client.post("/v1/ingest", json={"units": "#x1 {a} [is a] {b}\n#x2 {c} [d]", "doc": "mine.units"},
                    headers=auth(keys["writer"]))
    assert r.status_code == 422
    assert "mine.units:2:" in r.json()["detail"] and "user-writer" not in r.json()["detail"]
    assert kb.jobs.list() == []


def test_unknown_unit_node_job_404(client, keys):
    h = auth(keys["reader"])
    assert client.get("/v1/units/nope", headers=h).status_code == 404
    r = client.get("/v1/nodes/no such node", headers=h)
    assert r.status_code == 404 and "no such node" in r.json()["detail"]
    assert client.post("/v1/expand", json={"seeds": ["smoking", "zzz"]}, headers=h).status_code == 404
    assert client.get("/v1/jobs/job-999", headers=h).status_code == 404
    r = client.post("/v1/graphify/explain", json={"node": "qqqqqq"}, headers=h)
    assert r.status_code == 404 and "qqqqqq" in r.json()["detail"]


def test_reader_cannot_write(client, keys):
    r = client.post("/v1/ingest", json={"units": "#n1 {tea} [contains] {caffeine}"}, headers=auth(keys["reader"]))
    assert r.status_code == 403 and "writer" in r.json()["detail"]


def test_ingest_202_idempotency_and_job_events(client, keys, kb):
    h = {**auth(keys["writer"]), "Idempotency-Key": "k-1"}
    body = {"units": "#n1 {tea} [contains] {caffeine}", "doc": "tea.units"}
    r1 = client.post("/v1/ingest", json=body, headers=h)
    assert r1.status_code == 202
    job_id = r1.json()["job_id"]
    assert r1.json()["status_url"] == f"/v1/jobs/{job_id}"
    assert client.post("/v1/ingest", json=body, headers=h).json()["job_id"] == job_id  # same key, same job
    r3 = client.post("/v1/ingest", json={**body, "doc": "other.units"}, headers=h)
    assert r3.status_code == 409
    assert [j.id for j in kb.jobs.list()] == [job_id]
    assert Worker(kb).run_once().id == job_id  # the real queue and worker, in-process
    job = client.get(f"/v1/jobs/{job_id}", headers=auth(keys["writer"])).json()
    assert job["status"] == "done" and job["user"] == "user-writer" and job["result"]["units_added"] == 1
    # another reader does not see it; an admin does
    assert client.get(f"/v1/jobs/{job_id}", headers=auth(keys["reader"])).status_code == 404
    assert client.get(f"/v1/jobs/{job_id}", headers=auth(keys["admin"])).status_code == 200
    with client.stream("GET", f"/v1/jobs/{job_id}/events", headers=auth(keys["writer"])) as s:
        assert s.headers["content-type"].startswith("text/event-stream")
        text = "".join(s.iter_text())
    statuses = [line.split('"status": "')[1].split('"')[0] for line in text.splitlines() if line.startswith("data:")
                and '"seq"' in line]
    assert statuses == ["queued", "running", "done"]
    assert "event: end" in text
    with client.stream("GET", f"/v1/jobs/{job_id}/events", headers={**auth(keys["writer"]), "Last-Event-ID": "2"}) as s:
        resumed = "".join(s.iter_text())
    assert "id: 1\n" not in resumed and "id: 3\n" in resumed
    # the unit is really in the graph now
    unit = client.get("/v1/units/n1", headers=auth(keys["reader"])).json()
    assert unit["subject"] == "tea" and unit["doc"] == "user-writer/tea.units"  # the writer, recorded


def test_rate_limit_429_with_retry_after(tmp_path, kb):
    app = create_app(make_settings(tmp_path, rate_limit=0.5, rate_burst=3), ServeOptions(kb=kb))
    with TestClient(app, base_url=BASE) as c:
        key = app.state.ctx.keys().create("r", "reader")[0]
        codes = [c.get("/v1/stats", headers=auth(key)).status_code for _ in range(5)]
        assert codes[:3] == [200, 200, 200] and codes[3] == 429
        r = c.get("/v1/stats", headers=auth(key))
        assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
        other = app.state.ctx.keys().create("r2", "reader")[0]
        assert c.get("/v1/stats", headers=auth(other)).status_code == 200  # per key
        assert c.get("/livez").status_code == 200  # health is not limited


def test_hosts_from_config(tmp_path, kb):
    app = create_app(make_settings(tmp_path, allowed_hosts=("127.0.0.1", "kg.internal:8080", "*.corp.example")),
                     ServeOptions(kb=kb))
    with TestClient(app, base_url=BASE) as c:
        assert c.get("/livez", headers={"Host": "kg.internal:8080"}).status_code == 200
        assert c.get("/livez", headers={"Host": "api.corp.example"}).status_code == 200
        r = c.get("/livez", headers={"Host": "kg.internal:9999"})
        assert r.status_code == 421 and "KG_ALLOWED_HOSTS" in r.json()["detail"]
        assert c.get("/livez", headers={"Host": "evil.example"}).status_code == 421
        assert c.get("/livez", headers={"Origin": "http://evil.example"}).status_code == 403


@pytest.mark.parametrize("host,allowed,ok", [
    ("localhost:8080", ["localhost"], True), ("localhost", ["localhost:8080"], False),
    ("[::1]:80", ["[::1]"], True), ("a.b.c", ["*.b.c"], True), ("b.c", ["*.b.c"], False),
    ("x:1", ["x:*"], True), ("anything", ["*"], True), ("", ["localhost"], False)])
def test_host_patterns(host, allowed, ok):
    assert host_allowed(host, allowed) is ok


def test_no_auth_only_on_loopback(tmp_path, kb):
    with pytest.raises(ConfigError, match="loopback"):
        create_app(make_settings(tmp_path), ServeOptions(host="0.0.0.0", no_auth=True, kb=kb))
    app = create_app(make_settings(tmp_path, local_role="reader"), ServeOptions(host="127.0.0.1", no_auth=True, kb=kb))
    with TestClient(app, base_url=BASE) as c:
        assert c.get("/v1/stats").status_code == 200
        assert c.post("/v1/ingest", json={"units": "#n1 {a} [is a] {b}"}).status_code == 403


def test_keys_never_logged(client, keys, caplog, capfd):
    caplog.set_level(logging.DEBUG)
    for k in keys.values():
        client.get("/v1/stats", headers=auth(k))
        client.get("/v1/stats", headers=auth(k[:-2] + "zz"))
        client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                  "params": {"name": "ingest_text", "arguments": {"text": "x"}}},
                    headers={**auth(k), "Accept": "application/json, text/event-stream"})
    captured = capfd.readouterr()
    everything = caplog.text + captured.out + captured.err
    for k in keys.values():
        secret = k.split("_")[2]
        assert secret not in everything


def test_metrics_count_refusals(client, keys):
    client.get("/v1/stats")
    client.get("/v1/stats", headers=auth(keys["reader"]))
    text = client.get("/metrics", headers=auth(keys["reader"])).text
    assert 'kg_http_requests_total{code="200",route="/v1/stats"} 1.0' in text
    assert 'kg_auth_events_total{event="auth_failed"} 1.0' in text

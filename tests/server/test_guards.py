"""Server guards: a read-only server saves no results; the last admin key cannot revoke itself."""

from __future__ import annotations

from fastapi.testclient import TestClient

from kgservice.server import ServeOptions, create_app
from tests.server.conftest import BASE, auth, make_settings


def test_read_only_server_refuses_saving_a_result(tmp_path, kb):
    settings = make_settings(tmp_path, read_only=True)
    application = create_app(settings, ServeOptions(kb=kb))
    key = kb.key_store().create("w", "writer")[0]  # the kb itself is writable: keys made beside it
    with TestClient(application, base_url=BASE) as c:
        r = c.post("/v1/results", json={"question": "q", "answer": "a", "nodes": ["smoking"]}, headers=auth(key))
    assert r.status_code == 403, r.text
    assert "read-only" in r.json()["detail"]
    memory = tmp_path / "kg" / "graphify-out" / "memory"
    assert not memory.exists() or not any(memory.iterdir())
    assert kb.saved_results() == []


def test_the_only_admin_key_cannot_revoke_itself(client, app):
    store = app.state.ctx.keys()
    key, rec = store.create("boss", "admin")
    r = client.delete(f"/v1/admin/keys/{rec.key_id}", headers=auth(key))
    assert r.status_code == 409 and "only admin key" in r.json()["detail"]
    other, rec2 = store.create("boss2", "admin")
    assert client.delete(f"/v1/admin/keys/{rec.key_id}", headers=auth(other)).status_code == 200

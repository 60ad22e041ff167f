"""No absolute server path leaves the server except to an admin who asks for it (W09b): a
document's `root` (the folder `kg sync` mirrors it from), the unauthenticated /readyz, the admin's
Doctor page, error envelopes and MCP replies. The data directory here is a temporary folder whose
absolute path (and resolved path) must not appear in any reply but the one an admin asked for."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from kgservice.server import ServeOptions, create_app
from kgservice.service import KnowledgeBase
from tests.server.conftest import BASE, auth, make_settings
from tests.server.test_web_gate import signed_in


def leaks(text: str, *paths: Path) -> list[str]:
    """The absolute forms of ``paths`` that ``text`` contains."""
    forms = {str(p.absolute()) for p in paths} | {str(p.resolve()) for p in paths}
    return sorted(f for f in forms if f in text)


def synced(tmp_path: Path) -> tuple[Settings, Path]:
    """A knowledge base with one document synced from a folder (its root is that folder)."""
    folder = tmp_path / "notes-folder"
    folder.mkdir()
    (folder / "tea.units").write_text("#t1 {tea} [contains] {caffeine}\n", "utf-8")
    settings = make_settings(tmp_path)
    with KnowledgeBase(settings) as kb:
        kb.sync(folder)
        assert kb.documents()[0].root == str(folder.resolve())  # the library keeps the path
    return settings, folder


def test_documents_name_their_root_only_to_an_admin_who_asks(tmp_path: Path) -> None:
    settings, folder = synced(tmp_path)
    app = create_app(settings, ServeOptions())
    with TestClient(app, base_url=BASE) as c:
        store = app.state.ctx.keys()
        keys = {role: store.create(f"u-{role}", role)[0] for role in ("reader", "writer", "admin")}
        for role, key in keys.items():
            for path in ("/v1/documents", "/v1/documents?paths=true", "/v1/documents/tea.units",
                         "/v1/documents/tea.units?paths=true"):
                r = c.get(path, headers=auth(key))
                assert r.status_code == 200, r.text
                asked = role == "admin" and "paths=true" in path
                if asked:
                    assert str(folder.resolve()) in r.text
                else:
                    assert leaks(r.text, folder, settings.data_dir) == [], (role, path)
                    root = r.json()[0]["root"] if isinstance(r.json(), list) else r.json()["root"]
                    assert root is None


def test_readyz_and_error_envelopes_name_no_server_path(tmp_path: Path) -> None:
    settings, folder = synced(tmp_path)
    app = create_app(settings, ServeOptions(no_auth=True))
    with TestClient(app, base_url=BASE) as c:
        ready = c.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert leaks(ready.text, settings.data_dir) == [], ready.text
        assert ready.json()["vectors"]["location"] == "<data dir>/qdrant"
    # a damaged job queue: the 503 names the file, relative to the data directory
    jobs = settings.data_dir / "jobs.sqlite3"
    jobs.write_bytes(b"not a database at all" * 200)
    writer = settings.with_overrides(local_role="writer")
    app = create_app(writer, ServeOptions(no_auth=True))
    with TestClient(app, base_url=BASE) as c:
        r = c.post("/v1/ingest", json={"units": "#z1 {tea} [has] {milk}"})
        assert r.status_code == 503, r.text
        assert "<data dir>/jobs.sqlite3 is damaged" in r.json()["detail"]
        assert leaks(r.text, settings.data_dir) == []
        ready = c.get("/readyz")
        assert ready.status_code == 503 and "jobs.sqlite3" in ready.json()["checks"]["files"]
        assert leaks(ready.text, settings.data_dir) == [], ready.text


def test_the_doctor_page_shows_server_paths_when_the_admin_asks(tmp_path: Path) -> None:
    settings, folder = synced(tmp_path)
    app = create_app(settings, ServeOptions())
    c = signed_in(app, "admin")
    with c:
        page = c.get("/ui/admin/doctor")
        assert page.status_code == 200, page.text
        # the report is JSON in the page (tojson writes < as \u003c)
        assert leaks(page.text, settings.data_dir) == [] and '"\\u003cdata dir\\u003e/qdrant"' in page.text
        asked = c.get("/ui/admin/doctor?paths=1")
        assert str(settings.data_dir.absolute() / "qdrant") in asked.text


def test_mcp_documents_name_no_root(tmp_path: Path) -> None:
    settings, folder = synced(tmp_path)
    app = create_app(settings, ServeOptions())
    with TestClient(app, base_url=BASE) as c:
        key = app.state.ctx.keys().create("boss", "admin")[0]
        h = {**auth(key), "Accept": "application/json, text/event-stream"}
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        assert c.post("/mcp", json=init, headers=h).status_code == 200
        for tool, args in (("list_documents", {}), ("get_document", {"doc_id": "tea.units"})):
            r = c.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                     "params": {"name": tool, "arguments": args}}, headers=h)
            assert r.status_code == 200, r.text
            assert leaks(r.text, folder, settings.data_dir) == [], (tool, r.text)
            assert '"root": null' in json.dumps(r.json()) or '\\"root\\": null' in json.dumps(r.json())

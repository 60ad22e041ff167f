"""The web page's gate in process (no browser): the page shares the API's rate limits, a
session ends at its expiry and at sign-out, and authenticated pages are never cached."""

from __future__ import annotations

from fastapi.testclient import TestClient

from kgservice.server import ServeOptions, create_app
from tests.server.conftest import BASE, make_settings


def csrf_of(html: str) -> str:
    return html.split('name="csrf-token" content="', 1)[1].split('"', 1)[0]


def signed_in(app, role: str = "reader") -> TestClient:
    key = app.state.ctx.keys().create(f"web-{role}", role)[0]
    c = TestClient(app, base_url=BASE)
    r = c.post("/ui/login", data={"key": key}, follow_redirects=False)
    assert r.status_code == 303 and "kg_session" in r.cookies
    return c


def test_pages_and_page_api_share_the_per_key_rate_limit(tmp_path, kb):
    app = create_app(make_settings(tmp_path, rate_limit=0.01, rate_burst=3), ServeOptions(kb=kb))
    with signed_in(app) as c:
        codes = [c.get("/ui/ask").status_code for _ in range(2)] + [c.get("/ui/v1/stats").status_code]
        assert codes == [200, 200, 200]
        page, api = c.get("/ui/explore"), c.get("/ui/v1/stats")
        assert page.status_code == 429 and int(page.headers["retry-after"]) >= 1
        assert api.status_code == 429
        assert c.get("/ui/static/app.css").status_code == 200  # the static files are not counted


def test_failed_sign_ins_are_limited_per_address(tmp_path, kb):
    app = create_app(make_settings(tmp_path), ServeOptions(kb=kb))
    with TestClient(app, base_url=BASE) as c:
        codes = [c.post("/ui/login", data={"key": "kg_nope_nope"}).status_code for _ in range(25)]
    assert codes[0] == 401 and codes[-1] == 429
    assert "Too many failed sign-ins" in c.post("/ui/login", data={"key": "x"}).text


def test_a_session_ends_at_its_expiry_and_at_sign_out(tmp_path, kb):
    app = create_app(make_settings(tmp_path), ServeOptions(kb=kb))
    with signed_in(app) as c:
        r = c.get("/ui/ask")
        assert r.status_code == 200 and r.headers["cache-control"] == "no-store"
        # expire every session in the store: the cookie no longer signs in
        import sqlite3

        db = sqlite3.connect(_gates(app)[0].sessions.table.path)
        with db:
            assert db.execute("UPDATE sessions SET expires_ms = 0").rowcount == 1
        db.close()
        # the sign-in page then says the session ended (the cookie is dropped: said once)
        assert c.get("/ui/ask", follow_redirects=False).headers["location"] == "/ui/login?ended=1"
        assert c.get("/ui/v1/stats").status_code == 401
        key = app.state.ctx.keys().create("web-again", "reader")[0]
        assert c.post("/ui/login", data={"key": key}, follow_redirects=False).status_code == 303
        csrf = csrf_of(c.get("/ui/ask").text)
        assert c.post("/ui/logout", data={"csrf": "wrong"}).status_code == 403  # sign-out needs the token too
        r = c.post("/ui/logout", data={"csrf": csrf}, follow_redirects=False)
        assert r.status_code == 303 and "kg_session=" in r.headers["set-cookie"] and "Max-Age=0" in r.headers["set-cookie"]


def _gates(app) -> list:
    """The WebGate instance(s) of a built app (the middleware stack is built on first request)."""
    found, node = [], app.middleware_stack
    while node is not None:
        if type(node).__name__ == "WebGate":
            found.append(node)
        node = getattr(node, "app", None)
    return found

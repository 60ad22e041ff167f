"""Every route × {no key, reader, writer, admin}, from a table built from ``app.routes``:
a new route without a role declaration, or without a sample request here, fails the test."""

from __future__ import annotations

import pytest

from kgservice.convert.source import source_of
from kgservice.jobs.worker import Worker
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from starlette.routing import Mount, Route

from kgservice.server.deps import ROLE_ATTR
from tests.server.conftest import BASE, ROLES, auth

# (method, path template) -> (concrete path, JSON body or None). Bodies are valid, so a caller
# with the role gets a success status; the expected role comes from the route itself.
SAMPLES = {
    ("POST", "/v1/ask"): ("/v1/ask", {"question": "What does smoking cause?", "threshold": 0.7}),
    ("POST", "/v1/search"): ("/v1/search", {"query": "smoking"}),
    ("POST", "/v1/expand"): ("/v1/expand", {"seeds": ["smoking"]}),
    ("GET", "/v1/units/{unit_id}"): ("/v1/units/s1", None),
    ("GET", "/v1/nodes/{node_id}"): ("/v1/nodes/smoking", None),
    ("GET", "/v1/nodes/{node_id}/neighbors"): ("/v1/nodes/smoking/neighbors", None),
    ("GET", "/v1/stats"): ("/v1/stats", None),
    ("POST", "/v1/graphify/query"): ("/v1/graphify/query", {"question": "smoking"}),
    ("POST", "/v1/graphify/path"): ("/v1/graphify/path", {"source": "smoking", "target": "death"}),
    ("POST", "/v1/graphify/explain"): ("/v1/graphify/explain", {"node": "smoking"}),
    ("POST", "/v1/results"): ("/v1/results", {"question": "q?", "answer": "a", "outcome": "useful"}),
    ("GET", "/v1/results"): ("/v1/results", None),
    ("POST", "/v1/ingest"): ("/v1/ingest", {"units": "#n1 {tea} [contains] {caffeine}"}),
    ("GET", "/v1/jobs"): ("/v1/jobs?status=done", None),
    ("POST", "/v1/jobs/{job_id}/cancel"): ("/v1/jobs/{queued}/cancel", None),
    ("POST", "/v1/jobs/prune"): ("/v1/jobs/prune", {"older_than_days": 30}),
    ("GET", "/v1/jobs/{job_id}"): ("/v1/jobs/{job}", None),
    ("GET", "/v1/jobs/{job_id}/events"): ("/v1/jobs/{job}/events", None),
    ("POST", "/v1/admin/keys"): ("/v1/admin/keys", {"user": "carol", "role": "reader"}),
    ("GET", "/v1/admin/keys"): ("/v1/admin/keys", None),
    ("DELETE", "/v1/admin/keys/{key_id}"): ("/v1/admin/keys/{victim}", None),
    ("PATCH", "/v1/admin/keys/{key_id}"): ("/v1/admin/keys/{victim}", {"workspaces": {"default": "writer"}}),
    ("GET", "/v1/admin/cache"): ("/v1/admin/cache", None),
    ("POST", "/v1/admin/cache/clear"): ("/v1/admin/cache/clear", None),
    ("GET", "/v1/admin/doctor"): ("/v1/admin/doctor", None),
    ("GET", "/v1/documents"): ("/v1/documents", None),
    ("GET", "/v1/documents/{doc_id:path}"): ("/v1/documents/{doc_get}", None),
    ("GET", "/v1/originals/{doc_id:path}"): ("/v1/originals/{doc_page}", None),
    ("PUT", "/v1/documents/{doc_id:path}"): ("/v1/documents/t/put.units", {"text": "{p} [is a] {q}\n"}),
    ("DELETE", "/v1/documents/{doc_id:path}"): ("/v1/documents/{doc_del}", None),
    ("POST", "/v1/units/{unit_id}/retract"): ("/v1/units/{unit}/retract", {"reason": "wrong"}),
    ("GET", "/v1/history"): ("/v1/history", None),
    ("POST", "/v1/changes/{change_id}/undo"): ("/v1/changes/{change}/undo", None),
    ("GET", "/v1/workspaces"): ("/v1/workspaces", None),
    ("POST", "/v1/admin/workspaces"): ("/v1/admin/workspaces", {"name": "made"}),
    ("PATCH", "/v1/admin/workspaces/{name}"): ("/v1/admin/workspaces/{ws_ren}", {"name": "renamed"}),
    ("DELETE", "/v1/admin/workspaces/{name}"): ("/v1/admin/workspaces/{ws_del}", None),
    ("GET", "/livez"): ("/livez", None),
    ("GET", "/readyz"): ("/readyz", None),
    ("GET", "/metrics"): ("/metrics", None),
}
# FastAPI's own documentation routes: public by design (no data behind them)
DOC_ROUTES = {"/openapi.json"}  # /docs is the web gate's (Swagger UI from the package)
RANK = {None: 0, "reader": 1, "writer": 2, "admin": 3}


def declared_roles(route: APIRoute) -> list:
    found = []
    for dep in route.dependant.dependencies:
        call = dep.call
        if hasattr(call, ROLE_ATTR):
            found.append(getattr(call, ROLE_ATTR))
    return found


def route_table(app) -> list[tuple[str, str, str | None]]:
    table = []
    for route in app.routes:
        if isinstance(route, APIRoute):
            roles = declared_roles(route)
            assert len(roles) == 1, f"{route.path} declares {len(roles)} roles; every route needs exactly one " \
                                    f"of deps.need(role) / deps.public()"
            role = None if roles[0] is None else roles[0].value
            for method in route.methods:
                table.append((method, route.path, role))
        elif isinstance(route, Route):
            assert route.path in DOC_ROUTES, f"plain route {route.path} has no role declaration"
        elif isinstance(route, Mount):
            assert route.path in ("", "/"), f"unexpected mount {route.path}"
        else:
            pytest.fail(f"unknown route type {type(route).__name__}")
    return table


def test_every_route_declares_a_role_and_has_a_sample(app):
    table = route_table(app)
    missing = [(m, p) for m, p, _ in table if (m, p) not in SAMPLES]
    assert not missing, f"routes without a sample request in SAMPLES: {missing}"
    extra = [k for k in SAMPLES if k not in {(m, p) for m, p, _ in table}]
    assert not extra, f"SAMPLES for routes that do not exist: {extra}"
    roles = {(m, p): r for m, p, r in table}
    # the intended policy, written down independently of the code
    assert roles[("GET", "/livez")] is None and roles[("GET", "/readyz")] is None
    assert roles[("GET", "/metrics")] == "reader"
    writes = ("/v1/ingest", "/v1/results", "/v1/jobs", "/v1/jobs/{job_id}/cancel")
    assert all(roles[(m, p)] == "writer" for m, p in roles if p in writes)
    # the lifecycle: changing documents and units is a writer's, undoing a change an admin's
    life_writes = {("PUT", "/v1/documents/{doc_id:path}"), ("DELETE", "/v1/documents/{doc_id:path}"),
                   ("POST", "/v1/units/{unit_id}/retract")}
    life_admin = {("POST", "/v1/changes/{change_id}/undo")}
    assert all(roles[k] == "writer" for k in life_writes) and all(roles[k] == "admin" for k in life_admin)
    assert all(r == "admin" for (m, p), r in roles.items() if p.startswith("/v1/admin"))
    assert roles[("POST", "/v1/jobs/prune")] == "admin"  # deletes everyone's job records
    assert all(r == "reader" for (m, p), r in roles.items()
               if p.startswith("/v1/") and not p.startswith("/v1/admin") and p not in writes
               and (m, p) not in life_writes | life_admin | {("POST", "/v1/jobs/prune")})


@pytest.mark.parametrize("caller", [None, *ROLES])
def test_route_matrix(app, client, keys, kb, caller):
    table = route_table(app)
    job = kb.jobs.submit("ingest", {"units": "#j1 {a} [is a] {b}", "doc": "t"}, f"user-{caller or 'reader'}", None)
    Worker(kb).run_once()  # finished, so its event stream ends
    key = keys.get(caller) if caller else None
    failures = []
    probes = 0
    # documents the lifecycle samples read, delete, retract from and undo (fresh per caller)
    made = {n: kb.ingest_document(f"t/{n}-{caller}.units", f"{{{n}{caller}}} [is a] {{thing}}\n")
            for n in ("get", "del", "undo")}
    page = source_of(b"<html><body><p>A web page is a test page.</p></body></html>", "page.html")
    kb.ingest_document(f"t/page-{caller}.html", page.text, source=page)  # a converted document: its original kept
    lifecycle = {"doc_get": f"t/get-{caller}.units", "doc_del": f"t/del-{caller}.units",
                 "doc_page": f"t/page-{caller}.html",
                 "unit": next(iter(kb.document(f"t/get-{caller}.units").unit_lines)), "change": made["undo"].change,
                 "ws_ren": f"ren-{caller or 'none'}", "ws_del": f"del-{caller or 'none'}"}
    from kgservice.workspaces import create_workspace

    for name in (lifecycle["ws_ren"], lifecycle["ws_del"]):  # workspaces to rename and delete
        create_workspace(app.state.ctx.settings, name)
    for method, template, role in sorted(table):
        path, body = SAMPLES[(method, template)]
        victim = app.state.ctx.keys().create("victim", "reader")[1].key_id
        queued = kb.jobs.submit("ingest", {"units": "#j2 {c} [is a] {d}", "doc": "t"},
                                f"user-{caller or 'writer'}", None).id  # a job to cancel (own, or any for admin)
        path = path.format(job=job.id, victim=victim, queued=queued, **lifecycle)
        if caller is None and role is not None:
            # each keyless probe from its own client address: the per-address limit on failed
            # authentications (20, then 2/s) is tested in test_gates, not here
            anon = TestClient(app, base_url=BASE, client=(f"192.0.2.{probes % 250 + 1}", 40000))
            probes += 1
            r = anon.request(method, path, json=body)
        else:
            r = client.request(method, path, json=body, headers=auth(key))
        if role is None:
            expected_ok = True
        elif caller is None:
            expected_ok = False
            if r.status_code != 401 or "www-authenticate" not in r.headers:
                failures.append(f"{method} {path}: no key -> {r.status_code}, expected 401 with WWW-Authenticate")
            continue
        else:
            expected_ok = RANK[caller] >= RANK[role]
        if expected_ok and not 200 <= r.status_code < 300:
            failures.append(f"{method} {path} as {caller}: {r.status_code} {r.text[:200]}")
        if not expected_ok and r.status_code != 403:
            failures.append(f"{method} {path} as {caller}: {r.status_code}, expected 403")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("caller", [None, *ROLES])
def test_mcp_mount_needs_a_key(client, keys, caller):
    key = keys.get(caller) if caller else None
    r = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                    headers={**auth(key), "Accept": "application/json, text/event-stream"})
    if caller is None:
        assert r.status_code == 401
    else:
        assert r.status_code == 200, r.text
        names = {t["name"] for t in r.json()["result"]["tools"]}
        assert {"query_graph", "ask", "ingest_text"} <= names


def test_openapi_lists_every_v1_route_and_docs_are_public(app, client):
    spec = client.get("/openapi.json").json()
    assert client.get("/docs").status_code == 200
    documented = {(m.upper(), p) for p, ops in spec["paths"].items() for m in ops}
    # a path parameter (``{doc_id:path}``: a document id holds slashes) is documented without its converter
    served = {(m, p.replace(":path}", "}")) for m, p, _ in route_table(app) if p.startswith("/v1/")}
    assert served <= documented

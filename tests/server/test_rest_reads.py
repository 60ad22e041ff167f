"""REST reads against the hand-written corpus of conftest (expected values worked out from it)."""

from __future__ import annotations

import json

from kgservice.notation import parse_units
from tests.server.conftest import auth


def test_unit_and_supersession(client, keys, kb):
    kb.ingest_units(parse_units("#v1 {Python 3.12} [is latest release of] {Python}\n"
                                "#v2 {Python 3.13} [is latest release of] {Python}\n    ()[supersedes] #v1",
                                kb.lexicon, doc="rel.units"))
    h = auth(keys["reader"])
    u = client.get("/v1/units/s1", headers=h).json()
    assert u["notation"] == "#s1 {smoking} [causes] {lung cancer}\n    ()[confidence] (high)"
    assert (u["predicate"], u["kind"], u["doc"], u["superseded_by"]) == ("causes", "content", "corpus.units", [])
    assert client.get("/v1/units/v1", headers=h).json()["superseded_by"] == ["v2"]
    assert client.get("/v1/units/%23v2", headers=h).json()["supersedes"] == ["v1"]  # "#v2" works too


def test_node_and_neighbours(client, keys):
    h = auth(keys["reader"])
    assert client.get("/v1/nodes/Smoking", headers=h).json() == {"id": "smoking", "label": "smoking", "kind": "entry"}
    got = client.get("/v1/nodes/smoking/neighbors", headers=h).json()
    rows = {(n["direction"], n["label"], n["predicate"], n["unit_id"]) for n in got["neighbors"]}
    # s1: smoking causes lung cancer; s4: smoking is a tobacco use; s2: 吸烟 同义 smoking (smoking is its argument)
    assert rows == {("out", "lung cancer", "causes", "s1"), ("out", "tobacco use", "is a", "s4"),
                    ("in", "吸烟", "同义", "s2")}
    only = client.get("/v1/nodes/smoking/neighbors", params={"relation": "causes"}, headers=h).json()
    assert [n["unit_id"] for n in only["neighbors"]] == ["s1"] and only["total"] == 1
    assert client.get("/v1/nodes/smoking/neighbors", params={"limit": 1}, headers=h).json()["total"] == 3


def test_search_expand_stats(client, keys):
    h = auth(keys["reader"])
    hits = client.post("/v1/search", json={"query": "smoking", "threshold": 0.9}, headers=h).json()
    assert hits[0]["node_id"] == "smoking" and abs(hits[0]["score"] - 1.0) < 1e-3
    d = client.post("/v1/expand", json={"seeds": ["smoking"]}, headers=h).json()
    assert d["mode"] == "directed" and d["seeds"] == ["smoking"]
    assert {"s1", "s4"} <= {u["id"] for u in d["units"]}
    assert not {"p1", "p2", "c1", "c2"} & {u["id"] for u in d["units"]}  # nothing from other topics
    sp = client.post("/v1/expand", json={"seeds": ["smoking"], "mode": "spread"}, headers=h).json()
    assert sp["ranked"][0]["node"] == "smoking" and sp["ranked"][0]["energy"] >= 1.0  # the seed (1.0) + what flows back
    assert "python" not in {r["node"] for r in sp["ranked"]}
    st = client.get("/v1/stats", headers=h).json()
    assert (st["backend"], st["units"]) == ("embedded", 8)


def test_causal_expand_names_every_hop_with_its_unit(client, keys):
    h = auth(keys["reader"])
    # 吸烟 ≡ smoking -s1-> lung cancer -s3-> death: the chain from the label, in the CLI's shape
    d = client.post("/v1/expand", json={"seeds": ["吸烟"], "mode": "causal"}, headers=h).json()
    assert d["mode"] == "causal" and d["seeds"] == ["吸烟"] and d["hops"] == 3
    assert [[(x["src"], x["dst"], x["unit"]) for x in c["hops"]] for c in d["chains"]] == [
        [("smoking", "lung cancer", "s1"), ("lung cancer", "death", "s3")]]
    one = client.post("/v1/expand", json={"seeds": ["smoking"], "mode": "causal", "max_hops": 1}, headers=h).json()
    assert [[x["unit"] for x in c["hops"]] for c in one["chains"]] == [["s1"]]
    assert client.post("/v1/expand", json={"seeds": ["death"], "mode": "causal"}, headers=h).json()["chains"] == []


def test_ask_json_and_sse(client, keys):
    h = auth(keys["reader"])
    body = {"question": "What does smoking cause?", "threshold": 0.7}
    a = client.post("/v1/ask", json=body, headers=h).json()
    assert a["found"] is True and "s1" in a["cited"] and "lung cancer" in a["answer"]
    # the short answer beside the sentences: the rule-based stand-in gives its first unit's
    # object (s1: smoking causes lung cancer)
    assert a["short_answer"] == "lung cancer"
    assert len(a["rounds"]) >= 1 and a["llm"]["calls"] >= 1
    # one answer shape: every field has the name the library's result (kg ask --json) gives it
    from dataclasses import fields

    from kgservice.pipeline.asking import AskResult

    assert set(a) <= {f.name for f in fields(AskResult)} and {"cited", "llm", "found", "caches"} <= set(a)
    # the store version the answer reflects; fresh (one server: nothing to catch up with)
    assert isinstance(a["as_of_version"], int) and a["stale"] is False
    again = client.post("/v1/ask", json=body, headers=h).json()
    assert again["llm"]["calls"] == 0 and sum(c["hits"] for c in again["caches"].values()) > 0
    assert again["answer"] == a["answer"]
    with client.stream("POST", "/v1/ask", json=body, headers={**h, "Accept": "text/event-stream"}) as s:
        text = "".join(s.iter_text())
    events = [line[7:] for line in text.splitlines() if line.startswith("event: ")]
    assert events[0] == "started" and events[-2:] == ["answer", "done"]
    assert events.count("round") == len(a["rounds"])
    answer = json.loads([line for line in text.splitlines() if line.startswith("data: ")][-2][6:])
    assert answer["cited"] == a["cited"] and answer["short_answer"] == a["short_answer"]
    miss = client.post("/v1/ask", json={"question": "Who painted the Mona Lisa?", "threshold": 0.7}, headers=h).json()
    assert miss["found"] is False and miss["cited"] == []


def test_graphify_text_matches_the_cli_functions(client, keys, app):
    from kgservice.graphify.path import run_path

    h = auth(keys["reader"])
    r = client.post("/v1/graphify/path", json={"source": "smoking", "target": "death"}, headers=h).json()
    g = app.state.ctx.mirror.graph()
    assert r["text"] == run_path(g, "smoking", "death").stdout
    assert r["text"].startswith("Shortest path (2 hops):")
    amb = client.post("/v1/graphify/path", json={"source": "smoking", "target": "smoking"}, headers=h)
    assert amb.status_code == 409 and "same node" in amb.json()["detail"]


def test_graphify_query_is_the_text_of_kg_query(client, keys, app, tmp_path):
    """POST /v1/graphify/query answers what `kg query` (a separate process) prints for the same
    question and options on the same graph.json: kgservice's BFS 3 / DFS 6, not graphify's 2."""
    from tests.processes import env_for, kg

    h = auth(keys["reader"])
    env = env_for(tmp_path / "cli-kg")
    cases = [({"question": "what does smoking cause"}, []),
             ({"question": "what does smoking cause", "dfs": True}, ["--dfs"]),
             ({"question": "cat", "no_expand": True, "budget": 50}, ["--no-expand", "--budget", "50"]),
             ({"question": "where does it lead", "seed": ["smoking"]}, ["--seed", "smoking"])]
    for body, flags in cases:
        r = client.post("/v1/graphify/query", json=body, headers=h)
        assert r.status_code == 200, r.text
        done = kg(env, "query", body["question"], *flags, "--graph", str(app.state.ctx.mirror.path))
        assert done.returncode == r.json()["exit_code"] == 0, done.stderr
        assert r.json()["text"] == done.stdout.rstrip("\n"), body
    assert "BFS depth=3 |" in client.post("/v1/graphify/query", json=cases[0][0], headers=h).json()["text"]


def test_graphify_explain_is_the_text_of_kg_explain(client, keys, app, tmp_path):
    """POST /v1/graphify/explain answers what `kg explain` prints: with its `Same as:` line."""
    from tests.processes import env_for, kg

    h = auth(keys["reader"])
    env = env_for(tmp_path / "cli-kg")
    for body, flags in (({"node": "smoking"}, []), ({"node": "smoking", "all": True}, ["--all"])):
        r = client.post("/v1/graphify/explain", json=body, headers=h)
        assert r.status_code == 200, r.text
        done = kg(env, "explain", body["node"], *flags, "--graph", str(app.state.ctx.mirror.path))
        assert done.returncode == 0, done.stderr
        assert r.json()["text"] == done.stdout.rstrip("\n"), body
        assert "  Same as:   吸烟" in r.json()["text"]


def test_admin_cache_and_doctor(client, keys):
    h = auth(keys["admin"])
    client.post("/v1/ask", json={"question": "What does smoking cause?", "threshold": 0.7}, headers=auth(keys["reader"]))
    stats = client.get("/v1/admin/cache", headers=h).json()
    assert "path" not in stats and stats["caches"]["key_nodes"]["entries"] >= 1
    cleared = client.post("/v1/admin/cache/clear", headers=h).json()["cleared"]
    assert cleared >= 1
    assert client.get("/v1/admin/cache", headers=h).json()["caches"]["key_nodes"]["entries"] == 0
    doc = client.get("/v1/admin/doctor", headers=h).json()
    assert doc["ok"] is True and doc["units"] == 8


def test_sse_ask_sends_each_round_while_the_pipeline_still_runs(client, keys, monkeypatch):
    """The round event reaches the client before the pipeline returns: the fake pipeline
    reports a round, then waits until the client has read it (it would time out if rounds were
    only sent with the answer, as before the per-round hook)."""
    import threading

    from kgservice.server import ops
    from kgservice.server.routes import query

    seen = threading.Event()
    real = ops.ask

    def slow_ask(kb, body, on_round=None, on_stream=None):
        on_round({"round": 1, "mode": "directed", "new_units": ["s1"]})
        assert seen.wait(300), "the round event was not delivered while the pipeline ran"  # bounds a hang only
        return real(kb, body, on_stream=on_stream)

    monkeypatch.setattr(query.ops, "ask", slow_ask)
    h = {**auth(keys["reader"]), "Accept": "text/event-stream"}
    events = []
    with client.stream("POST", "/v1/ask", json={"question": "What does smoking cause?", "threshold": 0.7},
                       headers=h) as s:
        for line in s.iter_lines():
            if line.startswith("event: "):
                events.append(line[7:])
            if line.startswith("data: ") and events[-1:] == ["round"]:
                assert json.loads(line[6:])["new_units"] == ["s1"]
                seen.set()
    assert events[:2] == ["started", "round"] and events[-2:] == ["answer", "done"]


def test_cached_ask_fast_path_matches_the_route_and_is_counted(client, keys, app, monkeypatch):
    """A repeated question is answered by the CachedReplies gate (the route's handler is not
    called) with the route's JSON, counted under /v1/ask; bad bodies and misses still reach
    the route (422 naming the field)."""
    from kgservice.server.routes import query

    h = auth(keys["reader"])
    body = {"question": "What does smoking cause?", "threshold": 0.7}
    client.post("/v1/ask", json=body, headers=h)
    second = client.post("/v1/ask", json=body, headers=h).json()  # 0 LLM calls: admitted to the front
    assert second["llm"]["calls"] == 0

    def not_called(*a, **kw):
        raise AssertionError("the route ran: the fast path missed")

    monkeypatch.setattr(query.ops, "ask", not_called)
    before = client.get("/metrics", headers=h).text
    third = client.post("/v1/ask", json=body, headers=h)
    assert third.status_code == 200 and third.headers["content-type"] == "application/json"
    got = third.json()
    assert {k: v for k, v in got.items() if k != "seconds"} == {k: v for k, v in second.items() if k != "seconds"}
    after = client.get("/metrics", headers=h).text

    def count(text):
        line = next((x for x in text.splitlines()
                     if x.startswith('kg_http_requests_total{code="200",route="/v1/ask"}')), None)
        return float(line.split()[-1]) if line else 0.0

    assert count(after) == count(before) + 1
    bad = client.post("/v1/ask", json={"question": ""}, headers=h)
    assert bad.status_code == 422 and "question" in bad.text
    assert client.post("/v1/ask", json=body).status_code == 401  # the key check stays in front


def test_cached_expand_fast_path_matches_the_route_is_counted_and_follows_the_store(client, keys, app, kb,
                                                                                    monkeypatch):
    """The CachedReplies gate answers expand without the route: a miss computed in a worker
    thread, then a repeat from the in-memory expand cache (``cached``, same JSON, counted
    under /v1/expand with an ``expand`` cache hit). An error gets the app's own handler (404
    naming the seed) without a second computation; a bad body goes to the route (422). An ingest moves the store version: the next expand is recomputed and
    includes the new unit."""
    from kgservice.server.routes import query

    h = auth(keys["reader"])
    body = {"seeds": ["Smoking"], "mode": "directed"}

    def route_ran(*a, **kw):
        raise AssertionError("the route ran: the gate did not answer")

    monkeypatch.setattr(query, "json_of", route_ran)  # only the route serialises with it
    first = client.post("/v1/expand", json=body, headers=h).json()
    assert first["cached"] is False and first["seeds"] == ["smoking"]
    second = client.post("/v1/expand", json=body, headers=h).json()
    assert second["cached"] is True and {**second, "cached": False} == first
    calls = []
    real_expand = query.ops.expand
    monkeypatch.setattr(query.ops, "expand", lambda kb, b: calls.append(b) or real_expand(kb, b))
    missing = client.post("/v1/expand", json={"seeds": ["no such node"]}, headers=h)
    assert missing.status_code == 404 and missing.json()["detail"].startswith("no node 'no such node'")
    assert len(calls) == 1  # answered by the app's 404 handler from the gate, not computed again by the route

    def not_called(*a, **kw):
        raise AssertionError("computed again: the cached expansion was not served")

    monkeypatch.setattr(query.ops, "expand", not_called)
    before = client.get("/metrics", headers=h).text
    third = client.post("/v1/expand", json=body, headers=h)
    assert third.status_code == 200 and third.json() == second
    after = client.get("/metrics", headers=h).text

    def count(text, prefix):
        line = next((x for x in text.splitlines() if x.startswith(prefix)), None)
        return float(line.split()[-1]) if line else 0.0

    for prefix in ('kg_http_requests_total{code="200",route="/v1/expand"}',
                   'kg_cache_requests_total{cache="expand",result="hit"}'):
        assert count(after, prefix) == count(before, prefix) + 1, prefix
    assert client.post("/v1/expand", json={"seeds": []}, headers=h).status_code == 422  # to the route: names seeds
    assert client.post("/v1/expand", json=body).status_code == 401  # the key check stays in front
    monkeypatch.undo()
    stats = client.get("/v1/admin/cache", headers=auth(keys["admin"])).json()["caches"]["expand"]
    assert stats["hits"] >= 2 and stats["misses"] >= 1

    kb.ingest_units(parse_units("#s7 {smoking} [causes] {stained teeth}", kb.lexicon, doc="more.units"))
    fourth = client.post("/v1/expand", json=body, headers=h).json()
    assert fourth["cached"] is False and "s7" in {u["id"] for u in fourth["units"]}


def test_cached_replies_gate_checks_the_route_role(app):
    """The gate answers only callers the route's own role declaration admits: a caller without
    it reaches the route (which refuses it), even when the lookup would have an answer."""
    import asyncio

    from fastapi.routing import APIRoute

    from kgservice.server.auth import Principal, Role
    from kgservice.server.cached_replies import Cached, CachedReplies, role_of
    from kgservice.server.middleware import PRINCIPAL
    from kgservice.server.models import ExpandIn, ExpandOut

    ingest = next(r for r in app.routes if isinstance(r, APIRoute) and r.path == "/v1/ingest")
    assert role_of(ingest) == Role.writer
    reached: list[str] = []

    async def inner(scope, receive, send):
        reached.append(scope[PRINCIPAL].user)
        await send({"type": "http.response.start", "status": 403, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    answer = ExpandOut(mode="directed", seeds=["x"])
    gate = CachedReplies(inner, app.state.ctx, {"/v1/ingest": ingest},
                         cached=(Cached("/v1/ingest", ExpandIn, lambda sc, body: answer),))

    def call(role: Role) -> int:
        sent: list[dict] = []
        scope = {"type": "http", "path": "/v1/ingest", "method": "POST", PRINCIPAL: Principal(role.value, role),
                 "headers": [(b"content-type", b"application/json")]}

        async def receive():
            return {"type": "http.request", "body": b'{"seeds": ["x"]}', "more_body": False}

        async def send(m):
            sent.append(m)

        asyncio.run(gate(scope, receive, send))
        return sent[0]["status"]

    assert call(Role.reader) == 403 and reached == ["reader"]  # not answered by the gate
    assert call(Role.writer) == 200 and reached == ["reader"]  # admitted: the gate answered


def test_graphify_path_json_adds_the_path_as_data_and_keeps_the_text(client, keys, app):
    """format "json" (the Explore page's path) gives the nodes and hops beside the same text; the
    default answer is unchanged (no ``path`` key)."""
    from kgservice.graphify.path import run_path

    h = auth(keys["reader"])
    plain = client.post("/v1/graphify/path", json={"source": "smoking", "target": "death"}, headers=h).json()
    assert set(plain) == {"text", "exit_code", "notes"}
    r = client.post("/v1/graphify/path", json={"source": "smoking", "target": "death", "format": "json"},
                    headers=h).json()
    g = app.state.ctx.mirror.graph()
    res = run_path(g, "smoking", "death")
    assert r["text"] == plain["text"] == res.stdout
    assert [n["id"] for n in r["path"]["nodes"]] == res.nodes and len(res.nodes) == 3
    assert r["path"]["nodes"][0]["label"] == "smoking" and r["path"]["nodes"][-1]["label"] == "death"
    hops = r["path"]["hops"]
    assert [(x["source"], x["target"]) for x in hops] == list(zip(res.nodes, res.nodes[1:]))
    for hop, seg in zip(hops, r["text"].split("\n")[1].split(" --")[1:]):
        assert "/".join(hop["relations"]) in seg
    # each node id is the REST API's node id (the page expands it through /v1/nodes/{id}/neighbors)
    for n in r["path"]["nodes"]:
        assert client.get(f"/v1/nodes/{n['id']}", headers=h).json()["id"] == n["id"]
    # errors stay the route's own: unknown name 404, same node 409; no path: the text, path null
    miss = client.post("/v1/graphify/path", json={"source": "smoking", "target": "zzqx nothing", "format": "json"},
                       headers=h)
    assert miss.status_code == 404 and "zzqx" in miss.json()["detail"]
    amb = client.post("/v1/graphify/path", json={"source": "smoking", "target": "smoking", "format": "json"},
                      headers=h)
    assert amb.status_code == 409
    bad = client.post("/v1/graphify/path", json={"source": "a", "target": "b", "format": "xml"}, headers=h)
    assert bad.status_code == 422

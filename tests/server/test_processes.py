"""Real processes: `kg serve` on a free loopback port with real HTTP and MCP clients, `kg mcp`
over stdio with the mcp SDK's client, and (on the test Neo4j) two servers sharing one key store."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import httpx
import pytest

from tests.neo4j_helpers import wipe_all
from tests.processes import KG, ask, free_port, kg, neo4j_env, new_key, serving, wait_job, working
from tests.server.conftest import CORPUS


def mcp_http(base: str, key: str | None):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    http = httpx2.AsyncClient(headers=headers, timeout=60)
    return http, Client(streamable_http_client(base + "/mcp", http_client=http))


def test_kg_serve_rest_mcp_http_and_shutdown(embedded_env):
    reader, writer = new_key(embedded_env, "rita", "reader"), new_key(embedded_env, "walt", "writer")
    with serving(embedded_env) as (base, proc, log):
        h = {"Authorization": f"Bearer {reader}"}
        stats = httpx.get(base + "/v1/stats", headers=h).json()
        assert stats["backend"] == "embedded" and stats["units"] == 8
        assert httpx.get(base + "/v1/stats").status_code == 401
        assert httpx.get(base + "/livez", headers={"Host": "kg.internal"}).status_code == 200
        assert httpx.get(base + "/livez", headers={"Host": "other.example"}).status_code == 421
        q = httpx.post(base + "/v1/graphify/query", json={"question": "smoking"}, headers=h, timeout=60).json()
        assert "NODE smoking" in q["text"]

        # SSE ask over the socket: started, round(s), answer, done
        events = []
        with httpx.stream("POST", base + "/v1/ask", json={"question": "What does smoking cause?", "threshold": 0.7},
                          headers={**h, "Accept": "text/event-stream"}, timeout=120) as s:
            for line in s.iter_lines():
                if line.startswith("event: "):
                    events.append(line[7:])
                elif line.startswith("data: ") and events[-1] == "answer":
                    answer = json.loads(line[6:])
        assert events[0] == "started" and events[-2:] == ["answer", "done"] and "round" in events
        assert answer["found"] is True and "s1" in answer["cited"]

        async def mcp_checks():
            http, client = mcp_http(base, reader)
            async with http, client as c:
                names = {t.name for t in (await c.list_tools()).tools}
                unit = await c.call_tool("get_unit", {"unit_id": "s1"})
                refused = await c.call_tool("ingest_text", {"text": "Tea contains caffeine."})
                path = await c.call_tool("shortest_path", {"source": "smoking", "target": "death"})
            http, client = mcp_http(base, writer)
            async with http, client as c:
                saved = await c.call_tool("save_result", {"question": "q?", "answer": "a", "outcome": "useful"})
            return names, unit, refused, path, saved

        names, unit, refused, path, saved = asyncio.run(mcp_checks())
        assert {"query_graph", "ask", "ingest_text", "job_status"} <= names
        assert unit.structured_content["subject"] == "smoking"
        assert refused.is_error and "403" in refused.content[0].text
        assert path.content[0].text.startswith("Shortest path (2 hops):")
        assert saved.structured_content["contributor"] == "walt"

        async def no_key():
            http, client = mcp_http(base, None)
            async with http, client as c:
                await c.list_tools()

        with pytest.raises(BaseException):
            asyncio.run(no_key())
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(300) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal after a graceful shutdown
    logged = Path(log.name).read_text()
    assert "kg serve: stopped cleanly" in logged
    assert reader.split("_")[2] not in logged and writer.split("_")[2] not in logged


def test_no_auth_refused_off_loopback(embedded_env):
    done = kg(embedded_env, "serve", "--host", "0.0.0.0", "--port", str(free_port()), "--no-auth")
    assert done.returncode == 2 and "loopback" in done.stderr


def test_kg_mcp_over_stdio(embedded_env):
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=KG[0], args=[*KG[1:], "mcp"], env=embedded_env)

    async def go():
        async with Client(params) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            unit = await c.call_tool("get_unit", {"unit_id": "s3"})
            stats = await c.call_tool("graph_stats", {})
            refused = await c.call_tool("save_result", {"question": "q", "answer": "a"})
            return names, unit, stats, refused

    names, unit, stats, refused = asyncio.run(go())
    assert {"query_graph", "get_node", "ask", "expand"} <= names
    assert unit.structured_content["predicate"] == "leads to"
    assert stats.content[0].text.startswith("Nodes: ")
    assert refused.is_error and "reader" in refused.content[0].text  # stdio default role: reader


@pytest.mark.neo4j
def test_two_servers_share_keys_on_neo4j(tmp_path, neo4j_connection):
    wipe_all(neo4j_connection)
    env_a, env_b = neo4j_env(tmp_path / "a"), neo4j_env(tmp_path / "b")
    (tmp_path / "corpus.units").write_text(CORPUS, "utf-8")
    assert kg(env_a, "ingest", str(tmp_path / "corpus.units")).returncode == 0
    admin = new_key(env_a, "root", "admin")
    listed = json.loads(kg(env_b, "keys", "list", "--json").stdout)  # B's CLI sees the key A's created
    assert [k["user"] for k in listed] == ["root"]
    with serving(env_a) as (a, _, _), serving(env_b) as (b, _, _):
        made = httpx.post(a + "/v1/admin/keys", json={"user": "wanda", "role": "writer"},
                          headers={"X-API-Key": admin}).json()
        assert "key" in made, made
        hw = {"X-API-Key": made["key"]}
        assert httpx.get(b + "/v1/units/s1", headers=hw).json()["subject"] == "smoking"
        assert httpx.get(b + "/v1/admin/keys", headers=hw).status_code == 403
        assert httpx.delete(a + f"/v1/admin/keys/{made['key_id']}", headers={"X-API-Key": admin}).status_code == 200
        assert httpx.get(b + "/v1/units/s1", headers=hw).status_code == 401  # revoked on A, refused by B
    with neo4j_connection.driver.session() as s:
        rows = s.run("MATCH (k:KgApiKey) RETURN k.user AS user, k.sha256 AS sha, k.revoked_at AS revoked").data()
    assert sorted(r["user"] for r in rows) == ["root", "wanda"]
    assert all(len(r["sha"]) == 64 and r["sha"] not in (admin, made["key"]) for r in rows)


@pytest.mark.neo4j
def test_two_servers_and_a_worker_keep_caches_coherent_on_neo4j(tmp_path, neo4j_connection):
    """Issue 15's scenario with real processes: two `kg serve` and one `kg worker` on the test
    Neo4j. Ask on A twice (the second makes no LLM call), ingest through B (a durable job the
    worker runs), A's answer changes, and A's unrelated cached question is still a hit. The
    same for A's cached expand: B's ingest reaches it."""
    wipe_all(neo4j_connection)
    env_a, env_b, env_w = (neo4j_env(tmp_path / name) for name in ("a", "b", "w"))
    (tmp_path / "corpus.units").write_text(CORPUS, "utf-8")
    assert kg(env_a, "ingest", str(tmp_path / "corpus.units")).returncode == 0
    h = {"X-API-Key": new_key(env_a, "wanda", "writer")}

    def expand(base: str) -> dict:
        r = httpx.post(base + "/v1/expand", json={"seeds": ["Smoking"]}, headers=h, timeout=60)
        assert r.status_code == 200, r.text
        return r.json()

    def unit_ids(out: dict) -> set[str]:
        return {u["id"] for u in out["units"]}

    with working(env_w, tmp_path / "worker.log"), serving(env_a) as (a, _, _), serving(env_b) as (b, _, _):
        first = ask(a, "What does smoking cause?", h)
        assert first["cited"] == ["s1"] and first["llm"]["calls"] > 0
        again = ask(a, "What does smoking cause?", h)
        assert again["llm"]["calls"] == 0 and again["answer"] == first["answer"]
        python_q = ask(a, "Who created Python?", h)
        assert python_q["cited"] == ["p1"]
        expanded = expand(a)
        assert expanded["cached"] is False and "s9" not in unit_ids(expanded)
        assert expand(a) == {**expanded, "cached": True}  # A's expand cache

        r = httpx.post(b + "/v1/ingest", json={"units": "#s9 {smoking} [causes] {death}\n"},
                       headers={**h, "Idempotency-Key": "two-servers-1"}, timeout=60)
        assert r.status_code == 202, r.text
        job = wait_job(b, r.json()["job_id"], h, log=tmp_path / "worker.log")
        assert job["status"] == "done", job
        # read your writes on A: with the write's bookmark A catches up before answering (without
        # one it may answer from the previous version while it catches up, marked stale: the
        # bounded staleness of docs/jobs-and-caches.md, which would skip the caches checked here)
        h = {**h, "X-KG-Bookmark": job["result"]["bookmark"]}

        unrelated = ask(a, "Who created Python?", h)
        assert unrelated["llm"]["calls"] == 0 and unrelated["cited"] == ["p1"]  # still a cache hit
        assert unrelated["stale"] is False
        changed = ask(a, "What does smoking cause?", h)
        assert changed["llm"]["calls"] > 0 and "s9" in changed["cited"]
        assert changed["answer"] != first["answer"]
        after = expand(a)  # B's ingest touched smoking: A's cached expansion is not served
        assert after["cached"] is False and "s9" in unit_ids(after)
        assert expand(a)["cached"] is True


def _two_servers_on_the_corpus(tmp_path: Path, neo4j_connection, role: str) -> tuple[dict, dict, dict]:
    """The environments of servers A and B on a wiped test Neo4j holding the corpus (each process
    hashes strings with its own seed), and the headers of a new key of ``role``."""
    wipe_all(neo4j_connection)
    env_a = neo4j_env(tmp_path / "a", PYTHONHASHSEED="11")
    env_b = neo4j_env(tmp_path / "b", PYTHONHASHSEED="22")
    (tmp_path / "corpus.units").write_text(CORPUS, "utf-8")
    assert kg(env_a, "ingest", str(tmp_path / "corpus.units")).returncode == 0
    return env_a, env_b, {"X-API-Key": new_key(env_a, "ada", role)}


@pytest.mark.neo4j
def test_two_servers_share_saved_results_and_community_ids_on_neo4j(tmp_path, neo4j_connection):
    """A result saved through server A is listed by server B, and both number the graph's
    communities alike although each process hashes strings with its own seed."""
    env_a, env_b, h = _two_servers_on_the_corpus(tmp_path, neo4j_connection, "writer")
    with serving(env_a) as (a, _, _), serving(env_b) as (b, _, _):
        saved = httpx.post(a + "/v1/results", json={"question": "what causes death?", "answer": "lung cancer",
                                                   "outcome": "useful", "nodes": ["death"]}, headers=h)
        assert saved.status_code == 201, saved.text
        listed = httpx.get(b + "/v1/results", headers=h).json()
        assert listed["total"] == 1 and listed["results"][0]["name"] == saved.json()["name"]
        assert listed["results"][0]["contributor"] == "ada" and listed["results"][0]["source_nodes"] == ["death"]
        for base in (a, b):  # each server writes its own graph.json mirror on first use
            # B would read the mirror A built (built once per version); drop the stored copy so B
            # numbers the communities itself, which is what this test is about
            with neo4j_connection.driver.session() as s:
                s.run("MATCH (n) WHERE n:KgMirrorChunk OR (n:KgMeta AND n.id = 'graphify_mirror') "
                      "DETACH DELETE n").consume()
            r = httpx.post(base + "/v1/graphify/query", json={"question": "smoking"}, headers=h, timeout=60)
            assert r.status_code == 200, r.text
            assert _mirror_counts(base, h) == (1, 0)  # built here, not read from the store
    mirrors = [json.loads((tmp_path / d / "graphify-out" / "graph.json").read_text("utf-8")) for d in ("a", "b")]
    ids = [{n["id"]: n["community"] for n in m["nodes"]} for m in mirrors]
    assert ids[0] == ids[1] and len(set(ids[0].values())) > 1
    assert not (tmp_path / "a" / "graphify-out" / "memory").exists()  # kept in Neo4j, not in A's directory


def _mirror_counts(base: str, h: dict[str, str]) -> tuple[int, int]:
    """(built here, read from the store) from a server's /metrics."""
    text = httpx.get(base + "/metrics", headers=h, timeout=60).text
    found = {}
    for line in text.splitlines():
        for name in ("kg_graph_mirror_builds", "kg_graph_mirror_loads"):
            if line.startswith(name + " "):
                found[name] = int(float(line.split()[1]))
    return found["kg_graph_mirror_builds"], found["kg_graph_mirror_loads"]


def _until(ok, bound: float = 300) -> None:
    """Poll ``ok`` until it holds (``bound``: only so a broken server fails the test instead of hanging it)."""
    import time

    end = time.monotonic() + bound
    while not ok():
        assert time.monotonic() < end, "never held"
        time.sleep(0.2)


def _without_stamp(mirror: dict) -> dict:
    return {**mirror, "graph": {k: v for k, v in mirror["graph"].items() if k != "built_at"}}


@pytest.mark.neo4j
def test_two_servers_build_the_graphify_mirror_once_per_version_on_neo4j(tmp_path, neo4j_connection):
    """The graph.json mirror is built by one server per store version and read by the other
    (their /metrics counters), and what the other reads is what a fresh export of the store
    gives. After an ingest, whichever server is asked first builds; the other reads it."""
    from kgservice.export.graphjson import build_graph_data

    env_a, env_b, h = _two_servers_on_the_corpus(tmp_path, neo4j_connection, "admin")

    def query(base: str, question: str, found: bool = True) -> str:
        r = httpx.post(base + "/v1/graphify/query", json={"question": question}, headers=h, timeout=120)
        if r.status_code == 404 and not found:  # a word the server's mirror does not have (yet)
            return ""
        assert r.status_code == 200, r.text
        return r.json()["text"]

    def mirror_of(name: str) -> dict:
        return json.loads((tmp_path / name / "graphify-out" / "graph.json").read_text("utf-8"))

    with serving(env_a) as (a, _, _), serving(env_b) as (b, _, _):
        text_a = query(a, "smoking")
        assert _mirror_counts(a, h) == (1, 0)
        assert query(b, "smoking") == text_a.replace(str(tmp_path / "a"), str(tmp_path / "b"))  # names its mirror's path
        assert _mirror_counts(b, h) == (0, 1)  # B read A's mirror: no second full export
        fresh = build_graph_data(neo4j_connection, store_communities=False)
        assert _without_stamp(mirror_of("b")) == _without_stamp(fresh)
        assert {n["id"] for n in fresh["nodes"]} >= {"smoking", "death"} and len(fresh["units"]) == 8

        (tmp_path / "more.units").write_text("#s9 {tea} [causes] {calm}\n", "utf-8")
        assert kg(neo4j_env(tmp_path / "cli"), "ingest", str(tmp_path / "more.units")).returncode == 0
        _until(lambda: "calm" in query(b, "tea", found=False))  # B checks the version every few seconds
        assert _mirror_counts(b, h) == (1, 1)  # asked first after the ingest, B built this version
        _until(lambda: "calm" in query(a, "tea", found=False))
        assert _mirror_counts(a, h) == (1, 1)  # and A read it
        fresh = build_graph_data(neo4j_connection, store_communities=False)
        assert len(fresh["units"]) == 9
        assert _without_stamp(mirror_of("a")) == _without_stamp(fresh) == _without_stamp(mirror_of("b"))

"""The MCP server in-process (mcp's in-memory Client): tool set, annotations, the same text as
our graphify commands (run as a separate process on the same graph.json), token budgets,
roles as error results, and the kg-native tools."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys

import pytest
from mcp import Client

from kgservice.server.auth import Principal, Role
from kgservice.server.context import ServerContext
from kgservice.server.mcp_server import build_mcp

GRAPHIFY_TOOLS = {"query_graph", "get_node", "get_neighbors", "get_community", "god_nodes", "graph_stats",
                  "shortest_path"}
KG_TOOLS = {"ask", "search_units", "get_unit", "expand", "ingest_text", "ingest_file", "job_status", "list_jobs",
            "cancel_job", "save_result", "list_documents", "get_document"}


def run(coro):
    return asyncio.run(coro)


def make(settings, kb, role: str = "reader"):
    sc = ServerContext(settings=settings, kb=kb, local=Principal("local", Role(role)), owns_kb=False)
    return sc, build_mcp(sc)


async def call(mcp, name, args):
    async with Client(mcp) as c:
        return await c.call_tool(name, args)


def cli(*args: str) -> subprocess.CompletedProcess:
    """Our graphify command as a user runs it (a separate process)."""
    return subprocess.run([sys.executable, "-c", "from kgservice.graphify.cli import main; main()", *args],
                          capture_output=True, text=True, timeout=120)


def kg_cli(*args: str) -> subprocess.CompletedProcess:
    """`kg` as a user runs it (a separate process): `kg query` / `kg explain` are what
    query_graph / get_node and get_neighbors answer."""
    return subprocess.run([sys.executable, "-c", "from kgservice.cli.app import main; main()", *args],
                          capture_output=True, text=True, timeout=120)


def text_of(result) -> str:
    assert not result.is_error, result.content
    return result.content[0].text


def test_tool_set_and_annotations(settings, kb):
    _, mcp = make(settings, kb)

    async def go():
        async with Client(mcp) as c:
            return (await c.list_tools()).tools

    tools = {t.name: t for t in run(go())}
    assert set(tools) == GRAPHIFY_TOOLS | KG_TOOLS
    for name, t in tools.items():
        assert not any(bad in name for bad in ("cypher", "delete", "clear", "drop"))
        assert t.annotations is not None
        assert t.annotations.read_only_hint is (name not in ("ingest_text", "ingest_file", "save_result",
                                                             "cancel_job")), name
    assert tools["ingest_text"].annotations.destructive_hint is False
    assert tools["ingest_file"].annotations.destructive_hint is False
    assert "token_budget" in tools["expand"].input_schema["properties"]
    assert "token_budget" in tools["ask"].input_schema["properties"]


def test_graphify_tools_give_the_cli_text(settings, kb):
    sc, mcp = make(settings, kb)
    path = str(sc.mirror.path)
    sc.mirror.graph()  # export graph.json once
    # query_graph is `kg query` (kgservice's BFS 3 / DFS 6) when graphify's `depth` is not given
    for args, flags in (({}, []), ({"mode": "dfs", "token_budget": 40}, ["--dfs", "--budget", "40"])):
        q = kg_cli("query", "what does smoking cause", *flags, "--graph", path)
        assert q.returncode == 0, q.stderr
        assert text_of(run(call(mcp, "query_graph", {"question": "what does smoking cause", **args}))) \
            == q.stdout.rstrip("\n"), args
    assert "BFS depth=3 |" in text_of(run(call(mcp, "query_graph", {"question": "what does smoking cause"})))
    # a depth given is walked: one hop reaches fewer nodes than kg query's three
    one = text_of(run(call(mcp, "query_graph", {"question": "what does smoking cause", "depth": 1})))
    three = text_of(run(call(mcp, "query_graph", {"question": "what does smoking cause", "depth": 3})))
    assert "BFS depth=1 |" in one and three == text_of(run(call(mcp, "query_graph", {"question": "what does smoking cause"})))
    found = [int(re.search(r"\| (\d+) nodes found", t).group(1)) for t in (one, three)]
    assert found[0] < found[1], found
    p = cli("path", "smoking", "death", "--graph", path)
    assert text_of(run(call(mcp, "shortest_path", {"source": "smoking", "target": "death"}))) == p.stdout.rstrip("\n")
    e = kg_cli("explain", "smoking", "--all", "--graph", path).stdout  # `kg explain`: with its Same as: line
    node = text_of(run(call(mcp, "get_node", {"label": "smoking"})))
    assert e.startswith(node + "\n\nConnections (") and "  Same as:   吸烟" in node
    assert text_of(run(call(mcp, "get_node", {"node_id": "smoking"}))) == node
    neighbors = text_of(run(call(mcp, "get_neighbors", {"label": "smoking"}))).splitlines()
    assert neighbors[0] == "Neighbors of smoking:"
    assert neighbors[1:] == e.split("\n\nConnections (", 1)[1].splitlines()[1:]
    only = text_of(run(call(mcp, "get_neighbors", {"label": "smoking", "relation_filter": "is a"}))).splitlines()
    assert len(only) == 2 and "tobacco use" in only[1]


def test_graph_stats_and_god_nodes_from_the_file(settings, kb):
    sc, mcp = make(settings, kb)
    sc.mirror.graph()
    data = json.loads(sc.mirror.path.read_text("utf-8"))
    stats = text_of(run(call(mcp, "graph_stats", {}))).splitlines()
    assert stats[0] == f"Nodes: {len(data['nodes'])}" and stats[1] == f"Edges: {len(data['links'])}"
    communities = {n["community"] for n in data["nodes"] if n.get("community") is not None}
    assert stats[2] == f"Communities: {len(communities)}"
    degree: dict[str, int] = {}
    for lk in data["links"]:
        degree[lk["source"]] = degree.get(lk["source"], 0) + 1
        degree[lk["target"]] = degree.get(lk["target"], 0) + 1
    top = max(degree.values())
    gods = text_of(run(call(mcp, "god_nodes", {"top_n": 1}))).splitlines()
    assert gods[1].endswith(f" - {top} edges")
    cid = sorted(communities)[0]
    members = [n for n in data["nodes"] if n.get("community") == cid]
    community = text_of(run(call(mcp, "get_community", {"community_id": cid}))).splitlines()
    assert community[0].endswith(f"({len(members)} nodes):") and len(community) == len(members) + 1


def test_god_nodes_is_kg_god_nodes(settings, kb):
    """The tool's text is `kg god-nodes` (graphify's ranking: files, concepts, builtin names left out)."""
    sc, mcp = make(settings, kb)
    path = str(sc.mirror.path)
    sc.mirror.graph()
    for args, flags in (({}, []), ({"top_n": 3, "exclude_hubs_percentile": 95}, ["--top", "3", "--exclude-hubs", "95"])):
        k = kg_cli("god-nodes", *flags, "--graph", path)
        assert k.returncode == 0, k.stderr
        assert text_of(run(call(mcp, "god_nodes", args))) == k.stdout.rstrip("\n"), args
    data = json.loads(sc.mirror.path.read_text("utf-8"))
    no_file = {n.get("label") for n in data["nodes"] if not n.get("source_file")}
    listed = [line.split(". ", 1)[1].rsplit(" - ", 1)[0]
              for line in text_of(run(call(mcp, "god_nodes", {"top_n": 50}))).splitlines()[1:]]
    assert listed and not no_file & set(listed)


def test_graphify_pr_tools_are_not_served(settings, kb):
    """list_prs / get_pr_impact / triage_prs report GitHub state (open PRs, checks, reviews) that no
    local history holds (docs/graphify.md): not listed, and a call is an error result."""
    _, mcp = make(settings, kb)

    async def go():
        async with Client(mcp) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            return names, await c.call_tool("list_prs", {})

    names, res = run(go())
    assert not {"list_prs", "get_pr_impact", "triage_prs"} & names
    assert res.is_error and "list_prs" in res.content[0].text


def test_token_budget_cuts_text(settings, kb):
    _, mcp = make(settings, kb)
    small = text_of(run(call(mcp, "get_neighbors", {"label": "smoking", "token_budget": 5})))
    assert "truncated to the token budget (5)" in small
    assert len(small.splitlines()[0]) <= 20
    q = text_of(run(call(mcp, "query_graph", {"question": "smoking", "token_budget": 40})))
    full = text_of(run(call(mcp, "query_graph", {"question": "smoking", "token_budget": 100000})))
    assert len(q) < len(full)
    e = text_of(run(call(mcp, "expand", {"seeds": ["smoking"], "mode": "directed", "token_budget": 8})))
    assert "truncated" in e


def test_roles_are_error_results(settings, kb):
    _, reader = make(settings, kb, "reader")
    r = run(call(reader, "ingest_text", {"text": "Tea contains caffeine."}))
    assert r.is_error and "403" in r.content[0].text and "writer" in r.content[0].text
    r = run(call(reader, "save_result", {"question": "q", "answer": "a"}))
    assert r.is_error and "403" in r.content[0].text
    assert kb.jobs.list() == []
    _, writer = make(settings, kb, "writer")
    r = run(call(writer, "ingest_text", {"text": "Tea contains caffeine.", "mode": "detail"}))
    assert not r.is_error
    job_id = r.structured_content["job_id"]
    job = kb.jobs.get(job_id)
    assert job.user == "local" and job.payload == {"text": "Tea contains caffeine.", "mode": "detail", "doc": "mcp"}
    st = run(call(writer, "job_status", {"job_id": job_id}))
    assert st.structured_content["status"] == "queued" and st.structured_content["events"][0]["status"] == "queued"


def test_bad_input_is_an_error_result_not_a_trace(settings, kb):
    _, mcp = make(settings, kb)
    r = run(call(mcp, "get_unit", {"unit_id": "nope"}))
    assert r.is_error and "no unit #nope" in r.content[0].text and "Traceback" not in r.content[0].text
    r = run(call(mcp, "graph_stats", {"project_path": "/elsewhere"}))
    assert r.is_error and "project_path" in r.content[0].text
    r = run(call(mcp, "expand", {"seeds": ["no such node"]}))
    assert r.is_error and "no node" in r.content[0].text
    r = run(call(mcp, "get_node", {}))
    assert r.is_error and "label" in r.content[0].text


def test_kg_tools(settings, kb):
    sc, mcp = make(settings, kb, "writer")
    u = run(call(mcp, "get_unit", {"unit_id": "s1"})).structured_content
    assert u["subject"] == "smoking" and u["predicate"] == "causes" and u["notation"].startswith("#s1 {smoking}")
    hits = run(call(mcp, "search_units", {"query": "smoking", "threshold": 0.9})).structured_content["result"]
    assert hits[0]["node_id"] == "smoking" and hits[0]["score"] == pytest.approx(1.0, abs=1e-3)
    text = text_of(run(call(mcp, "expand", {"seeds": ["smoking"], "mode": "directed"})))
    assert "#s1 " in text and "#s4 " in text  # the units whose subject is smoking
    chain = text_of(run(call(mcp, "expand", {"seeds": ["smoking"], "mode": "causal"})))
    assert "smoking -#s1-> lung cancer -#s3-> death" in chain  # the whole chain, each hop's unit
    ans = run(call(mcp, "ask", {"question": "What does smoking cause?"})).structured_content
    assert ans["found"] is True and "s1" in ans["cited"] and ans["short_answer"] == "lung cancer"
    from dataclasses import fields

    from kgservice.pipeline.asking import AskResult

    assert set(ans) <= {f.name for f in fields(AskResult)}  # the one answer shape's names (a subset)
    assert isinstance(ans["as_of_version"], int) and ans["stale"] is False
    saved = run(call(mcp, "save_result", {"question": "q?", "answer": "a", "outcome": "useful",
                                          "nodes": ["smoking"]})).structured_content
    from kgservice.graphify.memory import memory_doc_text

    [kept] = [r for r in sc.kb.saved_results() if r.name == saved["name"]]  # in the store, not a server's dir
    doc = memory_doc_text(kept)
    assert 'contributor: "local"' in doc and 'outcome: "useful"' in doc


def test_server_info_names_the_installed_version(settings, kb):
    """An MCP client learns which kgservice it talks to: serverInfo.version was empty. The
    expected version is read from pyproject.toml, not from the package."""
    import tomllib
    from pathlib import Path

    want = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]["version"]
    _, mcp = make(settings, kb)

    async def info():
        async with Client(mcp) as c:
            return c.server_info

    got = run(info())
    assert (got.name, got.version) == ("kgservice", want)

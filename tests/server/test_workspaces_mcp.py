"""Workspaces over MCP (docs/workspaces.md): one `kg serve`, real MCP clients over HTTP. With A's
key (at /mcp) every kg and graphify tool answers from A only: no result holds a marker ingested
only into B, or B's unit ids, while B's key finds them. The A+B key reaches each workspace at
/w/<name>/mcp and sees that workspace's own data; A's key naming B (/w/team-b/mcp) is 404."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from tests.processes import serving
from tests.server.test_processes import mcp_http
from tests.server.test_workspaces_rest import MARKER, _of_b, _two_workspaces, workspace_key

CALLS = [("ask", {"question": "What does smoking cause?"}),
         ("search_units", {"query": "smoking", "threshold": 0.0}),
         ("expand", {"seeds": ["smoking"], "mode": "directed"}),
         ("expand", {"seeds": ["smoking"], "mode": "spread"}),
         ("get_unit", {"unit_id": "w2"}),
         ("list_documents", {}),
         ("get_document", {"doc_id": "notes.units"}),
         ("list_jobs", {}),
         ("get_neighbors", {"label": "smoking"}),
         ("query_graph", {"question": "smoking"}),
         ("graph_stats", {})]


async def _answers(url: str, key: str) -> list[str]:
    http, client = mcp_http(url, key)
    out = []
    async with http, client as c:
        for name, args in CALLS:
            r = await c.call_tool(name, args)  # an error is a result (is_error), not a raise
            out.append(f"{name}: " + "".join(getattr(x, "text", "") for x in r.content) + repr(r.structured_content))
    return out


def test_the_mcp_tools_answer_each_key_from_its_own_workspaces_only(tmp_path: Path):
    env = _two_workspaces(tmp_path)
    key_a, key_b = workspace_key(env, "ann", "team-a:writer"), workspace_key(env, "bob", "team-b:writer")
    key_ab = workspace_key(env, "cy", "team-a:writer", "team-b:writer")
    with serving(env) as (base, _, _):
        seen_a, seen_b = asyncio.run(_answers(base, key_a)), asyncio.run(_answers(base, key_b))
        ab_a = asyncio.run(_answers(base + "/w/team-a", key_ab))
        ab_b = asyncio.run(_answers(base + "/w/team-b", key_ab))
        # A's key naming B's workspace: not found, before any tool runs
        foreign = httpx.post(base + "/w/team-b/mcp", headers={"Authorization": f"Bearer {key_a}"},
                             json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=60)
    assert [t for t in seen_a if _of_b(t)] == []
    assert [t for t in ab_a if _of_b(t)] == []
    found_b = {t.split(":")[0] + str(i) for i, t in enumerate(seen_b) if _of_b(t)}
    assert {"ask0", "expand2", "expand3", "get_unit4", "get_document6", "get_neighbors8"} <= found_b, seen_b
    assert found_b == {t.split(":")[0] + str(i) for i, t in enumerate(ab_b) if _of_b(t)}
    # B's unit is unknown in A, as any id A never had
    assert MARKER in seen_b[4] and "no unit #w2" in seen_a[4], seen_a[4]
    assert foreign.status_code == 404

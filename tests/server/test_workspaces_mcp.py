"""Workspaces over MCP (docs/workspaces.md): the MCP server of a knowledge base opened for
workspace A (in-process, mcp's in-memory client, as `kg --workspace A mcp` serves it) answers
every kg tool from A only: no result holds a marker ingested only into B, or B's unit ids,
while the same calls on B's server find them."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mcp import Client

from kgservice.config import Settings
from kgservice.server.auth import Principal, Role
from kgservice.server.context import ServerContext
from kgservice.server.mcp_server import build_mcp
from kgservice.service import KnowledgeBase
from tests.server.test_workspaces_rest import MARKER, ONLY_B, SHARED, _of_b

CALLS = [("ask", {"question": "What does smoking cause?"}),
         ("search_units", {"query": "smoking", "threshold": 0.0}),
         ("expand", {"seeds": ["smoking"], "mode": "directed"}),
         ("expand", {"seeds": ["smoking"], "mode": "spread"}),
         ("get_unit", {"unit_id": "w2"}),
         ("list_documents", {}),
         ("get_document", {"doc_id": "notes.units"}),
         ("list_jobs", {})]


async def _answers(kb: KnowledgeBase) -> list[str]:
    sc = ServerContext(settings=kb.settings, kb=kb, local=Principal("local", Role("writer")), owns_kb=False)
    out = []
    async with Client(build_mcp(sc)) as c:
        for name, args in CALLS:
            r = await c.call_tool(name, args)  # an error is a result (is_error), not a raise
            out.append(f"{name}: " + "".join(getattr(x, "text", "") for x in r.content) + repr(r.structured_content))
    return out


def test_the_mcp_tools_of_workspace_a_never_answer_from_b(tmp_path: Path):
    def kb(ws: str) -> KnowledgeBase:
        return KnowledgeBase(Settings(data_dir=tmp_path / "kg", embedder="hash:64", vector_backend="edge", workspace=ws))

    with kb("team-a") as a, kb("team-b") as b:
        a.ingest_document("notes.units", SHARED, mode="manual")
        b.ingest_document("notes.units", SHARED + ONLY_B, mode="manual")
        seen_a, seen_b = asyncio.run(_answers(a)), asyncio.run(_answers(b))
    assert [t for t in seen_a if _of_b(t)] == []
    found_b = {t.split(":")[0] + str(i) for i, t in enumerate(seen_b) if _of_b(t)}
    assert {"ask0", "expand2", "expand3", "get_unit4", "get_document6"} <= found_b, seen_b
    # B's unit is unknown in A, as any id A never had
    assert MARKER in seen_b[4] and "no unit #w2" in seen_a[4], seen_a[4]

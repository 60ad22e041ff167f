"""Our graphify MCP tools have graphifyy 0.9.96's names and argument schemas.

graphify's own server is built with ``graphify.serve._build_server(graph.json)`` and listed
through mcp's in-memory client, in the reference venv that tests/graphify/reference.py builds
once per machine (graphifyy 0.9.96 with its mcp extra; kept out of this environment, where
its ``graphify`` would shadow ours).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from kgservice.server.mcp_server import GRAPHIFY_SCHEMAS
from tests.graphify.reference import reference_env, reference_python, unavailable_reason

LIST_SCRIPT = r"""
import asyncio, json, sys
from mcp import Client
import graphify.serve as s
async def main():
    async with Client(s._build_server(sys.argv[1])) as c:
        tools = (await c.list_tools()).tools
    print(json.dumps({t.name: t.input_schema for t in tools}))
asyncio.run(main())
"""

TINY_GRAPH = {"directed": False, "multigraph": False, "graph": {},
              "nodes": [{"id": "a", "label": "A", "community": 0}, {"id": "b", "label": "B", "community": 0}],
              "links": [{"source": "a", "target": "b", "relation": "calls", "confidence": "EXTRACTED"}]}


def _reference_python() -> str:
    python = reference_python()
    if python is None:  # only outside CI: there KG_REQUIRE_GRAPHIFY_REF=1 makes a failed build an error
        pytest.skip(f"the reference graphify venv could not be built: {unavailable_reason()}")
    return str(python)


def reference_schemas(graph: Path) -> dict[str, dict]:
    """graphify's own MCP server, built and listed in the reference venv (a neutral working
    directory and no PYTHONPATH, so our ``graphify`` package cannot stand in for theirs)."""
    done = subprocess.run([_reference_python(), "-c", LIST_SCRIPT, str(graph)], capture_output=True, text=True,
                          timeout=120, cwd=str(graph.parent), env=reference_env())
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def shape(schema: dict) -> dict:
    """What a caller's arguments must look like: names, types, defaults, enums, item types, required."""
    props = {name: {k: v for k, v in p.items() if k in ("type", "default", "enum", "items")}
             for name, p in schema.get("properties", {}).items()}
    return {"properties": props, "required": sorted(schema.get("required", []))}


def test_graphify_tool_schemas_match_graphifys_server(tmp_path):
    graph = tmp_path / "graph.json"
    graph.write_text(json.dumps(TINY_GRAPH), "utf-8")
    theirs = reference_schemas(graph)
    for name, ours in GRAPHIFY_SCHEMAS.items():
        assert name in theirs, f"graphify has no tool {name}"
        assert shape(ours) == shape(theirs[name]), name


def test_our_server_lists_exactly_those_schemas(settings, kb):
    from kgservice.server.auth import Principal, Role
    from kgservice.server.context import ServerContext
    from kgservice.server.mcp_server import build_mcp

    mcp = build_mcp(ServerContext(settings=settings, kb=kb, local=Principal("t", Role.reader), owns_kb=False))

    async def main() -> dict[str, dict]:
        async with Client(mcp) as c:
            return {t.name: t.input_schema for t in (await c.list_tools()).tools}

    listed = asyncio.run(main())
    for name, schema in GRAPHIFY_SCHEMAS.items():
        assert listed[name] == schema


def test_the_reference_is_graphifyy_0_9_96(tmp_path):
    v = subprocess.run([_reference_python(), "-c", "from importlib.metadata import version; print(version('graphifyy'))"],
                       capture_output=True, text=True, timeout=60, cwd=str(tmp_path), env=reference_env()).stdout.strip()
    assert v == "0.9.96"


if __name__ == "__main__":  # pragma: no cover - a manual look at both
    print(json.dumps(GRAPHIFY_SCHEMAS, indent=1), file=sys.stderr)

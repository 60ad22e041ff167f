"""Reads: ask (JSON or an SSE stream), search, expand, units, nodes and neighbours, stats."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

import anyio.to_thread
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse
from fastapi.sse import EventSourceResponse

from kgservice.server import ops
from kgservice.server.deps import READER
from kgservice.server.models import AskIn, AskOut, ExpandIn, ExpandOut, NeighborsOut, NodeOut, SearchHit, SearchIn, UnitOut
from kgservice.server.routes import ctx_of, sse

router = APIRouter(prefix="/v1", tags=["query"])


@router.post("/ask", response_model=AskOut, dependencies=[Depends(READER)],
             responses={200: {"content": {"text/event-stream": {}},
                              "description": "JSON, or with `Accept: text/event-stream` the events `round` "
                                             "(one per drill-down round), `answer` and `done`"}})
async def ask(body: AskIn, request: Request):
    """Answer from the graph, citing unit ids, or "not in the graph". With `Accept: text/event-stream`
    the reply is a stream: `started`, one `round` per drill-down round, `answer`, `done`. The
    rounds are sent when the pipeline has finished them all (it has no per-round hook yet)."""
    sc = ctx_of(request)

    def run() -> tuple[AskOut, object]:
        out, res = ops.ask(sc.kb, body)
        sc.metrics.record_ask(res)
        return out, res

    if "text/event-stream" not in request.headers.get("accept", ""):
        out, _ = await anyio.to_thread.run_sync(run)
        return out

    async def stream() -> AsyncIterator[bytes]:
        yield sse("started", {"question": body.question})
        try:
            out, res = await anyio.to_thread.run_sync(run)
        except Exception as exc:  # the status line is sent: report the failure as an event
            from kgservice.server.errors import status_of

            yield sse("error", {"status": status_of(exc), "detail": str(exc)})
            return
        for i, r in enumerate(res.rounds, 1):  # type: ignore[attr-defined]
            yield sse("round", r, id=str(i))
        yield sse("answer", out.model_dump(mode="json", exclude={"trace"}))
        yield sse("done", {"rounds": out.rounds, "in_graph": out.in_graph})

    return EventSourceResponse(stream())


@router.post("/search", response_model=list[SearchHit], dependencies=[Depends(READER)])
def search(body: SearchIn, request: Request) -> list[SearchHit]:
    """Vector entry: the nearest entry nodes to a text."""
    return ops.search(ctx_of(request).kb, body)


@router.post("/expand", response_model=ExpandOut, dependencies=[Depends(READER)])
def expand(body: ExpandIn, request: Request) -> ExpandOut:
    """Expansion without the LLM from nodes (ids or labels): directed (units) or spread (ranked nodes)."""
    return ops.expand(ctx_of(request).kb, body)


@router.get("/units/{unit_id}", response_model=UnitOut, dependencies=[Depends(READER)])
def unit(unit_id: str, request: Request) -> UnitOut:
    return ops.get_unit(ctx_of(request).kb, unit_id)


@router.get("/nodes/{node_id}", response_model=NodeOut, dependencies=[Depends(READER)])
def node(node_id: str, request: Request) -> NodeOut:
    """A node by id or label."""
    return ops.get_node(ctx_of(request).kb, node_id)


@router.get("/nodes/{node_id}/neighbors", response_model=NeighborsOut, dependencies=[Depends(READER)])
def neighbors(node_id: str, request: Request, relation: str | None = None,
              limit: Annotated[int, Query(ge=1, le=1000)] = 50) -> NeighborsOut:
    """Nodes one unit away, with the unit's predicate, family and kind."""
    return ops.neighbors(ctx_of(request).kb, node_id, relation, limit)


@router.get("/stats", dependencies=[Depends(READER)])
def stats(request: Request) -> JSONResponse:
    """Counts of units, nodes, relations, superseded units and kinds; the backend."""
    kb = ctx_of(request).kb
    return JSONResponse({"backend": kb.store.backend, **kb.store.counts()})

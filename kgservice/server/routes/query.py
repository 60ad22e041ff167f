"""Reads: ask (JSON or an SSE stream), search, expand, units, nodes and neighbours, stats."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated

import anyio.to_thread
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel
from fastapi.sse import EventSourceResponse

from kgservice.server import ops
from kgservice.server.deps import READER
from kgservice.server.models import AskIn, AskOut, ExpandIn, ExpandOut, NeighborsOut, NodeOut, SearchHit, SearchIn, UnitOut
from kgservice.server.routes import ctx_of, sse

router = APIRouter(prefix="/v1", tags=["query"])


@router.post("/ask", response_model=AskOut, dependencies=[Depends(READER)],
             responses={200: {"content": {"text/event-stream": {}},
                              "description": "JSON, or with `Accept: text/event-stream` the events `started`, "
                                             "`round` (one per drill-down round, as it finishes), while the model "
                                             "writes the answer `answer_start`, `answer_short`, `answer_text`, `answer_cite` and "
                                             "`answer_check`, then `answer` (the checked answer) and `done`"}})
async def ask(body: AskIn, request: Request):
    """Answer from the graph, citing unit ids, or "not in the graph". With `Accept: text/event-stream`
    the reply is a stream: `started`, one `round` per drill-down round as soon as that round is
    done (while the next one runs); when the model writes the answer, its short answer, text and
    citations as they arrive (`answer_start`, `answer_short`, `answer_text`, `answer_cite`) and the grounded check's verdict
    on the whole of it (`answer_check`); then `answer` (the checked answer, the JSON reply's
    fields: it replaces whatever was streamed) and `done`.

    A question answered before at the same store version with no LLM call is served from the
    in-memory front on the event loop (no worker thread); anything else runs in a worker thread."""
    sc = ctx_of(request)
    cached = ops.ask_cached(sc.kb, body)
    if cached is not None:
        sc.metrics.record_ask(cached[1])

    def run(on_round=None, on_stream=None) -> tuple[AskOut, object]:
        out, res = ops.ask(sc.kb, body, on_round=on_round, on_stream=on_stream)
        sc.metrics.record_ask(res)
        return out, res

    if "text/event-stream" not in request.headers.get("accept", ""):
        out = cached[0] if cached is not None else (await anyio.to_thread.run_sync(run))[0]
        return json_of(out)

    async def stream() -> AsyncIterator[bytes]:
        yield sse("started", {"question": body.question})
        if cached is not None:
            out, res = cached
            for i, r in enumerate(res.rounds, 1):  # type: ignore[attr-defined]
                yield sse("round", r, id=str(i))
        else:
            loop = asyncio.get_running_loop()
            events: asyncio.Queue[tuple[str, object]] = asyncio.Queue()

            def on_round(d: dict) -> None:  # in the worker thread, as each round finishes
                loop.call_soon_threadsafe(events.put_nowait, ("round", d))

            def on_stream(kind: str, d: dict) -> None:  # in the worker thread, as the model writes
                loop.call_soon_threadsafe(events.put_nowait, (kind, d))

            task = asyncio.ensure_future(anyio.to_thread.run_sync(run, on_round, on_stream))
            task.add_done_callback(lambda t: events.put_nowait(("end", None)))
            try:
                i = 0
                while True:
                    kind, d = await events.get()
                    if kind == "end":
                        break
                    if kind == "round":
                        i += 1
                        yield sse("round", d, id=str(i))
                    else:
                        yield sse(kind, d)
                out, res = task.result()
            except Exception as exc:  # the status line is sent: report the failure as an event
                from kgservice.server.errors import status_of

                yield sse("error", {"status": status_of(exc), "detail": str(exc)})
                return
            finally:
                if not task.done():  # the client went away: let the thread finish, keep its error quiet
                    task.add_done_callback(lambda t: t.cancelled() or t.exception())
        yield sse("answer", out.model_dump(mode="json", exclude={"rounds"}))  # the rounds came as events
        yield sse("done", {"rounds": len(out.rounds), "found": out.found})

    return EventSourceResponse(stream())


@router.post("/search", response_model=list[SearchHit], dependencies=[Depends(READER)])
def search(body: SearchIn, request: Request) -> list[SearchHit]:
    """Vector entry: the nearest entry nodes to a text."""
    return ops.search(ctx_of(request).kb, body)


@router.post("/expand", response_model=ExpandOut, dependencies=[Depends(READER)])
def expand(body: ExpandIn, request: Request) -> Response:
    """Expansion without the LLM from nodes (ids or labels): directed (units) or spread (ranked nodes).
    Repeated at the same store version it comes from the in-memory `expand` cache (`cached`)."""
    return json_of(ctx_of(request).expand(body))


def json_of(model: BaseModel) -> Response:
    """The model as JSON, serialised once by pydantic-core: returning the model itself makes
    FastAPI validate it again against ``response_model`` first (a measurable share of a
    cached ask's CPU). ``response_model`` stays on the route for the OpenAPI schema."""
    return Response(model.model_dump_json(), media_type="application/json")


@router.get("/units/{unit_id}", response_model=UnitOut, dependencies=[Depends(READER)])
def unit(unit_id: str, request: Request) -> UnitOut:
    return ops.get_unit(ctx_of(request).kb, unit_id)


@router.get("/nodes/{node_id}", response_model=NodeOut, dependencies=[Depends(READER)])
def node(node_id: str, request: Request) -> NodeOut:
    """A node by id or label."""
    return ops.get_node(ctx_of(request).kb, node_id)


@router.get("/nodes/{node_id}/neighbors", response_model=NeighborsOut, dependencies=[Depends(READER)])
def neighbors(node_id: str, request: Request, relation: str | None = None,
              limit: Annotated[int, Query(ge=1, le=1000)] = 50,
              offset: Annotated[int, Query(ge=0, description="skip this many (pages through `total`)")] = 0
              ) -> NeighborsOut:
    """Nodes one unit away, with the unit's predicate, family and kind; `total` counts them all,
    `offset` and `limit` page through them in a fixed order."""
    return ops.neighbors(ctx_of(request).kb, node_id, relation, limit, offset)


@router.get("/stats", dependencies=[Depends(READER)])
def stats(request: Request) -> JSONResponse:
    """Counts of units, nodes, relations, superseded units and kinds; the backend."""
    return JSONResponse(ctx_of(request).kb.stats())

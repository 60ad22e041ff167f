"""graphify's query / path / explain over the graph.json mirror (the text of `kg query|path|explain`),
and save-result attributed to the caller."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request

from kgservice.server import graphify_tools as gt
from kgservice.server import ops
from kgservice.server.auth import Principal
from kgservice.server.deps import READER, WRITER
from kgservice.server.errors import Conflict, NotFound
from kgservice.server.models import (GraphifyExplainIn, GraphifyPathIn, GraphifyQueryIn, PathOut, SaveResultIn, SavedOut,
                                     SavedResultsOut, TextOut)
from kgservice.server.routes import ctx_of

router = APIRouter(prefix="/v1", tags=["graphify"])


def _answer(text: str, code: int, notes: list[str] | None = None) -> TextOut:
    """graphify's exit codes as statuses: 4 (no match) → 404, 3 (ambiguous) → 409, with the text."""
    if code == gt.EXIT_NOT_FOUND:
        raise NotFound(text)
    if code == gt.EXIT_AMBIGUOUS:
        raise Conflict(text)
    return TextOut(text=text, exit_code=code, notes=notes or [])


@router.post("/graphify/query", response_model=TextOut, dependencies=[Depends(READER)])
def query(body: GraphifyQueryIn, request: Request) -> TextOut:
    """`kg query QUESTION [--dfs] [--budget N] [--context C]... [--seed S]... [--no-expand]`, through
    the same call as the command (:func:`kgservice.graphify.query.kg_query`), so the same text."""
    from kgservice.graphify.query import kg_query

    g = ctx_of(request).mirror.graph()
    res = kg_query(g, body.question, dfs=body.dfs, budget=body.budget, contexts=body.context, seeds=body.seed,
                   expand=not body.no_expand)
    return _answer(res.text, res.exit_code, res.notes)


@router.post("/graphify/path", response_model=PathOut, response_model_exclude_unset=True,
             dependencies=[Depends(READER)])
def path(body: GraphifyPathIn, request: Request) -> TextOut:
    """`kg path SOURCE TARGET [--undirected]`; with ``format: "json"`` also the path's nodes and hops
    (:func:`kgservice.graphify.path.path_json`), the text unchanged."""
    from kgservice.graphify.path import path_json, run_path

    g = ctx_of(request).mirror.graph()
    res = run_path(g, body.source, body.target, undirected=body.undirected, through_values=body.through_values)
    if res.exit_code != gt.EXIT_OK:
        return _answer(res.stderr, res.exit_code)
    out = _answer(res.stdout, res.exit_code, [res.stderr] if res.stderr else [])
    if body.format == "json":
        return PathOut(**out.model_dump(), path=path_json(g, res.nodes) if res.nodes else None)
    return out


@router.post("/graphify/explain", response_model=TextOut, dependencies=[Depends(READER)])
def explain(body: GraphifyExplainIn, request: Request) -> TextOut:
    """`kg explain NODE [--all]`."""
    return _answer(*gt.explain(ctx_of(request).mirror.graph(), body.node, body.all))


@router.post("/results", response_model=SavedOut, status_code=201)
def save_result(body: SaveResultIn, request: Request, who: Principal = Depends(WRITER)) -> SavedOut:
    """graphify `save-result`, contributor = you, kept in the store: every server of this
    knowledge base lists it, and the next export feeds it back as a unit. A read-only server
    refuses it like the CLI does."""
    if ctx_of(request).settings.read_only:
        from kgservice.errors import ReadOnlyError

        raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); saving a result refused")
    return ops.save_result(ctx_of(request).kb, body, who)


@router.get("/results", response_model=SavedResultsOut, dependencies=[Depends(WRITER)])
def saved_results(request: Request, limit: int = Query(100, ge=0, le=1000)) -> SavedResultsOut:
    """The saved results of this knowledge base (any server's), the newest ``limit``, oldest first;
    writer role, as for saving one (every /v1/results route is a writer's)."""
    return ops.saved_results(ctx_of(request).kb, limit)

"""The MCP server: graphify's seven graph tools (same names and argument schemas as
graphifyy 0.9.96's server) and kgservice's own tools, for Streamable HTTP (/mcp) and stdio.

The caller is the key's principal that the HTTP gate put in the request scope, or the
server's local principal (stdio, in-memory clients). Roles are checked with the same
function as REST; a refusal or bad input is a tool error result, never a stack trace.
There is no raw-Cypher, delete or clear tool.

Each tool is a module-level function whose first parameter is the server context, listed once in
:data:`TOOLS` (with its annotations and, for graphify's tools, the description and input schema
graphify gives it); :func:`build_mcp` binds them to one :class:`ServerContext`.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from kgservice.config import DEFAULT_MAX_ROUNDS
from kgservice.errors import KgError
from kgservice.server import graphify_tools as gt
from kgservice.server import ops
from kgservice.server.auth import Principal, Role
from kgservice.server.context import ServerContext
from kgservice.server.deps import refusal
from kgservice.server.middleware import PRINCIPAL
from kgservice.server.models import (MAX_FILE_B64, AskIn, ExpandIn, IngestIn, SaveResultIn, SavedOut, SearchHit,
                                     SearchIn, UnitOut)
from kgservice.stores import causal

INSTRUCTIONS = (
    "kgservice: a knowledge base of units (small structured facts with ids like #u1) over a graph of concepts. "
    "`ask` answers a question citing unit ids or says it is not in the graph; `search_units` finds entry nodes; "
    "`expand` walks the graph from nodes; `get_unit` shows one unit. The graphify tools (query_graph, get_node, "
    "get_neighbors, shortest_path, graph_stats, get_community, god_nodes) read the graph.json mirror. "
    "Writers may `ingest_text` or `ingest_file` (a PDF, DOCX, PPTX, HTML or XLSX; each returns a job id: poll "
    "`job_status`), `list_jobs`, `cancel_job` and `save_result`.")

_STR = {"type": "string"}
_INT = {"type": "integer"}
_PROJECT = {"project_path": {"type": "string", "description": "Accepted for graphify compatibility; this server "
                                                             "serves one knowledge base, so only absent is valid."}}

# graphifyy 0.9.96's input schemas (names, types, defaults, enums, required); descriptions are ours.
GRAPHIFY_SCHEMAS: dict[str, dict[str, Any]] = {
    "query_graph": {"type": "object", "properties": {
        "question": {**_STR, "description": "Question or keywords"},
        "mode": {**_STR, "enum": ["bfs", "dfs"], "default": "bfs", "description": "bfs: broad context, dfs: a path"},
        "depth": {**_INT, "default": 3, "description": "Hops to walk (1-6); absent: `kg query`'s "
                                                         "BFS 3 / DFS 6"},
        "token_budget": {**_INT, "default": 2000, "description": "Max output tokens (~4 characters each)"},
        "context_filter": {"type": "array", "items": _STR, "description": "Only edges of these contexts / kinds"},
        **_PROJECT}, "required": ["question"]},
    "get_node": {"type": "object", "properties": {
        "label": {**_STR, "description": "Node label or id"},
        "node_id": {**_STR, "description": "Alias for label"}, **_PROJECT}},
    "get_neighbors": {"type": "object", "properties": {
        "label": _STR,
        "node_id": {**_STR, "description": "Alias for label"},
        "relation_filter": {**_STR, "description": "Only connections whose relation contains this"},
        "token_budget": {**_INT, "default": 2000, "description": "Max output tokens"}, **_PROJECT}},
    "get_community": {"type": "object", "properties": {
        "community_id": {**_INT, "description": "Community id"},
        "token_budget": {**_INT, "default": 2000, "description": "Max output tokens"}, **_PROJECT},
        "required": ["community_id"]},
    "god_nodes": {"type": "object", "properties": {
        "top_n": {**_INT, "default": 10},
        "exclude_hubs_percentile": {"type": "number", "description": "Drop nodes above this degree percentile (0-100)"},
        **_PROJECT}},
    "graph_stats": {"type": "object", "properties": {**_PROJECT}},
    "shortest_path": {"type": "object", "properties": {
        "source": {**_STR, "description": "Source concept label or keyword"},
        "target": {**_STR, "description": "Target concept label or keyword"},
        "max_hops": {**_INT, "default": 8, "description": "Maximum hops to consider"},
        "undirected": {"type": "boolean", "default": False, "description": "Ignore edge direction"},
        **_PROJECT}, "required": ["source", "target"]},
}

READ = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


class AskReply(BaseModel):
    """A subset of the one answer shape (``AskOut``, ``kg ask --json``), with the same names."""
    answer: str
    short_answer: str = ""  # the answer in a few words ("" if none)
    found: bool  # False: "not in the graph"
    cited: list[str]
    stop_reason: str
    rounds: list[dict[str, Any]] = []  # with trace=true: every drill-down round (seeds, units, decision)
    sources: list[dict[str, Any]] = []  # each cited unit's document, lines and source snippet ("ref": doc:lines)
    as_of_version: int | None = None  # the store's change-log version the answer reflects (at least)
    stale: bool = False  # an older version's cached answer, given without a bookmark during a catch-up


#: the ``bookmark`` argument of kgservice's tools: REST's X-KG-Bookmark request header, per call
Bookmark = Field(None, max_length=causal.MAX_TOKEN, description=(
    "Read-your-writes on a cluster: the `bookmark` a write tool returned (from any server); this call's "
    "reads wait until they see that write. Send it back unchanged; omit it when you have none."))
_WROTE = ("the bookmark of this call's writes (null: none needed): pass it as `bookmark` to a later call, on "
          "any server, to read what it wrote")


class JobReply(BaseModel):
    job_id: str
    status: str
    user: str | None = None
    created_at: str | None = None
    cancel_requested: bool = False
    bookmark: str | None = Field(default=None, description=_WROTE)


class SavedReply(SavedOut):
    """``SavedOut`` (REST's reply) with the bookmark REST sends in its X-KG-Bookmark header."""
    bookmark: str | None = Field(default=None, description=_WROTE)


def job_reply(job: Any) -> JobReply:
    """The same fields for a job from every tool (submit, list, cancel)."""
    return JobReply(job_id=job.id, status=job.status, user=job.user, created_at=job.created_at.isoformat(),
                    cancel_requested=job.cancel_requested)


class JobList(BaseModel):
    jobs: list[JobReply]


class JobStatus(BaseModel):
    job_id: str
    kind: str
    status: str
    user: str
    attempts: int
    error: str | None = None
    result: dict[str, Any] | None = None
    events: list[dict[str, Any]] = []


def _scope(ctx: Context | None) -> dict[str, Any] | None:
    """The HTTP request scope an MCP call came in (None: in-memory or stdio)."""
    request = None
    if ctx is not None:
        try:
            request = ctx.request_context.request
        except ValueError:  # no request: in-memory or stdio
            request = None
    scope = getattr(request, "scope", None)
    return scope if isinstance(scope, dict) else None


def _caller(sc: ServerContext, ctx: Context | None) -> Principal | None:
    scope = _scope(ctx)
    principal = scope.get(PRINCIPAL) if scope is not None else None
    return principal or sc.local


def _workspace(sc: ServerContext, ctx: Context | None) -> ServerContext:
    """The context of the workspace the call acts in: the one the key check chose for the HTTP
    request carrying it (``/mcp`` or ``/w/<name>/mcp``); the server's own without a request."""
    from kgservice.server.context import of_scope

    return of_scope(sc, _scope(ctx))


def _run(sc: ServerContext, ctx: Context | None, role: Role, fn: Callable[[Principal], Any],
         bookmark: str | None = None) -> Any:
    """Role check, then ``fn(principal)``; known failures become tool errors with their message.
    Read-your-writes as REST's X-KG-Bookmark (:mod:`kgservice.server.bookmarks`): every store read of
    the call waits for ``bookmark``, and a reply with a ``bookmark`` field gets the bookmark of the
    call's writes. An MCP client sends no per-call headers, so both travel as arguments / fields."""
    who = _caller(sc, ctx)
    refused = refusal(who, role)
    if refused is not None:
        raise ToolError(f"refused ({refused[0]}): {refused[1]}")
    assert who is not None
    try:
        wait_for = causal.parse(bookmark, where="the bookmark argument")
        with causal.reading_after(wait_for), causal.capturing() as got, causal.accepting_stale(not wait_for):
            result = fn(who)
        if isinstance(result, BaseModel) and "bookmark" in type(result).model_fields:
            result.bookmark = got.bookmark  # type: ignore[attr-defined]
        return result
    except ToolError:
        raise
    except KgError as exc:
        from kgservice.server.disclosure import redact

        raise ToolError(redact(str(exc), sc.settings)) from None


def _no_project(project_path: str | None) -> None:
    if project_path:
        raise ToolError("project_path is not supported: this server serves one knowledge base (omit it)")


def _text(result: tuple[str, int]) -> str:
    return result[0]


# -- graphify-compatible tools (text results, graphify's schemas) ------------------------------
def _label(label: str | None, node_id: str | None) -> str:
    value = (label or node_id or "").strip()
    if not value:
        raise ToolError("Provide a node label or id (accepted keys: label, node_id).")
    return value


def query_graph(sc: ServerContext, question: str, mode: str = "bfs", depth: int | None = None,
                token_budget: int = 2000, context_filter: list[str] | None = None, project_path: str | None = None,
                ctx: Context = None) -> str:  # type: ignore[assignment]
    _no_project(project_path)
    return _run(sc, ctx, Role.reader, lambda _: _text(gt.query_graph(
        sc.mirror.graph(), question, mode=mode, depth=depth, token_budget=token_budget, context_filter=context_filter)))


def get_node(sc: ServerContext, label: str | None = None, node_id: str | None = None, project_path: str | None = None,
             ctx: Context = None) -> str:  # type: ignore[assignment]
    _no_project(project_path)
    return _run(sc, ctx, Role.reader, lambda _: _text(gt.get_node(sc.mirror.graph(), _label(label, node_id))))


def get_neighbors(sc: ServerContext, label: str | None = None, node_id: str | None = None, relation_filter: str = "",
                  token_budget: int = 2000, project_path: str | None = None,
                  ctx: Context = None) -> str:  # type: ignore[assignment]
    _no_project(project_path)
    return _run(sc, ctx, Role.reader, lambda _: _text(gt.get_neighbors(
        sc.mirror.graph(), _label(label, node_id), relation_filter=relation_filter, token_budget=token_budget)))


def get_community(sc: ServerContext, community_id: int, token_budget: int = 2000, project_path: str | None = None,
                  ctx: Context = None) -> str:  # type: ignore[assignment]
    _no_project(project_path)
    return _run(sc, ctx, Role.reader, lambda _: _text(gt.get_community(sc.mirror.graph(), community_id, token_budget)))


def god_nodes(sc: ServerContext, top_n: int = 10, exclude_hubs_percentile: float | None = None,
              project_path: str | None = None, ctx: Context = None) -> str:  # type: ignore[assignment]
    _no_project(project_path)
    return _run(sc, ctx, Role.reader, lambda _: _text(gt.god_nodes(sc.mirror.graph(), top_n, exclude_hubs_percentile)))


def graph_stats(sc: ServerContext, project_path: str | None = None,
                ctx: Context = None) -> str:  # type: ignore[assignment]
    _no_project(project_path)
    return _run(sc, ctx, Role.reader, lambda _: _text(gt.graph_stats(sc.mirror.graph())))


def shortest_path(sc: ServerContext, source: str, target: str, max_hops: int = 8, undirected: bool = False,
                  project_path: str | None = None, ctx: Context = None) -> str:  # type: ignore[assignment]
    _no_project(project_path)
    return _run(sc, ctx, Role.reader,
                lambda _: _text(gt.shortest_path(sc.mirror.graph(), source, target, max_hops, undirected)))


# -- kgservice tools -------------------------------------------------------------------------------
def ask(sc: ServerContext, question: str = Field(min_length=1, max_length=4000),
        max_rounds: int = Field(DEFAULT_MAX_ROUNDS, ge=1, le=6), trace: bool = False,
        token_budget: int = Field(2000, ge=1), bookmark: str | None = Bookmark,
        ctx: Context = None) -> AskReply:  # type: ignore[assignment]
    """Answer a question from the graph, citing unit ids, or say it is not in the graph."""
    def run(_: Principal) -> AskReply:
        out, res = ops.ask(sc.kb, AskIn(question=question, max_rounds=max_rounds, trace=trace))
        sc.metrics.record_ask(res)
        return AskReply(answer=gt.cut_to_budget(out.answer, token_budget), short_answer=out.short_answer,
                        found=out.found, cited=out.cited,
                        stop_reason=out.stop_reason, rounds=out.rounds if trace else [],
                        sources=[src.model_dump(mode="json") for src in out.sources],
                        as_of_version=out.as_of_version, stale=out.stale)
    return _run(sc, ctx, Role.reader, run, bookmark=bookmark)


def search_units(sc: ServerContext, query: str = Field(min_length=1, max_length=4000),
                 top_k: int = Field(5, ge=1, le=50), threshold: float = 0.3,
                 bookmark: str | None = Bookmark, ctx: Context = None) -> list[SearchHit]:  # type: ignore[assignment]
    """Entry nodes nearest to a text by vector similarity (it ranks; it proves nothing)."""
    return _run(sc, ctx, Role.reader, lambda _: ops.search(sc.kb, SearchIn(query=query, top_k=top_k,
                                                                            threshold=threshold)), bookmark=bookmark)


def get_unit(sc: ServerContext, unit_id: str = Field(min_length=1),
             bookmark: str | None = Bookmark, ctx: Context = None) -> UnitOut:  # type: ignore[assignment]
    """One unit by id: its notation, family, what supersedes it, and where it comes from: its
    document (`doc`), line range (`lines`) and source lines (`snippet`), every stating document in `sources`."""
    return _run(sc, ctx, Role.reader, lambda _: ops.get_unit(sc.kb, unit_id), bookmark=bookmark)


def list_documents(sc: ServerContext, bookmark: str | None = Bookmark,
                   ctx: Context = None) -> list[dict]:  # type: ignore[assignment]
    """Every document in the knowledge base: id, title, version, units, when, who."""
    from kgservice.server.disclosure import document_fields

    return _run(sc, ctx, Role.reader, lambda _: [document_fields(d.model_dump(), show_paths=False)
                                                 for d in sc.kb.documents()], bookmark=bookmark)


def get_document(sc: ServerContext, doc_id: str = Field(min_length=1),
                 bookmark: str | None = Bookmark, ctx: Context = None) -> dict:  # type: ignore[assignment]
    """One document with its text and the lines each of its units comes from."""
    def run(_: Principal) -> dict:
        from kgservice.server.disclosure import document_fields

        rec = sc.kb.document(doc_id)
        return document_fields(rec.view(), show_paths=False)
    return _run(sc, ctx, Role.reader, run, bookmark=bookmark)


def expand(sc: ServerContext, seeds: list[str] = Field(min_length=1, max_length=20),
           mode: Literal["directed", "spread", "causal"] = "spread", max_hops: int = Field(3, ge=1, le=6),
           token_budget: int = Field(2000, ge=1), bookmark: str | None = Bookmark,
           ctx: Context = None) -> str:  # type: ignore[assignment]
    """Expand from nodes without the LLM: directed traversal (units), spreading activation (ranked nodes) or
    causal chains (what each node leads to, cause -> effect, every hop with its unit id)."""
    def run(_: Principal) -> str:
        out = sc.expand(ExpandIn(seeds=seeds, mode=mode, max_hops=max_hops, limit=500))
        return gt.cut_to_budget(ops.expand_text(out), token_budget)
    return _run(sc, ctx, Role.reader, run, bookmark=bookmark)


def ingest_text(sc: ServerContext, text: str = Field(min_length=1, max_length=200_000),
                mode: Literal["summary", "detail"] = "summary",
                source: str | None = Field(None, min_length=1, max_length=200),
                bookmark: str | None = Bookmark, ctx: Context = None) -> JobReply:  # type: ignore[assignment]
    """Queue text for LLM extraction into units (writer role). Returns a job id: poll job_status.
    With `source` the text is the document `<you>/<source>`: the same source again replaces
    its facts; without, the facts are added."""
    def run(who: Principal) -> JobReply:
        body = IngestIn(text=text, mode=mode, doc=source or "mcp")
        payload = ops.validate_ingest(sc.kb, body, who, named=source is not None)
        job = sc.kb.jobs.submit("ingest", payload, who.user, None)
        return job_reply(job)
    return _run(sc, ctx, Role.writer, run, bookmark=bookmark)


def ingest_file(sc: ServerContext, data_base64: str = Field(min_length=4, max_length=MAX_FILE_B64),
                name: str = Field(min_length=1, max_length=200),
                mode: Literal["summary", "detail"] = "summary",
                bookmark: str | None = Bookmark, ctx: Context = None) -> JobReply:  # type: ignore[assignment]
    """Queue a PDF, Word (DOCX), PowerPoint (PPTX), web page (HTML) or Excel (XLSX) file for
    extraction (writer role): `data_base64` its bytes, `name` its file name (the suffix gives the
    format). It becomes the document `<you>/<name>` (the same name again replaces it), its
    pages kept so a citation names its page. An unreadable file (password-protected or scanned
    PDF, damaged file) is refused now, saying why. Returns a job id: poll job_status."""
    def run(who: Principal) -> JobReply:
        body = IngestIn(file=data_base64, mode=mode, doc=name)
        payload = ops.validate_ingest(sc.kb, body, who, named=True)
        job = sc.kb.jobs.submit("ingest", payload, who.user, None)
        return job_reply(job)
    return _run(sc, ctx, Role.writer, run, bookmark=bookmark)


def job_status(sc: ServerContext, job_id: str = Field(min_length=1),
               bookmark: str | None = Bookmark, ctx: Context = None) -> JobStatus:  # type: ignore[assignment]
    """Status of an ingest job you submitted (admins: any job), with its events so far."""
    def run(who: Principal) -> JobStatus:
        job = ops.visible_job(sc.kb, job_id, who)
        events = [ops.job_dict(e, sc.settings) for e in sc.kb.jobs.events(job_id, 0)]
        return JobStatus(job_id=job.id, kind=job.kind, status=job.status, user=job.user, attempts=job.attempts,
                         error=job.error, result=job.result, events=events[-20:])
    return _run(sc, ctx, Role.reader, run, bookmark=bookmark)


def list_jobs(sc: ServerContext, status: Literal["queued", "running", "done", "failed", "cancelled"] | None = None,
              limit: int = Field(20, ge=1, le=1000), bookmark: str | None = Bookmark,
              ctx: Context = None) -> JobList:  # type: ignore[assignment]
    """Your ingest jobs, newest first (admins: everyone's), optionally of one status (writer role)."""
    def run(who: Principal) -> JobList:
        found = ops.list_jobs(sc.kb, who, status=status, limit=limit)
        return JobList(jobs=[job_reply(j) for j in found])
    return _run(sc, ctx, Role.writer, run, bookmark=bookmark)


def cancel_job(sc: ServerContext, job_id: str = Field(min_length=1),
               bookmark: str | None = Bookmark, ctx: Context = None) -> JobReply:  # type: ignore[assignment]
    """Cancel an ingest job you submitted (admins: any). Queued: cancelled at once. Running: a cancel
    is requested (best effort; an ingest already being stored completes). Finished: an error."""
    def run(who: Principal) -> JobReply:
        j = ops.cancel_job(sc.kb, job_id, who)
        return job_reply(j)
    return _run(sc, ctx, Role.writer, run, bookmark=bookmark)


def save_result(sc: ServerContext, question: str = Field(min_length=1), answer: str = Field(min_length=1),
                outcome: Literal["useful", "dead_end", "corrected"] | None = None,
                nodes: list[str] | None = None, bookmark: str | None = Bookmark,
                ctx: Context = None) -> SavedReply:  # type: ignore[assignment]
    """Save a Q&A result with its outcome (graphify save-result), attributed to you (writer role)."""
    return _run(sc, ctx, Role.writer, lambda who: SavedReply(**ops.save_result(
        sc.kb, SaveResultIn(question=question, answer=answer, outcome=outcome, nodes=nodes or []), who).model_dump()),
        bookmark=bookmark)


@dataclass(frozen=True)
class ToolSpec:
    """One tool of :data:`TOOLS`: the function (its name is the tool's), its annotations, and for a
    graphify tool its description (else the docstring) and graphify's input schema."""

    fn: Callable[..., Any]
    annotations: ToolAnnotations
    description: str | None = None
    graphify: bool = False  # graphify's input schema (GRAPHIFY_SCHEMAS) and a text result
    structured_output: bool | None = None  # None: from the return annotation


#: every MCP tool, in the order tools/list gives them
TOOLS: list[ToolSpec] = [
    ToolSpec(query_graph, READ, "Search the knowledge graph (BFS or DFS from the question's nodes); the text of "
                                "`kg query`.", graphify=True),
    ToolSpec(get_node, READ, "One node's details by label or id (the node block of `kg explain`).", graphify=True),
    ToolSpec(get_neighbors, READ, "A node's direct neighbours with relations (`kg explain --all`).", graphify=True),
    ToolSpec(get_community, READ, "The nodes of one community.", graphify=True),
    ToolSpec(god_nodes, READ, "The most connected nodes.", graphify=True),
    ToolSpec(graph_stats, READ, "Node, edge and community counts; confidence breakdown.", graphify=True),
    ToolSpec(shortest_path, READ, "Shortest path between two concepts (`kg path`); directed unless "
                                  "undirected=true.", graphify=True),
    ToolSpec(ask, READ),
    ToolSpec(search_units, READ),
    ToolSpec(get_unit, READ),
    ToolSpec(list_documents, READ),
    ToolSpec(get_document, READ),
    ToolSpec(expand, READ, structured_output=False),
    ToolSpec(ingest_text, WRITE),
    ToolSpec(ingest_file, WRITE),
    ToolSpec(job_status, READ),
    ToolSpec(list_jobs, READ),
    ToolSpec(cancel_job, WRITE),
    ToolSpec(save_result, WRITE),
]


def bound(sc: ServerContext, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with the server context given: the same name, docstring, parameters (but ``sc``) and
    types, which is what the MCP SDK reads to build the tool's schema and pass the Context."""
    sig = inspect.signature(fn, eval_str=True)

    def tool(*args: Any, **kwargs: Any) -> Any:
        return fn(_workspace(sc, kwargs.get("ctx")), *args, **kwargs)

    tool.__name__ = tool.__qualname__ = fn.__name__
    tool.__doc__ = fn.__doc__
    tool.__signature__ = sig.replace(parameters=list(sig.parameters.values())[1:])  # type: ignore[attr-defined]
    tool.__annotations__ = {k: v for k, v in typing.get_type_hints(fn).items() if k != "sc"}
    return tool


def build_mcp(sc: ServerContext) -> MCPServer:
    """One MCPServer per app (the SDK's session manager runs once per instance): the tools of
    :data:`TOOLS` bound to ``sc``."""
    graphify_tools = [Tool.from_function(bound(sc, t.fn), name=t.fn.__name__, description=t.description,
                                         annotations=t.annotations, structured_output=False)
                      .model_copy(update={"parameters": GRAPHIFY_SCHEMAS[t.fn.__name__]})
                      for t in TOOLS if t.graphify]
    from kgservice import __version__

    # serverInfo.version: which kgservice a client talks to (it was empty)
    mcp = MCPServer("kgservice", version=__version__, instructions=INSTRUCTIONS, tools=graphify_tools,
                    log_level="WARNING")
    for t in TOOLS:
        if not t.graphify:
            # the docstring without its source indentation (was a nested function's, 8 spaces deep)
            mcp.add_tool(bound(sc, t.fn), description=t.description or inspect.cleandoc(t.fn.__doc__ or ""),
                         annotations=t.annotations,
                         structured_output=t.structured_output)
    return mcp

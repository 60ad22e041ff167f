"""``query``: seed picking, BFS/DFS traversal, budgeted rendering — graphify's or kgservice's.

``run_query(style="graphify")`` (the ``graphify`` script) answers exactly as graphify
0.9.96's CLI: seeds as graphify picks them, depth 2, the traversal graph networkx would
build (nxview.py), nodes ordered seeds / hop distance / -degree / id, ~3 characters per
token with graphify's "Complete answer over budget" / "TRUNCATED" rule::

    Graph: graphify-out/graph.json (5 nodes) | Traversal: BFS depth=2 | Start: ['run()'] | 3 nodes found

    NODE run() [src=app/main.py loc=L3 community=None]
    ...
    EDGE run() --calls [EXTRACTED context=call]--> .login() at=app/main.py:L4

``style="rich"`` (``kg query``) keeps kgservice's richer defaults: vocabulary expansion
(a ``Query expanded to …`` first line; seeds picked by graphify's rules on the expanded
token string), BFS 3 / DFS 6 hops, nodes ranked seeds first, then IDF-weighted term
relevance, hop distance and degree, edges among higher-ranked nodes first, the body cut at
``budget × 4`` characters, reflect's ``learning=`` status on NODE lines.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from kgservice.graphify import EXIT_AMBIGUOUS, EXIT_NOT_FOUND, EXIT_OK
from kgservice.graphify.loader import Graph
from kgservice.graphify.nxview import HubCheck, hop_distances
from kgservice.graphify.seeds import resolve_seed
from kgservice.graphify.scoring import (
    compute_idf,
    find_node_tiers,
    query_name_refusal,
    query_seeds,
    sanitize,
)
from kgservice.graphify.terms import fold, graphify_terms, search_tokens

BFS_DEPTH = 3
DFS_DEPTH = 6
CHARS_PER_TOKEN = 4
DEFAULT_BUDGET = 2000
HUB_FLOOR = 50
NO_MATCH = "No matching nodes found."

# --context values and their canonical edge contexts (graphify code graphs carry
# `context` on edges: call, import, field, parameter_type, return_type, generic_arg, ...)
_CONTEXT_ALIASES = {
    **dict.fromkeys(["param", "params", "parameter", "parameters", "argument", "arguments", "arg", "args"],
                    "parameter_type"),
    **dict.fromkeys(["return", "returns", "returned"], "return_type"),
    **dict.fromkeys(["generic", "generics", "template", "templates"], "generic_arg"),
    **dict.fromkeys(["annotation", "annotations", "decorator", "decorators"], "attribute"),
    **dict.fromkeys(["calls", "called", "invoke", "invocation"], "call"),
    **dict.fromkeys(["fields", "property", "properties", "member", "members"], "field"),
    **dict.fromkeys(["imports", "imported", "module", "modules"], "import"),
    **dict.fromkeys(["exports", "exported"], "export"),
}
# words in a question that imply a context filter (only on graphs whose edges carry one)
_CONTEXT_HINTS = (
    ("call", {"call", "calls", "called", "caller", "callers", "invoke", "invokes", "invoked"}),
    ("import", {"import", "imports", "imported", "module", "modules"}),
    ("field", {"field", "fields", "member", "members", "property", "properties"}),
    ("parameter_type", {"parameter", "parameters", "param", "params", "argument", "arguments"}),
    ("return_type", {"return", "returns", "returned"}),
    ("generic_arg", {"generic", "generics", "template", "templates"}),
)


def normalize_contexts(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for v in values or []:
        key = fold(str(v)).strip()
        if not key:
            continue
        key = _CONTEXT_ALIASES.get(key, key)
        if key not in out:
            out.append(key)
    return out


def infer_contexts(question: str) -> list[str]:
    words = {fold(w) for w in question.replace("?", " ").replace(",", " ").split()}
    return [ctx for ctx, hints in _CONTEXT_HINTS if words & hints]


def _graph_has_contexts(g: Graph) -> bool:
    flag = g.cache.get("has_contexts")
    if flag is None:
        flag = any(lk.data.get("context") for lk in g.links)
        g.cache["has_contexts"] = flag
    return flag


def _link_filter(filters: list[str]):
    """Keep a link whose graphify ``context`` — or our ``kind``/``family``/relation — is asked for."""
    if not filters:
        return None
    wanted = set(filters)

    def keep(data: dict) -> bool:
        for key in ("context", "kind", "family"):
            v = data.get(key)
            if v is not None and fold(str(v)) in wanted:
                return True
        rel = data.get("relation")
        return rel is not None and fold(str(rel)) in wanted

    return keep


# --- learning overlay (written by reflect) -------------------------------------------------


def learning_overlay(g: Graph, links_fallback: bool = False) -> dict:
    """The learning sidecar's entries with their ``stale`` flag; ``links_fallback`` (kg's answers)
    judges a node whose source file is not on disk by its relations (reflect.is_stale)."""
    key = "overlay:links" if links_fallback else "overlay"
    ov = g.cache.get(key)
    if ov is None and not (Path(g.path).parent / ".graphify_learning.json").exists():
        ov = g.cache[key] = {}  # no sidecar: no need to import reflect (start-up time)
    if ov is None:
        from kgservice.graphify.reflect import load_learning_overlay

        try:
            ov = load_learning_overlay(g.path, g, links_fallback=links_fallback)
        except Exception:
            ov = {}
        g.cache[key] = ov
    return ov


# --- traversal -------------------------------------------------------------------------------


@dataclass
class Traversal:
    nodes: list[str]  # visit order
    dist: dict[str, int]
    links: list[int] = field(default_factory=list)


class _View(HubCheck):
    """Undirected adjacency over the links a context filter keeps (kg query's traversal)."""

    def __init__(self, g: Graph, keep=None):
        self.g = g
        self.keep = keep
        self._nbrs: dict[str, list[str]] = {}
        self._hub: int | None = None

    def link_ok(self, i: int) -> bool:
        return self.keep is None or self.keep(self.g.links[i].data)

    def neighbors(self, nid: str) -> list[str]:
        nb = self._nbrs.get(nid)
        if nb is None:
            g = self.g
            seen: dict[str, None] = {}
            for i in g.out_links(nid):
                if self.link_ok(i):
                    v = g.links[i].v
                    if v != nid:
                        seen.setdefault(v)
            for i in g.in_links(nid):
                if self.link_ok(i):
                    u = g.links[i].u
                    if u != nid:
                        seen.setdefault(u)
            nb = list(seen)
            self._nbrs[nid] = nb
        return nb

    def degree(self, nid: str) -> int:
        g = self.g
        if self.keep is None:
            return g.link_count(nid)
        return sum(1 for i in g.out_links(nid) if self.link_ok(i)) + sum(
            1 for i in g.in_links(nid) if self.link_ok(i))

    def hub_threshold(self) -> int:
        g = self.g
        if self.keep is None:
            deg = dict.fromkeys(g.order, 0)
            for k, v in g._out.items():  # type: ignore[union-attr]
                deg[k] += len(v)
            for k, v in g._in.items():  # type: ignore[union-attr]
                deg[k] += len(v)
            degs = list(deg.values())
        else:
            degs = [self.degree(n) for n in g.order]
        if not degs:
            return HUB_FLOOR
        degs.sort()
        return max(HUB_FLOOR, degs[int(len(degs) * 0.99)])


def bfs(view: _View, seeds: list[str], depth: int) -> Traversal:
    seed_set = set(seeds)
    dist = {s: 0 for s in seeds}
    order = list(dict.fromkeys(seeds))
    frontier = list(order)
    for d in range(1, depth + 1):
        nxt: list[str] = []
        for n in frontier:
            if n not in seed_set and view.is_hub(n):
                continue
            for nb in view.neighbors(n):
                if nb not in dist:
                    dist[nb] = d
                    nxt.append(nb)
        order += nxt
        frontier = nxt
        if not frontier:
            break
    return Traversal(order, dist)


def dfs(view: _View, seeds: list[str], depth: int) -> Traversal:
    seed_set = set(seeds)
    visited: dict[str, int] = {}
    stack = [(n, 0) for n in reversed(seeds)]
    while stack:
        node, d = stack.pop()
        if node in visited or d > depth:
            continue
        visited[node] = d
        if node not in seed_set and view.is_hub(node):
            continue
        for nb in reversed(view.neighbors(node)):
            if nb not in visited:
                stack.append((nb, d + 1))
    # hop distance from the seeds inside the visited set (DFS depth is not distance)
    dist = hop_distances(view.neighbors, [s for s in seeds if s in visited], visited)
    return Traversal(list(visited), dist)


def induced_links(view: _View, nodes: set[str]) -> list[int]:
    g = view.g
    out = []
    for n in nodes:
        for i in g.out_links(n):
            lk = g.links[i]
            if lk.v != n and lk.v in nodes and view.link_ok(i):
                out.append(i)
    return out


# --- rendering -------------------------------------------------------------------------------


def _attrs_suffix(d: dict) -> str:
    attrs = d.get("attributes")
    if not isinstance(attrs, dict) or not attrs:
        return ""
    pairs = []
    for k, v in sorted(attrs.items()):
        if isinstance(v, (dict, list)):
            s = json.dumps(v, sort_keys=True)
        elif isinstance(v, str):
            s = f'"{v}"'
        elif isinstance(v, bool):
            s = "true" if v else "false"
        elif v is None:
            s = "null"
        else:
            s = str(v)
        if len(s) > 60:
            s = s[:57] + "..."
        pairs.append(f"{k}={s}")
        if len(pairs) >= 10:
            pairs.append("...")
            break
    summary = ", ".join(pairs)
    if len(summary) > 200:
        summary = summary[:197] + "..."
    return f" attrs={{{sanitize(summary)}}}"


def community_of(d: dict) -> str:
    """graphify's ``community_name or community``: a null community prints ``None``."""
    return str(d.get("community_name") or d.get("community", ""))


def node_line(g: Graph, nid: str, overlay: dict | None, as_graphify: bool = False) -> str:
    """One NODE line. ``as_graphify``: the label as graphify prints it, a null label empty
    (kg's own answer names such a node by its id)."""
    d = g.attrs[nid]
    label = g.raw_label(nid) if as_graphify else g.label(nid)
    learning = ""
    entry = overlay.get(nid) if overlay else None
    if entry:
        status = sanitize(str(entry.get("status", "")))
        if status:
            learning = f" learning={status}{':stale' if entry.get('stale') else ''}"
    return (f"NODE {sanitize(label)} [src={sanitize(str(d.get('source_file', '')))} "
            f"loc={sanitize(str(d.get('source_location', '')))} community={sanitize(community_of(d))}"
            f"{learning}{_attrs_suffix(d)}]")


def edge_line(g: Graph, i: int) -> str:
    lk = g.links[i]
    d = lk.data
    ctx = d.get("context")
    ctx_s = f" context={sanitize(ctx)}" if ctx else ""
    loc = str(d.get("source_location") or "")
    at = f" at={sanitize(d.get('source_file') or '')}:{sanitize(loc)}" if loc else ""
    return (f"EDGE {sanitize(g.label(lk.src))} --{sanitize(d.get('relation', ''))} "
            f"[{sanitize(d.get('confidence', ''))}{ctx_s}]--> {sanitize(g.label(lk.tgt))}{at}")


def display_path(path: Path) -> str:
    try:
        p = Path(path).resolve()
        try:
            return p.relative_to(Path.cwd().resolve()).as_posix()
        except ValueError:
            return p.as_posix()
    except (OSError, RuntimeError, ValueError):
        return str(path)


def relevance(g: Graph, tokens: list[str], idf: dict[str, float]):
    def score(nid: str) -> float:
        text = fold(g.label(nid))
        return sum(idf.get(t, 1.0) for t in tokens if t in text)
    return score


def render(g: Graph, seeds: list[str], trav: Traversal, view: _View, *, mode: str, depth: int, budget: int,
           tokens: list[str], contexts: list[str], context_source: str | None, given: bool = False,
           unresolved: list[str] | None = None) -> str:
    nodes = trav.nodes
    node_set = set(nodes)
    idf = compute_idf(g, tokens) if tokens else {}
    rel = relevance(g, tokens, idf)
    seed_hits = [s for s in seeds if s in node_set]
    seed_set = set(seed_hits)
    rest = sorted((n for n in nodes if n not in seed_set),
                  key=lambda n: (-rel(n), trav.dist.get(n, 1 << 30), -view.degree(n), n))
    ranked = seed_hits + rest
    rank = {n: i for i, n in enumerate(ranked)}
    links = induced_links(view, node_set)
    links.sort(key=lambda i: (max(rank[g.links[i].u], rank[g.links[i].v]),
                              min(rank[g.links[i].u], rank[g.links[i].v]), i))
    overlay = learning_overlay(g, links_fallback=True)
    node_lines = [node_line(g, n, overlay) for n in ranked]
    edge_lines = [edge_line(g, i) for i in links]

    parts = [f"Graph: {display_path(g.path)} ({len(g)} nodes)",
             f"Traversal: {mode.upper()} depth={depth}",
             f"Start{' (given)' if given else ''}: {[g.label(n) for n in seeds]}"]
    if unresolved:
        parts.append(f"Unresolved seeds (skipped): {unresolved}")
    if contexts:
        parts.append(f"Context: {', '.join(contexts)} ({context_source})")
    parts.append(f"{len(nodes)} nodes found")
    header = " | ".join(parts)

    lines = node_lines + edge_lines
    body = "\n".join(lines)
    limit = budget * CHARS_PER_TOKEN
    if len(body) > limit:
        cut = body.rfind("\n", 0, limit + 1)
        cut = cut if cut > 0 else limit
        seed_block = sum(len(line) + 1 for line in node_lines[: len(seed_hits)]) - 1
        cut = max(cut, seed_block)  # the seeds are never cut
        kept = body[:cut]
        kept_lines = kept.split("\n")
        shown_nodes = sum(1 for line in kept_lines if line.startswith("NODE "))
        shown_edges = sum(1 for line in kept_lines if line.startswith("EDGE "))
        body = (kept + f"\n... (truncated at ~{budget} token budget: {shown_nodes} of {len(node_lines)} nodes, "
                f"{shown_edges} of {len(edge_lines)} edges shown - use --budget N for more)")
    return header + "\n\n" + body


# --- graphify's rendering (the ``graphify`` script's default) ----------------------------------

GRAPHIFY_DEPTH = 2
GRAPHIFY_CHARS_PER_TOKEN = 3


def render_graphify(g: Graph, question: str, seeds: list[str], *, mode: str, depth: int, budget: int,
                    contexts: list[str] | None, graph_path: Path | None, given: bool = False,
                    unresolved: list[str] | None = None, overlay: dict | None = None) -> str:
    """graphify's ``_render_query`` + ``_subgraph_to_text``, byte for byte (see nxview for the graph)."""
    from kgservice.graphify.nxview import TraversalView, bfs, dfs

    explicit = normalize_contexts(contexts)
    ctx_source: str | None
    if explicit:
        ctx, ctx_source = explicit, "explicit"
    else:
        ctx = infer_contexts(question)
        ctx_source = "heuristic" if ctx else None
    view = TraversalView(g, ctx or None)
    nodes, edges = dfs(view, seeds, depth) if mode == "dfs" else bfs(view, seeds, depth)
    parts = [f"Traversal: {mode.upper()} depth={depth}",  # labels as stored: a null one is None here, "" below
             f"Start{' (given)' if given else ''}: {[g.raw_label(n) for n in seeds]}"]
    if unresolved:
        parts.append(f"Unresolved seeds (skipped): {unresolved}")
    if graph_path is not None:
        parts.insert(0, f"Graph: {display_path(graph_path)} ({len(g)} nodes)")
    if ctx:
        parts.append(f"Context: {', '.join(ctx)} ({ctx_source})")
    parts.append(f"{len(nodes)} nodes found")
    header = " | ".join(parts) + "\n\n"

    seed_hits = [n for n in seeds if n in nodes]
    seed_set = set(seeds)
    dist = hop_distances(view.adj, seed_hits, nodes)
    ordered = seed_hits + sorted(nodes - seed_set, key=lambda n: (dist.get(n, 1 << 30), -view.degree(n), str(n)))
    lines = [node_line(g, n, overlay, as_graphify=True) for n in ordered]
    n_nodes = len(lines)
    for u, v in edges:
        if u in nodes and v in nodes:
            for d in view.datas(u, v):
                src, tgt = d.get("_src", u), d.get("_tgt", v)
                if {src, tgt} != {u, v}:
                    src, tgt = u, v
                ctx_v = d.get("context")
                ctx_s = f" context={sanitize(str(ctx_v))}" if ctx_v else ""
                loc = str(d.get("source_location") or "")
                at = f" at={sanitize(str(d.get('source_file') or ''))}:{sanitize(loc)}" if loc else ""
                lines.append(f"EDGE {sanitize(g.raw_label(src))} --{sanitize(str(d.get('relation', '')))} "
                             f"[{sanitize(str(d.get('confidence', '')))}{ctx_s}]--> {sanitize(g.raw_label(tgt))}{at}")
    return header + cut_to_budget(lines, n_nodes, len(seed_hits), budget)


def cut_to_budget(lines: list[str], n_nodes: int, n_seeds: int, budget: int) -> str:
    """graphify's budget rule: ~3 characters per token; once every NODE line fits, all
    EDGE lines are kept (with a "Complete answer over budget" notice); otherwise only
    NODE lines survive, between a TRUNCATED notice and an end marker."""
    output = "\n".join(lines)
    char_budget = budget * GRAPHIFY_CHARS_PER_TOKEN
    if len(output) <= char_budget:
        return output
    cut_at = output[:char_budget].rfind("\n")
    cut_at = cut_at if cut_at > 0 else char_budget
    if n_seeds:
        seed_end = sum(len(lines[i]) + 1 for i in range(n_seeds)) - 1
        cut_at = max(cut_at, min(seed_end, len(output)))
    shown = output[:cut_at].count("\nNODE ") + (1 if output.startswith("NODE ") else 0)
    cut = n_nodes - shown
    if cut == 0:
        n_edges = len(lines) - n_nodes
        return (f"[i] Complete answer over budget: all {n_nodes} nodes and {n_edges} edges shown "
                f"(~{len(output) // 3} tokens vs the requested ~{budget}-token budget). Edges are never "
                f"dropped once every node fits, so this is already the full answer — raising --budget "
                f"further will not shrink it. Narrow with context_filter=['call'] or use get_node for a "
                f"specific symbol to reduce size instead.\n\n") + output
    node_chars = sum(len(line) + 1 for line in lines[:n_nodes])
    full = (min(node_chars, len(output)) + 2) // 3
    return (f"[!] TRUNCATED: showing {shown} of {n_nodes} nodes (~{budget}-token budget). The answer may be "
            f"among the {cut} cut nodes — raise the token budget to {full} to get all {n_nodes} "
            f"(CLI: --budget {full}, MCP: token_budget={full}) or narrow the query (e.g. "
            f"context_filter=['call'], or get_node for a specific symbol).\n\n"
            + output[:cut_at]
            + f"\n... (truncated — {cut} more nodes cut by ~{budget}-token budget."
            f" Narrow with context_filter=['call'] or use get_node for a specific symbol)")


def graph_root(graph_path: Path) -> Path:
    """``<root>/graphify-out/graph.json`` -> root; a graph elsewhere -> its own directory."""
    from kgservice.graphify.loader import default_out_dir

    gp = Path(graph_path).resolve()
    out_name = Path(os.path.normpath(str(default_out_dir()))).name
    return gp.parent.parent if gp.parent.name == out_name else gp.parent


# --- the command -------------------------------------------------------------------------------


@dataclass
class QueryResult:
    text: str
    exit_code: int = EXIT_OK
    seeds: list[str] = field(default_factory=list)
    tokens: list[str] | None = None
    notes: list[str] = field(default_factory=list)  # for stderr


def _given_seeds(g: Graph, values: list[str], root: Path | None, rich: bool):
    start: list[str] = []
    unresolved: list[str] = []
    refusals: list[str] = []
    for value in values:
        nid = resolve_seed(g, value, root)
        if nid is None and rich:
            nid, _r = _resolve_seed_tiers(g, value)
        if nid is None:
            refusal = query_name_refusal(g, value)
            if refusal:
                if refusal not in refusals:
                    refusals.append(refusal)
            elif value not in unresolved:
                unresolved.append(value)
        elif nid not in start:
            start.append(nid)
    return start, unresolved, refusals


def _resolve_seed_tiers(g: Graph, value: str) -> tuple[str | None, str | None]:
    """kg's extra fallback for ``--seed``: a unique prefix or substring hit of the matcher tiers."""
    value = value.rstrip("/\\") or value
    _se, _ex, prefix, substring = find_node_tiers(g, value)
    for tier in (prefix, substring):
        if len(tier) == 1:
            return tier[0], None
    return None, None


def run_query(g: Graph, question: str, *, mode: str = "bfs", budget: int = DEFAULT_BUDGET,
              contexts: list[str] | None = None, seeds: list[str] | None = None, expand: bool | None = None,
              llm_model: str | None = None, llm_complete=None, style: str = "graphify",
              learning: bool | None = None, graph_path: Path | None | bool = True,
              seed_root: Path | None = None, depth: int | None = None) -> QueryResult:
    """Answer ``question`` from ``g``.

    ``style="graphify"`` (the ``graphify`` script) answers exactly as graphify's CLI:
    depth 2, graphify's node order and budget rule, no vocabulary expansion unless
    ``expand=True``, no ``learning=`` suffix unless ``learning=True``. ``style="rich"``
    (``kg query``) keeps kgservice's defaults: expansion on, BFS depth 3 / DFS 6, nodes
    ranked by relevance, learning suffix shown. ``graph_path=True`` names ``g.path`` in
    the header, ``None`` leaves the ``Graph:`` part out (graphify's MCP form). ``depth``
    overrides graphify's 2 (its MCP tool passes 3) or the rich style's BFS 3 / DFS 6.
    """
    rich = style == "rich"
    if expand is None:
        expand = rich or bool(llm_model)
    if learning is None:
        learning = rich
    gp = g.path if graph_path is True else (graph_path or None)
    root = seed_root if seed_root is not None else (graph_root(g.path) if g.path else None)
    if not rich:
        depth = GRAPHIFY_DEPTH if depth is None else depth
        overlay = learning_overlay(g) if learning else None

        def draw(start: list[str], given: bool = False, unresolved: list[str] | None = None) -> str:
            return render_graphify(g, question, start, mode=mode, depth=depth, budget=budget, contexts=contexts,
                                   graph_path=gp, given=given, unresolved=unresolved, overlay=overlay)
    if seeds:
        start, unresolved, refusals = _given_seeds(g, seeds, root, rich)
        if not start:
            if refusals:
                return QueryResult("\n".join(refusals), EXIT_AMBIGUOUS)
            return QueryResult("No unique node match for --seed: " + ", ".join(seeds), EXIT_NOT_FOUND)
        if not rich:
            return QueryResult(draw(start, True, unresolved), EXIT_OK, start)
        return _rich_given(g, question, start, unresolved, mode=mode, budget=budget, contexts=contexts, depth=depth)

    refusal = query_name_refusal(g, question)
    if refusal:
        return QueryResult(refusal, EXIT_AMBIGUOUS)

    notes: list[str] = []
    prefix, scoring_query, exp_tokens = "", question, None
    if expand:
        exp = _expansion(g, question, llm_model, llm_complete, notes)
        exp_tokens = exp.tokens
        prefix = f"Query expanded to (from graph vocab, {len(exp.tokens)} tokens): [{', '.join(exp.tokens)}]\n"
        if not exp.tokens:
            return QueryResult(prefix + "No token of the graph's vocabulary matches this question; "
                               "the graph has nothing on it, so no traversal was run.", EXIT_NOT_FOUND,
                               tokens=[], notes=notes)
        scoring_query = exp.query_string
        if scoring_query != question:
            refusal = query_name_refusal(g, scoring_query)
            if refusal:
                return QueryResult(prefix + refusal, EXIT_AMBIGUOUS, tokens=exp_tokens, notes=notes)
    terms = graphify_terms(scoring_query)
    start = query_seeds(g, terms)
    if expand:
        # a question that is exactly one node's name starts there, even when its label
        # is not made of vocabulary tokens ("Python 3.12")
        source_exact, exact, _p, _s = find_node_tiers(g, question)
        tier = source_exact or exact
        if len(tier) == 1 and tier[0] not in start:
            start.insert(0, tier[0])
    if not start:
        return QueryResult(prefix + NO_MATCH, EXIT_NOT_FOUND, tokens=exp_tokens, notes=notes)
    if not rich:
        return QueryResult(prefix + draw(start), EXIT_OK, start, exp_tokens, notes)
    text = _rich_render(g, question, start, terms, mode=mode, budget=budget, contexts=contexts, depth=depth)
    return QueryResult(prefix + text, EXIT_OK, start, exp_tokens, notes)


def kg_query(g: Graph, question: str, *, dfs: bool = False, budget: int = DEFAULT_BUDGET,
             contexts: list[str] | None = None, seeds: list[str] | None = None, expand: bool = True,
             llm_model: str | None = None, depth: int | None = None) -> QueryResult:
    """``kg query``'s answer, the one call behind ``kg query``, ``POST /v1/graphify/query`` and
    the MCP ``query_graph`` tool, so the three give the same text for the same arguments.
    ``depth``: hops to walk; None is the command's, BFS 3 / DFS 6 (graphify's MCP schema has a
    ``depth``, which the tool passes on when its caller gives one).

    They each called :func:`run_query` themselves, and when its default style became
    graphify's (for the ``graphify`` script) the two server surfaces silently answered at
    graphify's depth 2 while ``kg query`` walked 3 — hence one place that says ``"rich"``.
    """
    return run_query(g, question, mode="dfs" if dfs else "bfs", budget=budget, contexts=contexts or None,
                     seeds=seeds or None, expand=expand, llm_model=llm_model, style="rich", depth=depth)


def _expansion(g: Graph, question: str, llm_model, llm_complete, notes: list[str]):
    from kgservice.graphify import vocabulary

    if llm_model:
        try:
            exp = vocabulary.choose_with_llm(g, question, llm_model, complete=llm_complete)
            if exp is not None:
                return exp
        except Exception as exc:  # an unreachable model must not cost the answer
            notes.append(f"warning: the LLM chooser failed ({type(exc).__name__}: {exc}); "
                         "using the graph's own expansion")
    return vocabulary.expand(g, question)


def _rich_contexts(g: Graph, question: str, contexts: list[str] | None):
    explicit = normalize_contexts(contexts)
    if explicit:
        return explicit, "explicit"
    ctx = infer_contexts(question)
    if ctx and _graph_has_contexts(g):
        return ctx, "heuristic"
    return [], None


def _rich_given(g, question, start, unresolved, *, mode, budget, contexts, depth=None) -> QueryResult:
    ctx, ctx_source = _rich_contexts(g, question, contexts)
    view = _View(g, _link_filter(ctx))
    depth = depth or (DFS_DEPTH if mode == "dfs" else BFS_DEPTH)
    trav = dfs(view, start, depth) if mode == "dfs" else bfs(view, start, depth)
    tokens = list(dict.fromkeys(tok for t in graphify_terms(question) for tok in search_tokens(t)))
    text = render(g, start, trav, view, mode=mode, depth=depth, budget=budget, tokens=tokens,
                  contexts=ctx, context_source=ctx_source, given=True, unresolved=unresolved)
    return QueryResult(text, EXIT_OK, start)


def _rich_render(g, question, start, terms, *, mode, budget, contexts, depth=None) -> str:
    ctx, ctx_source = _rich_contexts(g, question, contexts)
    view = _View(g, _link_filter(ctx))
    depth = depth or (DFS_DEPTH if mode == "dfs" else BFS_DEPTH)
    trav = dfs(view, start, depth) if mode == "dfs" else bfs(view, start, depth)
    rank_tokens = list(dict.fromkeys(tok for t in terms for tok in search_tokens(t)))
    return render(g, start, trav, view, mode=mode, depth=depth, budget=budget, tokens=rank_tokens,
                  contexts=ctx, context_source=ctx_source)

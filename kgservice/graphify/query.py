"""``query``: vocabulary expansion, seed picking, BFS/DFS traversal, budgeted rendering.

Output shape follows graphify's ``query`` (and the inline NetworkX fallback of its skills)::

    Query expanded to (from graph vocab, 2 tokens): [吸烟, smoking]
    Graph: graphify-out/graph.json (717 nodes) | Traversal: BFS depth=3 | Start: ['吸烟', 'smoking'] | 35 nodes found

    NODE 吸烟 [src=06_smoking_and_health.units loc=#smk-002 community=1]
    ...
    EDGE 吸烟 --同义 [EXTRACTED]--> smoking at=06_smoking_and_health.units:#smk-002

Seeds are picked exactly as graphify picks them for the (expanded) query string, so
``graphify query "<expanded tokens>"`` starts from the same nodes. BFS goes 3 hops, DFS
6 (the depths graphify's skills use); high-degree hubs are not expanded through. Nodes
are ranked seeds first, then by IDF-weighted term relevance, hop distance and degree;
edges among higher-ranked nodes come first; the body is cut at ``budget × 4`` characters.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from kgservice.graphify import EXIT_AMBIGUOUS, EXIT_NOT_FOUND, EXIT_OK
from kgservice.graphify.loader import Graph
from kgservice.graphify.scoring import (
    compute_idf,
    find_node_tiers,
    is_ambiguity,
    query_name_refusal,
    query_seeds,
    sanitize,
    tier_refusal,
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


def learning_overlay(g: Graph) -> dict:
    ov = g.cache.get("overlay")
    if ov is None:
        from kgservice.graphify.reflect import load_learning_overlay

        try:
            ov = load_learning_overlay(g.path, g)
        except Exception:
            ov = {}
        g.cache["overlay"] = ov
    return ov


# --- traversal -------------------------------------------------------------------------------


@dataclass
class Traversal:
    nodes: list[str]  # visit order
    dist: dict[str, int]
    links: list[int] = field(default_factory=list)


class _View:
    """Undirected adjacency over the links a context filter keeps."""

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

    def is_hub(self, nid: str) -> bool:
        """Too connected to expand through: degree >= max(50, 99th percentile degree)."""
        d = self.degree(nid)
        if d < HUB_FLOOR:
            return False
        if self._hub is None:
            self._hub = self.hub_threshold()
        return d >= self._hub

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
    order = list(visited)
    # hop distance from the seeds inside the visited set (DFS depth is not distance)
    dist = {s: 0 for s in seeds if s in visited}
    frontier = list(dist)
    hop = 0
    while frontier:
        hop += 1
        nxt = []
        for n in frontier:
            for nb in view.neighbors(n):
                if nb in visited and nb not in dist:
                    dist[nb] = hop
                    nxt.append(nb)
        frontier = nxt
    return Traversal(order, dist)


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
    name = d.get("community_name")
    if name:
        return str(name)
    c = d.get("community", "")
    return "" if c is None else str(c)


def node_line(g: Graph, nid: str, overlay: dict) -> str:
    d = g.attrs[nid]
    learning = ""
    entry = overlay.get(nid)
    if entry:
        status = sanitize(str(entry.get("status", "")))
        if status:
            learning = f" learning={status}{':stale' if entry.get('stale') else ''}"
    return (f"NODE {sanitize(g.label(nid))} [src={sanitize(d.get('source_file', ''))} "
            f"loc={sanitize(d.get('source_location', ''))} community={sanitize(community_of(d))}"
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
    overlay = learning_overlay(g)
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


# --- the command -------------------------------------------------------------------------------


@dataclass
class QueryResult:
    text: str
    exit_code: int = EXIT_OK
    seeds: list[str] = field(default_factory=list)
    tokens: list[str] | None = None
    notes: list[str] = field(default_factory=list)  # for stderr


def resolve_seed(g: Graph, value: str) -> tuple[str | None, str | None]:
    """An explicit ``--seed``: node id, unique label, unique file or unique substring."""
    value = value.rstrip("/\\") or value
    if value in g:
        return value, None
    source_exact, exact, prefix, substring = find_node_tiers(g, value)
    for tier, file_query in ((source_exact, True), (exact, False)):
        if tier:
            refusal = tier_refusal(g, value, tier, file_query=file_query and "::" not in value)
            if refusal:
                return None, refusal if is_ambiguity(refusal) else None
            return tier[0], None
    for tier in (prefix, substring):
        if len(tier) == 1:
            return tier[0], None
    return None, None


def run_query(g: Graph, question: str, *, mode: str = "bfs", budget: int = DEFAULT_BUDGET,
              contexts: list[str] | None = None, seeds: list[str] | None = None, expand: bool = True,
              llm_model: str | None = None, llm_complete=None) -> QueryResult:
    depth = DFS_DEPTH if mode == "dfs" else BFS_DEPTH
    explicit = normalize_contexts(contexts)
    if explicit:
        ctx, ctx_source = explicit, "explicit"
    elif (ctx := infer_contexts(question)) and _graph_has_contexts(g):
        ctx_source = "heuristic"
    else:
        ctx, ctx_source = [], None
    view = _View(g, _link_filter(ctx))

    if seeds:
        start: list[str] = []
        unresolved: list[str] = []
        refusals: list[str] = []
        for value in seeds:
            nid, refusal = resolve_seed(g, value)
            if nid is None:
                if refusal and refusal not in refusals:
                    refusals.append(refusal)
                elif not refusal and value not in unresolved:
                    unresolved.append(value)
            elif nid not in start:
                start.append(nid)
        if not start:
            if refusals:
                return QueryResult("\n".join(refusals), EXIT_AMBIGUOUS)
            return QueryResult("No unique node match for --seed: " + ", ".join(seeds), EXIT_NOT_FOUND)
        trav = dfs(view, start, depth) if mode == "dfs" else bfs(view, start, depth)
        tokens = list(dict.fromkeys(tok for t in graphify_terms(question) for tok in search_tokens(t)))
        text = render(g, start, trav, view, mode=mode, depth=depth, budget=budget, tokens=tokens,
                      contexts=ctx, context_source=ctx_source, given=True, unresolved=unresolved)
        return QueryResult(text, EXIT_OK, start)

    refusal = query_name_refusal(g, question)
    if refusal:
        return QueryResult(refusal, EXIT_AMBIGUOUS)

    notes: list[str] = []
    result = _keyword_query(g, question, mode=mode, depth=depth, budget=budget, ctx=ctx, ctx_source=ctx_source,
                            view=view, expand=expand, llm_model=llm_model, llm_complete=llm_complete, notes=notes)
    result.notes = notes
    return result


def _keyword_query(g: Graph, question: str, *, mode, depth, budget, ctx, ctx_source, view, expand, llm_model,
                   llm_complete, notes) -> QueryResult:
    prefix = ""
    scoring_query = question
    exp_tokens: list[str] | None = None
    if expand:
        from kgservice.graphify import expand as expand_mod

        exp = None
        if llm_model:
            try:
                exp = expand_mod.choose_with_llm(g, question, llm_model, complete=llm_complete)
            except Exception as exc:  # an unreachable model must not cost the answer
                notes.append(f"warning: the LLM chooser failed ({type(exc).__name__}: {exc}); "
                             "using the graph's own expansion")
        if exp is None:
            exp = expand_mod.expand(g, question)
        exp_tokens = exp.tokens
        prefix = f"Query expanded to (from graph vocab, {len(exp.tokens)} tokens): [{', '.join(exp.tokens)}]\n"
        if not exp.tokens:
            return QueryResult(prefix + "No token of the graph's vocabulary matches this question; "
                               "the graph has nothing on it, so no traversal was run.", EXIT_NOT_FOUND,
                               tokens=[])
        scoring_query = exp.query_string
        if scoring_query != question:
            refusal = query_name_refusal(g, scoring_query)
            if refusal:
                return QueryResult(prefix + refusal, EXIT_AMBIGUOUS, tokens=exp_tokens)

    terms = graphify_terms(scoring_query)
    start = query_seeds(g, terms)
    if expand:
        # our extra: a question that is exactly one node's name starts there, even when
        # its label is not made of vocabulary tokens ("Python 3.12")
        source_exact, exact, _p, _s = find_node_tiers(g, question)
        tier = source_exact or exact
        if len(tier) == 1 and tier[0] not in start:
            start.insert(0, tier[0])
    if not start:
        return QueryResult(prefix + NO_MATCH, EXIT_NOT_FOUND, tokens=exp_tokens)
    trav = dfs(view, start, depth) if mode == "dfs" else bfs(view, start, depth)
    rank_tokens = list(dict.fromkeys(tok for t in terms for tok in search_tokens(t)))
    text = render(g, start, trav, view, mode=mode, depth=depth, budget=budget, tokens=rank_tokens,
                  contexts=ctx, context_source=ctx_source)
    return QueryResult(prefix + text, EXIT_OK, start, exp_tokens)

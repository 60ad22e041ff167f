"""``path A B``: the shortest path between two named nodes.

Directed by default: a hop follows a link from its true source to its target (a
``contains`` link may also be walked back, from the member to its container, as
graphify does for code graphs); ``--undirected`` ignores direction. Among equally short
paths the choice is deterministic: a bidirectional breadth-first search over neighbours
in sorted id order, the search graphify's ``path`` runs on its sorted graph, so both
tools print the same hops. Every relation stored on a hop is shown (``a/b``), with the
hop's direction. ``through_values=False`` (the web page's default) lets no value join two facts in
the middle of a path: a modifier link only as its first or last hop, no literal node (a value such
as ``high`` or ``2020``: ``file_type`` "literal") between its ends, so ``CPython -confidence-> high
<-confidence- smoking`` is no path. graphify has no such option: the default keeps its walk::

    Shortest path (3 hops):
      smoking --source [EXTRACTED]--> WHO <--source [EXTRACTED]-- noncommunicable disease --is a [EXTRACTED]--> disease
"""

from __future__ import annotations

from dataclasses import dataclass

from kgservice.graphify import EXIT_AMBIGUOUS, EXIT_NOT_FOUND, EXIT_OK
from kgservice.graphify.loader import Graph, Link, make_link
from kgservice.graphify.scoring import is_ambiguity, resolve_path_endpoint

AMBIGUITY_MARGIN = 0.10


@dataclass
class PathResult:
    stdout: str = ""
    stderr: str = ""
    exit_code: int = EXIT_OK
    nodes: list[str] | None = None


class _Adjacency:
    """Neighbours for the path search, built per node on first use, in sorted id order.

    Directed: a node's successors are the true targets of its links, then (appended, also
    sorted) the containers it can walk back to over ``contains`` links; predecessors
    mirror that. Undirected: every neighbour, sorted. This is the neighbour order of the
    sorted graph graphify searches, so ties between equally short paths break alike.
    """

    def __init__(self, g: Graph, undirected: bool, values: bool = True):
        self.g = g
        self.undirected = undirected
        self.values = values
        self._succ: dict[str, list[str]] = {}
        self._pred: dict[str, list[str]] = {}

    def _incident(self, nid: str):
        g = self.g
        for i in g.out_links(nid):
            lk = g.links[i]
            if self.values or not lk.data.get("modifier"):
                yield lk
        for i in g.in_links(nid):
            lk = g.links[i]
            if lk.u != nid and (self.values or not lk.data.get("modifier")):  # a self-loop was seen as an out-link
                yield lk

    def _build(self, nid: str, forward: bool) -> list[str]:
        if self.undirected:
            return sorted({lk.v if lk.u == nid else lk.u for lk in self._incident(nid)})
        main: set[str] = set()
        extra: set[str] = set()
        for lk in self._incident(nid):
            near, far = (lk.src, lk.tgt) if forward else (lk.tgt, lk.src)
            if near == nid:
                main.add(far)
            if lk.data.get("relation") == "contains" and far == nid:
                extra.add(near)
        return sorted(main) + sorted(extra - main)

    def succ(self, nid: str) -> list[str]:
        got = self._succ.get(nid)
        if got is None:
            got = self._succ[nid] = self._build(nid, True)
        return got

    def pred(self, nid: str) -> list[str]:
        if self.undirected:
            return self.succ(nid)
        got = self._pred.get(nid)
        if got is None:
            got = self._pred[nid] = self._build(nid, False)
        return got


def _adjacency(g: Graph, undirected: bool, values: bool = True) -> _Adjacency:
    key = ("path_adj_u" if undirected else "path_adj_d") + ("" if values else "_nv")
    adj = g.cache.get(key)
    if adj is None:
        adj = g.cache[key] = _Adjacency(g, undirected, values)
    return adj


def is_literal(g: Graph, nid: str) -> bool:
    """A literal value node of our mirror (graphify's own graphs have none)."""
    return g.attrs.get(nid, {}).get("file_type") == "literal"


def _valueless(g: Graph, every: _Adjacency, plain: _Adjacency, source: str, target: str):
    """succ / pred for a path on which values join no two facts: a modifier link (subject ->
    value) is walked only when its value is one of the path's ends, and no literal node lies
    between the ends. So ``smoking -source-> WHO`` and ``COPD -causes- smoking -source-> WHO``
    are paths; ``COPD -source-> WHO <-source- smoking`` and ``CPython -confidence-> high
    <-confidence- smoking`` are not."""
    ends = (source, target)

    def step(nbrs_all, nbrs_plain):
        def nbrs(v: str) -> list[str]:
            found = nbrs_plain(v)
            every = nbrs_all(v)
            if len(every) > len(found):  # modifier links too: those whose value is an end
                have, ok = set(found), _value_hops(g, v, ends)
                found = found + [w for w in every if w not in have and w in ok]
            return [w for w in found if w in ends or not is_literal(g, w)]
        return nbrs
    return step(every.succ, plain.succ), step(every.pred, plain.pred)


def _value_hops(g: Graph, v: str, ends: tuple[str, str]) -> set[str]:
    """The nodes one modifier link away from ``v`` whose value (the link's true target) is an end
    of the path; one pass over ``v``'s links (a hub's thousands of them are read once)."""
    found = set()
    for i in [*g.out_links(v), *g.in_links(v)]:
        lk = g.links[i]
        if lk.data.get("modifier") and lk.tgt in ends:
            found.add(lk.v if lk.u == v else lk.u)
    return found


def shortest_path(g: Graph, source: str, target: str, undirected: bool = False,
                  through_values: bool = True) -> list[str] | None:
    """Bidirectional BFS; expands the smaller frontier, neighbours in sorted order.
    ``through_values=False``: see :func:`_valueless`."""
    if source == target:
        return [source]
    adj = _adjacency(g, undirected)
    succ, pred = adj.succ, adj.pred
    if not through_values:
        succ, pred = _valueless(g, adj, _adjacency(g, undirected, False), source, target)
    fwd_parent: dict[str, str | None] = {source: None}
    bwd_parent: dict[str, str | None] = {target: None}
    fwd, bwd = [source], [target]
    meet = None
    while fwd and bwd and meet is None:
        if len(fwd) <= len(bwd):
            level, fwd = fwd, []
            for v in level:
                for w in succ(v):
                    if w not in fwd_parent:
                        fwd.append(w)
                        fwd_parent[w] = v
                    if w in bwd_parent:
                        meet = w
                        break
                if meet is not None:
                    break
        else:
            level, bwd = bwd, []
            for v in level:
                for w in pred(v):
                    if w not in bwd_parent:
                        bwd_parent[w] = v
                        bwd.append(w)
                    if w in fwd_parent:
                        meet = w
                        break
                if meet is not None:
                    break
    if meet is None:
        return None
    path: list[str] = []
    step: str | None = meet
    while step is not None:
        path.append(step)
        step = fwd_parent[step]
    path.reverse()
    step = bwd_parent[path[-1]]
    while step is not None:
        path.append(step)
        step = bwd_parent[step]
    return path


def _arc_edges(g: Graph, a: str, b: str) -> list[Link]:
    """The edges of the stored arc a→b as graphify's path reads them (a multigraph: links
    sharing a ``key`` are one edge, their attributes merged), each with its true direction."""
    idx = [i for i in g.out_links(a) if g.links[i].v == b]
    if not idx:
        return []
    return [g.links[grp[0]] if len(grp) == 1 else make_link(g.merged_data(grp)) for grp in g.arc_keys(idx)]


def _hop(g: Graph, u: str, v: str) -> tuple[list[str], list[str], bool]:
    """The relations and confidences stored on the hop u→v, and whether it runs forward."""
    fwd: list[dict] = []
    bwd: list[dict] = []
    for lk in _arc_edges(g, u, v) + (_arc_edges(g, v, u) if u != v else []):
        (fwd if lk.src == u else bwd).append(lk.data)
    datas = fwd or bwd
    rels = sorted({str(d["relation"]) for d in datas if d.get("relation")})
    confs = sorted({str(d["confidence"]) for d in datas if d.get("confidence")})
    return rels, confs, bool(fwd)


def hop_text(g: Graph, u: str, v: str, as_graphify: bool = False) -> str:
    """``--rel [CONF]--> v`` or ``<--rel [CONF]-- v`` with every relation stored on the hop;
    ``as_graphify``: v's label as graphify prints it (``None`` for a null label)."""
    rels, confs, fwd = _hop(g, u, v)
    rel = "/".join(rels) if rels else "related"
    conf = f" [{'/'.join(confs)}]" if confs else ""
    name = g.raw_label(v) if as_graphify else g.label(v)
    if fwd:
        return f"--{rel}{conf}--> {name}"
    return f"<--{rel}{conf}-- {name}"


def path_json(g: Graph, nodes: list[str]) -> dict:
    """A found path as data (the same hops the text prints): ``nodes`` [{id, label}] in order and
    ``hops`` [{source, target, relations, confidences, forward}], one per step of the path;
    ``forward`` is false where the stored link runs from ``target`` back to ``source``."""
    hops = []
    for u, v in zip(nodes, nodes[1:]):
        rels, confs, fwd = _hop(g, u, v)
        hops.append({"source": u, "target": v, "relations": rels or ["related"], "confidences": confs,
                     "forward": fwd})
    return {"nodes": [{"id": n, "label": g.label(n)} for n in nodes], "hops": hops}


def _start_label(g: Graph, nid: str, as_graphify: bool) -> str:
    raw = g.raw_label(nid)
    if as_graphify and isinstance(raw, str):
        return raw
    # a null (or non-text) start label: graphify fails joining the line (TypeError, exit 1);
    # we answer, naming the node by its id (or the label's text)
    return g.label(nid)


def run_path(g: Graph, source: str, target: str, undirected: bool = False, through_values: bool = True,
             as_graphify: bool = False) -> PathResult:
    """The path answer; ``as_graphify`` (the ``graphify`` script) prints labels as graphify does
    (a null label is ``None``), kg's answer names such a node by its id."""
    src, src_scored, src_err = resolve_path_endpoint(g, source)
    tgt, tgt_scored, tgt_err = resolve_path_endpoint(g, target)
    for label, nid, err in ((source, src, src_err), (target, tgt, tgt_err)):
        if err or nid is None:
            return PathResult(stderr=err or f"No node matching '{label}' found.",
                              exit_code=EXIT_AMBIGUOUS if is_ambiguity(err) else EXIT_NOT_FOUND)
    if src == tgt:
        return PathResult(stderr=(f"'{source}' and '{target}' both resolved to the same node '{src}'. "
                                  "Use a more specific label or the exact node ID."), exit_code=EXIT_AMBIGUOUS)
    warnings = []
    for name, scored, nid in (("source", src_scored, src), ("target", tgt_scored, tgt)):
        if len(scored) >= 2 and nid == scored[0][1]:
            top, runner = scored[0][0], scored[1][0]
            if top > 0 and (top - runner) / top < AMBIGUITY_MARGIN:
                warnings.append(f"warning: {name} match was ambiguous (top score {top:g}, runner-up {runner:g})")
    stderr = "\n".join(warnings)
    nodes = shortest_path(g, src, tgt, undirected, through_values)  # type: ignore[arg-type]
    if nodes is None:
        if undirected:
            msg = f"No path found between '{source}' and '{target}'."
        else:
            msg = (f"No directed path found between '{source}' and '{target}'. "
                   "Re-run with --undirected to search ignoring edge direction.")
        if not through_values:
            msg += " Values (modifiers, literals such as 'high') joined no two facts on the way."
        return PathResult(stdout=msg, stderr=stderr, exit_code=EXIT_OK)
    segments = [_start_label(g, nodes[0], as_graphify)] + [hop_text(g, nodes[i], nodes[i + 1], as_graphify)
                                                            for i in range(len(nodes) - 1)]
    text = f"Shortest path ({len(nodes) - 1} hops):\n  " + " ".join(segments)
    return PathResult(stdout=text, stderr=stderr, exit_code=EXIT_OK, nodes=nodes)

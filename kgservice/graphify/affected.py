"""``affected X``: what may break when X changes, by walking graph.json's links backwards.

graphify 0.9.96's blast-radius walk, reproduced over our loader's graph:

- **Seed.** The node X names (``seeds.resolve_seed``: id, label, bare name, file, unique
  substring); anything else is ``No unique node match for X`` (exit 0, as graphify).
- **Walk.** Breadth first over *incoming* links whose relation is in the set (default:
  calls, imports, inheritance, ``defines``, ... see ``DEFAULT_RELATIONS``), up to ``depth``
  hops (2). The seed's own members (its outgoing ``method`` / ``contains`` links) are
  walked from too, unreported: callers often bind to a method node, not its class. A
  method that overrides a same-named method of a supertype (``inherits`` / ``extends`` /
  ``implements``) also pulls in that method's callers, at the same depth.
- **Lines.** ``- <label> [<relation>] <file>:<line>`` where the file and line are the
  link's own (the call or import site in the dependent's file), else the node's
  definition; ``-`` for no file.

Edges are read as networkx's ``DiGraph`` / ``MultiDiGraph`` gives them (graphify forces a
directed graph): one edge per (source, target) pair with the links' attributes merged on a
simple graph, one per key on a multigraph; neighbours in the order their first link appears.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path

from kgservice.graphify.loader import Graph
from kgservice.graphify.seeds import resolve_seed

DEFAULT_RELATIONS = ("calls", "indirect_call", "references", "imports", "imports_from", "dynamic_import",
                     "re_exports", "inherits", "extends", "implements", "uses", "mixes_in", "embeds", "defines",
                     "requires")
SUPERTYPE_RELATIONS = frozenset({"inherits", "extends", "implements"})
MEMBER_RELATIONS = ("method", "contains")


@dataclass(frozen=True)
class Hit:
    node: str
    depth: int
    relation: str
    site_file: str | None = None  # the link's own location: the call / import site
    site_line: str | None = None


# --- edges as networkx's directed classes give them -------------------------------------------


def _edges(g: Graph, links: list[int], other_end: str, multigraph: bool) -> list[tuple[str, dict]]:
    by_node: dict[str, list[int]] = {}
    for i in links:
        lk = g.links[i]
        by_node.setdefault(lk.u if other_end == "u" else lk.v, []).append(i)
    return [(n, g.merged_data(grp)) for n, idx in by_node.items()
            for grp in (g.arc_keys(idx) if multigraph else [idx])]


def in_edges(g: Graph, nid: str, multigraph: bool) -> list[tuple[str, dict]]:
    """``G.in_edges(nid, data=True)`` as (source, data)."""
    return _edges(g, g.in_links(nid), "u", multigraph)


def out_edges(g: Graph, nid: str, multigraph: bool) -> list[tuple[str, dict]]:
    """``G.out_edges(nid, data=True)`` as (target, data)."""
    return _edges(g, g.out_links(nid), "v", multigraph)


def _rel(d: dict) -> str:
    return str(d.get("relation", ""))


# --- the walk ---------------------------------------------------------------------------------


class _Walk:
    def __init__(self, g: Graph):
        self.g = g
        self.multi = g.multigraph
        self._supers: dict[str, list[str]] = {}

    def supertypes(self, type_id: str) -> list[str]:
        """Every type ``type_id`` derives from, nearest first; cycles cut."""
        cached = self._supers.get(type_id)
        if cached is not None:
            return cached
        found: list[str] = []
        seen = {type_id}
        level = [type_id]
        while level:
            nxt = []
            for t in level:
                for base, d in out_edges(self.g, t, self.multi):
                    if _rel(d) in SUPERTYPE_RELATIONS and base not in seen:
                        seen.add(base)
                        found.append(base)
                        nxt.append(base)
            level = nxt
        self._supers[type_id] = found
        return found

    def overridden(self, node: str) -> list[str]:
        """The supertype methods ``node`` overrides: same label, a method of a type its owner
        derives from. A call bound to one of them can run ``node``."""
        owners = [s for s, d in in_edges(self.g, node, self.multi) if _rel(d) == "method"]
        if not owners:
            return []
        label = self.g.attrs[node].get("label")
        found = []
        for owner in owners:
            for base in self.supertypes(owner):
                for member, d in out_edges(self.g, base, self.multi):
                    if _rel(d) == "method" and member != node and self.g.attrs[member].get("label") == label:
                        found.append(member)
        return found


def affected_nodes(g: Graph, seed: str, relations: tuple[str, ...] = DEFAULT_RELATIONS, depth: int = 2) -> list[Hit]:
    """The dependents of ``seed``, in the order the walk reaches them."""
    wanted = set(relations)
    walk = _Walk(g)
    seen = {seed}
    queue: deque[tuple[str, int]] = deque([(seed, 0)])
    for member, d in out_edges(g, seed, walk.multi):
        if _rel(d) in MEMBER_RELATIONS and member not in seen:
            seen.add(member)
            queue.append((member, 0))
    stepping: set[str] = set()  # overridden methods walked but not (yet) reported
    hits: list[Hit] = []
    while queue:
        node, level = queue.popleft()
        if level >= depth:
            continue
        for sup in walk.overridden(node):
            if sup not in seen:
                seen.add(sup)
                stepping.add(sup)
                queue.appendleft((sup, level))  # same depth: before the deeper nodes already queued
        for src, d in in_edges(g, node, walk.multi):
            rel = _rel(d)
            if rel not in wanted:
                continue
            walked = src in stepping
            if walked:
                stepping.discard(src)  # reached by a real link too: report it now
            elif src in seen:
                continue
            seen.add(src)
            hits.append(Hit(src, level + 1, rel, str(d.get("source_file") or "") or None,
                            str(d.get("source_location") or "") or None))
            if not walked:
                queue.append((src, level + 1))
    return hits


# --- the text ---------------------------------------------------------------------------------


def _label(g: Graph, nid: str) -> str:
    return str(g.attrs[nid].get("label") or nid)


def _where(g: Graph, hit: Hit) -> str:
    d = g.attrs[hit.node]
    if hit.site_line:
        return f"{hit.site_file or d.get('source_file') or '-'}:{hit.site_line}"
    sf = d.get("source_file") or "-"
    loc = d.get("source_location")
    return f"{sf}:{loc}" if loc else str(sf)


def render_affected(g: Graph, seed: str, hits: list[Hit], relations: tuple[str, ...], depth: int) -> str:
    lines = [f"Affected nodes for {_label(g, seed)}", f"Relations: {', '.join(relations)}", f"Depth: {depth}"]
    if not hits:
        lines.append("No affected nodes found.")
    lines += [f"- {_label(g, h.node)} [{h.relation}] {_where(g, h)}" for h in hits]
    return "\n".join(lines)


def no_match(query: str) -> str:
    return f"No unique node match for {query}"


def run_affected(g: Graph, query: str, relations: tuple[str, ...] = DEFAULT_RELATIONS, depth: int = 2,
                 root: Path | None = None) -> tuple[str | None, str]:
    """(seed or None, graphify's text)."""
    seed = resolve_seed(g, query, root)
    if seed is None:
        return None, no_match(query)
    return seed, render_affected(g, seed, affected_nodes(g, seed, relations, depth), relations, depth)

"""``explain X``: one node, its neighbours by direction, and what reflect learned about it.

Matching is tiered (source file → exact label / id → prefix; a substring hit is only a
near miss) and refuses to guess: when the winning tier spans several source files (or
several nodes of one file) the candidates are listed and the exit code is 3. Output::

    Node: smoking
      ID:        smoking
      Source:    06_smoking_and_health.units #smk-001
      Type:      concept
      Community: 1
      Same as:   吸烟                      (our extra: the node's ≡ class)
      Lesson: preferred source (start here) — 2 useful, score=1.93
      Degree:    12

    Connections (11):
      --> lung cancer [causes] [EXTRACTED] 06_smoking_and_health.units:#smk-001
      <-- 吸烟 [同义] [EXTRACTED] 06_smoking_and_health.units:#smk-002

One connection per neighbour and direction, in graphify's order (most connected
neighbour first); where a neighbour is linked by several relations they are all shown
(``a/b``). Past 20 connections (unless ``--all``) the rest are counted and grouped by
direction and source file.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgservice.graphify import EXIT_AMBIGUOUS, EXIT_NOT_FOUND, EXIT_OK
from kgservice.graphify.loader import Graph
from kgservice.graphify.scoring import is_ambiguity, resolve_single_node

SHOWN = 20
GROUPS_SHOWN = 20


@dataclass
class Connection:
    direction: str  # "out" | "in"
    neighbor: str
    links: list[int]


@dataclass
class ExplainResult:
    text: str
    exit_code: int = EXIT_OK
    node: str | None = None
    connections: list[Connection] | None = None


def connections(g: Graph, nid: str) -> list[Connection]:
    """Out-neighbours then in-neighbours (stored arc order), each once, most connected first."""
    out_arcs: dict[str, list[int]] = {}
    for i in g.out_links(nid):
        out_arcs.setdefault(g.links[i].v, []).append(i)
    in_arcs: dict[str, list[int]] = {}
    for i in g.in_links(nid):
        in_arcs.setdefault(g.links[i].u, []).append(i)
    conns: list[Connection] = []
    for nb, idx in out_arcs.items():
        first = first_arc_data(g, idx)
        conns.append(Connection("out" if first.get("_src", nid) == nid else "in", nb, idx))
    for nb, idx in in_arcs.items():
        first = first_arc_data(g, idx)
        conns.append(Connection("in" if first.get("_src", nb) == nb else "out", nb, idx))

    def deg(n: str) -> int:
        return g.degree(n, directed=True, multigraph=g.multigraph)

    conns.sort(key=lambda c: -deg(c.neighbor))
    return conns


def first_arc_data(g: Graph, idx: list[int]) -> dict:
    """``edge_data(G, u, v)`` of the networkx class graphify loads for explain: the first
    key's data on a multigraph (links sharing a ``key`` merge), the merged data otherwise."""
    return g.merged_data(g.arc_keys(idx)[0] if g.multigraph else idx)


def _joined(g: Graph, idx: list[int], key: str) -> str:
    vals = list(dict.fromkeys(str(g.links[i].data.get(key)) for i in idx if g.links[i].data.get(key)))
    return "/".join(vals)


def lesson_line(entry: dict) -> str:
    status = str(entry.get("status", ""))
    if status == "contested":
        line = f"  Lesson: contested (useful {entry.get('uses', 0)} / dead-end {entry.get('neg', 0)})"
    elif status == "preferred":
        line = f"  Lesson: preferred source (start here) — {entry.get('uses', 0)} useful, score={entry.get('score', 0)}"
    else:
        line = f"  Lesson: {status or 'tentative'} — {entry.get('uses', 0)} useful, score={entry.get('score', 0)}"
    if entry.get("stale"):
        line += " [code changed since — re-verify]"
    return line


def run_explain(g: Graph, label: str, show_all: bool = False, rich: bool = False) -> ExplainResult:
    """graphify's ``explain`` output; ``rich`` (``kg explain``) adds the node's ≡ class
    (``Same as:``) and joins the relations of parallel links (``calls/references``)."""
    nid, refusal = resolve_single_node(g, label)
    if nid is None:
        return ExplainResult(refusal or f"No node matching '{label}' found.",
                             EXIT_AMBIGUOUS if is_ambiguity(refusal) else EXIT_NOT_FOUND)
    from kgservice.graphify.query import community_of, learning_overlay

    d = g.attrs[nid]
    # graphify prints a null label as None; kg's answer names the node by its id
    name = g.label if rich else g.raw_label
    lines = [f"Node: {name(nid)}",
             f"  ID:        {nid}",
             f"  Source:    {d.get('source_file', '')} {d.get('source_location', '')}".rstrip(),
             f"  Type:      {d.get('file_type', '')}",
             f"  Community: {community_of(d)}"]
    if rich:
        from kgservice.graphify.vocabulary import relations

        same = [g.label(m) for m in relations(g).syn_class.get(nid, []) if m != nid]
        if same:
            lines.append(f"  Same as:   {', '.join(same)}")
    entry = learning_overlay(g, links_fallback=rich).get(nid)
    if entry:
        lines.append(lesson_line(entry))
    lines.append(f"  Degree:    {g.degree(nid, directed=True, multigraph=g.multigraph)}")
    conns = connections(g, nid)
    if conns:
        lines += ["", f"Connections ({len(conns)}):"]
        shown = conns if show_all else conns[:SHOWN]
        for c in shown:
            first = first_arc_data(g, c.links)
            loc = first.get("source_location") or ""
            at = f" {first.get('source_file') or ''}:{loc}" if loc else ""
            arrow = "-->" if c.direction == "out" else "<--"
            if rich:
                rel, conf = _joined(g, c.links, "relation"), _joined(g, c.links, "confidence")
            else:
                rel, conf = first.get("relation", ""), first.get("confidence", "")
            lines.append(f"  {arrow} {name(c.neighbor)} [{rel}] [{conf}]{at}")
        rest = conns[len(shown):]
        if rest:
            lines.append(f"  ... and {len(rest)} more (--all lists all {len(conns)})")
            groups: dict[tuple[str, str], int] = {}
            for c in rest:
                sf = first_arc_data(g, c.links).get("source_file") or "(unknown file)"
                groups[(c.direction, str(sf))] = groups.get((c.direction, str(sf)), 0) + 1
            ordered = sorted(groups.items(), key=lambda kv: (-kv[1], kv[0]))
            lines.append("  Grouped by file:")
            for (direction, sf), n in ordered[:GROUPS_SHOWN]:
                arrow = "-->" if direction == "out" else "<--"
                lines.append(f"    {arrow} {sf}: {n} {'connection' if n == 1 else 'connections'}")
            if len(ordered) > GROUPS_SHOWN:
                lines.append(f"    ... and {len(ordered) - GROUPS_SHOWN} more files")
    return ExplainResult("\n".join(lines), EXIT_OK, nid, conns)


def kg_explain(g: Graph, label: str, show_all: bool = False) -> ExplainResult:
    """``kg explain``'s answer (``rich``: ``Same as:``, joined parallel relations), the one call
    behind ``kg explain``, ``POST /v1/graphify/explain`` and the MCP ``get_node`` /
    ``get_neighbors`` tools, so they cannot drift apart: the server surfaces had called
    :func:`run_explain` with graphify's default and lost the ``Same as:`` line."""
    return run_explain(g, label, show_all=show_all, rich=True)

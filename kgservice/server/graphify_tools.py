"""graphify's MCP tools over the knowledge base's graph.json mirror, with our commands' text.

``query_graph`` is ``kg query`` and ``shortest_path`` is ``kg path`` (the same functions, so
the same text); ``get_node`` / ``get_neighbors`` are the two halves of ``kg explain`` (the
node block, then every connection); ``god_nodes`` is ``kg god-nodes``; ``get_community``
and ``graph_stats`` have no command of their own and follow graphify's server text. The mirror is re-exported
from the store when the store changed (checked at most every ``check_every`` seconds).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgservice.graphify import EXIT_AMBIGUOUS, EXIT_NOT_FOUND, EXIT_OK
from kgservice.graphify.loader import Graph, load_graph
from kgservice.stores.versioned import store_signature

if TYPE_CHECKING:
    from kgservice.service import KnowledgeBase

CHARS_PER_TOKEN = 4  # the budget rule of our graphify commands


def cut_to_budget(text: str, token_budget: int | None, hint: str = "raise token_budget") -> str:
    """Whole lines while they fit in ``token_budget`` × 4 characters, then one line saying what was cut."""
    if token_budget is None or token_budget <= 0:
        return text
    limit = token_budget * CHARS_PER_TOKEN
    if len(text) <= limit:
        return text
    lines = text.splitlines()
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > limit and kept:
            break
        kept.append(line[:limit] if not kept else line)
        used += len(line) + 1
    rest = len(lines) - len(kept)
    return "\n".join(kept) + f"\n... truncated to the token budget ({token_budget}): {rest} more line(s); {hint}"


class GraphMirror:
    """``graph.json`` of the store, brought up to date when the store changed: its change-log
    version (:func:`kgservice.stores.versioned.store_signature`; counts would miss a relabel).
    A store that keeps the mirror for every server (:meth:`~kgservice.stores.base.GraphStore.mirror_artefact`)
    has it built once per version by one of them (:mod:`kgservice.export.shared_mirror`); this
    process then reads the stored one. ``builds`` / ``loads`` count which (/metrics)."""

    def __init__(self, kb: KnowledgeBase, path: Path, check_every: float = 5.0,
                 fingerprint: Callable[[], Any] | None = None):
        self.kb = kb
        self.path = Path(path)
        self.check_every = check_every
        self._fingerprint = fingerprint or (lambda: store_signature(kb.store))
        self._lock = threading.Lock()
        self._graph: Graph | None = None
        self._fp: Any = None
        self._checked = -1e9
        self._shared: Any = None
        self._local_builds = 0
        artefact = kb.store.mirror_artefact() if fingerprint is None else None
        if artefact is not None:
            import os
            import uuid

            from kgservice.export.shared_mirror import SharedMirror

            self._shared = SharedMirror(artefact, self._data, owner=f"{os.getpid()}:{uuid.uuid4().hex[:12]}",
                                        read_only=kb.settings.read_only)

    @property
    def builds(self) -> int:
        """Mirrors this process built from a full read of the store."""
        return self._local_builds + (self._shared.builds if self._shared is not None else 0)

    @property
    def loads(self) -> int:
        """Mirrors this process read from the store, built by another."""
        return self._shared.loads if self._shared is not None else 0

    def _data(self) -> dict[str, Any]:
        from kgservice.export.graphjson import build_graph_data

        return build_graph_data(self.kb.store, communities=True, store_communities=not self.kb.settings.read_only)

    def graph(self) -> Graph:
        with self._lock:
            now = time.monotonic()
            if self._graph is not None and now - self._checked < self.check_every:
                return self._graph
            fp = self._fingerprint()
            self._checked = now
            if self._graph is None or fp != self._fp:
                if self._shared is not None and isinstance(fp, tuple) and fp[0] == "version":
                    self._shared.fetch(self.path, int(fp[1]))
                else:
                    from kgservice.export.shared_mirror import encode, write_bytes

                    write_bytes(self.path, encode(self._data()))
                    self._local_builds += 1
                self._graph = load_graph(self.path)
                self._fp = fp
            return self._graph

    def invalidate(self) -> None:
        with self._lock:
            self._checked = -1e9


# -- the tools' text ---------------------------------------------------------------------------

def query_graph(g: Graph, question: str, mode: str = "bfs", depth: int | None = None, token_budget: int = 2000,
                context_filter: list[str] | None = None) -> tuple[str, int]:
    """``kg query`` (``--dfs`` for mode dfs, ``--budget``, ``--context``) through the command's own
    call, :func:`kgservice.graphify.query.kg_query`, so the same text. ``depth`` is in graphify's
    schema: a caller that gives one walks that many hops (1-6, graphify's range); without it the
    command's by-mode depth (BFS 3, DFS 6) holds, so the tool answers as ``kg query`` does."""
    from kgservice.graphify.query import kg_query

    if mode not in ("bfs", "dfs"):
        raise ValueError(f"mode must be 'bfs' or 'dfs', got {mode!r}")
    hops = None if depth is None else max(1, min(int(depth), 6))
    res = kg_query(g, question, dfs=mode == "dfs", budget=max(1, int(token_budget)), contexts=context_filter,
                   depth=hops)
    return res.text, res.exit_code


def _explain(g: Graph, label: str) -> Any:
    from kgservice.graphify.explain import kg_explain

    return kg_explain(g, label, show_all=True)


def get_node(g: Graph, label: str) -> tuple[str, int]:
    """The node block of ``kg explain`` (everything above its connections)."""
    res = _explain(g, label)
    if res.exit_code != EXIT_OK:
        return res.text, res.exit_code
    head = res.text.split("\n\nConnections (", 1)[0]
    return head, EXIT_OK


def get_neighbors(g: Graph, label: str, relation_filter: str = "", token_budget: int = 2000) -> tuple[str, int]:
    """``kg explain --all``'s connection lines, optionally only those whose relation contains
    ``relation_filter`` (case-insensitive), cut to the budget."""
    from kgservice.graphify.explain import connections

    res = _explain(g, label)
    if res.exit_code != EXIT_OK:
        return res.text, res.exit_code
    nid = res.node
    conns = res.connections if res.connections is not None else connections(g, nid)
    want = (relation_filter or "").strip().lower()
    lines = [f"Neighbors of {g.label(nid)}:"]
    body = res.text.split("\n\nConnections (", 1)
    shown = body[1].splitlines()[1:] if len(body) == 2 else []
    for c, line in zip(conns, shown):
        rels = {str(g.links[i].data.get("relation", "")).lower() for i in c.links}
        if not want or any(want in r for r in rels):
            lines.append(line)
    return cut_to_budget("\n".join(lines), token_budget, "narrow with relation_filter"), EXIT_OK


def _communities(g: Graph) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for nid in g.order:
        c = g.attrs[nid].get("community")
        if isinstance(c, int) and not isinstance(c, bool):
            out.setdefault(c, []).append(nid)
    return out


def has_communities(g: Graph) -> bool:
    return bool(_communities(g))


def get_community(g: Graph, community_id: int, token_budget: int = 2000) -> tuple[str, int]:
    members = _communities(g).get(int(community_id), [])
    if not members:
        return f"Community {community_id} not found.", EXIT_NOT_FOUND
    name = g.attrs[members[0]].get("community_name")
    head = f"Community {community_id}" + (f" ({name})" if name else "")
    lines = [f"{head} ({len(members)} nodes):"]
    lines += [f"  {g.label(n)} [{g.attrs[n].get('source_file', '')}]" for n in members]
    return cut_to_budget("\n".join(lines), token_budget, "use get_node for specific members"), EXIT_OK


def god_nodes(g: Graph, top_n: int = 10, exclude_hubs_percentile: float | None = None) -> tuple[str, int]:
    """``kg god-nodes`` (``--top``, ``--exclude-hubs``): graphify's ranking, files, concepts and
    builtin names left out."""
    from kgservice.graphify.gods import god_nodes as rank, render_text

    return render_text(rank(g, max(1, int(top_n)), exclude_hubs_percentile)), EXIT_OK


def graph_stats(g: Graph) -> tuple[str, int]:
    confs = [str(lk.data.get("confidence") or "EXTRACTED") for lk in g.links]
    total = len(confs) or 1
    share = {c: round(confs.count(c) / total * 100) for c in ("EXTRACTED", "INFERRED", "AMBIGUOUS")}
    return (f"Nodes: {len(g)}\nEdges: {len(g.links)}\nCommunities: {len(_communities(g))}\n"
            f"EXTRACTED: {share['EXTRACTED']}%\nINFERRED: {share['INFERRED']}%\nAMBIGUOUS: {share['AMBIGUOUS']}%"), EXIT_OK


def shortest_path(g: Graph, source: str, target: str, max_hops: int = 8, undirected: bool = False) -> tuple[str, int]:
    """``kg path`` (``--undirected``); a path longer than ``max_hops`` is reported as none within it."""
    from kgservice.graphify.path import run_path

    res = run_path(g, source, target, undirected=undirected)
    if res.exit_code != EXIT_OK:
        return res.stderr, res.exit_code
    if res.nodes is not None and len(res.nodes) - 1 > max(0, int(max_hops)):
        return (f"No path within {max_hops} hops between '{source}' and '{target}' "
                f"(the shortest has {len(res.nodes) - 1}; raise max_hops)."), EXIT_OK
    return res.stdout, EXIT_OK


def explain(g: Graph, node: str, show_all: bool = False) -> tuple[str, int]:
    """``kg explain`` (``--all``), through the command's own call."""
    from kgservice.graphify.explain import kg_explain

    res = kg_explain(g, node, show_all=show_all)
    return res.text, res.exit_code


__all__ = ["EXIT_AMBIGUOUS", "EXIT_NOT_FOUND", "EXIT_OK", "GraphMirror", "cut_to_budget", "explain", "get_community",
           "get_neighbors", "get_node", "god_nodes", "graph_stats", "has_communities", "query_graph", "shortest_path"]

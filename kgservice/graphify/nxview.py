"""The graph graphify's ``query`` traverses, reproduced lazily without networkx.

graphify's CLI loads graph.json with ``node_link_graph`` (a Graph, DiGraph, MultiGraph or
MultiDiGraph as the file's ``directed``/``multigraph`` flags say), folds a directed one
into an undirected "traversal view", optionally rebuilds that keeping only edges whose
``context`` is asked for, and walks it. What it prints depends on networkx's details:
which neighbour comes first (dict insertion order), how parallel and reverse links fold
into one edge (``dict.update``, later link wins key by key), what ``degree`` counts. To
answer byte-for-byte like graphify, :class:`TraversalView` computes exactly those, but
only for the nodes a query touches (building the whole networkx graph is most of
graphify's run time). ``tests/graphify/test_nxview.py`` checks it against networkx itself.

Every edge's data carries ``_src``/``_tgt`` (the link's own markers, else its stored
``source``/``target``), as graphify's query loader adds them.
"""

from __future__ import annotations

from kgservice.graphify.loader import Graph

HUB_FLOOR = 50
_SKIP = ("source", "target")


def _edge_data(lk_data: dict) -> dict:
    d = {k: v for k, v in lk_data.items() if k not in _SKIP}
    d["_src"] = lk_data.get("_src", lk_data.get("source"))
    d["_tgt"] = lk_data.get("_tgt", lk_data.get("target"))
    return d


def _new_key(keydict: dict) -> int:
    k = len(keydict)
    while k in keydict:
        k += 1
    return k


def hop_distances(neighbors, seeds: list[str], within) -> dict[str, int]:
    """Hops from the nearest seed, walking ``neighbors(n)`` and staying inside ``within``."""
    dist = {n: 0 for n in seeds}
    frontier, hop = list(seeds), 0
    while frontier:
        hop += 1
        nxt = []
        for n in frontier:
            for nb in neighbors(n):
                if nb in within and nb not in dist:
                    dist[nb] = hop
                    nxt.append(nb)
        frontier = nxt
    return dist


class HubCheck:
    """``is_hub``: degree >= max(50, the 99th-percentile degree), the threshold computed once.

    Subclasses give ``degree(n)``, ``hub_threshold()`` and ``degree_bound(n)`` (a cheap
    upper bound of the degree, or None)."""

    _hub: int | None = None

    def degree(self, n: str) -> int:
        raise NotImplementedError

    def hub_threshold(self) -> int:
        raise NotImplementedError

    def degree_bound(self, n: str) -> int | None:
        return None

    def is_hub(self, n: str) -> bool:
        bound = self.degree_bound(n)
        if bound is not None and bound < HUB_FLOOR:
            return False
        d = self.degree(n)
        if d < HUB_FLOOR:
            return False
        if self._hub is None:
            self._hub = self.hub_threshold()
        return d >= self._hub


class TraversalView(HubCheck):
    """Undirected adjacency in networkx's order, with per-edge data lists.

    ``neighbors(n)`` is ``list(H.neighbors(n))``; ``datas(u, v)`` is graphify's
    ``edge_datas(H, u, v)``; ``degree(n)`` is ``H.degree(n)`` — for H the (context
    filtered) traversal view graphify's ``_render_query`` builds.
    """

    def __init__(self, g: Graph, contexts: list[str] | None = None):
        self.g = g
        self.multi = g.multigraph
        self.directed = g.directed
        self.contexts = set(contexts) if contexts else None
        self._index: dict[str, int] | None = None
        # base (unfiltered) adjacency: node -> {nbr: entry}; entry = merged dict (simple)
        # or {key: dict} (multi)
        self._base: dict[str, dict[str, dict]] = {}
        self._filt: dict[str, dict[str, dict]] = {}
        self._hub: int | None = None
        self._pos: dict[str, dict[str, int]] = {}

    # -- node order -----------------------------------------------------------------
    def index(self) -> dict[str, int]:
        if self._index is None:
            self._index = {n: i for i, n in enumerate(self.g.order)}
        return self._index

    # -- base traversal view H ----------------------------------------------------------
    def _incident_sorted(self, n: str) -> list[int]:
        g = self.g
        outs = g.out_links(n)
        ins = g.in_links(n)
        if not ins:
            return list(outs)
        if not outs:
            return list(ins)
        return sorted(set(outs) | set(ins))

    def base(self, n: str) -> dict[str, dict]:
        adj = self._base.get(n)
        if adj is not None:
            return adj
        adj = self._build_undirected(n) if not self.directed else self._build_from_directed(n)
        self._base[n] = adj
        return adj

    def _build_undirected(self, n: str) -> dict[str, dict]:
        """G itself (undirected file): pairs in first-link order, data merged per pair / key."""
        g = self.g
        adj: dict[str, dict] = {}
        multi = self.multi
        for i in self._incident_sorted(n):
            lk = g.links[i]
            m = lk.v if lk.u == n else lk.u
            data = _edge_data(lk.data)
            if multi:
                keydict = adj.get(m)
                if keydict is None:
                    keydict = adj[m] = {}
                key = data.pop("key", None)
                if key is None:
                    keydict[_new_key(keydict)] = data
                elif key in keydict:
                    keydict[key].update(data)
                else:
                    keydict[key] = data
            else:
                cur = adj.get(m)
                if cur is None:
                    adj[m] = data
                else:
                    cur.update(data)
        return adj

    def _arcs(self, u: str, v: str, idx_list: list[int]) -> list[dict]:
        """The datas of arc u->v in the directed G (merged per key, keydict order)."""
        g = self.g
        if not self.multi:
            d: dict = {}
            for i in idx_list:
                d.update(_edge_data(g.links[i].data))
            return [d]
        keydict: dict = {}
        for i in idx_list:
            data = _edge_data(g.links[i].data)
            key = data.pop("key", None)
            if key is None:
                keydict[_new_key(keydict)] = data
            elif key in keydict:
                keydict[key].update(data)
            else:
                keydict[key] = data
        return list(keydict.values())

    def _build_from_directed(self, n: str) -> dict[str, dict]:
        """H from a directed G: ``H.add_edge(u, v, **d)`` over ``G.edges(data=True)``."""
        g = self.g
        idx = self.index()
        # arcs touching n, keyed by the position networkx processes them at:
        # (index of the tail, first link index of the arc among the tail's out-links)
        arcs: dict[tuple[str, str], list[int]] = {}
        for i in self._incident_sorted(n):
            lk = g.links[i]
            arcs.setdefault((lk.u, lk.v), []).append(i)
        ordered = sorted(arcs.items(), key=lambda kv: (idx[kv[0][0]], kv[1][0]))
        adj: dict[str, dict] = {}
        for (u, v), idx_list in ordered:
            m = v if u == n else u
            for d in self._arcs(u, v, idx_list):
                if self.multi:
                    keydict = adj.get(m)
                    if keydict is None:
                        keydict = adj[m] = {}
                    keydict[_new_key(keydict)] = d
                else:
                    cur = adj.get(m)
                    if cur is None:
                        adj[m] = dict(d)
                    else:
                        cur.update(d)
        return adj

    # -- context-filtered view H2 ---------------------------------------------------------
    def _keep(self, d: dict) -> bool:
        return d.get("context") in self.contexts  # type: ignore[operator]

    def adj(self, n: str) -> dict[str, dict]:
        if self.contexts is None:
            return self.base(n)
        adj = self._filt.get(n)
        if adj is not None:
            return adj
        idx = self.index()
        base = self.base(n)
        entries = []
        for m, entry in base.items():
            if self.multi:
                kept = {k: d for k, d in entry.items() if self._keep(d)}
                if not kept:
                    continue
            else:
                if not self._keep(entry):
                    continue
                kept = entry
            # H.edges() yields the pair from its earlier node, at the later one's place
            # in that node's adjacency
            if m == n or idx[n] < idx[m]:
                a, b = n, m
            else:
                a, b = m, n
            entries.append(((idx[a], self._position(a, b)), m, kept))
        entries.sort(key=lambda e: e[0])
        adj = {m: kept for _k, m, kept in entries}
        self._filt[n] = adj
        return adj

    def _position(self, a: str, b: str) -> int:
        pos = self._pos.get(a)
        if pos is None:
            pos = self._pos[a] = {k: i for i, k in enumerate(self.base(a))}
        return pos[b]

    # -- networkx-style accessors -----------------------------------------------------------
    def neighbors(self, n: str) -> list[str]:
        return list(self.adj(n))

    def datas(self, u: str, v: str) -> list[dict]:
        entry = self.adj(u).get(v)
        if entry is None:
            return []
        return list(entry.values()) if self.multi else [entry]

    def degree(self, n: str) -> int:
        adj = self.adj(n)
        if self.multi:
            d = sum(len(e) for e in adj.values())
            loop = adj.get(n)
            return d + (len(loop) if loop else 0)
        return len(adj) + (1 if n in adj else 0)

    def degree_bound(self, n: str) -> int:
        return self.g.link_count(n)

    def hub_threshold(self) -> int:
        """``max(50, sorted(degrees)[int(0.99 * N)])`` without computing every degree.

        A degree is at most the node's link count, and the threshold only depends on the
        degrees >= 50 (when fewer than ``N - k`` nodes reach 50 it is 50 itself), so exact
        degrees are needed only for nodes with 50 links or more.
        """
        g = self.g
        n_nodes = len(g.order)
        if not n_nodes:
            return HUB_FLOOR
        need = n_nodes - int(n_nodes * 0.99)  # values at or above sorted(degrees)[k]
        cands = {n for n, lst in g._out.items() if len(lst) >= HUB_FLOOR}  # type: ignore[union-attr]
        cands.update(n for n, lst in g._in.items() if len(lst) >= HUB_FLOOR)  # type: ignore[union-attr]
        for n in list(g._out) + list(g._in):  # type: ignore[union-attr]
            if n not in cands and g.link_count(n) >= HUB_FLOOR:
                cands.add(n)
        high = sorted(d for d in (self.degree(n) for n in cands) if d >= HUB_FLOOR)
        if len(high) >= need:
            return high[len(high) - need]
        return HUB_FLOOR


def bfs(view: TraversalView, seeds: list[str], depth: int) -> tuple[set[str], list[tuple[str, str]]]:
    """graphify's ``_bfs``; the frontier is walked in discovery order (graphify's is a set,
    whose order changes with PYTHONHASHSEED — same visited set and edge multiset)."""
    seed_set = set(seeds)
    visited = set(seeds)
    frontier = list(dict.fromkeys(seeds))
    edges: list[tuple[str, str]] = []
    for _ in range(depth):
        nxt: dict[str, None] = {}
        for n in frontier:
            if n not in seed_set and view.is_hub(n):
                continue
            for nb in view.adj(n):
                if nb not in visited:
                    nxt[nb] = None
                    edges.append((n, nb))
        visited.update(nxt)
        frontier = list(nxt)
    complete_induced(view, visited, edges)
    return visited, edges


def dfs(view: TraversalView, seeds: list[str], depth: int) -> tuple[set[str], list[tuple[str, str]]]:
    """graphify's ``_dfs`` (deterministic there too)."""
    seed_set = set(seeds)
    visited: set[str] = set()
    edges: list[tuple[str, str]] = []
    stack = [(n, 0) for n in reversed(seeds)]
    while stack:
        node, d = stack.pop()
        if node in visited or d > depth:
            continue
        visited.add(node)
        if node not in seed_set and view.is_hub(node):
            continue
        for nb in view.adj(node):
            if nb not in visited:
                stack.append((nb, d + 1))
                edges.append((node, nb))
    complete_induced(view, visited, edges)
    return visited, edges


def complete_induced(view: TraversalView, visited: set[str], edges: list[tuple[str, str]]) -> None:
    """Append edges between visited nodes the walk did not record, in ``G.edges(sorted(visited))`` order."""
    seen = {frozenset(e) for e in edges}
    done: set[str] = set()
    for u in sorted(visited):
        for v in view.adj(u):
            if v in done:
                continue
            if u == v or v not in visited:
                continue
            key = frozenset((u, v))
            if key in seen:
                continue
            seen.add(key)
            edges.append((u, v))
        done.add(u)

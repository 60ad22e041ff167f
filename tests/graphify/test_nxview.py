"""TraversalView against networkx itself: the graph graphify's query walks, built the way
graphify's CLI builds it (node_link_graph -> undirected traversal view -> context filter)."""

from __future__ import annotations

import random

import networkx as nx
import pytest
from networkx.readwrite import json_graph

from kgservice.graphify.loader import graph_from_data
from kgservice.graphify.nxview import TraversalView, bfs, dfs


def random_graph(rng: random.Random, directed: bool, multi: bool) -> dict:
    n = rng.randint(2, 14)
    nodes = [{"id": f"n{i}", "label": f"L{i}"} for i in range(n)]
    rng.shuffle(nodes)
    links = []
    for _ in range(rng.randint(0, 30)):
        u, v = f"n{rng.randrange(n)}", f"n{rng.randrange(n)}"
        lk = {"source": u, "target": v, "relation": rng.choice(["calls", "imports", "uses"])}
        if rng.random() < 0.6:
            lk["context"] = rng.choice(["call", "import"])
        if rng.random() < 0.2:
            lk["_src"], lk["_tgt"] = v, u
        if multi and rng.random() < 0.5:
            lk["key"] = rng.randrange(2)
        links.append(lk)
    if rng.random() < 0.3:  # a node named only by a link
        links.append({"source": "n0", "target": "extra", "relation": "calls", "context": "call"})
    return {"directed": directed, "multigraph": multi, "graph": {}, "nodes": nodes, "links": links}


def networkx_view(raw: dict, contexts: set[str] | None):
    raw = dict(raw, links=[{**lk, "_src": lk.get("_src", lk["source"]), "_tgt": lk.get("_tgt", lk["target"])}
                           for lk in raw["links"]])
    G = json_graph.node_link_graph(raw, edges="links")
    if G.is_directed():
        H = nx.MultiGraph() if G.is_multigraph() else nx.Graph()
        H.add_nodes_from(G.nodes(data=True))
        for u, v, d in G.edges(data=True):
            H.add_edge(u, v, **{**d, "_src": d.get("_src", u), "_tgt": d.get("_tgt", v)})
    else:
        H = G
    if contexts:
        H2 = H.__class__()
        H2.add_nodes_from(H.nodes(data=True))
        if H.is_multigraph():
            for u, v, k, d in H.edges(keys=True, data=True):
                if d.get("context") in contexts:
                    H2.add_edge(u, v, key=k, **d)
        else:
            for u, v, d in H.edges(data=True):
                if d.get("context") in contexts:
                    H2.add_edge(u, v, **d)
        H = H2
    return H


def complete(H, visited, edges):
    """graphify's induced-edge pass, on networkx's own ``edges(nbunch)``."""
    seen = {frozenset(e) for e in edges}
    for u, v in H.edges(sorted(visited)):
        if u != v and v in visited and frozenset((u, v)) not in seen:
            seen.add(frozenset((u, v)))
            edges.append((u, v))
    return visited, edges


def reference_bfs(H, seeds, depth):
    """graphify's _bfs with the frontier walked in discovery order (same order as ours)."""
    visited, frontier, edges = set(seeds), list(dict.fromkeys(seeds)), []
    for _ in range(depth):
        nxt = {}
        for n in frontier:
            for nb in H.neighbors(n):
                if nb not in visited:
                    nxt[nb] = None
                    edges.append((n, nb))
        visited.update(nxt)
        frontier = list(nxt)
    return complete(H, visited, edges)


def reference_dfs(H, seeds, depth):
    visited, edges, stack = set(), [], [(n, 0) for n in reversed(seeds)]
    while stack:
        node, d = stack.pop()
        if node in visited or d > depth:
            continue
        visited.add(node)
        for nb in H.neighbors(node):
            if nb not in visited:
                stack.append((nb, d + 1))
                edges.append((node, nb))
    return complete(H, visited, edges)


def _strip(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "key"}


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("multi", [False, True])
@pytest.mark.parametrize("contexts", [None, {"call"}])
def test_view_matches_networkx(directed, multi, contexts):
    rng = random.Random(hash((directed, multi, bool(contexts))) & 0xFFFF)
    for _ in range(60):
        raw = random_graph(rng, directed, multi)
        H = networkx_view(raw, contexts)
        view = TraversalView(graph_from_data(raw), sorted(contexts) if contexts else None)
        for n in H.nodes:
            assert view.neighbors(n) == list(H.neighbors(n)), (raw, n)
            assert view.degree(n) == H.degree(n), (raw, n)
            for m in H.neighbors(n):
                want = list(H[n][m].values()) if H.is_multigraph() else [H[n][m]]
                assert [_strip(d) for d in view.datas(n, m)] == [_strip(d) for d in want], (raw, n, m)
        seeds = rng.sample(sorted(H.nodes), k=min(2, len(H)))
        assert bfs(view, seeds, 2) == reference_bfs(H, seeds, 2)
        assert dfs(view, seeds, 2) == reference_dfs(H, seeds, 2)


@pytest.mark.parametrize("multi,contexts", [(False, None), (True, None), (False, {"call"}), (True, {"call"})])
def test_hub_threshold_is_networkx_p99(multi, contexts):
    """Hubs of degree 60..150 among 300 leaves: the threshold is graphify's p99 of H's degrees."""
    rng = random.Random(5)
    nodes = [{"id": f"h{i}", "label": f"H{i}"} for i in range(10)] + [{"id": f"l{i}", "label": f"L{i}"}
                                                                       for i in range(300)]
    links = []
    for i in range(10):
        for j in rng.sample(range(300), 60 + 10 * i):
            links.append({"source": f"h{i}", "target": f"l{j}", "context": rng.choice(["call", "import"])})
            if rng.random() < 0.2:  # a parallel link: counts on a multigraph only
                links.append({"source": f"l{j}", "target": f"h{i}", "context": "call"})
    raw = {"directed": False, "multigraph": multi, "nodes": nodes, "links": links}
    H = networkx_view(raw, contexts)
    degs = sorted(d for _n, d in H.degree())
    want = max(50, degs[int(len(degs) * 0.99)])
    assert want > 50
    assert TraversalView(graph_from_data(raw), sorted(contexts) if contexts else None).hub_threshold() == want

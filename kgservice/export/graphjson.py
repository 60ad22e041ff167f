"""graph.json mirror: networkx node_link data (edges under ``links``) in graphify's shape.

Field names follow graphify's own writer so its CLI, agent skills' inline NetworkX
scripts and plain ``json_graph.node_link_graph(data, edges="links")`` all read it:
nodes carry id, label, norm_label, file_type, source_file, source_location, community;
links carry source, target, relation, confidence, confidence_score, source_file,
source_location, weight. Our extras ride along (kind, family, unit ids) and a top-level
``units`` list holds every unit in its JSON form, so the mirror is self-contained.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import networkx as nx

from kgservice import __version__
from kgservice.ids import literal_id, node_id
from kgservice.graphify.terms import fold
from kgservice.model import NodeKind, Unit
from kgservice.stores.base import GraphStore

CONFIDENCE_SCORES = {"high": 1.0, "certain": 1.0, "medium": 0.7, "moderate": 0.7, "low": 0.4, "uncertain": 0.4}
COMMUNITY_LIMIT = 50_000  # Louvain beyond this size costs more than the mirror is worth


def _confidence(unit: Unit) -> tuple[str, float]:
    for mod in unit.mods:
        if mod.slot.strip().lower() in ("confidence", "置信度") and mod.value.literal is not None:
            word = mod.value.literal.strip().lower()
            try:
                score = float(word)
            except ValueError:
                score = CONFIDENCE_SCORES.get(word, 1.0)
            return ("EXTRACTED" if score >= 0.9 else "INFERRED"), score
    return "EXTRACTED", 1.0


def louvain(node_ids: list[str], edges: list[tuple[str, str]]) -> dict[str, int]:
    """Louvain communities (seeded) numbered largest first, ties by smallest id."""
    g = nx.Graph()
    g.add_nodes_from(node_ids)
    g.add_edges_from(edges)
    parts = nx.community.louvain_communities(g, seed=0)
    parts = sorted((sorted(p) for p in parts), key=lambda p: (-len(p), p[0]))
    return {nid: c for c, part in enumerate(parts) for nid in part}


def shared_communities(store: GraphStore, node_ids: list[str], edges: list[tuple[str, str]], *,
                       save: bool = True) -> dict[str, int]:
    """The communities stored in ``store`` for exactly this graph, else computed (and stored when
    ``save``): every server of one store hands out the ids the first one computed for this graph,
    whatever its own networkx does, and none recomputes Louvain (seconds on a large graph) for a
    graph another has numbered (:mod:`kgservice.stores.shared`). A store that cannot keep them
    (read-only) is not an error."""
    from kgservice.errors import StoreError
    from kgservice.stores.shared import CommunityMap, graph_digest

    digest = graph_digest(node_ids, edges)
    stored = store.community_map()
    if stored is not None and stored.graph == digest:
        return stored.communities
    found = louvain(node_ids, edges)
    if save:
        try:
            store.set_community_map(CommunityMap(graph=digest, communities=found))
        except StoreError:
            pass
    return found


def build_graph_data(store: GraphStore, communities: bool = True, *, store_communities: bool = True) -> dict[str, Any]:
    """graph.json's content; ``store_communities``: keep newly computed communities in the store."""
    units = sorted(store.iter_units(), key=lambda u: u.id)
    first_seen: dict[str, Unit] = {}
    for u in units:
        for nid in [u.subject_id, *[a.node_ref for a in u.args], *[m.value.node_ref for m in u.mods]]:
            if nid is not None and nid not in first_seen:
                first_seen[nid] = u
    unit_count: dict[str, int] = defaultdict(int)
    for u in units:
        unit_count[u.subject_id] += 1
        for nid in u.context_node_ids():
            unit_count[nid] += 1

    nodes: list[dict[str, Any]] = []
    for n in sorted(store.iter_nodes(), key=lambda n: n.id):
        origin = first_seen.get(n.id)
        nodes.append({
            "id": n.id,
            "label": n.label,
            "norm_label": fold(n.label),  # graphify's norm_label: NFKD, marks dropped, lower case
            "kind": n.kind.value,
            "file_type": "literal" if n.kind == NodeKind.LITERAL else "concept",
            "source_file": (origin.doc or "") if origin else "",
            "source_location": f"#{origin.id}" if origin else "",
            "units": unit_count.get(n.id, 0),
        })

    links: list[dict[str, Any]] = []
    for u in units:
        conf, score = _confidence(u)
        base = {"confidence": conf, "confidence_score": score, "source_file": u.doc or "",
                "source_location": f"#{u.id}", "weight": 1.0, "unit": u.id, "family": u.family, "kind": u.kind}
        subj = u.subject_id
        for a in u.args:
            target = node_id(a.node) if a.node is not None else literal_id(a.literal or "")
            if target == subj:
                continue
            src, dst = (target, subj) if u.inverse else (subj, target)
            links.append({"source": src, "target": dst, "relation": u.predicate, **base})
        for m in u.mods:
            ref = m.value.node_ref
            if ref is not None and ref != subj:
                links.append({"source": subj, "target": ref, "relation": m.slot, **base, "modifier": True})

    directed_pairs = [(l["source"], l["target"]) for l in links]
    undirected = [tuple(sorted(p)) for p in directed_pairs]
    multigraph = len(set(undirected)) != len(undirected)

    if communities and 0 < len(nodes) <= COMMUNITY_LIMIT:
        cid = shared_communities(store, [entry["id"] for entry in nodes], directed_pairs, save=store_communities)
        for entry in nodes:
            entry["community"] = cid.get(entry["id"])
    else:
        for entry in nodes:
            entry["community"] = None

    return {
        "directed": False,
        "multigraph": multigraph,
        "graph": {"generator": f"kgservice {__version__}", "backend": store.backend,
                  "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds")},
        "nodes": nodes,
        "links": links,
        "units": [u.model_dump(mode="json") for u in units],
    }


def write_graph_json(store: GraphStore, path: Path, communities: bool = True, *,
                     store_communities: bool = True) -> dict[str, int]:
    """Write atomically: a reader never sees a half-written mirror."""
    from kgservice.export.shared_mirror import encode, write_bytes

    data = build_graph_data(store, communities=communities, store_communities=store_communities)
    write_bytes(Path(path), encode(data))
    return {"nodes": len(data["nodes"]), "links": len(data["links"]), "units": len(data["units"])}

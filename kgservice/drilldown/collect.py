"""Graph expansion for one drill-down round (DESIGN §4.3): explicit relations, no LLM.

``directed`` runs :func:`kgservice.expansion.expand_directed` per seed; ``spread`` runs
spreading activation from the weighted seeds (through the ``activation`` cache) and takes
the units of the top-ranked nodes; ``both`` does both. Candidate units are then ranked by
explicit signals only — key nodes touched, key predicate family, words shared with the
question, seed similarity / activation energy — and admitted into the round's pool up to
the unit cap. Scores only order units; they never make a fact (invariant 2).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kgservice.caches import cache_key
from kgservice.ids import is_literal_id
from kgservice.model import Unit

if TYPE_CHECKING:
    from kgservice.caches import Caches
    from kgservice.expansion.spread import SpreadParams
    from kgservice.stores.base import GraphStore

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'+#.\-]*[A-Za-z0-9+#]|[A-Za-z0-9]|[\u3400-\u9fff\uf900-\ufaff]{2,}")
_STOP = set("the a an of in on at to for from by with and or is are was were be what which who why how when where "
            "does did do has have had it its this that".split())


def words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if len(w) >= 3 and w.lower() not in _STOP}


def unit_nodes(unit: Unit) -> list[str]:
    """Entry/derived node ids a unit mentions (subject first), literals left out."""
    out = [unit.subject_id]
    for nid in unit.context_node_ids():
        if not is_literal_id(nid) and nid not in out:
            out.append(nid)
    return out


def unit_dep_nodes(unit: Unit) -> list[str]:
    """Every node id a unit touches (literals included): what its cache entries depend on."""
    return [unit.subject_id] + [n for n in unit.context_node_ids() if n != unit.subject_id]


@dataclass
class Candidate:
    unit: Unit
    weight: float  # seed similarity or normalised activation energy, 0..1
    why: list[str] = field(default_factory=list)
    score: float = 0.0


def directed_candidates(store: Any, seeds: Mapping[str, float]) -> dict[str, Candidate]:
    from kgservice.expansion import expand_directed

    found: dict[str, tuple[float, list[str]]] = {}
    for seed in sorted(seeds):
        res = expand_directed(store, [seed])
        for uid, why in res.units.items():
            w, reasons = found.get(uid, (0.0, []))
            found[uid] = (max(w, seeds[seed]), reasons + [f"{r} (seed {seed})" for r in why[:1]])
    units = {u.id: u for u in store.get_units(sorted(found))}
    return {uid: Candidate(units[uid], w, why) for uid, (w, why) in found.items() if uid in units}


def activation(store: GraphStore, params: SpreadParams, caches: Caches, seeds: Mapping[str, float]) -> tuple[dict[str, float], bool]:
    """Spreading activation through the ``activation`` cache: (energy per node, cache hit?)."""
    from kgservice.expansion import spread_activation

    weights = {s: round(float(w), 4) for s, w in sorted(seeds.items())}
    key = cache_key("activation", weights, params.key())
    hit = caches.get("activation", key)
    if hit is not None:
        return {k: float(v) for k, v in hit.items()}, True
    result = spread_activation(store, weights, params)
    energy = dict(result.energy)
    caches.put("activation", key, energy, set(energy) | set(weights))
    return energy, False


def spread_candidates(store: GraphStore, params: SpreadParams, caches: Caches, seeds: Mapping[str, float], top_nodes: int) -> tuple[dict[str, Candidate], bool]:
    energy, cached = activation(store, params, caches, seeds)
    ranked = sorted(((n, e) for n, e in energy.items() if not is_literal_id(n)), key=lambda kv: (-kv[1], kv[0]))
    ranked = ranked[:top_nodes]
    top = ranked[0][1] if ranked else 1.0
    found: dict[str, tuple[float, list[str]]] = {}
    raw: list[tuple[str, str, float]] = []
    near = store.mentions_of([n for n, _ in ranked])
    for n, e in ranked:
        for uid in near[n]:
            raw.append((uid, n, e / top if top else 0.0))
    ends = store.superseded_end(sorted({u for u, _, _ in raw}))
    for uid, n, w in raw:
        for t in ends.get(uid, [uid]):
            prev_w, reasons = found.get(t, (0.0, []))
            why = f"activation {w:.2f} at {n}" + ("" if t == uid else f" (supersedes #{uid})")
            found[t] = (max(prev_w, w), reasons if why in reasons else reasons + [why])
    units = {u.id: u for u in store.get_units(sorted(found))}
    return {uid: Candidate(units[uid], w, why[:2]) for uid, (w, why) in found.items() if uid in units}, cached


def score(c: Candidate, key_matches: set[str], key_families: set[str], qwords: set[str]) -> float:
    from kgservice.notation.serializer import format_unit

    nodes = set(unit_nodes(c.unit))
    touch = min(2, len(nodes & key_matches))
    fam = 1.0 if c.unit.family in key_families else 0.0
    overlap = min(3, len(words(format_unit(c.unit, with_id=False)) & qwords))
    return 2.0 * touch + 1.5 * fam + 0.5 * overlap + c.weight

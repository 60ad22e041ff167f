"""Spreading activation (DESIGN §4.3): a per-hop frontier loop driven from Python.

Each hop asks the store for the frontier's relation edges (one Cypher call per hop on
Neo4j), so ε really prunes: a node whose incoming energy this hop is below ε does not
spread. Energy only ranks (invariant 2); it never makes a fact.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from kgservice.errors import InvalidArgument
from kgservice.families import SPREAD_KINDS
from kgservice.stores.base import GraphStore
from kgservice.stores.spreading import default_tau

if TYPE_CHECKING:
    from kgservice.config import Settings
    from kgservice.families import Lexicon


@dataclass(frozen=True)
class SpreadParams:
    # τ per kind; without one, the built-in lexicon's (families/lexicon.json is the only table)
    tau: Mapping[str, float] = field(default_factory=default_tau)
    epsilon: float = 0.05
    max_hops: int = 3
    e0: float = 1.0
    # Optional constraints from the spreading-activation literature; both off by default,
    # which is DESIGN §4.3 as written. See scripts/bench/spread_constraints.py for what
    # each costs in ranking and buys in latency.
    max_fanout: int | None = None  # from hop 2 on, a node with more relation edges receives energy but does not pass it on
    max_fire: int | None = None  # at most this many nodes (the most energetic) spread on from each hop
    # Hub damping and seed backflow (docs/spreading.md). Library defaults are DESIGN §4.3 as
    # written; the service takes its defaults from the lexicon ("spread" in lexicon.json).
    degree_damping: float = 0.0  # a node passes e * tau[kind] / max(1, d) ** degree_damping per row, d = its rows this hop
    seed_backflow: bool = True  # False: seeds receive no energy during hops and never re-enter the frontier

    def __post_init__(self) -> None:
        for name in ("max_fanout", "max_fire"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise InvalidArgument(f"{name} must be a positive number of nodes or None (off), got {value}")
        if not 1 <= self.max_hops <= 10:
            raise InvalidArgument(f"max_hops (K) must be 1..10, got {self.max_hops}")
        if not 0.0 <= self.degree_damping <= 2.0:
            raise InvalidArgument(f"degree_damping must be in [0, 2], got {self.degree_damping}")
        if not 0 < self.epsilon < 1:
            raise InvalidArgument(f"epsilon must be in (0, 1), got {self.epsilon}")
        for kind in self.tau:
            if kind not in SPREAD_KINDS:
                raise InvalidArgument(f"tau given for {kind!r}, which spreading activation does not walk")

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``K`` is ``max_hops``), as ``kg expand --mode spread --json`` prints it."""
        return {"tau": dict(self.tau), "epsilon": self.epsilon, "K": self.max_hops,
                "max_fanout": self.max_fanout, "max_fire": self.max_fire}

    def key(self) -> tuple:
        return (tuple(sorted(self.tau.items())), self.epsilon, self.max_hops, self.e0, self.max_fanout, self.max_fire,
                self.degree_damping, self.seed_backflow)


def service_params(settings: Settings, lexicon: Lexicon, **over: float | int) -> SpreadParams:
    """The service's spreading parameters: τ from the lexicon (with the user's overrides, the one
    source), hub damping and seed backflow from the settings or else the lexicon, the rest from
    the settings; a falsy override in ``over`` keeps the setting."""
    tau = {k: lexicon.tau_of(k) for k in SPREAD_KINDS}
    s, lex = settings, lexicon.spread
    damping = s.spread_degree_damping if s.spread_degree_damping is not None else lex.get("degree_damping", 0.0)
    backflow = s.spread_seed_backflow if s.spread_seed_backflow is not None else lex.get("seed_backflow", True)
    return SpreadParams(tau=tau, epsilon=float(over.get("epsilon") or s.epsilon),
                        max_hops=int(over.get("max_hops") or s.max_hops),
                        # node counts (the shells pass ints; SpreadParams rejects one below 1)
                        max_fanout=cast("int | None", over.get("max_fanout") or s.spread_max_fanout),
                        max_fire=cast("int | None", over.get("max_fire") or s.spread_max_fire),
                        degree_damping=float(damping), seed_backflow=bool(backflow))


@dataclass
class SpreadResult:
    energy: dict[str, float]
    hops: int
    # how many nodes were activated in all; energy holds them all unless the spread was asked for
    # only the ``limit`` most energetic (then len(energy) <= limit < activated is possible)
    activated: int | None = None

    def ranked(self, limit: int | None = None) -> list[tuple[str, float]]:
        items = sorted(self.energy.items(), key=lambda kv: (-kv[1], kv[0]))
        return items[:limit] if limit else items

    def to_dict(self, limit: int | None = None) -> dict[str, Any]:
        """``hops`` and the ``limit`` most energetic nodes, ranked (ties by node id)."""
        return {"hops": self.hops, "ranked": [{"node": n, "energy": e} for n, e in self.ranked(limit)]}


def spread_activation(
    store: GraphStore,
    seeds: Mapping[str, float] | list[str],
    params: SpreadParams = SpreadParams(),
    limit: int | None = None,
) -> SpreadResult:
    """Seeds start with E0 (times a per-seed weight such as vector similarity, if given).

    With ``limit``, ``energy`` keeps only the ``limit`` most energetic nodes (ties by node id,
    as :meth:`SpreadResult.ranked` orders them) and ``activated`` says how many there were in
    all: the same ranking, without shipping a 200k-node result from a server backend to be
    cut down here (Neo4j's resident procedure selects them itself). A caller that needs every
    energy (fusion with other scores, a cache keyed on all activated nodes) passes no limit.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from kgservice.config import Settings
    >>> from kgservice.service import KnowledgeBase
    >>> kb = KnowledgeBase(Settings(data_dir=Path(tempfile.mkdtemp())))
    >>> _ = kb.ingest_notation("{cat} [is a] {mammal}\\n{mammal} [has] {fur}\\n{dog} [is a] {mammal}", embed=False)
    >>> store = kb.store

    τ(belongs_to) = 0.7 and τ(of) = 0.5, both spread both ways. Hop 1: mammal 0.7.
    Hop 2 from mammal: cat +0.49, dog 0.49, fur 0.35. Hop 3 back into mammal:
    0.49·0.7 (cat) + 0.49·0.7 (dog) + 0.35·0.5 (fur) = 0.861, so mammal ends at 1.561:

    >>> res = spread_activation(store, ["cat"])
    >>> res.hops, [(n, round(e, 4)) for n, e in res.ranked()]
    (3, [('mammal', 1.561), ('cat', 1.49), ('dog', 0.49), ('fur', 0.35)])

    With ε = 0.5 nothing from hop 2 spreads on (all below ε), so the walk stops after 2 hops:

    >>> res = spread_activation(store, ["cat"], SpreadParams(epsilon=0.5))
    >>> res.hops, [(n, round(e, 4)) for n, e in res.ranked(2)]
    (2, [('cat', 1.49), ('mammal', 0.7)])
    >>> kb.close()
    """
    weights = dict(seeds) if isinstance(seeds, Mapping) else {s: 1.0 for s in seeds}
    energy: dict[str, float] = {s: params.e0 * w for s, w in weights.items()}
    if limit is not None and limit < 1:
        raise InvalidArgument(f"limit must be a positive number of nodes or None (all), got {limit}")
    resident = store.spread_resident(energy, params, limit)  # Neo4j with the kg.* plugin: all hops in one call
    if resident is not None:
        got, hops, activated = resident
        if limit is not None:  # the server's top-N plus unknown seeds: cut to the library's ranking
            got = dict(sorted(got.items(), key=lambda kv: (-kv[1], kv[0]))[:limit])
        return SpreadResult(energy=got, hops=hops, activated=activated)
    frontier = {s: e for s, e in energy.items() if e >= params.epsilon}
    hops = 0
    while frontier and hops < params.max_hops:
        hops += 1
        # the seeds' own hop is never limited; the fan-out constraint applies from the second hop on,
        # to every frontier node (a seed that energy flows back to included)
        incoming = store.spread_step(frontier, params.tau, max_fanout=params.max_fanout if hops > 1 else None,
                                     degree_damping=params.degree_damping)
        if not params.seed_backflow:
            incoming = {n: e for n, e in incoming.items() if n not in weights}
        for node, e in incoming.items():
            energy[node] = energy.get(node, 0.0) + e
        frontier = {n: e for n, e in incoming.items() if e >= params.epsilon}
        if params.max_fire is not None and len(frontier) > params.max_fire:
            keep = sorted(frontier.items(), key=lambda kv: (-kv[1], kv[0]))[: params.max_fire]
            frontier = dict(keep)
    activated = len(energy)
    if limit is not None:
        energy = dict(sorted(energy.items(), key=lambda kv: (-kv[1], kv[0]))[:limit])
    return SpreadResult(energy=energy, hops=hops, activated=activated)

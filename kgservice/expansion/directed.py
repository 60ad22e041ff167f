"""Directed expansion (DESIGN §4.3): explicit relations only, no LLM, no scores.

The six paths, composed from store procedures so both backends give the same answer:
subject_mentions, context_mentions, belongs-to closure (facts on ancestors sink to the
node), synonym ≡ merge, superseded chain to its end (superseded units are replaced by
their terminal unit), and narrowed_by (derived nodes are listed for a base, but the base
does not inherit their facts; a derived node does inherit its base's facts).

The procedures are read through ``store.directed_reads(seeds)``: an in-process store
answers them directly; Neo4j prefetches everything this walk asks for in one round trip
(``cypher/directed_expand.cypher``), so the walk below is the single place the six paths
are composed in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kgservice.stores.base import DirectedReads, GraphStore


@dataclass
class DirectedResult:
    seeds: list[str]
    nodes: dict[str, list[str]] = field(default_factory=dict)  # node id -> why it is here
    units: dict[str, list[str]] = field(default_factory=dict)  # live unit id -> why it is here
    superseded: dict[str, list[str]] = field(default_factory=dict)  # skipped unit -> its terminal units

    def add_node(self, nid: str, why: str) -> None:
        reasons = self.nodes.setdefault(nid, [])
        if why not in reasons:
            reasons.append(why)

    def add_unit(self, uid: str, why: str) -> None:
        reasons = self.units.setdefault(uid, [])
        if why not in reasons:
            reasons.append(why)

    def to_dict(self) -> dict:
        return {
            "seeds": self.seeds,
            "nodes": {k: self.nodes[k] for k in sorted(self.nodes)},
            "units": {k: self.units[k] for k in sorted(self.units)},
            "superseded": {k: self.superseded[k] for k in sorted(self.superseded)},
        }


def _sunk(reads: DirectedReads, res: DirectedResult, node: str, via: str = "") -> list[tuple[str, str]]:
    """Units that sink to ``node`` through belongs-to: the facts of its ancestors and of their
    synonyms (the ancestors and synonyms are listed as nodes on the way)."""
    raw: list[tuple[str, str]] = []
    for anc, depth in sorted(reads.belongs_to_ancestors(node).items(), key=lambda kv: (kv[1], kv[0])):
        res.add_node(anc, f"ancestor of {node}{via and ' (base)'} (depth {depth})")
        for syn in reads.synonym_class(anc):
            if syn != anc:
                res.add_node(syn, f"synonym of {anc}")
            raw += [(u, f"inherited from {syn}{via}") for u in reads.subject_mentions(syn)]
    return raw


def expand_directed(store: GraphStore, seeds: Sequence[str]) -> DirectedResult:
    """Every unit the six explicit paths reach from the seeds, with the reason for each.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from kgservice.stores.embedded import EmbeddedStore
    >>> store = EmbeddedStore(pathlib.Path(tempfile.mkdtemp()) / "graph")
    >>> from kgservice.families import Lexicon
    >>> from kgservice.notation import parse_units
    >>> units = "#u1 {cat} [is a] {mammal}\\n#u2 {mammal} [has] {fur}\\n#u3 {dog} [is a] {mammal}"
    >>> _ = store.ingest(parse_units(units, Lexicon.load()))
    >>> res = expand_directed(store, ["cat"])

    The fact on the class sinks to the instance; the sibling's fact (u3) does not:

    >>> res.nodes
    {'cat': ['seed'], 'mammal': ['ancestor of cat (depth 1)']}
    >>> res.units
    {'u1': ['subject of cat'], 'u2': ['inherited from mammal']}
    >>> store.close()
    """
    res = DirectedResult(seeds=list(seeds))
    reads = store.directed_reads(seeds)  # the same procedures, prefetched on a server backend
    raw: list[tuple[str, str]] = []  # (unit id, reason) before supersession is resolved

    for seed in seeds:
        res.add_node(seed, "seed")
        # superseded nodes point on to their newest replacement
        focus = [seed]
        for end in reads.node_superseded_end(seed):
            if end != seed:
                res.add_node(end, f"replaces {seed}")
                focus.append(end)
        # ≡ merge: every member of the synonym class counts as the seed itself
        members: list[str] = []
        for f in focus:
            for m in reads.synonym_class(f):
                if m not in members:
                    members.append(m)
                    if m != f:
                        res.add_node(m, f"synonym of {f}")
        for m in members:
            raw += [(u, f"subject of {m}") for u in reads.subject_mentions(m)]
            raw += [(u, f"mentions {m}") for u in reads.context_mentions(m)]
            # belongs-to closure: ancestor facts sink; ancestors' synonyms sink too
            raw += _sunk(reads, res, m)
            # narrowed_by: derived nodes are listed, their facts stay theirs
            for d in reads.narrowed_by(m):
                res.add_node(d, f"narrows {m}")
            # a derived node inherits the facts of the base it narrows, including the facts
            # the base inherits through belongs-to (they sink to the base, so on to m)
            for base in reads.narrows(m):
                res.add_node(base, f"base of {m}")
                raw += [(u, f"inherited from base {base}") for u in reads.subject_mentions(base)]
                raw += _sunk(reads, res, base, via=f" via base {base}")

    ends = reads.superseded_end(sorted({u for u, _ in raw}))
    for uid, why in raw:
        terminals = ends.get(uid, [uid])
        if terminals == [uid]:
            res.add_unit(uid, why)
            continue
        res.superseded[uid] = terminals
        for t in terminals:
            res.add_unit(t, f"supersedes #{uid} ({why})")
    return res

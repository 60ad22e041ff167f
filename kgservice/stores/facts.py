"""What one unit contributes to the graph: nodes, mentions, relation edges, supersession.

Both backends derive their graph from units through this one function, so a unit means
the same thing in the embedded store and in Neo4j.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from kgservice.families import RELATION_KINDS
from kgservice.ids import literal_id, node_id
from kgservice.model import NodeKind, Unit

_ENTRY, _DERIVED, _LITERAL = NodeKind.ENTRY, NodeKind.DERIVED, NodeKind.LITERAL
_RELATION_KINDS = frozenset(RELATION_KINDS)

# Ingest normalises the same hub labels over and over (NFKC + casefold + whitespace regex
# each time). node_id / literal_id are pure, so a bounded memo is exact.
_nid = lru_cache(maxsize=1 << 20)(node_id)
_lid = lru_cache(maxsize=1 << 20)(literal_id)


@dataclass(slots=True)
class UnitFacts:
    unit_id: str
    nodes: dict[str, tuple[str, NodeKind]] = field(default_factory=dict)  # id -> (label, kind)
    subject: str = ""
    args: list[tuple[int, str]] = field(default_factory=list)  # (pos, node id incl. literals)
    mods: list[tuple[str, str]] = field(default_factory=list)  # (slot, node id)
    context: list[str] = field(default_factory=list)
    relations: list[tuple[str, str, str, str]] = field(default_factory=list)  # (src, dst, kind, family)
    node_supersessions: list[tuple[str, str]] = field(default_factory=list)  # (old node, new node)
    narrowings: list[tuple[str, str]] = field(default_factory=list)  # (base, derived)
    supersedes: list[str] = field(default_factory=list)  # older unit ids


def _add(nodes: dict[str, tuple[str, NodeKind]], nid: str, label: str, kind: NodeKind) -> None:
    prev = nodes.get(nid)
    if prev is None or (kind is _DERIVED and prev[1] is _ENTRY):
        nodes[nid] = (label, kind)


def unit_facts(unit: Unit) -> UnitFacts:
    d = unit.__dict__  # plain attribute reads: this runs once per unit on every ingest
    subject = d["subject"]
    kind = d["kind"]
    subj = _nid(subject)
    nodes: dict[str, tuple[str, NodeKind]] = {subj: (subject, _DERIVED if kind == "narrows" else _ENTRY)}
    args: list[tuple[int, str]] = []
    node_args: list[str] = []
    context: dict[str, None] = {}  # == unit.context_node_ids(): arg then mod node refs, first-seen order
    for pos, value in enumerate(d["args"]):
        v = value.__dict__
        text = v["node"]
        if text is not None:
            nid = _nid(text)
            _add(nodes, nid, text, _ENTRY)
            node_args.append(nid)
        else:
            text = v["literal"]
            if text is None:  # a unit reference as an argument: the model allows it, no node
                raise AssertionError(f"unit #{unit.id}: argument {pos} is a unit reference, not a node or literal")
            nid = _lid(text)
            _add(nodes, nid, text, _LITERAL)
        args.append((pos, nid))
        context[nid] = None
    mods: list[tuple[str, str]] = []
    for mod in d["mods"]:
        v = mod.value.__dict__
        text = v["node"]
        if text is not None:
            nid = _nid(text)
            _add(nodes, nid, text, _ENTRY)
        else:
            text = v["literal"]
            if text is None:
                continue
            nid = _lid(text)
            _add(nodes, nid, text, _LITERAL)
        mods.append((mod.slot, nid))
        context[nid] = None
    relations: list[tuple[str, str, str, str]] = []
    node_supersessions: list[tuple[str, str]] = []
    narrowings: list[tuple[str, str]] = []
    if node_args:
        inverse = d["inverse"]
        family = d["family"]
        for other in node_args:
            if other == subj:
                continue
            src, dst = (other, subj) if inverse else (subj, other)
            if kind in _RELATION_KINDS:
                relations.append((src, dst, kind, family))
            elif kind == "superseded":
                node_supersessions.append((src, dst))
            elif kind == "narrows":
                narrowings.append((dst, src))  # subject narrows arg: base=arg, derived=subject
    return UnitFacts(d["id"], nodes, subj, args, mods, list(context), relations, node_supersessions, narrowings,
                     list(d["supersedes"]))

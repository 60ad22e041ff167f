"""What one unit contributes to the graph: nodes, mentions, relation edges, supersession.

Both backends derive their graph from units through this one function, so a unit means
the same thing in networkx and in Neo4j.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kgservice.families import RELATION_KINDS
from kgservice.ids import literal_id, node_id
from kgservice.model import NodeKind, Unit


@dataclass
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
    if prev is None or (kind == NodeKind.DERIVED and prev[1] == NodeKind.ENTRY):
        nodes[nid] = (label, kind)


def unit_facts(unit: Unit) -> UnitFacts:
    f = UnitFacts(unit_id=unit.id, supersedes=list(unit.supersedes))
    subj = node_id(unit.subject)
    f.subject = subj
    _add(f.nodes, subj, unit.subject, NodeKind.DERIVED if unit.kind == "narrows" else NodeKind.ENTRY)
    node_args: list[str] = []
    for pos, value in enumerate(unit.args):
        if value.node is not None:
            nid = node_id(value.node)
            _add(f.nodes, nid, value.node, NodeKind.ENTRY)
            node_args.append(nid)
        else:
            assert value.literal is not None
            nid = literal_id(value.literal)
            _add(f.nodes, nid, value.literal, NodeKind.LITERAL)
        f.args.append((pos, nid))
    for mod in unit.mods:
        v = mod.value
        if v.node is not None:
            nid = node_id(v.node)
            _add(f.nodes, nid, v.node, NodeKind.ENTRY)
        elif v.literal is not None:
            nid = literal_id(v.literal)
            _add(f.nodes, nid, v.literal, NodeKind.LITERAL)
        else:
            continue
        f.mods.append((mod.slot, nid))
    f.context = unit.context_node_ids()
    for other in node_args:
        if other == subj:
            continue
        src, dst = (other, subj) if unit.inverse else (subj, other)
        if unit.kind in RELATION_KINDS:
            f.relations.append((src, dst, unit.kind, unit.family))
        elif unit.kind == "superseded":
            f.node_supersessions.append((src, dst))
        elif unit.kind == "narrows":
            f.narrowings.append((dst, src))  # subject narrows arg: base=arg, derived=subject
    return f

"""Compact unit records: how the embedded store holds units and their facts in memory and on disk.

A unit is a plain tuple (no classes, so snapshots and journal records pickle small and load fast)
that becomes a :class:`~kgservice.model.Unit` model only when read; strings a batch repeats
(labels, predicates, docs, stamps) are interned so a million units share them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, overload

from pydantic import BaseModel

from kgservice.model import Mod, NodeKind, Unit, Value

M = TypeVar("M", bound=BaseModel)

_KIND = {"entry": "entry", "derived": "derived", "literal": "literal"}  # canonical (shared) strings
_NODE_KIND = {k.value: k for k in NodeKind}
_UNIT_FIELDS = tuple(Unit.model_fields)
_obj_set = object.__setattr__

# -- compact unit records --------------------------------------------------------------
# (id, subject, predicate, family, kind, inverse, args, mods, supersedes, doc, mode, ingested_at)
# args: a node value is its text (str); a literal is ("l", text), a unit ref ("u", text).
# mods: (slot, value) with value encoded the same way.

def _enc(v: Value) -> Any:
    d = v.__dict__
    if d["node"] is not None:
        return d["node"]
    if d["literal"] is not None:
        return ("l", d["literal"])
    return ("u", d["unit"])


def _model(cls: type[M], values: dict[str, Any], fields_set: set[str] | None = None) -> M:
    """What ``cls.model_construct(**values)`` builds, without its per-field loop (no aliases,
    extras or private attributes on these models)."""
    m = cls.__new__(cls)
    _obj_set(m, "__dict__", values)
    _obj_set(m, "__pydantic_fields_set__", set(values) if fields_set is None else fields_set)
    _obj_set(m, "__pydantic_extra__", None)
    _obj_set(m, "__pydantic_private__", None)
    return m


def _dec(x: Any) -> Value:
    """The Value a validated ``Value(node=...)`` / ``(literal=...)`` / ``(unit=...)`` is."""
    if isinstance(x, str):
        return _model(Value, {"node": x, "literal": None, "unit": None}, {"node"})
    tag, text = x
    if tag == "l":
        return _model(Value, {"node": None, "literal": text, "unit": None}, {"literal"})
    return _model(Value, {"node": None, "literal": None, "unit": text}, {"unit"})


def _unit_from(rec: tuple) -> Unit:
    (uid, subject, predicate, family, kind, inverse, args, mods, supersedes, doc, mode, ingested_at) = rec
    return _model(Unit, {
        "id": uid, "subject": subject, "predicate": predicate, "family": family, "kind": kind,
        "inverse": inverse, "args": tuple(_dec(a) for a in args),
        "mods": tuple(_model(Mod, {"slot": s, "value": _dec(v)}) for s, v in mods),
        "supersedes": supersedes, "doc": doc, "mode": mode, "ingested_at": ingested_at,
    })


class _Interner:
    """Dedupes the strings a batch repeats endlessly (labels, predicates, docs, stamps)."""

    def __init__(self, labels: Mapping[str, str]) -> None:
        self.table: dict[str, str] = {}
        self.labels = labels

    @overload
    def __call__(self, s: str) -> str: ...
    @overload
    def __call__(self, s: None) -> None: ...
    def __call__(self, s: str | None) -> str | None:
        if s is None:
            return None
        got = self.table.get(s)
        if got is None:
            if len(self.table) > 200_000:
                self.table.clear()
            got = self.table[s] = s
        return got

    def label(self, text: str, nid: str) -> str:
        """The stored label object when ``text`` is the node's label (the common case)."""
        lab = self.labels.get(nid)
        return lab if lab is not None and lab == text else self(text)


def _compact(u: Unit, facts: Any, strs: _Interner, stamp: str | None = None) -> tuple[tuple, tuple]:
    """(unit record, facts record): what the journal and the in-memory state hold per unit;
    ``stamp`` is its ``ingested_at`` when the unit has none."""
    d = u.__dict__
    table, labels = strs.table, strs.labels
    intern = strs.__call__
    args = []
    for (_pos, nid), a in zip(facts.args, d["args"]):
        text = a.__dict__["node"]
        if text is None:
            args.append(_enc(a))
            continue
        lab = labels.get(nid)
        args.append(lab if lab is not None and lab == text else (table.get(text) or intern(text)))
    mods = tuple([(intern(m.slot), intern(m.value.node) if m.value.node is not None else _enc(m.value))
                  for m in d["mods"]]) if d["mods"] else ()
    subject = d["subject"]
    lab = labels.get(facts.subject)
    if lab is None or lab != subject:
        lab = table.get(subject) or intern(subject)
    rec = (d["id"], lab, table.get(d["predicate"]) or intern(d["predicate"]), intern(d["family"]),
           intern(d["kind"]), d["inverse"], tuple(args), mods, tuple(d["supersedes"]), intern(d["doc"]),
           intern(d["mode"]), intern(d["ingested_at"] or stamp))
    nodes = []
    for nid, (text, k) in facts.nodes.items():
        lab = labels.get(nid)
        nodes.append((nid, lab if lab is not None and lab == text else (table.get(text) or intern(text)),
                      _KIND[k.value]))
    if facts.node_supersessions or facts.narrowings or len(facts.relations) > 1:
        edges: dict[tuple[str, str, str], None] = {}  # (src, dst, kind) once per unit, like a keyed multigraph edge
        for src, dst, kind, _family in facts.relations:
            edges[(src, dst, kind)] = None
        for old, newer in facts.node_supersessions:
            edges[(old, newer, "superseded")] = None
        for base, derived in facts.narrowings:
            edges[(base, derived, "narrowed_by")] = None
        edge_t = tuple(edges)
    elif facts.relations:
        src, dst, kind, _family = facts.relations[0]
        edge_t = ((src, dst, kind),)
    else:
        edge_t = ()
    return rec, (facts.subject, tuple(nodes), tuple(facts.context), edge_t)

"""The lifecycle on the embedded store's in-memory graph: taking units out of every index into
the archive (retraction), and the document / change records a lifecycle journal record carries.

A retracted unit leaves ``units``, the reverse indexes, the relation edges and the supersession
links it owned, exactly as if it had never been ingested: the units it superseded are live
again, and nodes no live unit mentions are removed (the caller drops their vectors). Its record
goes to ``retracted`` with the change that took it out, so an undo can put it back.

Duplicate aliases follow the unit they name: an alias of an archived unit stays in ``aliases``
but is not in force (validation asks only about aliases of live units, and ``kg doctor`` counts
it as archived, not dangling); the undo that brings the unit back brings its aliases back with
it, a purge deletes them, and an id that becomes a unit of its own stops being an alias."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kgservice.stores.embedded.records import _compact, _Interner, _unit_from
from kgservice.stores.facts import unit_facts


def index_statements(documents: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """unit id -> the documents stating it (sorted), from the document records."""
    stated: dict[str, list[str]] = {}
    for doc_id in sorted(documents):
        for uid in documents[doc_id].get("unit_lines", {}):
            stated.setdefault(uid, []).append(doc_id)
    return stated


def unit_nodes(g: Any, uid: str) -> set[str]:
    """Node ids a stored (live) unit mentions."""
    return set(unit_facts(_unit_from(g.units[uid])).nodes)


def _drop(lst: list | None, item: Any) -> None:
    if lst is not None:
        try:
            lst.remove(item)
        except ValueError:
            pass


def retract_units(g: Any, uids: Iterable[str], change: str, at: str, reason: str | None,
                  touched: set[str] | None = None) -> list[str]:
    """Take live units out of every index into the archive; returns the node ids removed
    because no live unit mentions them any more. ``touched`` gains every node whose rows changed."""
    from kgservice.families import RELATION_KINDS

    strs = _Interner(g.labels)
    maybe_orphans: set[str] = set()
    revived_kinds: set[str] = set()
    for uid in uids:
        rec = g.units.get(uid)
        if rec is None:
            continue
        u = _unit_from(rec)
        _, (subj, nodes, ctx, edges) = _compact(u, unit_facts(u), strs)
        del g.units[uid]
        g.kind_counts[rec[4]] = g.kind_counts.get(rec[4], 1) - 1
        if not g.kind_counts[rec[4]]:
            del g.kind_counts[rec[4]]
        _drop(g.subject.get(subj), uid)
        for nid in ctx:
            _drop(g.context.get(nid), uid)
        for src, dst, kind in edges:
            _drop(g.out[kind].get(src), (src, dst, uid))
            _drop(g.inn[kind].get(dst), (src, dst, uid))
            if kind in RELATION_KINDS:
                g.relations -= 1
        for old in rec[8]:  # what it superseded is live again (unless something else supersedes it)
            lst = g.superseded_by.get(old)
            _drop(lst, uid)
            if lst is not None and not lst:
                del g.superseded_by[old]
                if old in g.units and touched is not None:
                    touched.update(unit_nodes(g, old))
        g.superseded_by.pop(uid, None)
        node_ids = [n for n, _, _ in nodes]
        maybe_orphans.update(node_ids)
        if rec[4] == "narrows":
            revived_kinds.add(subj)
        if touched is not None:
            touched.update(node_ids)
        g.retracted[uid] = (rec, change, at, reason)
    orphans = []
    for nid in sorted(maybe_orphans):
        if g.subject.get(nid) or g.context.get(nid):
            continue
        orphans.append(nid)
        g.labels.pop(nid, None)
        g.kinds.pop(nid, None)
        g.subject.pop(nid, None)
        g.context.pop(nid, None)
        for kind in g.out:
            g.out[kind].pop(nid, None)
            g.inn[kind].pop(nid, None)
    for nid in revived_kinds:  # derived only while a live narrows unit has it as subject
        if g.kinds.get(nid) == "derived" and not any(g.units[u][4] == "narrows" for u in g.subject.get(nid, ())):
            g.kinds[nid] = "entry"
    g.generation += 1
    return orphans


def drop_aliases_of(g: Any, units: Iterable[str]) -> None:
    """Forget the duplicate aliases that name these units: a unit edited in place (retracted and
    added again with the same id by one change) is another fact now, and a duplicate of its old
    version is no duplicate of it."""
    gone = set(units)
    if gone and g.aliases:
        for dup in [d for d, k in g.aliases.items() if k in gone]:
            del g.aliases[dup]


def apply_life(g: Any, life: Mapping[str, Any]) -> None:
    """The records of a lifecycle journal record, after its retractions and units: document
    records set or removed, units that are live again out of the archive (and superseded again
    by the live units whose ``supersedes`` names them), the change appended, and purged archive
    entries / document texts dropped."""
    back = [uid for uid in life.get("unarchive", ()) if uid in g.units and uid in g.retracted]
    if back:  # a unit live again is superseded again by the live units that superseded it
        wanted = set(back)
        for newer, rec in g.units.items():
            for old in rec[8]:
                if old in wanted and newer not in g.superseded_by.setdefault(old, []):
                    g.superseded_by[old].append(newer)
        for uid in back:
            if not g.superseded_by.get(uid):
                g.superseded_by.pop(uid, None)
    for uid in life.get("unarchive", ()):
        if uid in g.units:
            g.retracted.pop(uid, None)
    for uid in life.get("purge_units", ()):
        g.retracted.pop(uid, None)
    # an alias sleeps in the archive with its unit and is purged with it
    drop_aliases_of(g, [u for u in life.get("purge_units", ()) if u not in g.units])
    for doc_id, rec in life.get("docs", {}).items():
        old = g.documents.pop(doc_id, None)
        if old is not None:
            for uid in old.get("unit_lines", {}):
                lst = g.stated.get(uid)
                _drop(lst, doc_id)
                if lst is not None and not lst:
                    del g.stated[uid]
        if rec is not None:
            g.documents[doc_id] = rec
            for uid in rec.get("unit_lines", {}):
                lst = g.stated.setdefault(uid, [])
                if doc_id not in lst:
                    lst.append(doc_id)
                    lst.sort()
    for cid, docs in life.get("purge_texts", {}).items():
        for ch in g.changes:
            if ch["id"] == cid:
                for side in ("docs_before", "docs_after"):
                    for d in docs:
                        if ch[side].get(d):
                            ch[side][d] = {**ch[side][d], "text_z": None, "text_stored": False,
                                           "original_z": None, "original_stored": False}
    if life.get("change") is not None:
        g.changes.append(life["change"])
    g.generation += 1

"""The embedded store's in-memory graph: adjacency lists per relation kind, reverse indexes,
and how a batch of compact records is applied to them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kgservice.families import RELATION_KINDS
from kgservice.model import IngestReport

BIDIRECTIONAL = {"synonym", "belongs_to", "of", "related_to"}
EDGE_KINDS = (*RELATION_KINDS, "superseded", "narrowed_by")
_SPREAD_OUT = tuple(RELATION_KINDS)  # content forward only; the others both ways
_SPREAD_IN = tuple(k for k in RELATION_KINDS if k in BIDIRECTIONAL)
_RELATION_SET = frozenset(RELATION_KINDS)
_NO_EPOCH = "0" * 32  # the epoch of a journal that starts from an empty store


# -- in-memory state -------------------------------------------------------------------

class _Graph:
    def __init__(self) -> None:
        self.epoch = _NO_EPOCH
        self.generation = 0
        self.units: dict[str, tuple] = {}
        self.labels: dict[str, str] = {}
        self.kinds: dict[str, str] = {}
        self.subject: dict[str, list[str]] = {}
        self.context: dict[str, list[str]] = {}
        self.out: dict[str, dict[str, list[tuple[str, str, str]]]] = {k: {} for k in EDGE_KINDS}
        self.inn: dict[str, dict[str, list[tuple[str, str, str]]]] = {k: {} for k in EDGE_KINDS}
        self.superseded_by: dict[str, list[str]] = {}
        self.relations = 0
        self.kind_counts: dict[str, int] = {}
        # merged-away duplicate id -> the unit it was merged into (validate.prepare_batch's aliases)
        self.aliases: dict[str, str] = {}
        # the lifecycle (kgservice.lifecycle, embedded/lifecycle.py): document records (plain
        # dicts), retracted units (id -> (unit record, change id, when, reason)), the changes
        self.documents: dict[str, dict[str, Any]] = {}
        self.retracted: dict[str, tuple] = {}
        self.changes: list[dict[str, Any]] = []
        self.stated: dict[str, list[str]] = {}  # unit id -> documents stating it (derived, not saved)

    # persistence as plain containers (no classes in the pickle)
    def dump(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("epoch", "generation", "units", "labels", "kinds", "subject", "context",
                                              "out", "inn", "superseded_by", "relations", "kind_counts",
                                              "aliases", "documents", "retracted", "changes")}

    @classmethod
    def restore(cls, data: dict[str, Any]) -> "_Graph":
        g = cls.__new__(cls)
        g.__dict__.update(data)
        g.__dict__.setdefault("aliases", {})  # snapshots written before aliases were kept
        for key in ("documents", "retracted"):  # snapshots written before the lifecycle
            g.__dict__.setdefault(key, {})
        g.__dict__.setdefault("changes", [])
        from kgservice.stores.embedded.lifecycle import index_statements

        g.stated = index_statements(g.documents)
        return g

    def apply_batch(self, batch: Any, report: IngestReport | None = None, touched: set[str] | None = None,
                    progress: Callable[[int], None] | None = None) -> None:
        """Apply one journal record: a list of (unit record, facts record), or - for a batch that
        merged duplicates - ``{"units": [...], "aliases": {merged id: unit id}}`` (see
        :func:`journal_batch`), so a batch and the aliases it made are one durable record."""
        records, aliases = split_batch(batch)
        life = batch.get("life") if isinstance(batch, dict) else None
        if life is not None:  # a lifecycle change: its retractions before its units, its records after
            from kgservice.stores.embedded.lifecycle import apply_life, drop_aliases_of, retract_units

            retract_units(self, life["retract"], life["change"]["id"], life["change"]["at"],
                          life["change"].get("reason"), touched)
            drop_aliases_of(self, life.get("reused", ()))
        self.aliases.update(aliases)
        self.apply(records, report, touched, progress)
        if life is not None:
            apply_life(self, life)

    def apply(self, records: Iterable[tuple[tuple, tuple]], report: IngestReport | None = None,
              touched: set[str] | None = None, progress: Callable[[int], None] | None = None) -> None:
        units, labels, kinds = self.units, self.labels, self.kinds
        subject, context, sup = self.subject, self.context, self.superseded_by
        out, inn, kc = self.out, self.inn, self.kind_counts
        aliases = self.aliases
        dirty_s: set[str] = set()
        dirty_c: set[str] = set()
        n = 0
        for rec, (subj, nodes, ctx, edges) in records:
            uid = rec[0]
            units[uid] = rec
            if aliases:  # an id that named a merged duplicate of a retracted unit is a unit's now
                aliases.pop(uid, None)
            kc[rec[4]] = kc.get(rec[4], 0) + 1
            for nid, label, kind in nodes:
                if touched is not None:
                    touched.add(nid)
                cur = kinds.get(nid)
                if cur is None:
                    labels[nid] = label
                    kinds[nid] = kind
                    if report is not None:
                        report.nodes_added += 1
                        if kind != "literal":
                            report.new_embeddable_nodes.append(nid)
                elif kind == "derived" and cur == "entry":
                    kinds[nid] = "derived"
            lst = subject.get(subj)
            if lst is None:
                subject[subj] = [uid]
            else:
                lst.append(uid)
                dirty_s.add(subj)
            for nid in ctx:
                lst = context.get(nid)
                if lst is None:
                    context[nid] = [uid]
                else:
                    lst.append(uid)
                    dirty_c.add(nid)
            for src, dst, kind in edges:
                e = (src, dst, uid)
                o = out[kind]
                arcs = o.get(src)
                if arcs is None:
                    o[src] = [e]
                else:
                    arcs.append(e)
                i = inn[kind]
                arcs = i.get(dst)
                if arcs is None:
                    i[dst] = [e]
                else:
                    arcs.append(e)
                if kind in _RELATION_SET:
                    self.relations += 1
            for old in rec[8]:
                if old not in units and old in self.retracted:
                    continue  # an archived unit is not superseded (an undo links it again: apply_life)
                lst = sup.get(old)
                if lst is None:
                    sup[old] = [uid]
                elif uid not in lst:
                    lst.append(uid)
            n += 1
            if progress is not None and n % 1000 == 0:
                progress(1000)
        if progress is not None:
            progress(n % 1000)
        # reverse indexes stay sorted, so reads return them without sorting (timsort: appended runs merge in O(n))
        for nid in dirty_s:
            subject[nid].sort()
        for nid in dirty_c:
            context[nid].sort()
        self.generation += 1


def journal_batch(records: list[tuple[tuple, tuple]], aliases: dict[str, str],
                  life: dict[str, Any] | None = None) -> Any:
    """The journal record of a batch: the plain list it always was, unless the batch made aliases
    or is a lifecycle change (``life``: retractions, document records, the change record)."""
    if life is not None:
        return {"units": records, "aliases": aliases, "life": life}
    return {"units": records, "aliases": aliases} if aliases else records


def split_batch(batch: Any) -> tuple[list[tuple[tuple, tuple]], dict[str, str]]:
    """(unit records, aliases) of a journal record written by :func:`journal_batch`."""
    if isinstance(batch, dict):
        return batch["units"], batch["aliases"]
    return batch, {}


class _State:
    """Format 1 snapshots pickled this class (with a networkx graph); kept to read them."""

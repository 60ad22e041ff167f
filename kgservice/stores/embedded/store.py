"""EmbeddedStore: the graph-store procedures over the in-memory graph (see the package docstring
for persistence)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgservice.stores.changelog import CHANGES_FILE, record_embedded_change
from kgservice.ids import is_literal_id, literal_id
from kgservice.model import IngestReport, Node, Unit
from kgservice.stores.base import MAX_CLOSURE_DEPTH, GraphStore, IndexRows
from kgservice.errors import StoreWriteError
from kgservice.stores.embedded.graph import _SPREAD_OUT, BIDIRECTIONAL, _Graph, journal_batch
from kgservice.stores.embedded.journal import JOURNAL, SNAPSHOT, JournaledStore
from kgservice.stores.embedded.recovery import finish_interrupted_swap
from kgservice.stores.embedded.records import _NODE_KIND, _compact, _Interner, _model, _unit_from
from kgservice.stores.facts import unit_facts
from kgservice.stores.spreading import hop_share
from kgservice.stores.validate import ingest_stamp, paused_gc, prepare_batch

if TYPE_CHECKING:
    from kgservice.lifecycle.model import DocumentParts
    from kgservice.apikeys.store import KeyStore
    from kgservice.jobs.queue import JobQueue
    from kgservice.stores.changelog import ChangeFeed, VersionClock
    from kgservice.stores.embedded.shared import SqliteSharedState
    from kgservice.stores.shared import CommunityMap, SavedResult


def _remap(rec: Any, dups: Mapping[str, str]) -> Any:
    """A document record whose statements of merged duplicates name the unit they merged into."""
    return rec.remapped(dict(dups))


class EmbeddedStore(JournaledStore, GraphStore):
    backend = "embedded"
    in_process = True

    def __init__(self, data_dir: Path | str):
        self.dir = Path(data_dir)
        finish_interrupted_swap(self.dir)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreWriteError(f"cannot create the store directory {self.dir}: {exc.strerror or exc}; give a "
                                  "data directory (--data-dir, KG_DATA_DIR) this user can write") from None
        self.path = self.dir / SNAPSHOT
        self.journal = self.dir / JOURNAL
        self._snap_sig = None
        self._journal_end = 0  # bytes of the journal reflected in memory (0: none / no journal)
        self._journal_size = 0
        self._snap_bytes = 0
        self.s = self._load()

    # -- writes ---------------------------------------------------------------
    def ingest(self, units: Sequence[Unit], progress: Callable[[int], None] | None = None) -> IngestReport:
        # The batch's temporaries (validated units, facts, journal records) are freed when
        # _ingest returns, before the collector is back on: its first pass then walks what the
        # store keeps, not also what it has thrown away.
        with self._write_lock(), paused_gc():
            return self._ingest(units, progress)

    def _ingest(self, units: Sequence[Unit], progress: Callable[[int], None] | None) -> IngestReport:
        s = self.s
        dups: dict[str, str] = {}
        new, unchanged = prepare_batch(units, lambda ids: {i: _unit_from(s.units[i]) for i in ids if i in s.units},
                                       lambda subjects: [_unit_from(s.units[u]) for n in subjects
                                                         for u in s.subject.get(n, ()) if not s.superseded_by.get(u)],
                                       dups, lambda ids: {i: s.aliases[i] for i in ids
                                                          if i in s.aliases and s.aliases[i] in s.units}, stamp=False,
                                       archived=lambda ids: {i for i in ids if i in s.retracted})
        report = IngestReport(units_unchanged=unchanged, duplicates=dups)
        # merged duplicates are remembered (in the batch's own journal record) so a later
        # batch can supersede or refer to them by the id they came with
        fresh = {d: k for d, k in sorted(dups.items()) if d not in s.aliases}
        if not new:
            if fresh:
                self._append(journal_batch([], fresh))
                s.aliases.update(fresh)
            return report
        strs = _Interner(s.labels)
        stamp = ingest_stamp()
        records = [_compact(u, unit_facts(u), strs, stamp) for u in new]
        # cache coherence: log the touched nodes before the batch is durable (see stores/changelog.py)
        logged = {nid for _, facts in records for nid, _, _ in facts[1]}
        for u in new:  # a superseded unit's edges are retired: their ends change too, mentioned or not
            logged.update(n for old in u.supersedes if old in s.units for n in unit_facts(_unit_from(s.units[old])).nodes)
        try:
            seq = record_embedded_change(self.dir, logged, units=[u.id for u in new])
        except (OSError, sqlite3.Error) as exc:
            err = StoreWriteError(f"cannot write the change log {self.dir / CHANGES_FILE}: {exc}; this batch was "
                                  f"not stored (the store is as before). Free space or make {self.dir} writable, "
                                  "then run the same command again")
            err.errno = getattr(exc, "errno", None)
            raise err from None
        self._append(journal_batch(records, fresh))  # durable first; memory only changes once the batch is on disk
        touched: set[str] = set()
        try:
            s.apply_batch(journal_batch(records, fresh), report, touched, progress)
        except BaseException:
            self.s = self._load()  # memory may be half-applied; disk has the whole batch
            raise
        self._applied = seq
        self._compact_if_due()
        labels = s.labels
        report.new_labels.update((nid, labels[nid]) for nid in report.new_embeddable_nodes)
        report.units_added = len(new)
        report.touched_nodes = sorted(touched)
        return report

    # -- the lifecycle (kgservice.lifecycle; embedded/lifecycle.py) ---------------------------
    def apply_change(self, add: Sequence[Unit], retract: Sequence[str], docs: Mapping[str, Any],
                     change: Any, progress: Callable[[int], None] | None = None,
                     purge_units: Sequence[str] = (), purge_texts: Mapping[str, list[str]] | None = None,
                     ) -> tuple[IngestReport, list[str]]:
        """One lifecycle change as one journal record (so a crash leaves the old state or the
        new one, never a mix): ``retract`` live units go to the archive first, then ``add``
        is ingested as a batch (a unit equal to a retracted one is not merged into it), then
        the document records (``docs``: id -> DocumentRecord, or None to remove) and the
        change record are stored. Document statements of units merged as duplicates are
        pointed at the unit they merged into. Returns (the batch's report, orphaned node ids);
        ``change.seq`` and ``change.added`` are filled in."""
        from kgservice.stores.base import check_current, pause_point

        with self._write_lock(), paused_gc():
            s = self.s
            check_current(change, {d: (s.documents[d]["version"], s.documents[d]["sha256"])
                                   for d in change.docs_before if d in s.documents})
            gone = {u for u in retract if u in s.units}
            dups: dict[str, str] = {}
            new, unchanged = prepare_batch(
                add, lambda ids: {i: _unit_from(s.units[i]) for i in ids if i in s.units and i not in gone},
                lambda subjects: [_unit_from(s.units[u]) for n in subjects for u in s.subject.get(n, ())
                                  if u not in gone and not s.superseded_by.get(u)],
                dups, lambda ids: {i: s.aliases[i] for i in ids
                                   if i in s.aliases and s.aliases[i] in s.units and s.aliases[i] not in gone},
                stamp=False)
            report = IngestReport(units_unchanged=unchanged, duplicates=dups)
            fresh = {d: k for d, k in sorted(dups.items()) if d not in s.aliases}
            strs = _Interner(s.labels)
            stamp = ingest_stamp()
            records = [_compact(u, unit_facts(u), strs, stamp) for u in new]
            change.seq = (s.changes[-1]["seq"] if s.changes else 0) + 1
            change.added = sorted(u.id for u in new)
            change.retracted = sorted(gone)
            # a unit retracted and added again by this change (edited in place) keeps its old
            # version in the archive, and the aliases of that old version go with it
            reused = sorted(gone & {u.id for u in new})
            life = {"retract": sorted(gone), "unarchive": sorted(({u.id for u in add} | set(dups.values())) - gone),
                    "reused": reused,
                    "docs": {d: (None if r is None else _remap(r, dups).model_dump(mode="json")) for d, r in docs.items()},
                    "change": change.model_dump(mode="json"), "purge_units": list(purge_units),
                    "purge_texts": dict(purge_texts or {})}
            logged = {nid for _, facts in records for nid, _, _ in facts[1]}
            for u in new:
                logged.update(n for old in u.supersedes if old in s.units for n in unit_facts(_unit_from(s.units[old])).nodes)
            from kgservice.stores.embedded.lifecycle import unit_nodes

            for uid in gone:
                logged |= unit_nodes(s, uid)
                logged.update(n for old in s.units[uid][8] if old in s.units for n in unit_nodes(s, old))
            seq = self._log_change(logged, units=set(change.added) | gone | set(life["unarchive"]) | set(purge_units))
            batch = journal_batch(records, fresh, life)
            pause_point("before-commit")
            self._append(batch)
            pause_point("after-commit")
            touched: set[str] = set()
            orphans: list[str] = []
            try:
                from kgservice.stores.embedded.lifecycle import apply_life, drop_aliases_of, retract_units

                orphans = retract_units(s, life["retract"], change.id, change.at, change.reason, touched)
                drop_aliases_of(s, reused)
                s.aliases.update(fresh)
                s.apply(records, report, touched, progress)
                apply_life(s, life)
            except BaseException:
                self.s = self._load()
                raise
            self._applied = seq
            self._compact_if_due()
            report.new_labels.update((nid, s.labels[nid]) for nid in report.new_embeddable_nodes)
            report.units_added = len(new)
            report.touched_nodes = sorted(touched)
            return report, [n for n in orphans if n not in s.kinds]

    def restore_lifecycle(self, documents: Sequence[Any], retracted: Sequence[Any], changes: Sequence[Any]) -> None:
        """Written as a fresh snapshot (one atomic file replace)."""
        from kgservice.stores.embedded.lifecycle import index_statements

        with self._write_lock():
            s = self.s
            before = (dict(s.documents), dict(s.retracted), list(s.changes), s.stated)
            strs = _Interner(s.labels)
            s.documents.update({d.id: d.model_dump(mode="json") for d in documents})
            s.retracted.update({r.unit.id: (_compact(r.unit, unit_facts(r.unit), strs)[0], r.change, r.at, r.reason)
                                for r in retracted if r.unit.id not in s.units})
            known = {c["id"] for c in s.changes}
            s.changes.extend(c.model_dump(mode="json") for c in changes if c.id not in known)
            s.stated = index_statements(s.documents)

            def undo() -> None:
                s.documents, s.retracted, s.changes, s.stated = before

            self._snapshot_or_undo(undo)

    def documents(self, ids: Iterable[str] | None = None, *, parts: DocumentParts = "whole") -> list[Any]:
        from kgservice.lifecycle.model import DocumentRecord, document_parts

        parts = document_parts(parts)
        docs = self.s.documents
        wanted = sorted(docs) if ids is None else [i for i in ids if i in docs]
        if parts == "whole":
            return [DocumentRecord.model_validate(docs[i]) for i in wanted]
        drop = {"original_z": None} if parts == "text" else {"original_z": None, "text_z": None}
        return [DocumentRecord.model_validate({**docs[i], **drop}) for i in wanted]

    def stated_by(self, unit_ids: Iterable[str]) -> dict[str, list[str]]:
        st = self.s.stated
        return {u: list(st[u]) for u in unit_ids if st.get(u)}

    def retracted_units(self, ids: Iterable[str] | None = None) -> dict[str, Any]:
        from kgservice.lifecycle.model import RetractedUnit

        r = self.s.retracted
        wanted = list(r) if ids is None else [i for i in ids if i in r]
        return {i: RetractedUnit(unit=_unit_from(r[i][0]), change=r[i][1], at=r[i][2], reason=r[i][3]) for i in wanted}

    def changes(self) -> list[Any]:
        from kgservice.lifecycle.model import ChangeRecord

        return [ChangeRecord.model_validate(c) for c in self.s.changes]

    def aliases(self, ids: Iterable[str] | None = None) -> dict[str, str]:
        al = self.s.aliases
        return dict(al) if ids is None else {i: al[i] for i in ids if i in al}

    def add_aliases(self, aliases: Mapping[str, str]) -> int:
        with self._write_lock():
            s = self.s
            fresh = {d: k for d, k in sorted(aliases.items()) if d not in s.aliases}
            if fresh:
                self._append(journal_batch([], fresh))
                s.aliases.update(fresh)
            return len(fresh)

    def remove_aliases(self, ids: Iterable[str]) -> int:
        """A fresh snapshot without them (the journal only ever adds aliases)."""
        with self._write_lock():
            s = self.s
            gone = {d: s.aliases[d] for d in set(ids) if d in s.aliases}
            if gone:
                for d in gone:
                    del s.aliases[d]
                self._snapshot_or_undo(lambda: s.aliases.update(gone))
            return len(gone)

    def _snapshot_or_undo(self, undo: Callable[[], None]) -> None:
        """Make an in-memory change durable as a fresh snapshot (the journal only appends
        batches); if that fails, ``undo`` puts memory back as the disk still is."""
        try:
            self._write_snapshot()
        except BaseException:
            undo()
            raise

    # -- administration (kg doctor / restore; kgservice.admin) -------------------
    def index_rows(self) -> IndexRows:
        s = self.s
        return IndexRows(
            nodes=list(s.kinds.items()),
            subject=[(u, n) for n, us in s.subject.items() for u in us],
            context=[(u, n) for n, us in s.context.items() for u in us],
            relations=[(src, dst, kind, uid, self._live(uid))
                       for kind, by_src in s.out.items() for edges in by_src.values() for src, dst, uid in edges],
            superseded_by=[(old, new) for old, news in s.superseded_by.items() for new in news],
        )

    def _replace_state(self, g: _Graph) -> None:
        """Make ``g`` the store: written as a fresh snapshot (new epoch, empty journal)."""
        old = self.s
        g.epoch = old.epoch
        self.s = g
        try:
            self._write_snapshot()
        except BaseException:
            self.s = old
            raise

    def _log_change(self, touched: Iterable[str], *, everything: bool = False,
                    units: Iterable[str] | None = None) -> int:
        """Cache coherence for a change outside an ingest (under the write lock, before it is
        durable); ``units``: the unit ids it changes (None: not known). Returns its version."""
        try:
            return record_embedded_change(self.dir, touched, everything=everything, units=units)
        except (OSError, sqlite3.Error) as exc:
            err = StoreWriteError(f"cannot write the change log {self.dir / CHANGES_FILE}: {exc}; nothing was "
                                  f"changed. Free space or make {self.dir} writable, then run the same command "
                                  "again")
            err.errno = getattr(exc, "errno", None)
            raise err from None

    # -- what this backend provides besides the graph ------------------------------------
    def change_feed(self) -> ChangeFeed:
        """The SQLite change log in the store directory (``changes.sqlite3``)."""
        from kgservice.stores.changelog import SqliteChangeFeed

        return SqliteChangeFeed(self.dir)

    def log_change(self, touched: Iterable[str], *, everything: bool = False) -> int:
        # a change logged from outside (keys, vectors) stores or removes no unit
        return record_embedded_change(self.dir, touched, everything=everything, units=[])

    def job_queue(self, data_dir: Path, *, validate: Callable[[str, Any], Any] | None = None,
                  max_attempts: int, read_only: bool) -> JobQueue:
        """A SQLite file in the knowledge base's directory (``jobs.sqlite3``)."""
        from kgservice.stores.embedded.jobs import JOBS_FILE, SqliteJobQueue

        return SqliteJobQueue(Path(data_dir) / JOBS_FILE, validate=validate, max_attempts=max_attempts,
                              read_only=read_only)

    def key_store(self, data_dir: Path, *, clock: VersionClock | None, bump: Callable[[], Any] | None,
                  read_only: bool) -> KeyStore:
        """A small SQLite file in the knowledge base's directory (``keys.sqlite3``, mode 600),
        apart from the graph snapshot."""
        from kgservice.stores.embedded.keys import KEYS_FILE, SqliteKeyStore

        return SqliteKeyStore(Path(data_dir) / KEYS_FILE, read_only=read_only, clock=clock, bump=bump)

    # -- state shared by every server of the store (kgservice.stores.shared) -----------------
    def _shared(self) -> SqliteSharedState:
        """``shared.sqlite3`` beside the graph directory (:mod:`kgservice.stores.embedded.shared`)."""
        if "_shared_state" not in self.__dict__:
            from kgservice.stores.embedded.shared import SHARED_FILE, SqliteSharedState

            self.__dict__["_shared_state"] = SqliteSharedState(self.dir.parent / SHARED_FILE)
        shared: SqliteSharedState = self.__dict__["_shared_state"]
        return shared

    def schema_record(self) -> Any:
        """``schema.json`` in the data directory (:mod:`kgservice.stores.embedded.schema_record`);
        fresh while neither a snapshot nor a journal exists."""
        from kgservice.stores.embedded.schema_record import EmbeddedSchemaRecord

        return EmbeddedSchemaRecord(self.dir, fresh=lambda: not self.path.exists() and not self.journal.exists())

    def session_table(self) -> Any:
        """A table in ``shared.sqlite3`` (:mod:`kgservice.stores.embedded.sessions`), one per store object."""
        if "_session_table" not in self.__dict__:
            from kgservice.stores.embedded.sessions import SqliteSessionTable
            from kgservice.stores.embedded.shared import SHARED_FILE

            self.__dict__["_session_table"] = SqliteSessionTable(self.dir.parent / SHARED_FILE)
        return self.__dict__["_session_table"]

    def save_result(self, record: SavedResult) -> None:
        self._shared().save_result(record)

    def saved_results(self) -> list[SavedResult]:
        return self._shared().saved_results()

    def community_map(self) -> CommunityMap | None:
        return self._shared().community_map()

    def set_community_map(self, record: CommunityMap) -> None:
        self._shared().set_community_map(record)

    def merge_decision(self, a: str, b: str) -> Any:
        return self._shared().merge_decision(a, b)

    def record_merge_decision(self, decision: Any) -> None:
        self._shared().record_merge_decision(decision)

    def merge_decisions(self) -> list[Any]:
        return self._shared().merge_decisions()

    def rebuild_indexes(self, unit_ids: Sequence[str] | None = None) -> dict[str, int]:
        """Always rebuilds everything from the stored units (in memory it is cheap); labels kept.
        Logged as an "everything" change: every cache entry may describe the old indexes."""
        with self._write_lock(), paused_gc():
            self._log_change([], everything=True)
            old = self.s
            g = _Graph()
            strs = _Interner(g.labels)
            g.apply([_compact(u, unit_facts(u), strs) for u in map(_unit_from, old.units.values())])
            for nid in g.labels:
                if nid in old.labels:
                    g.labels[nid] = old.labels[nid]
            g.generation = old.generation + 1
            g.aliases = dict(old.aliases)
            g.documents, g.retracted, g.changes, g.stated = old.documents, old.retracted, old.changes, old.stated
            self._replace_state(g)
            removed = sum(1 for n in old.kinds if n not in g.kinds)
            return {"units_rederived": len(g.units), "ids_cleared": 0, "nodes_removed": removed}

    def relabel_nodes(self, labels: Mapping[str, str]) -> int:
        with self._write_lock():
            s = self.s
            changed = {n: lab for n, lab in labels.items() if n in s.labels and s.labels[n] != lab}
            if changed:
                seq = self._log_change(changed, units=[])  # a label is a node's: no unit's text changes
                before = {n: s.labels[n] for n in changed}
                s.labels.update(changed)
                s.generation += 1
                self._snapshot_or_undo(lambda: s.labels.update(before))
                self._applied = seq
            return len(changed)

    def wipe(self) -> None:
        with self._write_lock():
            self._log_change([], everything=True)  # the version grows on; every reader clears
            g = _Graph()
            g.generation = self.s.generation + 1
            self._replace_state(g)

    # -- units and nodes ------------------------------------------------------
    def get_units(self, ids: Iterable[str]) -> list[Unit]:
        units = self.s.units
        return [_unit_from(units[i]) for i in ids if i in units]

    def iter_units(self) -> Iterator[Unit]:
        for rec in list(self.s.units.values()):
            yield _unit_from(rec)

    def _node(self, nid: str) -> Node:
        return _model(Node, {"id": nid, "label": self.s.labels[nid], "kind": _NODE_KIND[self.s.kinds[nid]]})

    def get_nodes(self, ids: Iterable[str]) -> list[Node]:
        kinds = self.s.kinds
        return [self._node(i) for i in ids if i in kinds]

    def iter_nodes(self) -> Iterator[Node]:
        for nid in list(self.s.kinds):
            yield self._node(nid)

    def applied_version(self) -> int | None:
        """The change-log version of the last change this process logged *and* applied to memory
        (None: none since it loaded). An index stamped while a logged batch had not reached
        memory yet replays from here, not from its stamp (:class:`kgservice.stores.versioned.FedIndex`)."""
        return self.__dict__.get("_applied")

    def local_generation(self) -> tuple[int, int]:
        """(graphs loaded, the graph's generation): moves once a batch, relabel, rebuild or wipe
        has changed memory, or a reload replaced it (GraphStore.local_generation says why)."""
        return self._loads, self.s.generation

    def close(self) -> None:
        clock = self.__dict__.get("_version_clock")
        if clock is not None:
            clock.feed.close()
        for name in ("_shared_state", "_session_table"):
            shared = self.__dict__.pop(name, None)
            if shared is not None:
                shared.close()

    def counts(self) -> dict[str, int]:
        s = self.s
        out = {
            "units": len(s.units),
            "nodes": len(s.kinds),
            "relations": s.relations,
            "superseded_units": sum(1 for v in s.superseded_by.values() if v),
        }
        for k, n in s.kind_counts.items():
            out[f"kind:{k}"] = n
        return out

    # -- procedures -------------------------------------------------------------
    def _live(self, unit_id: str) -> bool:
        return not self.s.superseded_by.get(unit_id)

    def subject_mentions(self, node_id: str) -> list[str]:
        return list(self.s.subject.get(node_id, ()))

    def context_mentions(self, node_id: str) -> list[str]:
        return list(self.s.context.get(node_id, ()))

    def mentions(self, node_id: str) -> list[str]:
        return sorted({*self.s.subject.get(node_id, ()), *self.s.context.get(node_id, ())})

    def _neighbours(self, node_id: str, kind: str, out: bool) -> set[str]:
        sup = self.s.superseded_by
        if out:
            return {e[1] for e in self.s.out[kind].get(node_id, ()) if not sup.get(e[2])}
        return {e[0] for e in self.s.inn[kind].get(node_id, ()) if not sup.get(e[2])}

    def _edges(self, node_id: str, kind: str, out: bool) -> list[str]:
        return sorted(self._neighbours(node_id, kind, out))

    def narrowed_by(self, node_id: str) -> list[str]:
        return self._edges(node_id, "narrowed_by", out=True)

    def narrows(self, node_id: str) -> list[str]:
        return self._edges(node_id, "narrowed_by", out=False)

    def synonym_class(self, node_id: str) -> list[str]:
        seen = {node_id}
        frontier = [node_id]
        for _ in range(MAX_CLOSURE_DEPTH):
            nxt = []
            for n in frontier:
                for m in self._neighbours(n, "synonym", True) | self._neighbours(n, "synonym", False):
                    if m not in seen:
                        seen.add(m)
                        nxt.append(m)
            frontier = nxt
            if not frontier:
                break
        return sorted(seen)

    def belongs_to_parents(self, node_ids: Sequence[str]) -> list[str]:
        found: set[str] = set()
        for n in node_ids:
            found |= self._neighbours(n, "belongs_to", True)
        return sorted(found)

    def belongs_to_ancestors(self, node_id: str) -> dict[str, int]:
        depth: dict[str, int] = {}
        frontier = [node_id]
        for d in range(1, MAX_CLOSURE_DEPTH + 1):
            nxt = []
            for p in self.belongs_to_parents(frontier):
                if p not in depth and p != node_id:
                    depth[p] = d
                    nxt.append(p)
            if not nxt:
                break
            frontier = nxt
        return depth

    def sunk_units(self, node_id: str) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for anc in self.belongs_to_ancestors(node_id):
            out.extend((u, anc) for u in self.subject_mentions(anc))
        return sorted(out)

    def superseded_end(self, unit_ids: Sequence[str]) -> dict[str, list[str]]:
        sup = self.s.superseded_by
        result: dict[str, list[str]] = {}
        for uid in unit_ids:
            if not sup.get(uid):
                result[uid] = [uid]
                continue
            ends: set[str] = set()
            seen = {uid}
            todo = [uid]
            while todo:
                u = todo.pop()
                nxt = sup.get(u) or ()
                if not nxt:
                    ends.add(u)
                for v in nxt:
                    if v not in seen:
                        seen.add(v)
                        todo.append(v)
            result[uid] = sorted(ends)
        return result

    def node_superseded_end(self, node_id: str) -> list[str]:
        # As cypher/node_superseded_end: terminal nodes within MAX_CLOSURE_DEPTH hops, else the
        # node itself (nothing replaces it, or the replacements form a cycle).
        if not self.s.out["superseded"].get(node_id):
            return [node_id]
        ends: set[str] = set()
        seen = {node_id}
        frontier = [node_id]
        for _ in range(MAX_CLOSURE_DEPTH):
            nxt_frontier = []
            for n in frontier:
                for m in self._edges(n, "superseded", True):
                    if not self._edges(m, "superseded", True):
                        ends.add(m)
                    if m not in seen:
                        seen.add(m)
                        nxt_frontier.append(m)
            frontier = nxt_frontier
            if not frontier:
                break
        return sorted(ends) or [node_id]

    def spread_step(self, frontier: Mapping[str, float], tau: Mapping[str, float],
                    max_fanout: int | None = None, degree_damping: float = 0.0) -> dict[str, float]:
        s = self.s
        if max_fanout is not None:
            frontier = {n: e for n, e in frontier.items() if self._spread_degree(n) <= max_fanout}
        sup = s.superseded_by
        kinds = s.kinds
        # Kinds in alphabetical order, so each neighbour receives its contributions from a
        # frontier node in (neighbour, kind) order exactly as a sorted walk would add them
        # (float sums come out bit-identical) without sorting every node's edges.
        plan = []
        for kind in sorted(_SPREAD_OUT):
            t = tau.get(kind, 0.0)
            if t > 0:
                plan.append((t, s.out[kind], s.inn[kind] if kind in BIDIRECTIONAL else None))
        incoming: dict[str, float] = {}
        get = incoming.get
        for n in sorted(frontier):
            if n not in kinds:
                continue
            e = frontier[n]
            rows = []  # (tau, neighbours) per kind: the node's (neighbour, kind) rows this hop
            for t, out_adj, in_adj in plan:
                lst = out_adj.get(n)
                nbrs = {dst for _, dst, u in lst if not sup.get(u)} if lst else set()
                if in_adj is not None:
                    lst = in_adj.get(n)
                    if lst:
                        nbrs.update(src for src, _, u in lst if not sup.get(u))
                rows.append((t, [m for m in nbrs if not is_literal_id(m)]))
            if degree_damping:  # docs/spreading.md: (e / max(1, d) ** δ) * τ
                e = hop_share(e, sum(len(ms) for _, ms in rows), degree_damping)
            for t, ms in rows:
                for m in ms:
                    incoming[m] = get(m, 0.0) + e * t
        return incoming

    def causal_step(self, node_ids: Sequence[str], family: str) -> list[tuple[str, str, str]]:
        s = self.s
        out = {(src, dst, u) for n in node_ids for src, dst, u in s.out["content"].get(n, ())
               if not s.superseded_by.get(u) and s.units[u][3] == family}
        # an effect stated as a value has no edge: the node's own live units of the family
        # (not inverse ones, whose subject is the effect) with a literal argument
        for n in node_ids:
            for u in s.subject.get(n, ()):
                rec = s.units[u]
                if rec[3] == family and not rec[5] and not s.superseded_by.get(u):
                    out.update((n, literal_id(a[1]), u) for a in rec[6] if isinstance(a, tuple) and a[0] == "l")
        return sorted(out)

    def _spread_degree(self, node_id: str) -> int:
        s = self.s
        return sum(len(s.out[k].get(node_id, ())) + len(s.inn[k].get(node_id, ())) for k in _SPREAD_OUT)

"""The knowledge lifecycle on the Neo4j store: documents, archived (retracted) units and the
history of changes, kept in the same database as the graph (kgservice.lifecycle).

The shape: ``(:Document {id, title, sha256, mode, size, version, who, when, units, root, text_z,
original_z, json})``, each unit a document states pointing at it with ``-[:FROM {lines}]->``; a retracted
unit is relabelled ``:RetractedUnit`` with every edge into the graph removed (no read path or
kg.* procedure matches that label, and no traversal reaches it), its FROM edges kept; a change
is ``(:Change {id, seq, ord, kind, at, who, json})``.

A lifecycle change is ONE write transaction (:meth:`Neo4jLifecycle.apply_change`): the lock,
the retractions, the new units (validated inside the same transaction, so they see the
retractions), the orphaned nodes, the document records, the change record and the change-log
entry that tells every server which cached entries to drop. A client killed at any point
leaves the transaction uncommitted: the server rolls it back and readers see the old state.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kgservice.model import IngestReport, Unit
from kgservice.stores import cypher
from kgservice.stores.base import check_current, pause_point
from kgservice.errors import ReadOnlyError
from kgservice.stores.neo4j.writes import Neo4jWrites, _fact_probes
from kgservice.stores.validate import paused_gc, prepare_batch

if TYPE_CHECKING:
    from kgservice.lifecycle.model import DocumentParts

# the listing fields a Document node carries as properties (for people browsing the graph);
# the record itself is its ``json`` property plus ``text_z`` and ``original_z`` (the bulky parts)
_DOC_PROPS = ("title", "sha256", "mode", "size", "version", "who", "when", "units", "root")


def _doc_row(rec: Any) -> dict[str, Any]:
    """life_documents_set's row of a DocumentRecord: node properties and its FROM edges."""
    body = rec.model_dump(mode="json", exclude={"text_z", "original_z"})
    props = {k: body[k] for k in _DOC_PROPS}
    props |= {"text_z": rec.text_z, "original_z": rec.original_z,
              "json": json.dumps(body, ensure_ascii=False, separators=(",", ":"))}
    lines = [{"unit": u, "lines": list(ln) if ln else None} for u, ln in rec.unit_lines.items()]
    return {"id": rec.id, "props": props, "lines": lines}


def _set_documents(tx: Any, docs: Mapping[str, Any]) -> None:
    if not docs:
        return
    rows = [_doc_row(r) for r in docs.values() if r is not None]
    remove = sorted(d for d, r in docs.items() if r is None)
    for stmt in cypher.statements("life_documents_set"):
        tx.run(stmt, remove=remove, docs=rows).consume()


class Neo4jLifecycle(Neo4jWrites):
    """apply_change and the lifecycle reads (documents, statements, archive, history)."""

    def apply_change(self, add: Sequence[Unit], retract: Sequence[str], docs: Mapping[str, Any],
                     change: Any, progress: Callable[[int], None] | None = None,
                     purge_units: Sequence[str] = (), purge_texts: Mapping[str, list[str]] | None = None,
                     ) -> tuple[IngestReport, list[str]]:
        """See :meth:`GraphStore.apply_change`: one managed write transaction (the driver
        re-runs the whole of it on a transient error; each run starts from the stored state)."""
        if self.read_only:
            raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); change refused")

        def work(tx: Any) -> tuple[IngestReport, list[str]]:
            return self._change_tx(tx, add, retract, docs, change, progress, purge_units, dict(purge_texts or {}))

        with paused_gc(), self._session(write=True) as session:
            result = session.execute_write(work)
        pause_point("after-commit")
        return result

    def _change_tx(self, tx: Any, add: Sequence[Unit], retract: Sequence[str], docs: Mapping[str, Any],
                   change: Any, progress: Callable[[int], None] | None, purge_units: Sequence[str],
                   purge_texts: dict[str, list[str]]) -> tuple[IngestReport, list[str]]:
        begin = tx.run(cypher.load("life_begin"), docs=sorted(set(docs) | set(change.docs_before))).single()
        check_current(change, {v["id"]: (v["version"], v["sha256"]) for v in begin["versions"]
                               if v["version"] is not None})
        # 1. the retractions (life_retract): what they touch, what may be live again
        touched: set[str] = set()
        candidates: set[str] = set()
        narrowing: set[str] = set()
        olds: set[str] = set()
        ids = sorted(set(retract))
        params = {"ids": ids, "change": change.id, "at": change.at, "reason": change.reason}
        gone: set[str] = set()
        if ids:
            find, unlink, archive = cypher.statements("life_retract")
            for row in tx.run(find, params):
                gone.add(row["unit"])
                candidates.update(row["nodes"])
                olds.update(row["olds"])
                if row["kind"] == "narrows" and row["subject"]:
                    narrowing.add(row["subject"])
            tx.run(unlink, params).consume()
            tx.run(archive, params).consume()
            touched |= candidates
            if olds:
                for row in tx.run(cypher.load("life_revive"), olds=sorted(olds - gone)):
                    touched.update(row["nodes"])
        # 2. the new units, validated in this transaction (a unit retracted above is not found,
        #    so one equal to it is added again rather than merged into it)
        dups: dict[str, str] = {}
        probes = _fact_probes(add)
        live: list[Unit] | None = None

        def existing(wanted: Iterable[str]) -> dict[str, Unit]:
            rows = tx.run(cypher.load("get_units"), ids=list(wanted))
            return {r["id"]: Unit.model_validate_json(r["json"]) for r in rows}

        def live_about(subjects: list[str]) -> list[Unit]:
            nonlocal live
            if live is None:
                live = [Unit.model_validate_json(r["json"]) for r in
                        tx.run(cypher.load("live_fact_units"), probes=probes)] if probes else []
            return live

        dormant: set[str] = set()

        def aliases(wanted: list[str]) -> dict[str, str]:
            """The aliases in force among ``wanted`` (their unit live, and not retracted above)."""
            found = {}
            for r in tx.run(cypher.load("aliases_get"), ids=list(wanted)):
                if r["live"] and r["unit"] not in gone:
                    found[r["id"]] = r["unit"]
                else:
                    dormant.add(r["id"])
            return found

        new, unchanged = prepare_batch(add, existing, live_about, dups, aliases) if add else ([], 0)
        report = IngestReport(units_unchanged=unchanged, duplicates=dups)
        alias_rows: list[dict[str, str | None]] = [{"id": d, "unit": k} for d, k in sorted(dups.items())]
        alias_rows += [{"id": u.id, "unit": None} for u in new if u.id in dormant]  # ids units now
        change.seq = int(begin["seq"] or 0) + 1
        change.added = sorted(u.id for u in new)
        change.retracted = sorted(gone)
        reused = sorted(gone & set(change.added))  # edited in place: the old version's aliases go
        if reused:
            drop_aliases_of = cypher.statements("aliases_drop")[1]
            tx.run(drop_aliases_of, units=reused).consume()
        back = sorted(({u.id for u in add} | set(dups.values())) - gone)  # an edited unit's old version stays
        listed = gone | set(back) | set(purge_units) | {u.id for u in new}  # the units this change stores or removes
        if new:
            node_rows, unit_facts_, rel_rows, pairs, batch_touched = self._batch_rows(new)
            touched |= batch_touched
            # ends with the aliases and the change-log entry of everything touched (_commit_steps)
            created, fresh = self._write_batch(tx, node_rows, unit_facts_, rel_rows, pairs, touched, progress,
                                               alias_rows, also_units=listed)
            label = {r["id"]: r["label"] for r in node_rows}
            report.new_labels.update((nid, label[nid]) for nid in fresh)
            report.units_added = len(new)
            report.nodes_added = created
            report.new_embeddable_nodes = fresh
        else:
            for query, step in self._commit_steps(touched, alias_rows, listed):
                tx.run(query, step).consume()
        report.touched_nodes = sorted(touched)
        # 3. nodes no live unit mentions any more (and their vectors in this database), derived
        #    nodes that are entries again
        orphans: list[str] = []
        if candidates:
            drop, kinds = cypher.statements("life_orphans")
            orphans = list(tx.run(drop, nodes=sorted(candidates), subjects=[]).single()["orphans"])
            tx.run(kinds, nodes=[], subjects=sorted(narrowing)).consume()
            if orphans:  # their vectors, when kept in this database (KG_VECTOR_BACKEND=neo4j), go in the same commit
                tx.run(cypher.load("vectors_delete"), ids=orphans).consume()
        # 4. units live again leave the archive; the document records; purges; the change
        if back:
            tx.run(cypher.load("life_unarchive"), ids=back).consume()
        _set_documents(tx, {d: (None if r is None else r.remapped(dups)) for d, r in docs.items()})
        if purge_units or purge_texts:
            self._purge(tx, list(purge_units), purge_texts)
        self._record_change(tx, change, int(begin["ord"] or 0) + 1)
        pause_point("before-commit")
        return report, sorted(orphans)

    @staticmethod
    def _record_change(tx: Any, change: Any, ord_: int) -> None:
        tx.run(cypher.load("life_change_record"), id=change.id, seq=change.seq, ord=ord_, kind=change.kind,
               at=change.at, who=change.who, json=change.model_dump_json()).consume()

    @staticmethod
    def _purge(tx: Any, units: list[str], texts: dict[str, list[str]]) -> None:
        """Archived units deleted; the texts of forgotten documents dropped from the history."""
        from kgservice.lifecycle.model import ChangeRecord

        rewritten = []
        if texts:
            for row in tx.run(cypher.load("life_change_get"), ids=sorted(texts)):
                c = ChangeRecord.model_validate_json(row["json"])
                for side in (c.docs_before, c.docs_after):
                    for d in texts[row["id"]]:
                        rec = side.get(d)
                        if rec is not None:
                            side[d] = rec.model_copy(update={"text_z": None, "text_stored": False,
                                                             "original_z": None, "original_stored": False})
                rewritten.append({"id": c.id, "json": c.model_dump_json()})
        purge_units, purge_changes = cypher.statements("life_purge")
        tx.run(purge_units, units=units, changes=rewritten).consume()
        tx.run(purge_changes, units=units, changes=rewritten).consume()
        if units:  # an alias sleeps in the archive with its unit and is purged with it
            drop_aliases_of = cypher.statements("aliases_drop")[1]
            tx.run(drop_aliases_of, units=units).consume()

    def restore_lifecycle(self, documents: Sequence[Any], retracted: Sequence[Any], changes: Sequence[Any]) -> None:
        """One write transaction: the archived units that are not live (with the live units that
        supersede them, as a retraction keeps them), then the documents (whose FROM edges may
        point at them), then the changes the history does not have yet."""
        if not (documents or retracted or changes):
            return
        if self.read_only:
            raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); restore refused")
        archive = [{"id": r.unit.id, "json": r.unit.model_dump_json(), "change": r.change, "at": r.at,
                    "reason": r.reason} for r in retracted]

        def work(tx: Any) -> None:
            begin = tx.run(cypher.load("life_begin"), docs=[]).single()
            if archive:
                newer: dict[str, list[str]] = {}
                for row in tx.run(cypher.load("life_superseding"), ids=[a["id"] for a in archive]):
                    if row["id"] in Unit.model_validate_json(row["json"]).supersedes:
                        newer.setdefault(row["id"], []).append(row["unit"])
                rows = [a | {"superseded_by": sorted(newer.get(a["id"], []))} for a in archive]
                tx.run(cypher.load("life_restore_archive"), units=rows).consume()
            _set_documents(tx, {d.id: d for d in documents})
            known = {r["id"] for r in tx.run(cypher.load("life_change_get"), ids=[c.id for c in changes])}
            ord_ = int(begin["ord"] or 0)
            for c in changes:
                if c.id not in known:
                    ord_ += 1
                    known.add(c.id)
                    self._record_change(tx, c, ord_)

        with self._session(write=True) as session:
            session.execute_write(work)

    # -- reads -------------------------------------------------------------------------------
    def documents(self, ids: Iterable[str] | None = None, *, parts: DocumentParts = "whole") -> list[Any]:
        from kgservice.lifecycle.model import DocumentRecord, document_parts

        parts = document_parts(parts)
        wanted = None if ids is None else list(ids)
        if wanted is not None and not wanted:
            return []
        got = {r["id"]: DocumentRecord.model_validate({**json.loads(r["json"]), "text_z": r["text_z"],
                                                       "original_z": r["original_z"]})
               for r in self.read("life_documents", ids=wanted, text=parts != "meta", original=parts == "whole")}
        return list(got.values()) if wanted is None else [got[i] for i in dict.fromkeys(wanted) if i in got]

    def stated_by(self, unit_ids: Iterable[str]) -> dict[str, list[str]]:
        wanted = list(dict.fromkeys(unit_ids))
        if not wanted:
            return {}
        return {r["unit"]: list(r["docs"]) for r in self.read("life_stated_by", ids=wanted) if r["docs"]}

    def retracted_units(self, ids: Iterable[str] | None = None) -> dict[str, Any]:
        from kgservice.lifecycle.model import RetractedUnit

        wanted = None if ids is None else list(ids)
        if wanted is not None and not wanted:
            return {}
        return {r["id"]: RetractedUnit(unit=Unit.model_validate_json(r["json"]), change=r["change"], at=r["at"],
                                       reason=r["reason"])
                for r in self.read("life_retracted", ids=wanted)}

    def changes(self) -> list[Any]:
        from kgservice.lifecycle.model import ChangeRecord

        return [ChangeRecord.model_validate_json(r["json"]) for r in self._stream("life_changes")]

"""Administration of the Neo4j store (kg doctor / restore / rebuild): the wipe, the rows the
doctor checks, re-deriving edges, relabelling, and the merge memory of duplicate ids (aliases).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kgservice.stores import cypher
from kgservice.stores.base import IndexRows
from kgservice.errors import ReadOnlyError
from kgservice.stores.changelog import current_user, neo4j_change_step
from kgservice.stores.facts import unit_facts
from kgservice.stores.neo4j.connection import Neo4jConnection
from kgservice.stores.neo4j.writes import BATCH_ROWS

RELATION_TYPES = {"synonym": "SYNONYM", "belongs_to": "BELONGS_TO", "of": "OF", "related_to": "RELATED_TO",
                  "content": "CONTENT", "superseded": "SUPERSEDED", "narrowed_by": "NARROWED_BY"}


class Neo4jAdmin(Neo4jConnection):
    """kg doctor / restore / rebuild, and the aliases a merged duplicate leaves behind."""

    def interrupted_restore(self) -> dict[str, Any] | None:
        rows = self.read("restore_get")
        return rows[0].data() if rows else None

    def mark_restore(self, info: dict[str, Any] | None) -> None:
        if info is None:
            self.write("restore_clear")
        else:
            self.write("restore_mark", **info)

    def wipe(self) -> None:
        """The knowledge only (``kg restore --replace``): API keys and jobs survive, and so does
        the change-log version, which moves on with an "everything" change before and after the
        wipe (batched, so not one transaction): every server clears its caches on its next
        request, and one that replays while the wipe runs clears again after it."""
        if self.read_only:
            raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); wipe refused")
        self._log_change([], everything=True)
        self.write_statements("wipe")  # edges, then nodes (see the file)
        self._log_change([], everything=True)

    def _log_change(self, touched: Iterable[str], *, everything: bool = False) -> int:
        """A change made outside an ingest (admin: wipe, relabel, rebuild), in its own transaction."""
        from kgservice.stores.changelog import record_change

        return int(record_change(self, touched, everything=everything) or 0)

    def index_rows(self) -> IndexRows:
        nodes = [(r["id"], r["kind"]) for r in self._stream("admin_nodes")]
        subject: list[tuple[str, str]] = []
        args: list[tuple[str, int, str]] = []
        mods: list[tuple[str, str, str]] = []
        for r in self._stream("admin_unit_edges"):
            if r["type"] == "SUBJECT":
                subject.append((r["unit"], r["node"]))
            elif r["type"] == "ARG":
                args.append((r["unit"], r["pos"], r["node"]))
            else:
                mods.append((r["unit"], r["slot"], r["node"]))
        context = sorted({(u, n) for u, _, n in args} | {(u, n) for u, _, n in mods})
        relations = []
        for r in self._stream("admin_relations"):
            kind = r["kind"] if RELATION_TYPES.get(r["kind"]) == r["type"] else f"{r['type']}:{r['kind']}"
            relations.append((r["src"], r["dst"], kind, r["unit"], r["live"]))
        superseded_by = [(r["old"], r["new"]) for r in self._stream("admin_supersessions")]
        return IndexRows(nodes=nodes, subject=subject, context=context, relations=relations,
                         superseded_by=superseded_by, args=args, mods=mods)

    def rebuild_indexes(self, unit_ids: Sequence[str] | None = None) -> dict[str, int]:
        ids = [u.id for u in self.iter_units()] if unit_ids is None else list(dict.fromkeys(unit_ids))
        units = self.get_units(ids)
        nodes: dict[str, dict[str, str]] = {}
        unit_rows, rel_rows, pairs = [], [], []
        for u in units:
            f = unit_facts(u)
            for nid, (label, kind) in f.nodes.items():
                nodes.setdefault(nid, {"id": nid, "label": label, "kind": kind.value})
            unit_rows.append({"id": u.id, "subject": f.subject, "args": [{"pos": p, "id": n} for p, n in f.args],
                              "mods": [{"slot": s, "id": n} for s, n in f.mods]})
            rels = [(s, d, k) for s, d, k, _ in f.relations] + [(o, n, "superseded") for o, n in f.node_supersessions]
            rels = list(dict.fromkeys(rels + [(b, d, "narrowed_by") for b, d in f.narrowings]))
            rel_rows += [{"src": s, "dst": d, "type": RELATION_TYPES[k], "kind": k, "family": u.family, "unit": u.id}
                         for s, d, k in rels]
            pairs += [{"old": old, "new": u.id} for old in f.supersedes]
        params = {"ids": ids, "nodes": list(nodes.values()), "units": unit_rows, "rels": rel_rows, "pairs": pairs}

        def work(tx: Any) -> list[str]:
            for stmt in cypher.statements("admin_drop_derived"):
                tx.run(stmt, ids=params["ids"]).consume()
            for stmt in cypher.statements("admin_rederive"):
                tx.run(stmt, nodes=params["nodes"], units=params["units"], rels=params["rels"],
                       pairs=params["pairs"]).consume()
            removed: list[str] = []
            for stmt in cypher.statements("admin_fix_nodes"):
                removed += [r["id"] for r in tx.run(stmt) if "id" in r.keys()]
            # edges were dropped and re-derived: every reader (caches, the plugin's resident
            # spreading graph) starts over, as after a wipe
            tx.run(cypher.load("changes_record"), touched=[], all=True, by=current_user(), units=None).consume()
            return removed

        with self._session(write=True) as session:
            removed = session.execute_write(work)
        return {"units_rederived": len(units), "ids_cleared": len(ids) - len(units), "nodes_removed": len(removed)}

    def aliases(self, ids: Iterable[str] | None = None) -> dict[str, str]:
        if ids is None:
            return {r["id"]: r["unit"] for r in self._stream("aliases_all")}
        return {d: k for d, (k, _live) in self.alias_states(ids).items()}

    def alias_states(self, ids: Iterable[str]) -> dict[str, tuple[str, bool]]:
        """{alias id: (the unit it names, whether that unit is live)} for those of ``ids`` that are
        aliases, in one read: validation uses the ones in force and drops the others that a new
        unit takes the id of."""
        wanted = list(ids)
        return {r["id"]: (r["unit"], bool(r["live"])) for r in self.read("aliases_get", ids=wanted)} if wanted else {}

    def aliases_in_force(self, ids: Iterable[str]) -> dict[str, str]:
        return {d: k for d, (k, live) in self.alias_states(ids).items() if live}

    def add_aliases(self, aliases: Mapping[str, str]) -> int:
        """One write transaction (a batch that only merged duplicates, or ``kg restore``)."""
        known = self.aliases(list(aliases)) if aliases else {}
        rows = [{"id": d, "unit": k} for d, k in sorted(aliases.items()) if d not in known]
        if not rows:
            return 0  # re-ingesting a known duplicate writes nothing

        def work(tx: Any) -> None:
            for i in range(0, len(rows), BATCH_ROWS):
                tx.run(cypher.load("aliases_record"), aliases=rows[i:i + BATCH_ROWS]).consume()

        with self._session(write=True) as session:
            session.execute_write(work)
        return len(rows)

    def remove_aliases(self, ids: Iterable[str]) -> int:
        wanted = sorted(set(ids))
        if not wanted:
            return 0
        with self._session(write=True) as session:
            return int(session.execute_write(
                lambda tx: tx.run(cypher.load("aliases_remove"), ids=wanted).single()["removed"]))

    def relabel_nodes(self, labels: Mapping[str, str]) -> int:
        rows = [{"id": k, "label": v} for k, v in labels.items()]
        if not rows:
            return 0
        step, params = neo4j_change_step(labels, units=[])  # the relabelled nodes, in the same transaction

        def work(tx: Any) -> int:
            changed = tx.run(cypher.load("admin_relabel_nodes"), nodes=rows).single()["changed"]
            if changed:
                tx.run(step, params).consume()
            return changed

        with self._session(write=True) as session:
            return session.execute_write(work)


"""Neo4j backend: the same store interface, each method one Cypher file from ``cypher/``.

Writes go through managed write transactions (the driver retries transient errors
inside ``execute_write``); a whole ingest batch is one transaction, so it is fully in or
fully out. Connecting retries with bounded backoff (tenacity) and then fails with a
message that says where it tried and what to check.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

from kgservice.model import IngestReport, Node, NodeKind, Unit
from kgservice.notation.serializer import format_unit
from kgservice.stores import cypher
from kgservice.stores.base import GraphStore, StoreError
from kgservice.stores.facts import unit_facts
from kgservice.stores.validate import prepare_batch

BATCH_ROWS = 5000
PAGE = 5000


class Neo4jUnavailable(StoreError):
    pass


class Neo4jStore(GraphStore):
    backend = "neo4j"

    def __init__(self, driver: Any, database: str = "neo4j"):
        self.driver = driver
        self.database = database

    @classmethod
    def connect(cls, uri: str, user: str = "neo4j", password: str | None = None, database: str = "neo4j",
                attempts: int = 5) -> "Neo4jStore":
        import neo4j
        from neo4j.exceptions import AuthError, ServiceUnavailable

        if not password:
            raise StoreError("Neo4j needs a password: set NEO4J_PASSWORD (or neo4j_password in a chmod-600 config file)")
        driver = neo4j.GraphDatabase.driver(uri, auth=(user, password), connection_timeout=5.0,
                                            notifications_min_severity="OFF")

        @retry(retry=retry_if_exception_type((ServiceUnavailable, OSError)), stop=stop_after_attempt(attempts),
               wait=wait_exponential(multiplier=0.2, max=3), reraise=True)
        def verify() -> None:
            driver.verify_connectivity()

        try:
            verify()
        except AuthError:
            driver.close()
            raise StoreError(f"Neo4j at {uri} refused the credentials of user {user!r}") from None
        except (ServiceUnavailable, OSError) as exc:
            driver.close()
            raise Neo4jUnavailable(
                f"Neo4j at {uri} did not answer after {attempts} attempts ({type(exc).__name__}); "
                "is it running? (`scripts/neo4j status`, or `scripts/neo4j start`)") from None
        store = cls(driver, database)
        store.apply_schema()
        return store

    # -- plumbing ---------------------------------------------------------------------
    def _read(self, name: str, **params: Any) -> list[Any]:
        records, _, _ = self.driver.execute_query(cypher.load(name), params, database_=self.database,
                                                  routing_="r")
        return records

    def apply_schema(self) -> None:
        with self.driver.session(database=self.database) as s:
            for stmt in cypher.statements("schema"):
                s.run(stmt).consume()

    def close(self) -> None:
        self.driver.close()

    def wipe_all_for_tests(self) -> None:
        with self.driver.session(database=self.database) as s:
            s.run(cypher.load("wipe")).consume()

    # -- writes -----------------------------------------------------------------------
    def ingest(self, units: Sequence[Unit], progress: Callable[[int], None] | None = None) -> IngestReport:
        def existing(ids: Iterable[str]) -> dict[str, Unit]:
            return {r["id"]: Unit.model_validate_json(r["json"]) for r in self._read("get_units", ids=list(ids))}

        new, unchanged = prepare_batch(units, existing)
        report = IngestReport(units_unchanged=unchanged)
        if not new:
            return report
        nodes: dict[str, tuple[str, NodeKind]] = {}
        unit_rows, rel_rows, pairs = [], [], []
        touched: set[str] = set()
        for u in new:
            f = unit_facts(u)
            for nid, (label, kind) in f.nodes.items():
                prev = nodes.get(nid)
                if prev is None or (kind == NodeKind.DERIVED and prev[1] == NodeKind.ENTRY):
                    nodes[nid] = (label, kind)
            touched.update(f.nodes)
            unit_rows.append({
                "id": u.id, "json": u.model_dump_json(), "text": format_unit(u), "subject": f.subject,
                "predicate": u.predicate, "family": u.family, "kind": u.kind, "doc": u.doc, "mode": u.mode,
                "ingested_at": u.ingested_at, "args": [{"pos": p, "id": n} for p, n in f.args],
                "mods": [{"slot": s, "id": n} for s, n in f.mods],
            })
            rel_rows += [{"src": s, "dst": d, "kind": k, "family": fam, "unit": u.id} for s, d, k, fam in f.relations]
            rel_rows += [{"src": o, "dst": n, "kind": "superseded", "family": u.family, "unit": u.id} for o, n in f.node_supersessions]
            rel_rows += [{"src": b, "dst": d, "kind": "narrowed_by", "family": u.family, "unit": u.id} for b, d in f.narrowings]
            pairs += [{"old": old, "new": u.id} for old in f.supersedes]
        node_rows = [{"id": nid, "label": lab, "kind": k.value} for nid, (lab, k) in nodes.items()]

        def work(tx: Any) -> tuple[int, list[str]]:
            present = {r["id"] for r in tx.run(cypher.load("existing_nodes"), ids=list(nodes))}
            created = 0
            for i in range(0, len(node_rows), BATCH_ROWS):
                created += tx.run(cypher.load("ingest_nodes"), nodes=node_rows[i:i + BATCH_ROWS]).single()["created"]
            for i in range(0, len(unit_rows), BATCH_ROWS):
                tx.run(cypher.load("ingest_units"), units=unit_rows[i:i + BATCH_ROWS]).consume()
                if progress is not None:
                    progress(len(unit_rows[i:i + BATCH_ROWS]))
            for i in range(0, len(rel_rows), BATCH_ROWS):
                tx.run(cypher.load("ingest_relations"), rels=rel_rows[i:i + BATCH_ROWS]).consume()
            for i in range(0, len(pairs), BATCH_ROWS):
                tx.run(cypher.load("ingest_supersessions"), pairs=pairs[i:i + BATCH_ROWS]).consume()
            fresh = [r["id"] for r in node_rows if r["id"] not in present and r["kind"] != NodeKind.LITERAL.value]
            return created, fresh

        with self.driver.session(database=self.database) as session:
            created, fresh = session.execute_write(work)
        report.units_added = len(new)
        report.nodes_added = created
        report.new_embeddable_nodes = fresh
        report.touched_nodes = sorted(touched)
        return report

    # -- units and nodes ----------------------------------------------------------------
    def get_units(self, ids: Iterable[str]) -> list[Unit]:
        wanted = list(ids)
        found = {r["id"]: r["json"] for r in self._read("get_units", ids=wanted)}
        return [Unit.model_validate_json(found[i]) for i in wanted if i in found]

    def iter_units(self) -> Iterator[Unit]:
        after = ""
        while True:
            rows = self._read("page_units", after=after, limit=PAGE)
            for r in rows:
                yield Unit.model_validate_json(r["json"])
            if len(rows) < PAGE:
                return
            after = rows[-1]["id"]

    def get_nodes(self, ids: Iterable[str]) -> list[Node]:
        wanted = list(ids)
        found = {r["id"]: r for r in self._read("get_nodes", ids=wanted)}
        return [Node(id=i, label=found[i]["label"], kind=NodeKind(found[i]["kind"])) for i in wanted if i in found]

    def iter_nodes(self) -> Iterator[Node]:
        after = ""
        while True:
            rows = self._read("page_nodes", after=after, limit=PAGE)
            for r in rows:
                yield Node(id=r["id"], label=r["label"], kind=NodeKind(r["kind"]))
            if len(rows) < PAGE:
                return
            after = rows[-1]["id"]

    def counts(self) -> dict[str, int]:
        r = self._read("counts")[0]
        out = {k: r[k] for k in ("units", "nodes", "relations", "superseded_units")}
        for row in r["kinds"]:
            out[f"kind:{row['kind']}"] = row["n"]
        return out

    # -- procedures -----------------------------------------------------------------------
    def _column(self, name: str, column: str, **params: Any) -> list[str]:
        return [r[column] for r in self._read(name, **params)]

    def subject_mentions(self, node_id: str) -> list[str]:
        return self._column("subject_mentions", "unit", id=node_id)

    def context_mentions(self, node_id: str) -> list[str]:
        return self._column("context_mentions", "unit", id=node_id)

    def narrowed_by(self, node_id: str) -> list[str]:
        return self._column("narrowed_by", "node", id=node_id)

    def narrows(self, node_id: str) -> list[str]:
        return self._column("narrows", "node", id=node_id)

    def synonym_class(self, node_id: str) -> list[str]:
        return self._column("synonym_class", "node", id=node_id) or [node_id]

    def belongs_to_parents(self, node_ids: Sequence[str]) -> list[str]:
        return self._column("belongs_to_parents", "node", ids=list(node_ids))

    def belongs_to_ancestors(self, node_id: str) -> dict[str, int]:
        return {r["ancestor"]: r["depth"] for r in self._read("belongs_to_closure", id=node_id)}

    def sunk_units(self, node_id: str) -> list[tuple[str, str]]:
        rows = self._read("belongs_to_closure", id=node_id)
        return sorted((u, r["ancestor"]) for r in rows for u in r["units"])

    def superseded_end(self, unit_ids: Sequence[str]) -> dict[str, list[str]]:
        found = {r["unit"]: list(r["ends"]) for r in self._read("superseded_end", ids=list(unit_ids))}
        return {u: found.get(u, [u]) for u in unit_ids}

    def node_superseded_end(self, node_id: str) -> list[str]:
        return self._column("node_superseded_end", "node", id=node_id) or [node_id]

    def spread_step(self, frontier: Mapping[str, float], tau: Mapping[str, float]) -> dict[str, float]:
        rows = self._read("spread_step", frontier=[{"id": k, "energy": v} for k, v in sorted(frontier.items())],
                          tau={k: float(v) for k, v in tau.items()})
        return {r["node"]: r["energy"] for r in rows}

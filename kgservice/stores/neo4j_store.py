"""Neo4j backend: the same store interface, each method one Cypher file from ``cypher/``.

Writes go through managed write transactions (the driver retries transient errors
inside ``execute_write``); a whole ingest batch is one transaction, so it is fully in or
fully out. On top of that the *whole* ingest - validation included - is retried with
bounded backoff when the server goes away (ServiceUnavailable, SessionExpired, transient
errors) or a concurrent writer stored the same unit first (a uniqueness-constraint race):
re-validating turns the other writer's units into "unchanged", so overlapping ingests from
several processes converge without duplicates. Connecting retries with bounded backoff
(tenacity) and then fails with a message that says where it tried and what to check.

Read-only mode (``KG_READ_ONLY``, for ``ask`` / ``query`` users): every session is opened
with read access (the server refuses writes in it), the schema is not touched, and
:meth:`Neo4jStore.ingest` refuses before sending anything.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from tenacity import (
    Retrying,
    retry,
    retry_if_exception,
    retry_if_exception_type,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
)

from kgservice.model import IngestReport, Node, NodeKind, Unit
from kgservice.notation.serializer import format_unit
from kgservice.stores import cypher
from kgservice.stores.base import GraphStore, IndexRows, PrefetchedReads, ReadOnlyError, StoreError
from kgservice.stores.facts import unit_facts
from kgservice.stores.validate import paused_gc, prepare_batch

BATCH_ROWS = 5000
PAGE = 5000
RELATION_TYPES = {"synonym": "SYNONYM", "belongs_to": "BELONGS_TO", "of": "OF", "related_to": "RELATED_TO",
                  "content": "CONTENT", "superseded": "SUPERSEDED", "narrowed_by": "NARROWED_BY"}
CONSTRAINT_RACE = "Neo.ClientError.Schema.ConstraintValidationFailed"


class Neo4jUnavailable(StoreError):
    pass


def _retryable(exc: BaseException) -> bool:
    """Worth re-running the whole ingest: the server went away or was busy, or a concurrent
    writer created the same unit/node first (re-validation then counts it as unchanged)."""
    from neo4j.exceptions import DriverError, Neo4jError, ServiceUnavailable, SessionExpired

    if isinstance(exc, (ServiceUnavailable, SessionExpired, Neo4jUnavailable)):
        return True
    if isinstance(exc, Neo4jError):
        if exc.code == CONSTRAINT_RACE:
            return True
        return bool(exc.is_retryable())
    if isinstance(exc, DriverError):
        return bool(exc.is_retryable())
    return isinstance(exc, (ConnectionError, TimeoutError))


class Neo4jStore(GraphStore):
    backend = "neo4j"

    def __init__(self, driver: Any, database: str = "neo4j", *, read_only: bool = False,
                 ingest_attempts: int = 6, ingest_max_seconds: float = 120.0, ingest_wait_max: float = 8.0,
                 where: str = "Neo4j"):
        self.driver = driver
        self.database = database
        self.read_only = read_only
        self.ingest_attempts = max(1, int(ingest_attempts))
        self.ingest_max_seconds = float(ingest_max_seconds)
        self.ingest_wait_max = float(ingest_wait_max)
        self.where = where
        self.ingest_retries = 0  # whole-ingest retries so far (outages, transient errors, constraint races)

    @classmethod
    def connect(cls, uri: str, user: str = "neo4j", password: str | None = None, database: str = "neo4j",
                attempts: int = 5, *, read_only: bool = False, ingest_attempts: int = 6,
                ingest_max_seconds: float = 120.0, ingest_wait_max: float = 8.0,
                max_transaction_retry_time: float = 15.0, connection_timeout: float = 5.0) -> "Neo4jStore":
        """Connect with bounded retries. ``attempts`` / backoff bound the wait for a server that
        is starting; ``ingest_*`` bound how long one ingest keeps retrying (see :meth:`ingest`);
        ``max_transaction_retry_time`` is the driver's own retry budget inside one transaction."""
        import neo4j
        from neo4j.exceptions import AuthError, ServiceUnavailable

        from kgservice.config import check_neo4j_uri, redact_uri

        if not password:
            raise StoreError("Neo4j needs a password: set NEO4J_PASSWORD (or neo4j_password in a chmod-600 config file)")
        check_neo4j_uri(uri)  # scheme, no credentials in it: the driver's own errors would print the URI
        try:
            driver = neo4j.GraphDatabase.driver(uri, auth=(user, password), connection_timeout=connection_timeout,
                                                max_transaction_retry_time=max_transaction_retry_time,
                                                notifications_min_severity="OFF")
        except (neo4j.exceptions.ConfigurationError, ValueError) as exc:
            msg = str(exc).replace(uri, redact_uri(uri) or "").replace(password, "***")
            raise StoreError(f"Neo4j URI {redact_uri(uri)!r} is not usable: {msg}") from None
        uri = redact_uri(uri) or uri  # only the redacted form is kept (messages name it)

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
        store = cls(driver, database, read_only=read_only, ingest_attempts=ingest_attempts,
                    ingest_max_seconds=ingest_max_seconds, ingest_wait_max=ingest_wait_max, where=uri)
        if not read_only:  # read-only users cannot (and need not) create constraints
            store.apply_schema()
        return store

    # -- plumbing ---------------------------------------------------------------------
    def _read(self, name: str, **params: Any) -> list[Any]:
        # execute_query retries transient failures itself (max_transaction_retry_time); what is
        # left is an outage, reported as one clear StoreError instead of a driver traceback
        from neo4j.exceptions import DriverError, Neo4jError, ServiceUnavailable, SessionExpired

        # Fast path: an auto-commit query on this thread's read session is one round trip
        # (RUN+PULL); execute_query adds BEGIN/COMMIT and a session per call, which doubled the
        # cost of the small procedures an expansion chains by the dozen. Anything unusual falls
        # back to execute_query below, with its retries, so failures behave as before.
        local = self.__dict__.get("_reads") or self.__dict__.setdefault("_reads", threading.local())
        session = getattr(local, "session", None)
        try:
            if session is None:
                session = local.session = self._session(write=False)
            return list(session.run(cypher.load(name), params))
        except (DriverError, Neo4jError, OSError) as exc:
            local.session = None
            try:
                if session is not None:
                    session.close()
            except Exception:  # pragma: no cover - a broken session may refuse to close cleanly
                pass
            if isinstance(exc, Neo4jError) and not exc.is_retryable():
                raise  # a query error (syntax, constraint, ...): the managed path would raise it too
        try:
            records, _, _ = self.driver.execute_query(cypher.load(name), params, database_=self.database,
                                                      routing_="r")
        except (ServiceUnavailable, SessionExpired) as exc:
            raise Neo4jUnavailable(f"Neo4j at {self.where} is not answering ({type(exc).__name__}); "
                                   "is it running? (`scripts/neo4j status`)") from exc
        return records

    def _session(self, write: bool) -> Any:
        """A session with an explicit access mode: in read-only mode there are no write
        sessions at all, and the server itself refuses writes in a read session."""
        import neo4j

        if write and self.read_only:
            raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); writes to Neo4j are refused")
        return self.driver.session(database=self.database,
                                   default_access_mode=neo4j.WRITE_ACCESS if write else neo4j.READ_ACCESS)

    def apply_schema(self) -> None:
        with self._session(write=True) as s:
            for stmt in cypher.statements("schema"):
                s.run(stmt).consume()

    def close(self) -> None:
        self.driver.close()

    def wipe_all_for_tests(self) -> None:
        with self._session(write=True) as s:
            s.run(cypher.load("wipe")).consume()

    def wipe(self) -> None:
        self.wipe_all_for_tests()

    # -- writes -----------------------------------------------------------------------
    def ingest(self, units: Sequence[Unit], progress: Callable[[int], None] | None = None) -> IngestReport:
        """One batch, one transaction; the whole ingest (validation included) is retried on
        transient failures and constraint races, within ``ingest_attempts`` / ``ingest_max_seconds``."""
        if self.read_only:
            raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); ingest refused")
        tries = 0
        try:
            for attempt in Retrying(retry=retry_if_exception(_retryable), reraise=True,
                                    stop=stop_after_attempt(self.ingest_attempts) | stop_after_delay(self.ingest_max_seconds),
                                    wait=wait_exponential(multiplier=0.25, max=self.ingest_wait_max),
                                    before_sleep=self._count_retry):
                with attempt, paused_gc():  # bulk row building and packing: see paused_gc
                    tries += 1
                    return self._ingest_once(units, progress)
        except Exception as exc:
            if not _retryable(exc):
                raise
            from neo4j.exceptions import Neo4jError

            cause = exc.__cause__ if isinstance(exc, Neo4jUnavailable) and exc.__cause__ else exc
            what = f"{type(cause).__name__}: {cause.message if isinstance(cause, Neo4jError) else cause}"
            cls = StoreError if isinstance(exc, Neo4jError) and exc.code == CONSTRAINT_RACE else Neo4jUnavailable
            raise cls(
                f"ingest of {len(units)} unit(s) into {self.where} failed after {tries} attempt(s) ({what}). "
                "The batch is one transaction, so it is either fully stored or not at all; run the same "
                "ingest again when Neo4j answers (`scripts/neo4j status`): units already stored count as unchanged."
            ) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _count_retry(self, state: Any) -> None:
        self.ingest_retries += 1

    def _ingest_once(self, units: Sequence[Unit], progress: Callable[[int], None] | None = None) -> IngestReport:
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
            # once per (src, dst, kind) and unit, like the embedded store: {a} [has] {b} {b} is one edge
            rel_rows += [{"src": s, "dst": d, "kind": k, "family": fam, "unit": u.id} for s, d, k, fam in dict.fromkeys(f.relations)]
            rel_rows += [{"src": o, "dst": n, "kind": "superseded", "family": u.family, "unit": u.id}
                         for o, n in dict.fromkeys(f.node_supersessions)]
            rel_rows += [{"src": b, "dst": d, "kind": "narrowed_by", "family": u.family, "unit": u.id}
                         for b, d in dict.fromkeys(f.narrowings)]
            pairs += [{"old": old, "new": u.id} for old in f.supersedes]
        # rows in id order: concurrent writers then take index-entry locks in the same order,
        # which keeps deadlocks (retried, but slow) rare
        node_rows = [{"id": nid, "label": nodes[nid][0], "kind": nodes[nid][1].value} for nid in sorted(nodes)]
        unit_rows.sort(key=lambda r: r["id"])

        def work(tx: Any) -> tuple[int, list[str]]:
            present = set(tx.run(cypher.load("existing_nodes"), ids=list(nodes)).single()["ids"])
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

        with self._session(write=True) as session:
            created, fresh = session.execute_write(work)
        report.units_added = len(new)
        report.nodes_added = created
        report.new_embeddable_nodes = fresh
        report.touched_nodes = sorted(touched)
        return report

    # -- administration (kg doctor / restore) ---------------------------------------------
    def _stream(self, name: str, **params: Any) -> Iterator[Any]:
        from neo4j.exceptions import ServiceUnavailable, SessionExpired

        try:
            with self._session(write=False) as s:
                yield from s.run(cypher.load(name), params)
        except (ServiceUnavailable, SessionExpired) as exc:
            raise Neo4jUnavailable(f"Neo4j at {self.where} is not answering ({type(exc).__name__}); "
                                   "is it running? (`scripts/neo4j status`)") from exc

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
            return removed

        with self._session(write=True) as session:
            removed = session.execute_write(work)
        return {"units_rederived": len(units), "ids_cleared": len(ids) - len(units), "nodes_removed": len(removed)}

    def relabel_nodes(self, labels: Mapping[str, str]) -> int:
        rows = [{"id": k, "label": v} for k, v in labels.items()]
        if not rows:
            return 0
        with self._session(write=True) as session:
            return session.execute_write(
                lambda tx: tx.run(cypher.load("admin_relabel_nodes"), nodes=rows).single()["changed"])

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
        return list(self._read("subject_mentions", id=node_id)[0]["units"])

    def context_mentions(self, node_id: str) -> list[str]:
        return list(self._read("context_mentions", id=node_id)[0]["units"])

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

    def directed_reads(self, seeds: Sequence[str]) -> PrefetchedReads:
        row = self._read("directed_expand", ids=list(dict.fromkeys(seeds)))[0]
        reads = PrefetchedReads(
            node_ends={k: sorted(set(v)) or [k] for k, v in row["node_ends"]},
            classes={k: sorted({*v, k}) for k, v in row["classes"]},
            subject={k: sorted(v) for k, v in row["subject"]},
            context={k: sorted(v) for k, v in row["context"]},
            ancestors={k: dict(v) for k, v in row["ancestors"]},
            derived={k: sorted(v) for k, v in row["narrowed_by"]},
            bases={k: sorted(v) for k, v in row["narrows"]},
            unit_ends={k: sorted(v) for k, v in row["unit_ends"]},
        )
        for seed in seeds:
            if seed not in reads.node_ends:
                reads.add_unknown_seed(seed)
        return reads

    def spread_step(self, frontier: Mapping[str, float], tau: Mapping[str, float],
                    max_fanout: int | None = None) -> dict[str, float]:
        items = sorted(frontier.items())
        row = self._read("spread_step", ids=[k for k, _ in items], energies=[v for _, v in items],
                         tau={k: float(v) for k, v in tau.items()}, max_fanout=max_fanout)[0]
        return dict(zip(row["nodes"], row["energies"]))

"""Neo4j backend: the same store interface, each method one Cypher file from ``cypher/``.

Writes go through managed write transactions (the driver retries transient errors
inside ``execute_write``). A batch of up to ``stage_units`` new units is one transaction,
so it is fully in or fully out. A bigger batch would need more transaction memory than a
server has (200k units: > 700 MiB), so it is *staged*: written in bounded transactions under
labels no read matches (``:StagedNode``, ``:StagedUnit``, tagged with a stage id), then
published in one transaction that relabels them and adds the batch's node-to-node relations
and supersessions (see :meth:`Neo4jStore._publish_steps`). Readers see the batch before or
after, never part of it; a failed stage is discarded, and one left by a crashed writer is
invisible and removed by the next big ingest once it is ``STAGE_STALE_SECONDS`` old. On top of that the *whole* ingest - validation included - is retried with
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

import threading
from contextlib import contextmanager
from dataclasses import dataclass
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

from kgservice.stores.changelog import current_user, neo4j_change_step
from kgservice.model import IngestReport, Node, NodeKind, Unit
from kgservice.notation.serializer import format_unit
from kgservice.stores import cypher
from kgservice.stores.base import GraphStore, IndexRows, PrefetchedReads, ReadOnlyError, StoreError
from kgservice.stores.facts import unit_facts
from kgservice.stores.validate import fact_probe, paused_gc, prepare_batch

BATCH_ROWS = 5000
PAGE = 5000
STAGE_UNITS = 20_000  # new units per batch above which an ingest is staged (bounded transactions)
STAGE_CHUNK = 10_000  # units per staging transaction
STAGE_STALE_SECONDS = 900.0  # a stage without progress for this long was abandoned by its writer
RELATION_TYPES = {"synonym": "SYNONYM", "belongs_to": "BELONGS_TO", "of": "OF", "related_to": "RELATED_TO",
                  "content": "CONTENT", "superseded": "SUPERSEDED", "narrowed_by": "NARROWED_BY"}
CONSTRAINT_RACE = "Neo.ClientError.Schema.ConstraintValidationFailed"


def _unit_row(u: Unit, f: Any, eid: Mapping[str, str] | None = None) -> dict:
    """A unit's row for ingest_units (node references as element ids, ``eid``) or, without
    ``eid``, for the staged path (node ids). ``probe`` is :func:`unit_probe` built from the
    facts' ids (the same normalised ids, without normalising again)."""
    ref = eid.__getitem__ if eid is not None else str
    key = "node" if eid is not None else "id"
    return {"id": u.id, "json": u.model_dump_json(), "text": format_unit(u), "subject": ref(f.subject),
            "predicate": u.predicate, "family": u.family, "kind": u.kind, "doc": u.doc, "mode": u.mode,
            "ingested_at": u.ingested_at, "probe": _probe(f.subject, f.args[0][1]), "args": [{"pos": p, key: ref(n)} for p, n in f.args],
            "mods": [{"slot": s, key: ref(n)} for s, n in f.mods]}


class Neo4jUnavailable(StoreError):
    pass


@dataclass
class _EarlyWrite:
    """A batch's write transaction opened before validation (:meth:`Neo4jStore._early_write`):
    ``nodes`` is the pending existing_nodes result for the node ids in ``asked``."""
    tx: Any
    asked: set[str]
    nodes: Any


_POOL_LOCK = threading.Lock()


def _probe(subject: str, arg0: str) -> str:
    """Unit.probe from a subject id and an argument-0 id, joined by U+001F, which node ids
    never contain (unit_probes_backfill.cypher builds the same string from the graph)."""
    return f"{subject}\x1f{arg0}"


def unit_probe(u: Unit) -> str:
    """The key a stored unit is found by when a batch is checked for duplicates (Unit.probe,
    indexed; live_fact_units): its subject id and argument-0 id (:func:`fact_probe`)."""
    return _probe(*fact_probe(u))


def _fact_probes(units: Sequence[Unit]) -> list[str]:
    """live_fact_units' probes for a batch (sorted, distinct). A unit that has no probe (no
    argument: invalid, and rejected by validation with its own message) is skipped."""
    probes = set()
    for u in units:
        try:
            probes.add(unit_probe(u))
        except (IndexError, AttributeError, TypeError, ValueError):
            continue
    return sorted(probes)


def _split_supersessions(pairs: list[dict], in_batch: set[str],
                         rel_rows: list[dict]) -> tuple[list[dict], list[str], list[dict]]:
    """A batch's supersession pairs, distinct; the stored units among the superseded ones
    (their edges are retired by retire_superseded); and the batch's relation rows with the
    edges of units the batch supersedes itself marked ``live: False`` (created retired)."""
    pairs = list({(p["old"], p["new"]): p for p in pairs}.values())
    inner = {p["old"] for p in pairs if p["old"] in in_batch}
    olds = sorted({p["old"] for p in pairs} - inner)
    return pairs, olds, [r | {"live": False} if r["unit"] in inner else r for r in rel_rows]


def _retire_steps(olds: list[str]) -> list[tuple[str, dict]]:
    return [(cypher.load("retire_superseded"), {"olds": olds[i:i + BATCH_ROWS]})
            for i in range(0, len(olds), BATCH_ROWS)]


def _retired_ends(results: Iterable[Any]) -> set[str]:
    """The node ids at the ends of the edges retire_superseded retired (its ``retired`` rows)."""
    return {n for result in results for row in result for ends in row["retired"] for n in ends}


def _retryable(exc: BaseException) -> bool:
    """Worth re-running the whole ingest: the server went away or was busy, or a concurrent
    writer created the same unit/node first (re-validation then counts it as unchanged)."""
    from neo4j.exceptions import DriverError, Neo4jError, ServiceUnavailable, SessionExpired

    if isinstance(exc, (ServiceUnavailable, SessionExpired, Neo4jUnavailable)):
        return True
    if isinstance(exc, Neo4jError):
        if exc.code == CONSTRAINT_RACE:
            return True
        if exc.code and "MemoryPoolOutOfMemoryError" in exc.code:
            return False  # the same transaction needs the same memory: retrying cannot help
        return bool(exc.is_retryable())
    if isinstance(exc, DriverError):
        return bool(exc.is_retryable())
    return isinstance(exc, (ConnectionError, TimeoutError))


# SpreadParams fields kg.spreadLists implements; any other knob at a non-default value
# sends the spread down the Cypher hop loop instead of being silently ignored.
_RESIDENT_FIELDS = frozenset({"tau", "epsilon", "max_hops", "e0", "max_fanout", "max_fire",
                              "degree_damping", "seed_backflow"})


def _resident_params(params: Any) -> bool:
    import dataclasses

    for f in dataclasses.fields(params):
        if f.name in _RESIDENT_FIELDS:
            continue
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        if getattr(params, f.name) != default:
            return False
    return True


class Neo4jStore(GraphStore):
    backend = "neo4j"

    def __init__(self, driver: Any, database: str = "neo4j", *, read_only: bool = False,
                 ingest_attempts: int = 6, ingest_max_seconds: float = 120.0, ingest_wait_max: float = 8.0,
                 where: str = "Neo4j", stage_units: int = STAGE_UNITS, stage_chunk: int = STAGE_CHUNK):
        self.driver = driver
        self.database = database
        self.read_only = read_only
        self.ingest_attempts = max(1, int(ingest_attempts))
        self.ingest_max_seconds = float(ingest_max_seconds)
        self.ingest_wait_max = float(ingest_wait_max)
        self.where = where
        self.ingest_retries = 0  # whole-ingest retries so far (outages, transient errors, constraint races)
        # kg.* procedure plugin (neo4j-plugin/): None = not asked yet (detected on first use),
        # True/False = use it / step hop by hop over Cypher. Benchmarks set it to compare both.
        self.use_resident: bool | None = None
        self.spread_engine = "auto"  # kg.spreadLists engine: auto | resident | walk (benchmarks compare them)
        self.stage_units = max(1, int(stage_units))
        self.stage_chunk = max(1, int(stage_chunk))

    @classmethod
    def connect(cls, uri: str, user: str = "neo4j", password: str | None = None, database: str = "neo4j",
                attempts: int = 5, *, read_only: bool = False, ingest_attempts: int = 6,
                ingest_max_seconds: float = 120.0, ingest_wait_max: float = 8.0,
                max_transaction_retry_time: float = 15.0, connection_timeout: float = 5.0,
                stage_units: int = STAGE_UNITS, stage_chunk: int = STAGE_CHUNK) -> "Neo4jStore":
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
                    ingest_max_seconds=ingest_max_seconds, ingest_wait_max=ingest_wait_max, where=uri,
                    stage_units=stage_units, stage_chunk=stage_chunk)
        if not read_only:  # read-only users cannot (and need not) create constraints
            store.apply_schema()
        return store

    # -- plumbing: the public named reads and writes -------------------------------------
    def read(self, name: str, **params: Any) -> list[Any]:
        """Run the named procedure (``procedures/<name>.cypher``) as a read; its records.
        The one way code beside the store (job queue, key store, change log) reads Neo4j."""
        # execute_query retries transient failures itself (max_transaction_retry_time); what is
        # left is an outage, reported as one clear StoreError instead of a driver traceback
        from neo4j.exceptions import DriverError, Neo4jError, ServiceUnavailable, SessionExpired

        # Fast path: an auto-commit query on this thread's read session is one round trip
        # (RUN+PULL); execute_query adds BEGIN/COMMIT and a session per call, which doubled the
        # cost of the small procedures an expansion chains by the dozen. Anything unusual falls
        # back to execute_query below, so failures get the driver's retries.
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

    def write(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """Run the named procedure in one managed write transaction (retried by the driver on
        transient failures); its records as dicts. Refused in read-only mode."""
        text = cypher.load(name)
        with self._session(write=True) as s:
            return s.execute_write(lambda tx: [r.data() for r in tx.run(text, params)])

    def write_statements(self, name: str) -> None:
        """Run each statement of a multi-statement procedure file (schema, wipes) in turn."""
        with self._session(write=True) as s:
            for statement in cypher.statements(name):
                s.run(statement).consume()

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
            # units stored before Unit.probe existed get it once (the marker says it was done)
            if s.run(cypher.load("unit_probes_pending")).single()["todo"]:
                for stmt in cypher.statements("unit_probes_backfill"):
                    s.run(stmt).consume()

    def close(self) -> None:
        pool = self.__dict__.pop("_pool", None)
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        self.driver.close()

    def _prefetch(self, read: Callable[[], Any]) -> Any:
        """Run ``read`` (a :meth:`read` and its parsing) on one of this store's three worker
        threads and return its Future: Python releases the GIL while a thread waits for Neo4j, so the
        caller's CPU work and the server's query overlap. Errors surface at ``result()``."""
        from concurrent.futures import ThreadPoolExecutor

        pool = self.__dict__.get("_pool")
        if pool is None:
            with _POOL_LOCK:
                pool = self.__dict__.get("_pool") or self.__dict__.setdefault(
                    "_pool", ThreadPoolExecutor(max_workers=3, thread_name_prefix="kg-neo4j-read"))
        return pool.submit(read)

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

    # -- what this backend provides besides the graph ------------------------------------
    def change_feed(self) -> Any:
        from kgservice.stores.changelog import Neo4jChangeFeed

        return Neo4jChangeFeed(self)

    def log_change(self, touched: Iterable[str], *, everything: bool = False) -> int:
        from kgservice.stores.changelog import neo4j_change_step

        query, params = neo4j_change_step(touched)
        if everything:
            params = {**params, "touched": [], "all": True}
        with self._session(write=True) as s:
            return int(s.execute_write(lambda tx: tx.run(query, **params).single()["version"]))

    def job_queue(self, data_dir: Any, *, validate: Callable[[str, Any], Any] | None = None,
                  max_attempts: int, read_only: bool) -> Any:
        """``(:KgJob)`` nodes in this database (``data_dir`` is not used)."""
        from kgservice.stores.neo4j_jobs import Neo4jJobQueue

        return Neo4jJobQueue(self, validate=validate, max_attempts=max_attempts, read_only=read_only)

    def key_store(self, data_dir: Any, *, clock: Any, bump: Callable[[], Any] | None, read_only: bool) -> Any:
        """``(:KgApiKey)`` nodes in this database (``data_dir`` is not used)."""
        from kgservice.stores.neo4j_keys import Neo4jKeyStore

        return Neo4jKeyStore(self, read_only=read_only, clock=clock, bump=bump)

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
            from neo4j.exceptions import Neo4jError

            if isinstance(exc, Neo4jError) and exc.code and "MemoryPoolOutOfMemoryError" in exc.code:
                raise StoreError(
                    f"ingest of {len(units)} unit(s) into {self.where} ran out of Neo4j transaction memory "
                    f"({exc.message}); nothing was stored. Batches of more than {self.stage_units} new units "
                    "are staged in bounded transactions: lower KG_NEO4J_STAGE_UNITS, or give the server more "
                    "(dbms.memory.transaction.total.max, heap: KG_NEO4J_HEAP / KG_NEO4J_TX_MAX for scripts/neo4j)."
                ) from exc
            if not _retryable(exc):
                raise

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
        def read_units(ids: list[str]) -> dict[str, Unit]:
            return {r["id"]: Unit.model_validate_json(r["json"]) for r in self.read("get_units", ids=ids)}

        # Validation's three reads are sent before it starts, each on its own session from a
        # worker thread: the server runs them (on the second core) while this thread checks
        # the batch's texts, instead of one after the other behind it.
        # 1. The stored units among the batch's ids and the ids it refers to (what
        #    prepare_batch asks `existing` for first; any other ids are read when asked).
        # 2. Only live units with the same subject and argument-0 node as a unit of this batch
        #    can share its fact key; the server narrows to those (live_fact_units) instead of
        #    shipping every live unit about each subject (hub subjects: most of the store).
        #    Asking for units that turn out unchanged too only adds live units sharing a pair
        #    with the batch: a duplicate found through them is one.
        asked = {u.id for u in units} | {s for u in units for s in u.supersedes}
        asked |= {m.value.unit for u in units for m in u.mods if m.value.unit is not None}
        stored = self._prefetch(lambda: read_units(sorted(asked)))
        # 3. The merge memory of the same ids (the ones prepare_batch may ask about are among them)
        known_aliases = self._prefetch(lambda: self.aliases(sorted(asked)))
        probes = _fact_probes(units)
        live = self._prefetch(lambda: [Unit.model_validate_json(r["json"]) for r in
                                       self.read("live_fact_units", probes=probes)]) if probes else None

        def existing(ids: Iterable[str]) -> dict[str, Unit]:
            ids = list(ids)
            if not asked.issuperset(ids):
                return read_units(ids)
            got = stored.result()
            return {i: got[i] for i in ids if i in got}

        def live_about(subjects: list[str]) -> list[Unit]:
            return live.result() if live is not None else []

        def aliases(ids: list[str]) -> dict[str, str]:
            if not asked.issuperset(ids):
                return self.aliases(ids)
            got = known_aliases.result()
            return {i: got[i] for i in ids if i in got}

        with self._early_write(units) as early:
            return self._validate_and_write(units, existing, live_about, aliases, early,
                                            (stored, live, known_aliases), progress)

    @contextmanager
    def _early_write(self, units: Sequence[Unit]) -> Iterator[_EarlyWrite | None]:
        """The batch's write transaction, opened before validation with its first read sent:
        the stored nodes among every node the batch's units mention (existing_nodes). The
        server runs that read while the client validates (off the critical path), inside the
        same transaction as the writes that rely on its element ids. Rolled back unless committed
        (a rejected batch, one with nothing new, a staged one). None when a unit's facts cannot
        be built (an invalid batch: validation says why) or the batch is big enough to be
        staged. Transient errors here reach :meth:`ingest`'s retry of the whole ingest."""
        if len(units) > self.stage_units:
            yield None
            return
        try:
            ids = sorted({n for u in units for n in unit_facts(u).nodes})
        except (AssertionError, AttributeError, IndexError, KeyError, TypeError, ValueError):
            yield None
            return
        with self._session(write=True) as session:
            tx = session.begin_transaction()
            try:
                yield _EarlyWrite(tx, set(ids), tx.run(cypher.load("existing_nodes"), ids=ids))
            finally:
                if not tx.closed():
                    tx.close()  # rolls back what was not committed

    def _validate_and_write(self, units: Sequence[Unit], existing: Callable[[Iterable[str]], dict[str, Unit]],
                            live_about: Callable[[list[str]], list[Unit]],
                            aliases: Callable[[list[str]], dict[str, str]], early: _EarlyWrite | None,
                            reads: tuple[Any, ...], progress: Callable[[int], None] | None) -> IngestReport:
        dups: dict[str, str] = {}
        try:
            new, unchanged = prepare_batch(units, existing, live_about, dups, aliases)
        finally:
            for f in reads:
                if f is not None and not f.done():
                    f.cancel()  # validation failed first: nobody waits for the read
        report = IngestReport(units_unchanged=unchanged, duplicates=dups)
        # merged duplicates become (:UnitAlias) in the transaction that makes the batch visible
        # (_commit_steps), so a later batch can supersede / refer to them by their own id
        alias_rows = [{"id": d, "unit": k} for d, k in sorted(dups.items())]
        if not new:
            if alias_rows:
                self.add_aliases(dups)
            return report
        nodes: dict[str, tuple[str, NodeKind]] = {}
        unit_facts_: list[tuple[Unit, Any]] = []
        rel_rows, pairs = [], []
        touched: set[str] = set()
        for u in new:
            f = unit_facts(u)
            for nid, (label, kind) in f.nodes.items():
                prev = nodes.get(nid)
                if prev is None or (kind == NodeKind.DERIVED and prev[1] == NodeKind.ENTRY):
                    nodes[nid] = (label, kind)
            touched.update(f.nodes)
            unit_facts_.append((u, f))
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
        unit_facts_.sort(key=lambda uf: uf[0].id)

        staged = len(unit_facts_) > self.stage_units
        if staged:
            unit_rows = [_unit_row(u, f) for u, f in unit_facts_]
            created, fresh = self._ingest_staged(node_rows, unit_rows, rel_rows, pairs, touched, progress,
                                                 alias_rows)
        elif early is not None:
            created, fresh = self._write_batch(early.tx, node_rows, unit_facts_, rel_rows, pairs, touched,
                                               progress, alias_rows, early)
            early.tx.commit()
        else:
            def work(tx: Any) -> tuple[int, list[str]]:
                return self._write_batch(tx, node_rows, unit_facts_, rel_rows, pairs, touched, progress, alias_rows)

            with self._session(write=True) as session:
                created, fresh = session.execute_write(work)
        if not staged:
            # ingest_new_nodes CREATEd exactly these rows in the committed transaction, so the
            # labels are the stored ones: the ingest embeds them without reading them back.
            # Staged batches create nodes outside it: read back there.
            label = {r["id"]: r["label"] for r in node_rows}
            report.new_labels.update((nid, label[nid]) for nid in fresh)
        report.units_added = len(new)
        report.nodes_added = created
        report.new_embeddable_nodes = fresh
        report.touched_nodes = sorted(touched)
        return report

    def _write_batch(self, tx: Any, node_rows: list[dict], units: list[tuple[Unit, Any]], rel_rows: list[dict],
                     pairs: list[dict], touched: set[str], progress: Callable[[int], None] | None,
                     aliases: Sequence[dict] = (), early: _EarlyWrite | None = None) -> tuple[int, list[str]]:
        """The one transaction of a batch of up to ``stage_units`` new units (``units``: each
        with its :func:`unit_facts`, in id order).

        Nodes are looked up once (existing_nodes, which also returns their element ids and
        kinds); the absent ones are CREATEd (ingest_new_nodes) and the statements that link
        units and relations to nodes find them by element id. Finding nodes by :Node(id)
        inside a write transaction takes a locking unique-index seek per subject, argument,
        modifier and relation end; element ids are direct record reads.

        The unit rows (JSON, notation text) are built one chunk at a time while the server
        runs the previous statement: ``tx.run`` returns once the server has accepted a query,
        and the next ``tx.run`` waits for it to finish, so the client's row building overlaps
        the server's writes instead of preceding them. Returns (nodes created, new non-literal
        node ids)."""
        if early is not None and early.asked.issuperset(r["id"] for r in node_rows):
            row = early.nodes.single()  # sent in this transaction before validation (_early_write)
        else:
            row = tx.run(cypher.load("existing_nodes"), ids=[r["id"] for r in node_rows]).single()
        eid = dict(zip(row["ids"], row["eids"]))
        stored_kind = dict(zip(row["ids"], row["kinds"]))
        new_nodes = [r for r in node_rows if r["id"] not in eid]
        # a stored entry node that this batch sees as derived becomes derived (never back)
        upgrades = [r for r in node_rows if r["kind"] == NodeKind.DERIVED.value
                    and r["id"] in eid and stored_kind[r["id"]] != NodeKind.DERIVED.value]
        for i in range(0, len(new_nodes), BATCH_ROWS * 4):
            got = tx.run(cypher.load("ingest_new_nodes"), nodes=new_nodes[i:i + BATCH_ROWS * 4]).single()
            eid.update(zip(got["ids"], got["eids"]))
        pending = [tx.run(cypher.load("ingest_nodes"), nodes=upgrades[i:i + BATCH_ROWS])
                   for i in range(0, len(upgrades), BATCH_ROWS)]
        # stored units this batch supersedes: their edges are retired before the batch's own
        # edges exist in the transaction (retire_superseded says why); units superseded inside
        # the batch get their edges created retired
        pairs, olds, rel_rows = _split_supersessions(pairs, {u.id for u, _ in units}, rel_rows)
        retiring = [tx.run(q, params) for q, params in _retire_steps(olds)]
        chunk = max(1, BATCH_ROWS // 2)  # units per statement: the next chunk's rows are built meanwhile
        for i in range(0, len(units), chunk):
            part = [_unit_row(u, f, eid) for u, f in units[i:i + chunk]]
            pending.append(tx.run(cypher.load("ingest_units"), units=part))
            if progress is not None:
                progress(len(part))
        linked = [r | {"src": eid[r["src"]], "dst": eid[r["dst"]]} for r in rel_rows]
        for result in pending:
            result.consume()
        # the change log needs the ends of the retired edges (the superseding unit need not
        # mention them, yet their spreading rows changed)
        retired = _retired_ends(retiring)
        self._run_relation_steps(tx, self._relation_steps(linked, pairs))
        for query, params in self._commit_steps(touched | retired, aliases):
            tx.run(query, params).consume()
        fresh = [r["id"] for r in new_nodes if r["kind"] != NodeKind.LITERAL.value]
        return len(new_nodes), fresh

    # -- big batches: stage in bounded transactions, publish in one ------------------------
    @staticmethod
    def _relation_steps(rel_rows: list[dict], pairs: list[dict], by: str = "ingest_relations") -> list[tuple[str, dict]]:
        """A batch's node-to-node relations, then its supersession edges between units.
        ``by``: ingest_relations (ends given as element ids) or publish_relations (ends given
        as node ids)."""
        return ([(cypher.load(by), {"rels": rel_rows[i:i + BATCH_ROWS]})
                 for i in range(0, len(rel_rows), BATCH_ROWS)]
                + [(cypher.load("link_supersessions"), {"pairs": pairs[i:i + BATCH_ROWS]})
                   for i in range(0, len(pairs), BATCH_ROWS)])

    @staticmethod
    def _run_relation_steps(tx: Any, steps: list[tuple[str, dict]]) -> None:
        for query, params in steps:
            tx.run(query, params).consume()

    def _commit_steps(self, touched: set[str], aliases: Sequence[dict] = ()) -> list[tuple[str, dict]]:
        """Statements run last inside the transaction that makes a batch visible (the one
        ingest transaction, or a staged batch's publish transaction): the duplicates the batch
        merged away, as aliases ({id, unit} rows, aliases_record.cypher), and the change log of
        ``touched`` node ids that keeps every process's caches coherent."""
        steps = [(cypher.load("aliases_record"), {"aliases": list(aliases[i:i + BATCH_ROWS])})
                 for i in range(0, len(aliases), BATCH_ROWS)]
        return steps + [neo4j_change_step(touched)]

    def _publish_steps(self, stage: str, upgrades: list[dict], rel_rows: list[dict],
                       pairs: list[dict]) -> tuple[list[tuple[str, dict]], list[tuple[str, dict]]]:
        """The publish transaction of a staged batch, in order (after the retirement of the
        stored units it supersedes, :func:`_retire_steps`): relabel the staged nodes and units
        (stage_publish), upgrade existing nodes seen as derived; then (second list) the
        relations and supersession edges. :meth:`_commit_steps` follows them."""
        steps = [(stmt, {"stage": stage}) for stmt in cypher.statements("stage_publish")]
        steps += [(cypher.load("ingest_nodes"), {"nodes": upgrades[i:i + BATCH_ROWS]})
                  for i in range(0, len(upgrades), BATCH_ROWS)]
        return steps, self._relation_steps(rel_rows, pairs, "publish_relations")

    def _ingest_staged(self, node_rows: list[dict], unit_rows: list[dict], rel_rows: list[dict], pairs: list[dict],
                       touched: set[str], progress: Callable[[int], None] | None,
                       aliases: Sequence[dict] = ()) -> tuple[int, list[str]]:
        import time
        import uuid

        self.discard_abandoned_stages()
        stage = uuid.uuid4().hex
        present = set(self.read("existing_nodes", ids=[r["id"] for r in node_rows])[0]["ids"])
        new_nodes = [r for r in node_rows if r["id"] not in present]
        upgrades = [r for r in node_rows if r["id"] in present and r["kind"] == NodeKind.DERIVED.value]
        staged = []
        for r in unit_rows:
            edges = [{"type": "SUBJECT", "id": r["subject"], "new": r["subject"] not in present, "props": {}}]
            edges += [{"type": "ARG", "id": a["id"], "new": a["id"] not in present, "props": {"pos": a["pos"]}}
                      for a in r["args"]]
            edges += [{"type": "MOD", "id": m["id"], "new": m["id"] not in present, "props": {"slot": m["slot"]}}
                      for m in r["mods"]]
            staged.append({k: v for k, v in r.items() if k not in ("subject", "args", "mods")} | {"edges": edges})

        def run(query: str, **params: Any) -> Any:
            with self._session(write=True) as session:
                return session.execute_write(lambda tx: tx.run(query, params).data())

        # supersessions inside the batch are staged (an edge between two staged units) and the
        # superseded units' relations are created already retired: the publish transaction
        # then only links units stored before (its index seeks on ids relabelled in the same
        # transaction are slow, and each retire pass costs transaction memory)
        in_batch = {r["id"] for r in unit_rows}
        pairs, olds, rel_rows = _split_supersessions(pairs, in_batch, rel_rows)
        inner = [p for p in pairs if p["old"] in in_batch]
        pairs = [p for p in pairs if p["old"] not in in_batch]
        run(cypher.load("stage_begin"), stage=stage, now=time.time())
        try:
            for i in range(0, len(new_nodes), BATCH_ROWS * 4):
                run(cypher.load("stage_nodes"), stage=stage, nodes=new_nodes[i:i + BATCH_ROWS * 4])
            for i in range(0, len(staged), self.stage_chunk):
                self._stage_chunk(run, stage, staged[i:i + self.stage_chunk])
                if progress is not None:
                    progress(len(staged[i:i + self.stage_chunk]))
            for i in range(0, len(inner), BATCH_ROWS):
                run(cypher.load("stage_supersessions"), stage=stage, pairs=inner[i:i + BATCH_ROWS])

            def publish(tx: Any) -> int:
                nodes = 0
                retired = _retired_ends([tx.run(q, params) for q, params in _retire_steps(olds)])
                labels, relations = self._publish_steps(stage, upgrades, rel_rows, pairs)
                for query, params in labels:
                    rows = tx.run(query, params).data()
                    nodes += rows[0]["nodes"] if rows and "nodes" in rows[0] else 0
                self._run_relation_steps(tx, relations)
                for query, params in self._commit_steps(touched | retired, aliases):
                    tx.run(query, params).consume()
                return nodes

            with self._session(write=True) as session:
                created = session.execute_write(publish)
        except BaseException:
            self._discard_stage_quietly(stage)
            raise
        try:  # visible now; the staging marks go in bounded transactions (a crash leaves them to the sweep)
            self._run_chunks("stage_cleanup", stage, self.stage_chunk)
        except Exception:
            pass
        return created, [r["id"] for r in new_nodes if r["kind"] != NodeKind.LITERAL.value]

    def _stage_chunk(self, run: Callable[..., Any], stage: str, rows: list[dict]) -> None:
        """One staging transaction (a method of its own so tests can fail it mid-stage)."""
        import time

        for i in range(0, len(rows), BATCH_ROWS):
            part = rows[i:i + BATCH_ROWS]
            got = run(cypher.load("stage_units"), stage=stage, now=time.time(), units=part)
            if not got or got[0]["created"] != len(part):  # the stage was discarded under us
                raise StoreError(f"ingest stage {stage} disappeared while it was being written "
                                 "(removed as abandoned?); nothing of this batch is visible: run the ingest again")

    def _run_chunks(self, name: str, stage: str, chunk: int) -> int:
        """Each statement of ``name``, one bounded transaction per chunk, until it reports 0."""
        done = 0
        for stmt in cypher.statements(name):
            while True:
                with self._session(write=True) as session:
                    n = session.execute_write(lambda tx: tx.run(stmt, stage=stage, limit=chunk).single()["removed"])
                done += n
                if n == 0:
                    break
        return done

    def discard_stage(self, stage: str, chunk: int = 10_000) -> int:
        """Delete an unpublished stage's invisible data in bounded transactions."""
        return self._run_chunks("stage_discard", stage, chunk)

    def _discard_stage_quietly(self, stage: str) -> None:
        try:
            self.discard_stage(stage)
        except Exception:  # the server may be gone; the stage is invisible and goes once abandoned
            pass

    def discard_abandoned_stages(self, stale_seconds: float = STAGE_STALE_SECONDS) -> list[str]:
        """Remove the stages of writers that stopped (crashed) ``stale_seconds`` ago or more."""
        import time

        rows = self.read("stage_abandoned", now=time.time(), stale=float(stale_seconds))
        for r in rows:
            self._run_chunks("stage_cleanup" if r["published"] else "stage_discard", r["stage"], 10_000)
        return [r["stage"] for r in rows]

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
            # edges were dropped and re-derived: every reader (caches, the plugin's resident
            # spreading graph) starts over, as after a wipe
            tx.run(cypher.load("changes_record"), touched=[], all=True, by=current_user()).consume()
            return removed

        with self._session(write=True) as session:
            removed = session.execute_write(work)
        return {"units_rederived": len(units), "ids_cleared": len(ids) - len(units), "nodes_removed": len(removed)}

    def aliases(self, ids: Iterable[str] | None = None) -> dict[str, str]:
        if ids is None:
            return {r["id"]: r["unit"] for r in self._stream("aliases_all")}
        wanted = list(ids)
        return {r["id"]: r["unit"] for r in self.read("aliases_get", ids=wanted)} if wanted else {}

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
        step, params = neo4j_change_step(labels)  # the relabelled nodes, in the same transaction

        def work(tx: Any) -> int:
            changed = tx.run(cypher.load("admin_relabel_nodes"), nodes=rows).single()["changed"]
            if changed:
                tx.run(step, params).consume()
            return changed

        with self._session(write=True) as session:
            return session.execute_write(work)

    # -- units and nodes ----------------------------------------------------------------
    def get_units(self, ids: Iterable[str]) -> list[Unit]:
        wanted = list(ids)
        found = {r["id"]: r["json"] for r in self.read("get_units", ids=wanted)}
        return [Unit.model_validate_json(found[i]) for i in wanted if i in found]

    def iter_units(self) -> Iterator[Unit]:
        after = ""
        while True:
            rows = self.read("page_units", after=after, limit=PAGE)
            for r in rows:
                yield Unit.model_validate_json(r["json"])
            if len(rows) < PAGE:
                return
            after = rows[-1]["id"]

    def get_nodes(self, ids: Iterable[str]) -> list[Node]:
        wanted = list(ids)
        found = {r["id"]: r for r in self.read("get_nodes", ids=wanted)}
        return [Node(id=i, label=found[i]["label"], kind=NodeKind(found[i]["kind"])) for i in wanted if i in found]

    def iter_nodes(self) -> Iterator[Node]:
        after = ""
        while True:
            rows = self.read("page_nodes", after=after, limit=PAGE)
            for r in rows:
                yield Node(id=r["id"], label=r["label"], kind=NodeKind(r["kind"]))
            if len(rows) < PAGE:
                return
            after = rows[-1]["id"]

    def counts(self) -> dict[str, int]:
        r = self.read("counts")[0]
        out = {k: r[k] for k in ("units", "nodes", "relations", "superseded_units")}
        for row in r["kinds"]:
            out[f"kind:{row['kind']}"] = row["n"]
        return out

    # -- procedures -----------------------------------------------------------------------
    def _column(self, name: str, column: str, **params: Any) -> list[str]:
        return [r[column] for r in self.read(name, **params)]

    def subject_mentions(self, node_id: str) -> list[str]:
        return list(self.read("subject_mentions", id=node_id)[0]["units"])

    def context_mentions(self, node_id: str) -> list[str]:
        return list(self.read("context_mentions", id=node_id)[0]["units"])

    def mentions(self, node_id: str) -> list[str]:
        return self.mentions_of([node_id])[node_id]

    def _paired(self, name: str, keys: str, values: str, ids: list[str]) -> dict[str, Any]:
        """A procedure that answers many ids in one row of parallel lists, as a dict (one
        record instead of one per id: thousands per question for the readers that use it)."""
        if not ids:
            return {}
        row = self.read(name, ids=ids)[0]
        return dict(zip(row[keys], row[values]))

    def mentions_of(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        ids = list(dict.fromkeys(node_ids))
        found = self._paired("mentions_of", "nodes", "units", ids)
        return {n: list(found.get(n, [])) for n in ids}

    def mention_counts(self, node_ids: Sequence[str]) -> dict[str, int]:
        ids = list(dict.fromkeys(node_ids))
        found = self._paired("mention_counts", "nodes", "counts", ids)
        return {n: int(found.get(n, 0)) for n in ids}

    def narrowed_by(self, node_id: str) -> list[str]:
        return self._column("narrowed_by", "node", id=node_id)

    def narrows(self, node_id: str) -> list[str]:
        return self._column("narrows", "node", id=node_id)

    def synonym_class(self, node_id: str) -> list[str]:
        return self._column("synonym_class", "node", id=node_id) or [node_id]

    def belongs_to_parents(self, node_ids: Sequence[str]) -> list[str]:
        return self._column("belongs_to_parents", "node", ids=list(node_ids))

    def belongs_to_ancestors(self, node_id: str) -> dict[str, int]:
        return {r["ancestor"]: r["depth"] for r in self.read("belongs_to_closure", id=node_id)}

    def sunk_units(self, node_id: str) -> list[tuple[str, str]]:
        rows = self.read("belongs_to_closure", id=node_id)
        return sorted((u, r["ancestor"]) for r in rows for u in r["units"])

    def superseded_end(self, unit_ids: Sequence[str]) -> dict[str, list[str]]:
        found = self._paired("superseded_end", "units", "ends", list(unit_ids))  # superseded ones only
        return {u: list(found.get(u, [u])) for u in unit_ids}

    def node_superseded_end(self, node_id: str) -> list[str]:
        return self._column("node_superseded_end", "node", id=node_id) or [node_id]

    def directed_reads(self, seeds: Sequence[str]) -> PrefetchedReads:
        row = self.read("directed_expand", ids=list(dict.fromkeys(seeds)))[0]
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

    def plugin_procedures(self) -> set[str]:
        """The kg.* procedures the server has loaded (empty without kgservice's plugin)."""
        return {r["name"] for r in self.read("plugin_procedures")}

    def spread_resident(self, seeds: Mapping[str, float], params: Any,
                        limit: int | None = None) -> tuple[dict[str, float], int, int] | None:
        """The whole spread in one round trip to ``kg.spreadLists`` when the server has the
        plugin; None (the hop loop over spread_step.cypher) when it has not, or when params
        carry a knob the plugin does not know. With ``limit`` the server sends only the
        ``limit`` most energetic nodes (a popular seed activates 200k: unpacking them all cost
        more than the spread). ``spread_engine`` picks the plugin's engine: 'auto' (the
        resident in-memory graph unless the server turned it off), 'resident' or 'walk'."""
        if self.use_resident is None:
            self.use_resident = "kg.spreadLists" in self.plugin_procedures()
        if not self.use_resident or not _resident_params(params):
            return None
        row = self.read("spread_resident", seeds={k: float(v) for k, v in seeds.items()},
                         tau={k: float(v) for k, v in params.tau.items()}, epsilon=float(params.epsilon),
                         max_hops=int(params.max_hops), max_fanout=int(params.max_fanout or 0),
                         max_fire=int(params.max_fire or 0),
                         degree_damping=float(getattr(params, "degree_damping", 0.0)),
                         seed_backflow=bool(getattr(params, "seed_backflow", True)),
                         limit=int(limit or 0), engine=self.spread_engine)[0]
        return dict(zip(row["nodes"], row["energies"])), int(row["hops"]), int(row["activated"])
    def causal_step(self, node_ids: Sequence[str], family: str) -> list[tuple[str, str, str]]:
        rows = self.read("causal_step", ids=list(dict.fromkeys(node_ids)), family=family)
        return [(r["src"], r["dst"], r["unit"]) for r in rows]

    def spread_step(self, frontier: Mapping[str, float], tau: Mapping[str, float],
                    max_fanout: int | None = None, degree_damping: float = 0.0) -> dict[str, float]:
        items = sorted(frontier.items())
        row = self.read("spread_step", ids=[k for k, _ in items], energies=[v for _, v in items],
                         tau={k: float(v) for k, v in tau.items()}, max_fanout=max_fanout,
                         degree_damping=float(degree_damping))[0]
        return dict(zip(row["nodes"], row["energies"]))

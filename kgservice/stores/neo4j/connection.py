"""The connection: the driver, connecting with bounded retries, sessions with an explicit access
mode, and the public named reads and writes (``read(name, **params)`` / ``write(name, **params)``)
through which every other part of the backend - and the job queue, key store and change log
beside it - talks to Neo4j.

Causal consistency (a Neo4j cluster, where reads go to secondaries): every session is given
the process's bookmark manager (:mod:`kgservice.stores.causal`), which also presents the
current request's bookmarks; the bookmark each write transaction ends with is recorded for
the request (returned to the client as ``X-KG-Bookmark``). Reads that decide what is written
(ingest's duplicate check) run on the leader (:func:`on_leader`).

Read-only mode (``KG_READ_ONLY``, for ``ask`` / ``query`` users): every session is opened
with read access (the server refuses writes in it) and the schema is not touched.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal, Self

from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

from kgservice.config import DEFAULT_WORKSPACE
from kgservice.errors import ConfigError, InvalidArgument, ReadOnlyError, StoreError, StoreUnavailable
from kgservice.stores import causal, cypher
from kgservice.stores.base import GraphStore
from kgservice.stores.drivers import driver_outage

STAGE_UNITS = 20_000  # new units per batch above which an ingest is staged (bounded transactions)
STAGE_CHUNK = 10_000  # units per staging transaction


class Neo4jUnavailable(StoreError, StoreUnavailable):
    pass


_POOL_LOCK = threading.Lock()
_LEADER: contextvars.ContextVar[bool] = contextvars.ContextVar("kg_leader_reads", default=False)


@contextmanager
def on_leader() -> Iterator[None]:
    """Reads in this context (and the store's prefetch threads it starts) are routed to the
    leader, which has every committed write: for reads whose answer decides what is written
    (ingest's duplicate check), where a lagging secondary would let one fact be stored twice."""
    token = _LEADER.set(True)
    try:
        yield
    finally:
        _LEADER.reset(token)


def _bad_bookmark(exc: BaseException) -> InvalidArgument | None:
    """The server refused a bookmark a client sent (malformed, or from another database)."""
    code = getattr(exc, "code", None) or ""
    if "InvalidBookmark" in code:
        return InvalidArgument(f"{causal.HEADER}: the database refused the bookmark token ({code}); send back "
                               "the token a write on this deployment returned, unchanged")
    return None


class Scoped:
    """A session or transaction whose every query is given the workspace as ``$ws`` (unless the
    caller passes one): the procedure files scope every workspace-scoped node pattern by it
    (tests/unit/test_cypher_workspace.py checks), so no caller can forget the workspace.
    Queries that do not use ``$ws`` (keys, web sign-ins, schema) ignore the extra parameter."""

    __slots__ = ("_inner", "_ws")

    def __init__(self, inner: Any, ws: str):
        self._inner = inner
        self._ws = ws

    def run(self, query: Any, parameters: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        if "ws" not in kwargs and not (parameters and "ws" in parameters):
            kwargs["ws"] = self._ws
        return self._inner.run(query, parameters, **kwargs)

    def execute_write(self, work: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return self._inner.execute_write(lambda tx, *a, **k: work(Scoped(tx, self._ws), *a, **k), *args, **kwargs)

    def execute_read(self, work: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return self._inner.execute_read(lambda tx, *a, **k: work(Scoped(tx, self._ws), *a, **k), *args, **kwargs)

    def begin_transaction(self, *args: Any, **kwargs: Any) -> Scoped:
        return Scoped(self._inner.begin_transaction(*args, **kwargs), self._ws)

    def __enter__(self) -> Scoped:
        self._inner.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._inner.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class Neo4jCredentialsRefused(StoreError, ConfigError):
    """Neo4j refused the configured user and password: the configuration is wrong (exit 2, fix
    NEO4J_PASSWORD / KG_NEO4J_USER), though to a server's clients it is a backend they cannot
    use (HTTP 503)."""

    http_status = 503


class Neo4jConnection(GraphStore):
    """The driver and the plumbing every part of :class:`~kgservice.stores.neo4j.Neo4jStore` uses."""

    def __init__(self, driver: Any, database: str = "neo4j", *, read_only: bool = False,
                 ingest_attempts: int = 6, ingest_max_seconds: float = 120.0, ingest_wait_max: float = 8.0,
                 where: str = "Neo4j", stage_units: int = STAGE_UNITS, stage_chunk: int = STAGE_CHUNK,
                 workspace: str = DEFAULT_WORKSPACE):
        self.driver = driver
        # every query of this connection is given it as $ws (Scoped): the store is the workspace's
        self.workspace = workspace
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
        # ingest's bulk statements: kg.create* plugin procedures when the server has them (None =
        # not asked yet); write_engine auto | plugin | cypher (benchmarks and tests compare them)
        self.use_plugin_writes: bool | None = None
        self.write_engine = "auto"
        self.stage_units = max(1, int(stage_units))
        self.stage_chunk = max(1, int(stage_chunk))
        # the process's causal chain, given to every session (reads and writes)
        from kgservice.stores.neo4j.bookmarks import ProcessBookmarks  # imports the driver

        self.bookmarks = ProcessBookmarks()

    @classmethod
    def connect(cls, uri: str, user: str = "neo4j", password: str | None = None, database: str = "neo4j",
                attempts: int = 5, *, read_only: bool = False, ingest_attempts: int = 6,
                ingest_max_seconds: float = 120.0, ingest_wait_max: float = 8.0,
                max_transaction_retry_time: float = 15.0, connection_timeout: float = 5.0,
                stage_units: int = STAGE_UNITS, stage_chunk: int = STAGE_CHUNK,
                schema_mode: Literal["auto", "check"] = "auto", workspace: str = DEFAULT_WORKSPACE) -> Self:
        """Connect with bounded retries. ``attempts`` / backoff bound the wait for a server that
        is starting; ``ingest_*`` bound how long one ingest keeps retrying (see :meth:`ingest`);
        ``max_transaction_retry_time`` is the driver's own retry budget inside one transaction.
        The store's schema version is checked before anything is written (``schema_mode``:
        :func:`kgservice.stores.schema.open_schema`)."""
        import neo4j
        from neo4j.exceptions import AuthError, ServiceUnavailable

        from kgservice.config import NEO4J_NO_PASSWORD, ConfigError, check_neo4j_uri, redact_uri

        if not password:  # a configuration error (exit 2), named before any connection is tried
            raise ConfigError(NEO4J_NO_PASSWORD)
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
            raise Neo4jCredentialsRefused(f"Neo4j at {uri} refused the credentials of user {user!r}: check "
                                          "NEO4J_PASSWORD (and KG_NEO4J_USER)") from None
        except (ServiceUnavailable, OSError) as exc:
            driver.close()
            raise Neo4jUnavailable(
                f"Neo4j at {uri} did not answer after {attempts} attempts ({type(exc).__name__}); "
                "is it running? (`scripts/neo4j status`, or `scripts/neo4j start`)") from None
        store = cls(driver, database, read_only=read_only, ingest_attempts=ingest_attempts,
                    ingest_max_seconds=ingest_max_seconds, ingest_wait_max=ingest_wait_max, where=uri,
                    stage_units=stage_units, stage_chunk=stage_chunk, workspace=workspace)
        from kgservice.stores.schema import open_schema

        try:  # read-only users cannot (and need not) create constraints: the baseline is for writers
            open_schema(store.schema_record(), read_only=read_only, mode=schema_mode, baseline=store.apply_schema)
        except BaseException:
            store.close()
            raise
        return store

    def schema_record(self) -> Any:
        """The ``(:KgSchema {id: 'version'})`` record (:mod:`kgservice.stores.neo4j.schema_record`)."""
        from kgservice.stores.neo4j.schema_record import Neo4jSchemaRecord

        return Neo4jSchemaRecord(self)

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
        # back to execute_query below, so failures get the driver's retries. The session keeps
        # no causality of its own: it asks the process bookmark manager (with the request's
        # bookmarks) at every query, so reusing it loses nothing.
        leader = _LEADER.get() and not self.read_only
        local = self.__dict__.get("_reads") or self.__dict__.setdefault("_reads", threading.local())
        slot = "leader" if leader else "session"
        session = getattr(local, slot, None)
        try:
            if session is None:
                session = self._open(write=leader)
                setattr(local, slot, session)
            return list(session.run(cypher.load(name), params))
        except (DriverError, Neo4jError, OSError) as exc:
            setattr(local, slot, None)
            try:
                if session is not None:
                    session.close()
            except Exception:  # pragma: no cover - a broken session may refuse to close cleanly
                pass
            refused = _bad_bookmark(exc)
            if refused is not None:
                raise refused from None
            if isinstance(exc, Neo4jError) and not exc.is_retryable():
                raise  # a query error (syntax, constraint, ...): the managed path would raise it too
        try:
            scoped = params if "ws" in params else {**params, "ws": self.workspace}
            records, _, _ = self.driver.execute_query(cypher.load(name), scoped, database_=self.database,
                                                      routing_="w" if leader else "r",
                                                      bookmark_manager_=self.bookmarks)
        except (ServiceUnavailable, SessionExpired, Neo4jError) as exc:
            if not driver_outage(exc):
                raise
            raise self._unavailable(exc) from exc
        return records

    def write(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """Run the named procedure in one managed write transaction (retried by the driver on
        transient failures); its records as dicts. Refused in read-only mode."""
        text = cypher.load(name)
        with self._session(write=True) as s:
            return s.execute_write(lambda tx: [r.data() for r in tx.run(text, params)])

    def write_statements(self, name: str, **params: Any) -> None:
        """Run each statement of a multi-statement procedure file (schema, wipes) in turn, each
        in a transaction of its own (auto-commit: ``CALL ... IN TRANSACTIONS`` needs one)."""
        with self._session(write=True) as s:
            for statement in cypher.statements(name):
                s.run(statement, params).consume()

    @contextmanager
    def _session(self, write: bool) -> Iterator[Any]:
        """A session (:meth:`_open`) used as a context; the bookmark a write session ends with
        is recorded for the request (:func:`kgservice.stores.causal.wrote`)."""
        session = self._open(write)
        try:
            with session:
                try:
                    yield session
                finally:
                    if write:
                        self._wrote(session)
        except Exception as exc:
            refused = _bad_bookmark(exc)
            if refused is not None:
                raise refused from None
            raise

    def _wrote(self, session: Any) -> None:
        try:
            values = session.last_bookmarks().raw_values
        except Exception:  # a broken session: the write did not commit, or its reply was lost
            return
        causal.wrote(self, values)

    def _open(self, write: bool) -> Any:
        """A session with an explicit access mode and the process bookmark manager: in read-only
        mode there are no write sessions at all, and the server itself refuses writes in a read
        session."""
        import neo4j

        if write and self.read_only:
            raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); writes to Neo4j are refused")
        return Scoped(self.driver.session(database=self.database, bookmark_manager=self.bookmarks,
                                          default_access_mode=neo4j.WRITE_ACCESS if write else neo4j.READ_ACCESS),
                      self.workspace)

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
        return pool.submit(contextvars.copy_context().run, read)  # the request's bookmarks, leader routing

    def _unavailable(self, exc: BaseException) -> Neo4jUnavailable:
        """The one wording of an outage met by a read (a refused connection, a stopping database)."""
        return Neo4jUnavailable(f"Neo4j at {self.where} is not answering ({type(exc).__name__}); "
                                "is it running? (`scripts/neo4j status`)")

    # -- administration (kg doctor / restore) ---------------------------------------------
    def _stream(self, name: str, **params: Any) -> Iterator[Any]:
        from neo4j.exceptions import Neo4jError, ServiceUnavailable, SessionExpired

        try:
            with self._session(write=False) as s:
                yield from s.run(cypher.load(name), params)
        except (ServiceUnavailable, SessionExpired, Neo4jError) as exc:
            if not driver_outage(exc):
                raise
            raise self._unavailable(exc) from exc


"""The store's change log: one version that moves, in the same write, with every change to the
store; it keeps every process's caches coherent with a shared store (docs/SERVICE.md §5.6) and tells
the indexes built from a whole store when to rebuild (:mod:`kgservice.stores.versioned`).

Every ingest that stores a unit records, *in the same write* as the units, a new version
number and the node ids it touched. A process serving from its caches first compares the
store's version with the last one it replayed and, if it moved, invalidates exactly the
entries that depend on the touched nodes (:meth:`Caches.invalidate`, the same node-level
rule an in-process ingest uses). So one teammate's ingest does not empty everyone's
caches; an unrelated question stays a hit.

* Neo4j: ``cypher/changes_record.cypher`` runs inside the ingest transaction (a
  ``(:KgMeta {id:'state'}).version`` counter and one ``(:KgChange {seq, touched})`` node);
  readers run ``changes_version`` (one small read per request) and ``changes_since``.
* Embedded store: a sidecar SQLite file (``changes.sqlite3`` beside the graph files),
  written under the store's write lock *before* the batch is appended to the journal. A
  crash between the two leaves a change whose batch never landed: a spurious invalidation,
  which is harmless; the opposite order could lose an invalidation, which is not. A reader can
  therefore see a version before its batch is in memory: an index built from the store pairs
  the version with the store's in-memory generation (:mod:`kgservice.stores.versioned`).

A batch touching more than :data:`MAX_TOUCHED` nodes is logged as "everything" (readers
clear everything); a reader that finds the log pruned past its version, or the version
lower than its own (the store was wiped), clears too. Clearing is always correct.

Who wrote a change comes from :func:`attributed` (the job worker and the server set it
around an ingest): a context variable, so concurrent requests in threads or tasks never
see each other's user.
"""

from __future__ import annotations

import errno
import json
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from kgservice.errors import ServiceFileError
from kgservice.stores import cypher, sqlite_file

# node (and unit) ids listed per change; beyond that the change says "everything" and every reader
# clears its caches, rebuilds its indexes and the plugin its resident graph. A listed change costs
# each reader work in proportion to the ids (cache rows, the plugin's re-read rows, the indexes'
# patches: kgservice/stores/versioned.py), far below a rebuild until the ids approach the store's
# size; the cap bounds one change-log row (about 5 MB of ids). It was 20k: a 10k-unit ingest batch
# touches about that many nodes, so every large document flushed every server.
MAX_TOUCHED = 200_000
CHANGES_FILE = "changes.sqlite3"

_user: ContextVar[str | None] = ContextVar("kg_ingest_user", default=None)


class Change(BaseModel):
    """One logged ingest: ``touched`` node ids, or ``everything`` when too many to list;
    ``units``: the unit ids the change stored, removed or brought back (what an index of units
    patches, :mod:`kgservice.stores.derived`), or None when the writer did not list them (a
    change logged before units were listed, or too many): such an index rebuilds then."""

    seq: int
    touched: list[str] = []
    everything: bool = False
    by: str | None = None
    units: list[str] | None = None


@contextmanager
def attributed(user: str | None) -> Iterator[None]:
    """Ingests inside this block are logged as written by ``user``."""
    token = _user.set(user)
    try:
        yield
    finally:
        _user.reset(token)


def current_user() -> str | None:
    return _user.get()


def _listing(touched: Iterable[str]) -> tuple[list[str], bool]:
    ids = sorted(set(touched))
    return ([], True) if len(ids) > MAX_TOUCHED else (ids, False)


def _unit_listing(units: Iterable[str] | None) -> list[str] | None:
    """The unit ids a change lists: None (not listed: an index of units rebuilds) when the
    writer did not say or when there are more than :data:`MAX_TOUCHED`."""
    if units is None:
        return None
    ids = sorted(set(units))
    return None if len(ids) > MAX_TOUCHED else ids


class ChangeFeed(Protocol):
    """What the caches need from a store: its version, and the changes after a version."""

    def version(self) -> int: ...

    def since(self, after: int, upto: int) -> list[Change]: ...

    def prune(self, keep: int = 10_000) -> int:
        """Drop all but the newest ``keep`` changes (the job worker keeps the log bounded)."""
        ...


# -- Neo4j ----------------------------------------------------------------------------------

def neo4j_change_step(touched: Iterable[str], units: Iterable[str] | None = None) -> tuple[str, dict[str, Any]]:
    """The statement (and its parameters) the Neo4j store runs last inside the transaction that
    makes a batch visible, so the change log commits atomically with the batch. ``units``: the
    unit ids stored, removed or brought back (None: not known, readers' unit indexes rebuild)."""
    ids, everything = _listing(touched)
    return cypher.load("changes_record"), {"touched": ids, "all": everything, "by": current_user(),
                                           "units": None if everything else _unit_listing(units)}


# -- embedded store ---------------------------------------------------------------------------

# One transaction: a new log's tables cost one commit (each statement on its own would be a
# commit, and a sync, of its own). ``units`` is in the table from the start; a log made before
# it existed gets the column in _connect.
_SCHEMA = """
BEGIN;
CREATE TABLE IF NOT EXISTS changes (seq INTEGER PRIMARY KEY, touched TEXT NOT NULL, everything INTEGER NOT NULL,
                                    by TEXT, at REAL NOT NULL, units TEXT);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
COMMIT;
"""


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite_file.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(_SCHEMA)
    if "units" not in {r[1] for r in db.execute("PRAGMA table_info(changes)")}:
        try:  # a log written before units were listed: its rows read as "not listed" (NULL)
            db.execute("ALTER TABLE changes ADD COLUMN units TEXT")
        except sqlite3.OperationalError as exc:  # another process added it first
            if "duplicate column" not in str(exc):
                raise
    return db


def record_embedded_change(store_dir: Path | str, touched: Iterable[str], *, everything: bool = False,
                           units: Iterable[str] | None = None) -> int:
    """Called by the embedded store under its write lock, before the batch is made durable.
    ``units``: the unit ids stored, removed or brought back (None: not known)."""
    ids, too_many = _listing(touched)
    if everything or too_many:
        ids, everything = [], True
    return _append(Path(store_dir), lambda own: own + 1, ids, everything, None if everything else _unit_listing(units))


def carry_version(old_dir: Path | str, new_dir: Path | str) -> int:
    """A store directory built beside the old one (``kg restore --replace``, ``kg doctor --salvage``)
    is about to replace it: give the new one's change log a version above the old one's, with an
    "everything" change on top, so every reader clears its caches. Its own count (from the
    batches it was built with) could otherwise equal a version a reader already saw. When the
    old log cannot be read (a damaged store), the clock's seconds stand in: above any count."""
    prev: int | None = None
    old_file = Path(old_dir) / CHANGES_FILE
    if old_file.exists():
        try:
            feed = SqliteChangeFeed(old_dir)
            try:
                prev = feed.version()
            finally:
                feed.close()
        except ServiceFileError:
            prev = None
    floor = prev if prev is not None else int(time.time())
    return _append(Path(new_dir), lambda own: max(own, floor) + 1, [], True)


def _append(store_dir: Path, next_version: Callable[[int], int], ids: list[str], everything: bool,
            units: list[str] | None = None) -> int:
    """One change-log row and the version it sets, in one immediate transaction (a concurrent
    writer waits for the lock instead of reading the same version)."""
    db = _connect(store_dir / CHANGES_FILE)
    try:
        db.execute("BEGIN IMMEDIATE")
        row = db.execute("SELECT v FROM meta WHERE k = 'version'").fetchone()
        seq = next_version(row[0] if row else 0)
        db.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('version', ?)", (seq,))
        db.execute("INSERT INTO changes(seq, touched, everything, by, at, units) VALUES (?, ?, ?, ?, ?, ?)",
                   (seq, json.dumps(ids, ensure_ascii=False), int(everything), current_user(), time.time(),
                    None if units is None else json.dumps(units, ensure_ascii=False)))
        db.execute("COMMIT")
        return seq
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    finally:
        db.close()


class SqliteChangeFeed:
    def __init__(self, store_dir: Path | str):
        self.path = Path(store_dir) / CHANGES_FILE
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()  # one connection, used from any request thread

    def _query(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self._lock:
            if self._db is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                try:
                    self._db = _connect(self.path)
                except ServiceFileError as exc:
                    if exc.damaged or sql.lstrip().upper().startswith("DELETE") or not self.path.exists():
                        raise
                    return self._read_once(sql, params)
            cur = self._db.execute(sql, params)
            return cur.fetchall() if cur.description else [(cur.rowcount,)]

    def _read_once(self, sql: str, params: tuple) -> list[tuple]:
        """A read on a disk that cannot be written (full, or read-only): opening a WAL database
        the usual way creates its index file (``-shm``), which fails there ("disk I/O error")
        although nothing is to be written. Read it as an immutable file, on a connection of its
        own that is not kept: while the disk refuses writes no writer can append, and the next
        read opens the usual connection again once it can.

        An immutable read sees the main file only. That is exact when no write-ahead file is
        left, the case this is for (the usual open failed making one). Committed changes still in
        a write-ahead file (another process holds the log open) would be missed, and a version
        read behind the data would stamp caches with it: refuse then, as the usual open did."""
        wal = self.path.with_name(self.path.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise ServiceFileError(
                f"{self.path}: the change log cannot be opened (the disk is full or read-only) and its "
                "latest changes are still in its write-ahead file, which only that open reads; free "
                "some space", path=self.path, errno=errno.ENOSPC)
        db = sqlite_file.connect(f"file:{self.path}?mode=ro&immutable=1", uri=True, check_same_thread=False)
        db.path = self.path  # type: ignore[attr-defined]  # errors name the file, not the URI
        try:
            return db.execute(sql, params).fetchall()
        finally:
            db.close()

    def version(self) -> int:
        rows = self._query("SELECT v FROM meta WHERE k = 'version'")
        return int(rows[0][0]) if rows else 0

    def since(self, after: int, upto: int) -> list[Change]:
        try:
            rows = self._query("SELECT seq, touched, everything, by, units FROM changes WHERE seq > ? AND seq <= ? "
                               "ORDER BY seq", (after, upto))
        except sqlite3.OperationalError as exc:  # a log from before units were listed, read where it cannot be upgraded
            if "units" not in str(exc):
                raise
            rows = [r + (None,) for r in self._query("SELECT seq, touched, everything, by FROM changes "
                                                     "WHERE seq > ? AND seq <= ? ORDER BY seq", (after, upto))]
        return [Change(seq=s, touched=json.loads(t), everything=bool(e), by=b,
                       units=None if un is None else json.loads(un)) for s, t, e, b, un in rows]

    def prune(self, keep: int = 10_000) -> int:
        below = self.version() - max(0, keep)
        return int(self._query("DELETE FROM changes WHERE seq <= ?", (below,))[0][0]) if below > 0 else 0

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


# -- reading the version: one round trip shared by concurrent requests ------------------------

_arrived: ContextVar[float | None] = ContextVar("kg_request_arrived", default=None)


@contextmanager
def request_arrived(at: float | None = None) -> Iterator[None]:
    """Mark the start of one request (the server does it when a request arrives): inside this
    block :meth:`VersionClock.read` may answer with any version read that *started* at or after
    ``at``, so the key check and the cache sync of one request share one read, and concurrent
    requests share one round trip. A context variable: it follows the request into its worker
    thread (anyio copies the context) and never leaks into another request."""
    token = _arrived.set(time.monotonic() if at is None else at)
    try:
        yield
    finally:
        _arrived.reset(token)


@contextmanager
def request_scope() -> Iterator[None]:
    """:func:`request_arrived` unless a request is already marked (the server marks each one):
    a call that reads the version several times (``retrieve`` consults the label index and the
    BM25 index, each stamped with the version) makes one read, and inside a server request it
    shares the read the request already made."""
    if _arrived.get() is not None:
        yield
        return
    with request_arrived():
        yield


class VersionClock:
    """The store's change-log version, read single-flight.

    Coherence rule (why this is not a TTL): a caller gets a version from a read that started
    no earlier than its request arrived (:func:`request_arrived`; outside a request, no earlier
    than the call). Any change committed before the request arrived is therefore seen, exactly
    as with a read of its own; a request never waits for a read that began before it did. What
    is saved is only the duplicate round trips of requests that overlap: on 32 concurrent
    clients one read answers every request that arrived while the previous read was in flight.
    ``reads`` / ``calls`` count round trips and callers (the saving, in /metrics and the bench).
    """

    def __init__(self, feed: ChangeFeed):
        self.feed = feed
        self._lock = threading.Lock()
        self._last: tuple[float, int] | None = None  # (monotonic start of the read, version)
        self._flight: tuple[float, threading.Event, list[Any]] | None = None  # read in progress
        self.reads = 0
        self.calls = 0
        self.ahead = 0  # calls of recent() answered from a read that started before their request
        self._ahead_q: queue.SimpleQueue[tuple[float, threading.Event, list[Any]]] | None = None
        self._aflight: tuple[float, Any, Any] | None = None  # (start, asyncio future, loop): the latest async read
        self._anext: Any = None  # the future of the read queued behind a running one (aread)

    def _not_before(self) -> float:
        at = _arrived.get()
        return time.monotonic() if at is None else at

    def peek(self) -> int | None:
        """The version, if a read that started after this request arrived has already
        finished; else None. Never waits (not even for the lock): safe on an event loop."""
        not_before = self._not_before()
        if not self._lock.acquire(blocking=False):
            return None
        try:
            if self._last is not None and self._last[0] >= not_before:
                self.calls += 1
                return self._last[1]
            return None
        finally:
            self._lock.release()

    async def aread(self) -> int:
        """:meth:`read` for an event loop, batching concurrent requests: if a read is running
        that started before this request arrived, the request waits for the *next* read, which
        starts when the running one ends and answers every request that arrived meanwhile. So
        under load there is about one round trip (and one thread hop) per round-trip time, not
        one per request, and each answer still comes from a read that started after its
        request arrived. Reads run in the default executor as their own futures: a caller that
        goes away (client disconnect) does not cancel a read others wait for."""
        import asyncio

        not_before = self._not_before()
        loop = asyncio.get_running_loop()
        with self._lock:
            self.calls += 1
            if self._last is not None and self._last[0] >= not_before:
                return self._last[1]
            cur = self._aflight
            if cur is not None and cur[2] is loop and cur[0] >= not_before:
                future = cur[1]  # started after we arrived: its answer is good for us
            elif cur is not None and cur[2] is loop and not cur[1].done():
                if self._anext is None:  # queue for the read that starts when this one ends
                    self._anext = loop.create_future()
                    cur[1].add_done_callback(lambda _f: self._start_next(loop))
                future = self._anext
            else:
                future = self._start(loop)
        return await asyncio.shield(future)

    def _start(self, loop: Any) -> Any:
        """Start one read in the default executor (caller holds the lock)."""
        started = time.monotonic()
        future = loop.run_in_executor(None, self._read_from, started)
        future.add_done_callback(lambda f: f.cancelled() or f.exception())  # retrieved even if nobody waits
        self._aflight = (started, future, loop)
        self.reads += 1
        return future

    def _start_next(self, loop: Any) -> None:
        """On the loop, when a read ends: start the read the queued requests wait for."""
        with self._lock:
            waiting, self._anext = self._anext, None
            if waiting is None:
                return
            future = self._start(loop)

        def deliver(f: Any) -> None:
            if waiting.done():
                return
            if f.cancelled():
                waiting.cancel()
            elif f.exception() is not None:
                waiting.set_exception(f.exception())
            else:
                waiting.set_result(f.result())

        future.add_done_callback(deliver)
        waiting.add_done_callback(lambda f: f.cancelled() or f.exception())

    def _read_from(self, started: float) -> int:
        version = int(self.feed.version())
        with self._lock:
            if self._last is None or self._last[0] < started:
                self._last = (started, version)
        return version

    def recent(self, max_age: float) -> int:
        """A version from a read that started at most ``max_age`` seconds before this request
        arrived, without waiting for a round trip when one has finished (else :meth:`read`).

        For a request that accepts a bounded-stale reply (no bookmark: a cluster secondary may
        lag as much) and only through the caches (:meth:`Caches.front_stale`): a cached ask then
        makes no round trip of its own while requests keep the clock fresh. When the version it
        returns comes from a read that started before the request arrived, one read is started
        in a background thread (never two at once), so the next request gets a newer version; a
        caller of :meth:`read` whose request arrived before that read started shares it. The
        staleness this adds is bounded by ``max_age``: a change committed more than ``max_age``
        before the request arrived is always seen (the read used started after it)."""
        arrived = self._not_before()
        with self._lock:
            last = self._last
            if last is None or last[0] < arrived - max_age:
                last = None
            else:
                self.calls += 1
                if last[0] < arrived:  # read before this request arrived: read ahead for the next ones
                    self.ahead += 1
                    if self._flight is None:
                        mine: tuple[float, threading.Event, list[Any]] = (time.monotonic(), threading.Event(), [])
                        self._flight = mine
                        self.reads += 1
                        if self._ahead_q is None:  # one reader thread per clock (a store session of its own)
                            self._ahead_q = queue.SimpleQueue()
                            threading.Thread(target=self._read_ahead, name="kg-version-read", daemon=True).start()
                        self._ahead_q.put(mine)
        return self.read() if last is None else last[1]

    def _read_ahead(self) -> None:
        """The reader thread of :meth:`recent`: one read per flight queued (a failed read is
        the next :meth:`read`'s to report; its waiters read again)."""
        assert self._ahead_q is not None
        while True:
            mine = self._ahead_q.get()
            started, done, box = mine
            try:
                box.extend((True, self._read_from(started)))
            except Exception:
                box.extend((False, None))
            finally:
                with self._lock:
                    if self._flight is mine:
                        self._flight = None
                done.set()

    def read(self) -> int:
        not_before = self._not_before()
        while True:
            with self._lock:
                self.calls += 1
                if self._last is not None and self._last[0] >= not_before:
                    return self._last[1]
                flight = self._flight
                if flight is None or flight[0] < not_before:
                    mine: tuple[float, threading.Event, list[Any]] = (time.monotonic(), threading.Event(), [])
                    self._flight = mine
                    self.reads += 1
                    break
            flight[1].wait()  # a read that started after this request arrived: its answer is good here
            answer = flight[2]  # (True, version) when that read succeeded
            if answer and answer[0]:
                return answer[1]
            self.calls -= 1  # that read failed: try with our own (its error is reported to its caller)
        started, done, box = mine
        try:
            version = self._read_from(started)
            box.extend((True, version))
            return version
        except BaseException:
            box.extend((False, None))
            raise
        finally:
            with self._lock:
                if self._flight is mine:
                    self._flight = None
            done.set()


def bump_version(store: Any, by: str | None = None) -> int | None:
    """Log a change that touches no node (API keys created or revoked): every server's
    :class:`VersionClock` sees the version move on its next request, so an in-memory key table
    keyed by version is dropped and a revocation takes effect on the next request. Caches
    replay it as a no-op. Returns the new version (None for a store without a change log)."""
    return record_change(store, [], by=by)


def record_change(store: Any, touched: Iterable[str], *, everything: bool = False, by: str | None = None) -> int | None:
    """Log a change made outside an ingest (admin: restore, repair, salvage, wipe; key changes):
    ``touched`` node ids, or ``everything`` (readers clear their caches). Returns the new version
    (None for a store without a change log); each store writes its own (``store.log_change``)."""
    with attributed(by if by is not None else current_user()):
        return store.log_change(touched, everything=everything)


def change_feed(store: Any) -> ChangeFeed | None:
    """The change log of a store, or None for a store that keeps none (caches then fall back
    to comparing the unit count, which clears everything on any change)."""
    return store.change_feed()

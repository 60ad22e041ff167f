"""The four caches of DESIGN §5, persisted in one SQLite file under the data directory.

Every entry records the node ids it depends on (``deps``); :meth:`Caches.invalidate` drops
every entry that depends on any of the given nodes, and the knowledge base calls it with
the nodes each ingest touched (invariant 5). :meth:`Caches.put` refuses an entry without a
dependency: there is no entry without an invalidation condition. The one dependency that
is not a node, :data:`ANY_INGEST`, is fired by every ingest that adds a unit; it is used
only where nothing narrower is true (a question in which no key node was found).

``topk`` entries have one more condition: a node that did not exist when the search ran
can enter a top-k list without touching the query node. So each ``topk`` entry keeps its
query vector and its *bar* (the lowest cosine that would have been admitted: the
threshold, or the k-th score when the list was full); an ingest whose touched nodes have a
stored vector at or above the bar invalidates it.

Other processes' writes (another server or worker on a shared Neo4j, a crash between the
graph write and the invalidation) are caught by :meth:`sync_store`, called before a query
serves from the caches: with a change log (:mod:`kgservice.stores.changelog`) it replays the
changes since the version this cache file last saw and invalidates exactly their touched
nodes, and clears everything only when the log cannot say (pruned, store wiped, a batch too
large to list). Without one it falls back to the unit count, which clears everything.

Bounded staleness (docs/jobs-and-caches.md, "Stale replies during a catch-up"): the front's
whole results of the previous version are kept aside when the version moves (:meth:`front_stale`,
:meth:`stale_peek`), and a caller that says a stale reply is acceptable (a server request that
carries no bookmark) gets one while its refresh runs in the background, for at most
``stale_seconds`` after a newer version was first seen; each background refresh's result is
kept the same way (:meth:`keep_refreshed`), for at most ``2 × stale_seconds`` after that
refresh began, so under a steady stream of changes the bound restarts at each refresh. Nothing else reads them: every other
lookup keeps the rule that a value is never older than the version its request observed.

The caches are an optimisation, so a cache file that cannot be written (a full or read-only
disk) never fails a read: the first failed write switches this process to empty in-memory
caches (``degraded`` says why), so no entry that might have missed an invalidation is ever
served. Only an explicit :meth:`clear` reports the failure (:class:`CacheWriteError`).
"""

from __future__ import annotations

import json
import logging
import queue
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from kgservice.caches.switching import prompt_switching
from kgservice.stores import causal
from kgservice.stores.changelog import Change, ChangeFeed, VersionClock
from kgservice.errors import InvalidArgument, ServiceError, ServiceFileError

CACHES: dict[str, str] = {
    "key_nodes": "question -> key nodes + key predicates (4.1); deps: the key node ids and their ≡ classes",
    "topk": "query node -> vector top-k (4.2); deps: the query node, its hits, and new nodes within the bar",
    "activation": "(seeds, τ, ε, K) -> activation energies (4.3); deps: every node that received energy",
    "decision": "(hit-unit signature, question) -> drill-down decision or answer (4.4, 4.5); deps: those units' nodes + key nodes",
}
# Caches held only in the in-memory front (whole results at one change-log version, see
# Caches.memo): nothing in the file, so no dependency rows; counted like the others.
MEMORY_CACHES: dict[str, str] = {
    "expand": "(seeds, mode, every parameter) -> expansion result; in memory, valid at one change-log version",
}
ANY_INGEST = "*"
VECTOR_CHUNK = 256  # touched nodes' vectors per read in a replay's top-k check (see Caches._topk_entered)
FRONT_SIZE = 512  # whole results (answers, expansions) kept in memory per process (see Caches.front_get)
log = logging.getLogger(__name__)

_SCHEMA = """
BEGIN;
CREATE TABLE IF NOT EXISTS entries (
  cache TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, created REAL NOT NULL,
  hits INTEGER NOT NULL DEFAULT 0, qvec BLOB, bar REAL, PRIMARY KEY (cache, key));
CREATE TABLE IF NOT EXISTS deps (
  cache TEXT NOT NULL, key TEXT NOT NULL, node TEXT NOT NULL, PRIMARY KEY (cache, key, node));
CREATE INDEX IF NOT EXISTS deps_node ON deps(node);
CREATE TABLE IF NOT EXISTS counters (
  cache TEXT PRIMARY KEY, hits INTEGER NOT NULL DEFAULT 0, misses INTEGER NOT NULL DEFAULT 0,
  puts INTEGER NOT NULL DEFAULT 0, invalidated INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT);
COMMIT;
"""  # one transaction: a new file's five statements cost one commit (and its syncs), not five


class CacheWriteError(ServiceError, OSError):
    """The cache file could not be written (full or read-only disk)."""


class Caches:
    def __init__(
        self,
        path: Path | str | None,
        *,
        store_state: Callable[[], int] | None = None,
        vectors: Callable[[], Any] | None = None,
        changes: ChangeFeed | None = None,
        read_only: bool = False,
        clock: VersionClock | None = None,
        stale_seconds: float = 0.0,
        stale_read_seconds: float = 0.0,
    ):
        """``path`` None keeps the caches in memory. ``changes`` is the store's change log
        (preferred); ``store_state`` returns the store's unit count (the fallback without
        one); ``vectors`` returns an *already open* vector store or None (the top-k bar
        check never opens one just to invalidate). ``read_only`` (KG_READ_ONLY) refuses
        :meth:`clear`; answering still caches, since a read-only user's caches speed up only
        their own reads. ``clock`` reads the version of ``changes`` (the store's own clock,
        :meth:`GraphStore.version_clock`, so the caches and the indexes built from the store
        share one read per request); without it the caches make their own. ``stale_seconds``
        bounds a stale reply (:meth:`front_stale`; 0: none is ever given). ``stale_read_seconds``:
        how long before its arrival a version read may have started for a request that accepts a
        stale reply (:meth:`_request_version`; 0, or no stale replies: every request reads after
        it arrived)."""
        self.read_only = read_only
        self.path = Path(path) if path is not None else None
        self._lock = threading.RLock()
        self.store_state = store_state
        self.vectors = vectors
        self.changes = changes
        # the version read, shared by concurrent requests (and by the server's key check)
        self.clock = clock if clock is not None else VersionClock(changes) if changes is not None else None
        self._seen: int | None = None  # the change-log version this file reflects, as last read here
        self._request = threading.local()  # per request thread: the version it observed at sync
        self.last_sync: dict[str, Any] = {}
        self.session: dict[str, dict[str, int]] = {c: {"hits": 0, "misses": 0} for c in {**CACHES, **MEMORY_CACHES}}
        self.degraded: str | None = None  # why this process runs on in-memory caches instead of the file
        self._pending: dict[tuple[str, str], int] = {}  # (cache, hits|misses) -> lookups not yet written
        self._pending_hits: dict[tuple[str, str], int] = {}  # (cache, key) -> hits not yet written
        # key -> (version, value, cache hits it stands for): whole results, valid at one version
        self._front: OrderedDict[str, tuple[int, Any, dict[str, int]]] = OrderedDict()
        # bounded staleness (front_stale): front entries of versions since superseded, and the
        # latest background refresh's result of each key, with the monotonic time until which each
        # may be served; served only to callers that accept it
        self.stale_seconds = float(stale_seconds)
        self.stale_read_seconds = float(stale_read_seconds)
        self.monotonic: Callable[[], float] = time.monotonic  # tests replace it (no wall clock in tests)
        # key -> (version, value, cache hits it stands for, monotonic time until which it may be served)
        self._previous: OrderedDict[str, tuple[int, Any, dict[str, int], float]] = OrderedDict()
        self._newer_at: float | None = None  # when a version newer than _seen was first observed
        # bumped by whatever drops every stale entry (a local write, a clear, a reset): a refresh
        # result computed across it is not kept (see keep_refreshed)
        self._epoch = 0
        self._refreshing: set[str] = set()  # keys whose refresh is queued or running
        # guards _newer_at, _refreshing and the queue: a stale lookup never waits for the main
        # lock, which a replay holds through its reads of the change log (the catch-up itself)
        self._stale_lock = threading.Lock()
        self._refresh_q: queue.Queue[tuple[str, Callable[[], None]] | None] = queue.Queue()
        self._refresher: threading.Thread | None = None
        self._closed = False
        self.stale_served = 0  # replies given from a superseded version (tests, /metrics, the bench)
        self.refreshes = 0  # background refreshes finished
        self.refresh_kept = 0  # refresh results kept for stale replies (keep_refreshed)
        try:
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path) if self.path else ":memory:", timeout=30,
                                       check_same_thread=False)
            self._db.executescript(_SCHEMA)
            self._db.commit()
        except (sqlite3.Error, OSError) as exc:
            if self.path is None:
                raise
            self._db = sqlite3.connect(":memory:", check_same_thread=False)
            self._degrade(exc)

    def _degrade(self, exc: BaseException) -> None:
        """Drop to empty in-memory caches for the rest of this process (see the module doc)."""
        try:
            self._db.close()
        except sqlite3.Error:
            pass
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.executescript(_SCHEMA)
        self.degraded = f"cache file {self.path} not writable ({exc}); caching off for this run"

    def _writing(self, op: Callable[[], Any], fallback: Any) -> Any:
        """Run a read path's cache write; on a write failure degrade and return ``fallback``."""
        with self._lock:
            try:
                return op()
            except sqlite3.OperationalError as exc:
                self._write_failed(exc)
                return fallback

    def _write_failed(self, exc: Exception) -> None:
        """The file could not be written: roll back and degrade (a second failure, in memory, is a bug)."""
        with self._lock:
            if self.degraded is not None:
                raise exc
            try:
                self._db.rollback()
            except sqlite3.Error:
                pass
            self._degrade(exc)

    # -- entries ---------------------------------------------------------------------------
    @staticmethod
    def _check(cache: str) -> None:
        if cache not in CACHES:
            raise InvalidArgument(f"unknown cache {cache!r}; known: {', '.join(CACHES)}")

    def _count(self, cache: str, column: str, n: int = 1) -> None:
        self._db.execute("INSERT OR IGNORE INTO counters(cache) VALUES (?)", (cache,))
        self._db.execute(f"UPDATE counters SET {column} = {column} + ? WHERE cache = ?", (n, cache))

    def get(self, cache: str, key: str) -> Any | None:
        self._check(cache)

        def op() -> Any:
            row = self._db.execute("SELECT value FROM entries WHERE cache = ? AND key = ?", (cache, key)).fetchone()
            # A lookup writes nothing: its counters wait in memory for the next write (put,
            # invalidate, clear), `stats` or `close`. Counting every hit with a commit would cost
            # an fsync per lookup, and concurrent cached asks would queue on it.
            column = "misses" if row is None else "hits"
            self._pending[(cache, column)] = self._pending.get((cache, column), 0) + 1
            if row is not None:
                self._pending_hits[(cache, key)] = self._pending_hits.get((cache, key), 0) + 1
            return row

        row = self._writing(op, None)
        self.session[cache]["misses" if row is None else "hits"] += 1
        return None if row is None else json.loads(row[0])

    def _tally(self, cache: str, column: str, n: int = 1) -> None:
        """Count lookups answered without the file (the front): in the session counts now, in
        the file's counters at the next write (as :meth:`get` does). Caller holds the lock."""
        self.session[cache][column] += n
        self._pending[(cache, column)] = self._pending.get((cache, column), 0) + n

    def _flush_counts(self) -> None:
        """Write the lookups' counters (inside a write transaction the caller commits)."""
        pending, hits = self._pending, self._pending_hits
        self._pending, self._pending_hits = {}, {}
        for (cache, column), n in pending.items():
            self._count(cache, column, n)
        self._db.executemany("UPDATE entries SET hits = hits + ? WHERE cache = ? AND key = ?",
                             [(n, cache, key) for (cache, key), n in hits.items()])

    def _flush_and_commit(self) -> None:
        self._flush_counts()
        self._db.commit()

    def put(self, cache: str, key: str, value: Any, deps: Iterable[str], *,
            qvec: Any = None, bar: float | None = None) -> None:
        self._check(cache)
        dep_set = sorted({d for d in deps if d})
        if not dep_set:
            raise ValueError(f"cache entry {cache}/{key[:12]} has no dependency: every entry needs an invalidation "
                             f"condition (use ANY_INGEST if nothing narrower is true)")
        if cache == "topk" and (qvec is None or bar is None):
            raise ValueError("topk entries need the query vector and the admission bar")
        if qvec is None:
            blob = None
        else:
            import numpy as np  # here, not at import: a server opens its caches before it listens

            blob = np.asarray(qvec, dtype=np.float32).tobytes()
        def op() -> None:
            if self._stale_since_observed(cache, set(dep_set)):
                return  # computed from data another process has changed since: not cached
            self._put(cache, key, value, dep_set, blob, bar)

        self._writing(op, None)

    def _put(self, cache: str, key: str, value: Any, dep_set: list[str], blob: bytes | None,
             bar: float | None) -> None:
        self._flush_counts()
        self._db.execute("DELETE FROM deps WHERE cache = ? AND key = ?", (cache, key))
        self._db.execute("INSERT OR REPLACE INTO entries(cache, key, value, created, hits, qvec, bar) "
                         "VALUES (?, ?, ?, ?, 0, ?, ?)",
                         (cache, key, json.dumps(value, ensure_ascii=False), time.time(), blob, bar))
        self._db.executemany("INSERT OR IGNORE INTO deps(cache, key, node) VALUES (?, ?, ?)",
                             [(cache, key, d) for d in dep_set])
        self._count(cache, "puts")
        self._db.commit()

    def deps_of(self, cache: str, key: str) -> set[str]:
        rows = self._db.execute("SELECT node FROM deps WHERE cache = ? AND key = ?", (cache, key)).fetchall()
        return {r[0] for r in rows}

    def keys(self, cache: str | None = None) -> list[tuple[str, str]]:
        q = "SELECT cache, key FROM entries" + (" WHERE cache = ?" if cache else "") + " ORDER BY cache, key"
        return [(r[0], r[1]) for r in self._db.execute(q, (cache,) if cache else ())]

    def entries_depending_on(self, node_ids: Iterable[str]) -> set[tuple[str, str]]:
        ids = sorted(set(node_ids))
        out: set[tuple[str, str]] = set()
        for i in range(0, len(ids), 500):
            part = ids[i:i + 500]
            q = f"SELECT DISTINCT cache, key FROM deps WHERE node IN ({','.join('?' * len(part))})"
            out |= {(r[0], r[1]) for r in self._db.execute(q, part)}
        return out

    # -- invalidation ----------------------------------------------------------------------
    def _delete(self, victims: Iterable[tuple[str, str]]) -> int:
        n = 0
        for cache, key in victims:
            cur = self._db.execute("DELETE FROM entries WHERE cache = ? AND key = ?", (cache, key))
            self._db.execute("DELETE FROM deps WHERE cache = ? AND key = ?", (cache, key))
            if cur.rowcount:
                n += 1
                self._count(cache, "invalidated")
        return n

    def invalidate(self, node_ids: Iterable[str]) -> int:
        """Drop every entry that depends on one of these nodes (and ``topk`` entries one of
        them now enters); returns how many entries were dropped."""
        ids = {i for i in node_ids if i}
        self._front.clear()
        self._drop_stale()  # this process wrote: nothing from before its write is served, even stale

        def op() -> int:
            n = 0
            # an empty cache has nothing to drop: skip ~60 lookups per 30k touched nodes (an ingest's)
            if ids and self._db.execute("SELECT 1 FROM entries LIMIT 1").fetchone():
                n += self._delete(self.entries_depending_on(ids | {ANY_INGEST}))
                n += self._delete(self._topk_entered(ids))
            self._record_store_state()
            self._db.commit()
            return n

        # degraded: the file keeps its old unit count, so the next process's sync_store clears it
        return int(self._writing(op, 0))

    def _topk_entered(self, ids: set[str], unseen: bool = False) -> set[tuple[str, str]]:
        """``topk`` entries a touched node may now enter. ``unseen``: the nodes were written
        by another process, whose new nodes may not have vectors here yet (not embedded yet,
        or no vector store open in this process); then every topk entry counts as entered —
        they are a vector search away from being recomputed.

        The touched nodes' vectors are read :data:`VECTOR_CHUNK` at a time, and the reads stop
        once every entry is known to be entered. Why: a replay of another server's 1k-unit
        ingest touches ~2.5k nodes, and their 512-d vectors read at once are one long decode
        that holds the interpreter lock, so the requests this process answers meanwhile (stale
        replies included) wait for it; short reads let them in between."""
        rows = self._db.execute("SELECT key, qvec, bar FROM entries WHERE cache = 'topk' AND qvec IS NOT NULL").fetchall()
        if not rows:
            return set()
        store = self.vectors() if self.vectors is not None else None
        wanted = sorted(i for i in ids if not i.startswith("lit:"))
        if store is None:
            return {("topk", key) for key, _, _ in rows} if unseen and wanted else set()
        import numpy as np

        out: set[tuple[str, str]] = set()
        for start in range(0, len(wanted), VECTOR_CHUNK):
            part = wanted[start:start + VECTOR_CHUNK]
            vecs = store.get_vectors(part)
            if unseen and len(vecs) < len(part):
                return {("topk", key) for key, _, _ in rows}
            if not vecs:
                continue
            m = np.stack(list(vecs.values()))
            for key, blob, bar in rows:
                q = np.frombuffer(blob, dtype=np.float32)
                if ("topk", key) not in out and q.shape[0] == m.shape[1] and float(np.max(m @ q)) >= float(bar) - 1e-6:
                    out.add(("topk", key))
            if len(out) == len(rows):
                break  # every entry is dropped already: the rest of the vectors cannot change that
        return out

    # -- whole-cache operations --------------------------------------------------------------
    def _record_store_state(self) -> None:
        if self.store_state is not None:
            self._db.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('store_units', ?)", (str(self.store_state()),))

    def sync_store(self) -> bool:
        """Bring the caches up to date with the store before serving from them; True if that
        had to clear everything (details in :attr:`last_sync`)."""
        if self.changes is not None:
            try:
                return self._replay_changes()  # reads the version outside the lock (a Neo4j round trip)
            except sqlite3.OperationalError as exc:  # the cache file cannot be written: as _writing does
                self._write_failed(exc)
                return True
            except ServiceFileError as exc:  # the change log cannot be read or written (a read-only disk)
                if exc.damaged:
                    raise  # named, with its repair
                self._write_failed(exc)
                return True
        if self.store_state is None:
            return False
        now = str(self.store_state())
        return bool(self._writing(lambda: self._sync(now), False))

    def _sync(self, now: str) -> bool:
        row = self._db.execute("SELECT v FROM meta WHERE k = 'store_units'").fetchone()
        if row is not None and row[0] == now:
            return False
        had = self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
        if had:
            self._clear_entries()
        self._db.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('store_units', ?)", (now,))
        self._db.commit()
        return bool(had)

    # -- the change log (other processes' ingests) ---------------------------------------------
    def _stored_seen(self) -> int | None:
        row = self._db.execute("SELECT v FROM meta WHERE k = 'seen_version'").fetchone()
        return None if row is None else int(row[0])

    def _request_version(self) -> int:
        """The store's version for this request. A request that accepts a stale reply (a server
        request without a bookmark, :func:`causal.stale_allowed`) takes a version read that
        started up to ``stale_read_seconds`` before it arrived, without waiting for a round trip
        (:meth:`VersionClock.recent`): the one Neo4j round trip a cached ask made was its stall
        while another server's ingests kept the database busy (scripts/bench/RESULTS.md, "The
        version round trip"). Every other caller reads after its request arrived, as before."""
        assert self.clock is not None
        if self.stale_read_seconds > 0 and self.stale_seconds > 0 and causal.stale_allowed():
            return self.clock.recent(self.stale_read_seconds)
        return self.clock.read()

    def _replay_changes(self) -> bool:
        """One version read per call; the replay itself only when the version moved."""
        t0 = time.perf_counter()
        assert self.clock is not None and self.changes is not None  # sync_store calls this only with a change log
        version = self._request_version()
        if self._seen is not None and version < self._seen:
            # a read that began before the one these caches last replayed to (a concurrent
            # request's, or a version read ahead of this request): a reset of the store only if
            # a read begun after this request arrived says so too, else every cache is cleared
            # for nothing
            version = self.clock.read()
        self._request.observed = version
        if version == self._seen:
            self.last_sync = {"version": version, "replayed": 0, "invalidated": 0, "cleared": False,
                              "seconds": time.perf_counter() - t0}
            return False
        with self._lock:  # single flight: one thread replays, the others find it done
            seen = self._stored_seen()
            replayed, dropped, cleared, why = 0, 0, False, ""
            if seen is None or version < seen:
                why = "no version recorded for these caches" if seen is None else "the store was reset"
            elif version > seen:
                changes = self.changes.since(seen, version)
                replayed = len(changes)
                if [c.seq for c in changes] != list(range(seen + 1, version + 1)):
                    why = "the change log was pruned past this cache's version"
                elif any(c.everything for c in changes):
                    why = "a change too large to list"
                else:
                    touched = {n for c in changes for n in c.touched}
                    if touched:
                        dropped = self._delete(self.entries_depending_on(touched | {ANY_INGEST}))
                        dropped += self._delete(self._topk_entered(touched, unseen=True))
            if why:
                had = self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
                dropped, cleared = self._clear_entries(), bool(had)
                self._front.clear()
                self._drop_stale()  # a reset or a change the log cannot list: not even a stale reply
            else:
                self._supersede()  # stamped with an older version: never served fresh again
            self._db.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('seen_version', ?)", (str(version),))
            self._db.commit()
            self._seen = version
        self.last_sync = {"version": version, "replayed": replayed, "invalidated": dropped, "cleared": cleared,
                          "reason": why, "seconds": time.perf_counter() - t0}
        return cleared

    # -- the in-memory front: whole results of pure cache hits ----------------------------------
    def observed_version(self) -> int | None:
        """The change-log version this request (thread) observed at its last :meth:`sync_store`."""
        return getattr(self._request, "observed", None) if self.clock is not None else None

    def front_get(self, key: str) -> Any | None:
        """A whole result stored by :meth:`front_put` at the version this request observed, else None.

        Why it is safe: the value was computed from these caches alone (no LLM call) at that
        change-log version, so recomputing it now would read the same store and the same
        entries (any change to either moves the version or clears this front: ``invalidate``,
        ``clear`` and every replay do). Why it exists: a cached ``ask`` still makes a dozen
        graph reads on Neo4j (expansion, unit texts); on 32 concurrent clients that, not the
        LLM, was the p95. The hit is counted as the cache hits it stands for (per cache, in
        ``stats`` and the session counts), not per entry. Treat the value as read-only."""
        observed = self.observed_version()
        if observed is None or self.degraded is not None:
            return None
        with self._lock:
            hit = self._front.get(key)
            if hit is None or hit[0] != observed:
                return None
            self._front.move_to_end(key)
            _, value, counts = hit
            for cache, n in counts.items():
                if n:
                    self._tally(cache, "hits", n)
        return value

    def front_peek(self, key: str) -> Any | None:
        """:meth:`front_get` that never waits, for an event loop: a hit only when the version
        is already known for this request (:meth:`VersionClock.peek`), this process has
        replayed up to it (nothing to invalidate first) and the lock is free; otherwise None
        and the caller takes the ordinary path (``ask`` in a worker thread)."""
        if self.clock is None or self.degraded is not None:
            return None
        version = self.clock.peek()
        if version is None or version != self._seen:
            return None
        if not self._lock.acquire(blocking=False):
            return None
        try:
            self._request.observed = version
            return self.front_get(key)
        finally:
            self._lock.release()

    def front_put(self, key: str, value: Any, hits: dict[str, int]) -> bool:
        """Keep a result computed with no LLM call, stamped with the version this request
        observed before computing it (a change landing meanwhile moves the version: no hit).
        False when it was not kept (no version observed, degraded, or the version moved)."""
        observed = self.observed_version()
        if observed is None or self.degraded is not None:
            return False
        with self._lock:
            if self._seen != observed:  # another request replayed a newer change meanwhile
                return False
            self._front[key] = (observed, value, dict(hits))
            self._front.move_to_end(key)
            while len(self._front) > FRONT_SIZE:
                self._front.popitem(last=False)
        return True

    # -- bounded staleness: the previous version's whole results while a refresh runs ----------
    def _supersede(self) -> None:
        """The version moved (a replay): the front's entries become stale ones, served until
        ``stale_seconds`` after a newer version was first seen; so may a refresh's result of the
        version just left, if that is later than its own deadline (:meth:`keep_refreshed`).
        Caller holds the lock."""
        with self._stale_lock:
            since = self._newer_at if self._newer_at is not None else self.monotonic()
            until = since + self.stale_seconds
            for key, (version, value, counts, was) in list(self._previous.items()):
                if version == self._seen and was < until:
                    self._previous[key] = (version, value, counts, until)
            for key, (version, value, counts) in list(self._front.items()):
                self._previous[key] = (version, value, counts, until)
                self._previous.move_to_end(key)
            self._front.clear()
            self._newer_at = None
            while len(self._previous) > FRONT_SIZE:
                self._previous.popitem(last=False)

    def _drop_stale(self) -> None:
        """Nothing held so far may be served stale any more (a local write, a clear, a reset), nor
        any refresh result computed across this moment. Caller holds the main lock."""
        with self._stale_lock:
            self._previous.clear()
            self._epoch += 1

    def refresh_mark(self) -> tuple[int, float]:
        """Taken by a refresh before it computes (:meth:`keep_refreshed` wants it back): the
        drop epoch, and the time, which is before the refresh's version read started."""
        with self._stale_lock:
            return self._epoch, self.monotonic()

    def keep_refreshed(self, key: str, value: Any, version: int | None, counts: dict[str, int],
                       mark: tuple[int, float]) -> bool:
        """Keep a background refresh's result of ``key``, computed at store version ``version``
        (the version its request observed), as the stale reply for ``key``: served to a caller
        that accepts a stale reply until ``2 × stale_seconds`` after ``mark``'s time, so the
        version it reflects was read by this process at most that long before the reply.

        Why: a result that made model calls is not kept whole in the front, and under a steady
        stream of other processes' changes touching the question's nodes every refresh makes
        calls and is overtaken by the next change, so the front never holds the question again;
        without this the stale bound ran out 5 s after the first change and the asks were
        computed in the foreground (scripts/bench/RESULTS.md, "Stale replies from the latest
        refresh"). With it, each completed refresh restarts the bound. Why it is safe to offer:
        the value is the ordinary ask's answer at ``version``, like a held front entry.

        Not kept (False): no version or no stale replies; the caches dropped their stale entries
        since ``mark`` (a local write, a clear, a reset: the refresh may have read before it); a
        result at a version not newer than the one already held for ``key``; or one past its
        deadline already. Treat the value as read-only."""
        if version is None or not self.stale_seconds > 0 or self.degraded is not None:
            return False
        epoch, began = mark
        until = began + 2 * self.stale_seconds
        with self._stale_lock:
            if epoch != self._epoch or self._closed or self.monotonic() > until:
                return False
            held = self._previous.get(key)
            if held is not None and held[0] >= version:
                return False
            self._previous[key] = (version, value, dict(counts), until)
            self._previous.move_to_end(key)
            while len(self._previous) > FRONT_SIZE:
                self._previous.popitem(last=False)
            self.refresh_kept += 1
        return True

    def front_fresh(self, key: str) -> bool:
        """Whether the front holds ``key`` at the version this process last replayed to."""
        with self._lock:
            hit = self._front.get(key)
            return hit is not None and hit[0] == self._seen

    def front_stale(self, key: str, refresh: Callable[[], None]) -> tuple[Any, int] | None:
        """(value, the version it was computed at) from a superseded version of the front, for a
        caller that accepts a stale reply; else None (then take the ordinary path).

        Given only when all of these hold: the store's version (read as :meth:`sync_store`
        reads it, no replay) is newer than the entry's; the front has no entry for ``key`` at
        that version yet; the entry is within its bound (by :attr:`monotonic`): a version newer
        than the entry's was first seen at most ``stale_seconds`` ago, or, for the result of a
        background refresh (:meth:`keep_refreshed`), that refresh began at most
        ``2 × stale_seconds`` ago; and a refresh of ``key`` is queued or running (``refresh`` is queued
        now if none is: it recomputes the value the ordinary way, in a background thread, and so
        brings this process's caches and indexes to the new version). The caller marks its
        reply stale with the version returned. Why it is safe to offer: the value was a correct
        answer at that version, and nothing but this method and :meth:`stale_peek` reads the
        stale entries (``front_get`` still wants the observed version exactly).

        While a refresh of ``key`` is in flight the version is not read again: this process is
        known to be behind, and the reply is stale whatever a read would say. A stale reply then
        costs a dictionary lookup, not a round trip, beside the refresh's work."""
        if self.clock is None or self.degraded is not None or not self.stale_seconds > 0:
            return None
        with self._stale_lock:
            got = self._stale(key, None, refresh)
        if got is None:
            version = self._request_version()
            with self._stale_lock:
                got = self._stale(key, version, refresh)
        return self._counted(got)

    def stale_peek(self, key: str, refresh: Callable[[], None]) -> tuple[Any, int] | None:
        """:meth:`front_stale` that never waits (an event loop): only when the version is
        already known for this request and the lock is free."""
        if self.clock is None or self.degraded is not None or not self.stale_seconds > 0:
            return None
        version = self.clock.peek()
        if version is None or not self._stale_lock.acquire(blocking=False):
            return None
        try:
            got = self._stale(key, version, refresh)
        finally:
            self._stale_lock.release()
        return self._counted(got)

    def _counted(self, got: tuple[Any, int, dict[str, int]] | None) -> tuple[Any, int] | None:
        """Count a stale reply's cache hits, if the main lock is free (statistics only: a stale
        reply does not wait for a replay to count them)."""
        if got is None:
            return None
        value, stamped, counts = got
        if self._lock.acquire(blocking=False):
            try:
                for cache, n in counts.items():
                    if n:
                        self._tally(cache, "hits", n)
            finally:
                self._lock.release()
        return value, stamped

    def _stale(self, key: str, version: int | None,
               refresh: Callable[[], None]) -> tuple[Any, int, dict[str, int]] | None:
        """The stale entry for ``key`` at store version ``version`` (value, its version, the
        cache hits it stands for), if one may be served; ``version`` None when no version was
        read: then only while the refresh of ``key`` is queued or running (this process is known
        to be behind). Caller holds the stale lock, not the main one: the entries are immutable
        tuples, each map read is one atomic lookup, and a replay moving them meanwhile makes the
        lookup miss (the ordinary path) or find the same entry in the other map, never a newer
        value under an older version."""
        seen = self._seen
        if seen is None or (version is None and key not in self._refreshing):
            return None
        if version is not None and version < seen:
            return None  # the store went back (a reset): no stale reply
        now = self.monotonic()
        if version is not None and version > seen and self._newer_at is None:
            self._newer_at = now  # the bound of what this process holds at `seen` starts now
        hit = self._front.get(key)
        if hit is not None and hit[0] == seen:
            if version is not None and hit[0] >= version:
                return None  # current: the ordinary path serves it
            if self._newer_at is None:
                if version is None:
                    return None  # current as far as this process knows (the refresh may have just put it)
                self._newer_at = now
            stamped, value, counts, until = hit[0], hit[1], hit[2], self._newer_at + self.stale_seconds
        else:
            old = self._previous.get(key)
            # a held answer is of a version before `seen`; a refresh's result may be of `seen` itself
            # (the front did not keep it: it made calls): given stale too, rather than computing the
            # ask in the foreground, and the refresh this queues puts it in the front
            if old is None or (version is not None and old[0] > version):
                return None
            stamped, value, counts, until = old
            if stamped == seen and self._newer_at is not None:  # as _supersede will extend it
                until = max(until, self._newer_at + self.stale_seconds)
        if not now <= until:
            return None  # past the bound: the caller waits for the catch-up like any other
        if key not in self._refreshing:
            if len(self._refreshing) >= FRONT_SIZE or self._closed:
                return None
            self._refreshing.add(key)
            self._refresh_q.put((key, refresh))
            if self._refresher is None:
                self._refresher = threading.Thread(target=self._refresh_loop, name="kg-cache-refresh", daemon=True)
                self._refresher.start()
        self.stale_served += 1
        return value, stamped, counts

    def _refresh_loop(self) -> None:
        """One background thread per process runs the refreshes, oldest first: the first one
        brings the caches and derived indexes to the new version, the others reuse that."""
        while True:
            item = self._refresh_q.get()
            if item is None:
                self._refresh_q.task_done()
                return
            key, refresh = item
            try:
                if not self._closed:
                    with prompt_switching():  # the requests served meanwhile get the interpreter back promptly
                        refresh()
            except Exception as exc:  # a failed refresh: the next ask past the bound computes it itself
                log.warning("background refresh of a cached result failed: %s", exc)
            finally:
                with self._stale_lock:
                    self._refreshing.discard(key)
                    self.refreshes += 1
                self._refresh_q.task_done()

    def wait_refreshed(self) -> None:
        """Return when every queued refresh has finished (tests, benchmarks)."""
        self._refresh_q.join()

    def memo(self, cache: str, key: str, compute: Callable[[], Any]) -> tuple[Any, bool]:
        """(result, was it a hit): a result computed from the store alone (no LLM, no other
        cache) kept whole in the front, for the in-memory caches of :data:`MEMORY_CACHES`.

        The same coherence rule as a cached answer (:meth:`front_get`): the change log is
        replayed first (:meth:`sync_store`: one version read, shared by concurrent requests),
        and the result is served only at the version observed before it was computed — any
        change anywhere (another server's ingest included) moves the version and the next call
        recomputes. Coarser than node-level dependencies, but it needs no proof of which nodes
        a result read. ``key`` must name every input (see :func:`cache_key`); the result is
        shared between callers: treat it as read-only."""
        if cache not in MEMORY_CACHES:
            raise InvalidArgument(f"unknown in-memory cache {cache!r}; known: {', '.join(MEMORY_CACHES)}")
        self.sync_store()
        hit = self.front_get(key)
        if hit is not None:
            return hit, True
        with self._lock:
            self._tally(cache, "misses")
        value = compute()
        if self.front_put(key, value, {cache: 1}):
            with self._lock:
                self._pending[(cache, "puts")] = self._pending.get((cache, "puts"), 0) + 1
        return value, False

    def _stale_since_observed(self, cache: str, deps: set[str]) -> bool:
        """True when the change log moved while this request computed its entry and a change
        since may affect it (the entry would miss that replay). Rare: costs a log read only then."""
        observed = getattr(self._request, "observed", None)
        if self.changes is None or observed is None:
            return False
        now = self._stored_seen()
        if now is None or now == observed:
            return False
        if now < observed:
            return True
        try:
            changes: list[Change] = self.changes.since(observed, now)
        except Exception:  # cannot tell: do not cache
            return True
        if cache == "topk" or len(changes) != now - observed or any(c.everything for c in changes):
            return True
        return any(not deps.isdisjoint(c.touched) or ANY_INGEST in deps for c in changes)

    def _clear_entries(self) -> int:
        n = self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
        self._db.execute("DELETE FROM entries")
        self._db.execute("DELETE FROM deps")
        return int(n)

    def clear(self) -> int:
        if self.read_only:
            from kgservice.errors import ReadOnlyError

            raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); kg cache clear refused")
        with self._lock:
            try:
                self._front.clear()
                self._drop_stale()
                n = self._clear_entries()
                self._db.execute("DELETE FROM counters")
                self._db.commit()
                self._pending, self._pending_hits = {}, {}
            except sqlite3.OperationalError as exc:
                try:
                    self._db.rollback()
                except sqlite3.Error:
                    pass
                raise CacheWriteError(f"cannot clear the query caches in {self.path}: {exc}; free space or make "
                                      "the data directory writable, then run `kg cache clear` again") from None
        return n

    def stats(self) -> dict[str, Any]:
        self._writing(self._flush_and_commit, None)
        with self._lock:
            per: dict[str, dict[str, Any]] = {}
            for cache, about in CACHES.items():
                entries = self._db.execute("SELECT COUNT(*) FROM entries WHERE cache = ?", (cache,)).fetchone()[0]
                deps = self._db.execute("SELECT COUNT(*) FROM deps WHERE cache = ?", (cache,)).fetchone()[0]
                c = self._db.execute("SELECT hits, misses, puts, invalidated FROM counters WHERE cache = ?",
                                     (cache,)).fetchone() or (0, 0, 0, 0)
                per[cache] = {"entries": entries, "dependencies": deps, "hits": c[0], "misses": c[1],
                              "puts": c[2], "invalidated": c[3], "about": about}
            for cache, about in MEMORY_CACHES.items():
                c = self._db.execute("SELECT hits, misses, puts FROM counters WHERE cache = ?",
                                     (cache,)).fetchone() or (0, 0, 0)
                held = sum(1 for _, _, counts in self._front.values() if cache in counts)
                per[cache] = {"entries": held, "dependencies": 0, "hits": c[0], "misses": c[1], "puts": c[2],
                              "invalidated": 0, "about": about, "in_memory": True}
        size = self.path.stat().st_size if self.path is not None and self.path.exists() else 0
        return {"path": str(self.path) if self.path else ":memory:", "bytes": size, "caches": per}

    def session_counts(self) -> dict[str, dict[str, int]]:
        return {c: dict(v) for c, v in self.session.items()}

    def close(self) -> None:
        self._closed = True
        if self._refresher is not None:
            self._refresh_q.put(None)  # the thread ends after a refresh in progress (not waited for)
        with self._lock:
            if self._pending or self._pending_hits:
                self._writing(self._flush_and_commit, None)  # statistics only: a failure degrades, never raises
            self._db.close()
            closer = getattr(self.changes, "close", None)
            if closer is not None:
                closer()

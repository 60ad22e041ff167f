"""An in-memory structure built from a whole store (the entry step's label index, retrieval's
BM25 unit index), kept current when the store changes. One rule for every such structure, so
they go stale or fresh together: :class:`VersionedIndex` rebuilds from a full scan whenever the
version moves; :class:`FedIndex` patches itself from the change log (the node and unit ids each
change lists), so another server's ingest of k units costs this process O(k) reads and work, and
rebuilds only when the log cannot say what changed (a gap: pruned past it, a store wiped or
restored, a change too large to list).

"Changed" is the store's change-log version (:mod:`kgservice.stores.changelog`), not its counts:
every change that can alter what a structure was built from logs a new version in the same
write (ingest, relabel, index rebuild, wipe, restore), while counts miss a relabel (same counts,
other labels) and, on Neo4j, cost a scan of every unit. The version is read through the store's
:class:`~kgservice.stores.changelog.VersionClock`, so all the structures one request or one
``retrieve`` consults share one read (:func:`~kgservice.stores.changelog.request_scope`).

Why an index is never trusted past the data it saw: the version is read *before* the build and
the index is stamped with that version. A change committed during the build moves the version,
so the next ``get`` rebuilds (at worst one rebuild too many, never a stale index kept). The
embedded store logs a change *before* its batch reaches memory (a crash in between must cost a
spurious invalidation, not a lost one), so a reader there can see the new version before the new
data; the stamp therefore also carries the store's :meth:`~kgservice.stores.base.GraphStore.local_generation`,
which moves only once the data has changed in memory. A store without a change log falls back to
``counts()``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def store_signature(store: Any) -> Hashable:
    """What a structure built from ``store`` is stamped with: (change-log version, in-memory
    generation), or the counts for a store that keeps no change log.

    >>> class Counted:
    ...     def counts(self): return {"units": 3}
    >>> store_signature(Counted())
    ('counts', (('units', 3),))
    """
    clock_of = getattr(store, "version_clock", None)
    clock = clock_of() if clock_of is not None else None
    if clock is None:
        return ("counts", tuple(sorted(store.counts().items())))
    local = getattr(store, "local_generation", None)
    return ("version", clock.read(), local() if local is not None else None)


class VersionedIndex(Generic[T]):
    """``build()`` once, again whenever the store's signature (:func:`store_signature`) differs
    from the one read before the last build. One build at a time: concurrent requests for a
    stale structure wait for the one build instead of each building it.

    >>> class Store:
    ...     units = 1
    ...     def counts(self): return {"units": self.units}
    >>> s, builds = Store(), []
    >>> d = VersionedIndex(s, lambda: builds.append(s.units) or len(builds))
    >>> d.get(), d.get(), builds
    (1, 1, [1])
    >>> s.units = 2
    >>> d.get(), builds
    (2, [1, 2])
    """

    def __init__(self, store: Any, build: Callable[[], T]):
        self.store, self._build = store, build
        self._value: T | None = None
        self._sig: Hashable = None
        self._lock = threading.Lock()
        self.builds = 0  # how many times it was built (tests, diagnostics)

    def get(self) -> T:
        sig = store_signature(self.store)  # before the build: the stamp never claims newer data than it saw
        with self._lock:
            if self._value is None or sig != self._sig:
                self._value = self._build()
                self._sig = sig
                self.builds += 1
            return self._value


class FedIndex(Generic[T]):
    """Built once from the whole store, then brought to each new version by ``patch(value,
    changes)``: the :class:`~kgservice.stores.changelog.Change` rows after the version it was
    stamped with, oldest first. ``patch`` returns a *new* value (readers that hold the old one
    keep a consistent snapshot: nothing is changed under them), or None when the changes do not
    say enough (then it is rebuilt, as it is when the log has a gap or the version went back).

    Why a patch is never staler than a rebuild: like a build, it reads the version first and
    the data after, and it reads the *current* state of every id a change lists (present and
    what it is now, or gone), so reading data newer than the version is harmless: the change
    that made it lists the same ids and is replayed at the next version, to the same result.
    On the embedded store a change is logged before its batch reaches memory, so a read at
    version v may miss v's data; the stamp carries the in-memory generation and the version the
    store had applied to memory when the stamp was read (``applied_version``), and once the
    generation moved the replay starts from that one (from one change back when the store
    cannot say: at most one batch is logged and not yet applied, since the writer holds the
    store's write lock between the two).

    >>> class Store:
    ...     units = 1
    ...     def counts(self): return {"units": self.units}
    >>> s = Store()
    >>> d = FedIndex(s, lambda: s.units, lambda value, changes: None)
    >>> d.get(), d.builds, d.patches
    (1, 1, 0)
    """

    def __init__(self, store: Any, build: Callable[[], T], patch: Callable[[T, list[Any]], T | None]):
        self.store, self._build, self._patch = store, build, patch
        self._value: T | None = None
        self._sig: Hashable = None
        self._lock = threading.Lock()
        self._applied: int | None = None  # the store's applied_version when the stamp was read
        self.builds = 0  # full builds (the first one, and each gap)
        self.patches = 0  # versions reached by a patch
        self.last_replay: dict[str, Any] = {}  # what the last catch-up did (tests, the bench)

    def get(self) -> T:
        applied_of = getattr(self.store, "applied_version", None)
        applied = applied_of() if applied_of is not None else None  # before the version it is compared with
        sig = store_signature(self.store)  # before the read of the data, as for a build
        with self._lock:
            if self._value is not None and sig == self._sig:
                return self._value
            value = self._catch_up(sig) if self._value is not None else None
            if value is None:
                value = self._build()
                self.builds += 1
            else:
                self.patches += 1
            self._value, self._sig, self._applied = value, sig, applied
            return value

    def _catch_up(self, sig: Hashable) -> T | None:
        """The patched value at ``sig``, or None when only a rebuild is safe."""
        old = self._sig
        if not (isinstance(sig, tuple) and isinstance(old, tuple) and sig[0] == old[0] == "version"):
            return None
        (_, before, gen_before), (_, now, gen_now) = old, sig
        if now < before:
            return None  # the store was reset
        if gen_now != gen_before and not _same_load(gen_before, gen_now):
            return None  # memory was reloaded from disk: the log does not say what that changed
        after = before
        if gen_now is not None and gen_now != gen_before:  # memory moved: what was pending at the stamp landed
            after = min(before, self._applied) if self._applied is not None else max(0, before - 1)
        feed = self.store.version_clock().feed
        changes = feed.since(after, now) if now > after else []
        self.last_replay = {"from": after, "to": now, "changes": len(changes)}
        if [c.seq for c in changes] != list(range(after + 1, now + 1)) or any(c.everything for c in changes):
            return None  # the log was pruned past us, or a change too large to list
        return self._patch(self._value, changes) if changes else self._value  # type: ignore[arg-type]


def _same_load(a: Any, b: Any) -> bool:
    """Two in-memory generations of the same loaded graph (the embedded store's (loads,
    generation)): only batches applied in between, each of them logged."""
    return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) == 2 and a[0] == b[0]

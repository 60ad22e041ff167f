"""An in-memory structure built from a whole store (the entry step's label index, retrieval's
BM25 unit index), rebuilt when the store changes. One rule for every such structure, so they
go stale or fresh together.

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

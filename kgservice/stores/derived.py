"""An in-memory structure built from a whole store (the entry step's label index, retrieval's
BM25 unit index), rebuilt when the store's counts change. One rule for every such structure, so
they go stale or fresh together."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Derived(Generic[T]):
    """``build()`` once, again whenever ``store.counts()`` differs from the last build's.

    >>> class Store:
    ...     units = 1
    ...     def counts(self): return {"units": self.units}
    >>> s, builds = Store(), []
    >>> d = Derived(s, lambda: builds.append(s.units) or len(builds))
    >>> d.get(), d.get(), builds
    (1, 1, [1])
    >>> s.units = 2
    >>> d.get(), builds
    (2, [1, 2])
    """

    def __init__(self, store: Any, build: Callable[[], T]):
        self.store, self._build = store, build
        self._value: T | None = None
        self._sig: Any = None

    def get(self) -> T:
        sig = self.store.counts()
        if self._value is None or sig != self._sig:
            self._value = self._build()
            self._sig = sig
        return self._value

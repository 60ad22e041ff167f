"""Which labels hold a name: the inverse of :meth:`kgservice.entry.match.LabelIndex.names_within`.

Why: the graph writes one entity in several surface forms and does not connect them. The
names inside a label join a long form to its short one ("*West Chicago High School*" ->
West Chicago); the other direction, from a short form to the longer labels that hold it
("Hong Kong" -> *British Hong Kong*, "Prague" -> *Prague astronomical clock*), needs the
inverse map, built once from every node's label and rebuilt when the store changes
(:class:`kgservice.stores.versioned.VersionedIndex`, like the label index it is read from).
A name held by many labels ("United States") says little about any of them, so callers take
a name's holders only when there are few (:meth:`NameHolders.of`).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

from kgservice.entry.match import LabelIndex
from kgservice.model import NodeKind
from kgservice.stores.versioned import VersionedIndex


def invert(index: LabelIndex, labels: Iterable[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    """Name node -> the other nodes whose label holds it (:meth:`LabelIndex.names_within`).

    >>> ix = LabelIndex.build([(n.lower(), n) for n in ("Hong Kong", "British Hong Kong", "Hong Kong theatres", "Kong")])
    >>> held = invert(ix, [(n.lower(), n) for n in ("Hong Kong", "British Hong Kong", "Hong Kong theatres", "Kong")])
    >>> held["hong kong"], held["kong"]
    (('british hong kong', 'hong kong theatres'), ('british hong kong', 'hong kong', 'hong kong theatres'))
    """
    out: dict[str, set[str]] = {}
    for nid, label in labels:
        for name in index.names_within(label):
            if name != nid:
                out.setdefault(name, set()).add(nid)
    return {n: tuple(sorted(ids)) for n, ids in out.items()}


class NameHolders:
    """The inverse map of one store, rebuilt when the store's change-log version moves."""

    def __init__(self, store: Any, finder: Any):
        self._derived = VersionedIndex(store, lambda: invert(
            finder.index(), ((n.id, n.label) for n in store.iter_nodes() if n.kind != NodeKind.LITERAL)))

    def of(self, names: Iterable[str], limit: int) -> list[str]:
        """The holders of each name that at most ``limit`` labels hold, in name order.

        >>> class Store:
        ...     def counts(self): return {"nodes": 3}
        ...     def iter_nodes(self):
        ...         from kgservice.model import Node
        ...         return iter([Node(id=n.lower(), label=n, kind="entry") for n in ("Hong Kong", "British Hong Kong", "Kong")])
        >>> class Finder:
        ...     def index(self): return LabelIndex.build([(n.lower(), n) for n in ("Hong Kong", "British Hong Kong", "Kong")])
        >>> h = NameHolders(Store(), Finder())
        >>> h.of(["hong kong"], 1), h.of(["kong"], 1), h.of(["kong", "hong kong"], 2)
        (['british hong kong'], [], ['british hong kong', 'hong kong'])
        """
        held = self._derived.get()
        out: dict[str, None] = {}
        for n in names:
            ids = held.get(n, ())
            if len(ids) <= limit:
                out.update(dict.fromkeys(ids))
        return list(out)


_BY_FINDER: weakref.WeakKeyDictionary[Any, NameHolders] = weakref.WeakKeyDictionary()


def name_holders(store: Any, finder: Any) -> NameHolders:
    """The :class:`NameHolders` beside an entry finder (one per finder: a knowledge base that
    reopens its store makes a new finder, and so a new map)."""
    holders = _BY_FINDER.get(finder)
    if holders is None:
        holders = _BY_FINDER[finder] = NameHolders(store, finder)
    return holders

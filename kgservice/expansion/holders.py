"""Which labels hold a name: the inverse of :meth:`kgservice.entry.match.LabelIndex.names_within`.

Why: the graph writes one entity in several surface forms and does not connect them. The
names inside a label join a long form to its short one ("*West Chicago High School*" ->
West Chicago); the other direction, from a short form to the longer labels that hold it
("Hong Kong" -> *British Hong Kong*, "Prague" -> *Prague astronomical clock*), needs the
inverse map, built once from every node's label and patched with the label index it is read
from (:class:`Holders`, :meth:`kgservice.entry.step.EntryFinder.holders`).
A name held by many labels ("United States") says little about any of them, so callers take
a name's holders only when there are few (:meth:`NameHolders.of`).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from immutables import Map

from kgservice.caches.layered import Layered, common
from kgservice.caches.untracked import settle
from kgservice.entry.match import LabelIndex, tokens


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


class Holders:
    """The inverse map of one label index, kept current label by label (:meth:`patched`).

    ``held``: name node -> the other nodes whose label holds it (:func:`invert`; a
    :class:`kgservice.caches.layered.Layered` set, so that a name many labels hold is not
    rebuilt for each one that comes); ``within``:
    node -> the names its label holds (what to take back when the label changes); ``bytoken``:
    token -> nodes whose label uses it (which labels can hold a name that comes or goes), a
    :class:`kgservice.caches.layered.Layered` set per token.

    >>> labels = {n.lower(): n for n in ("Hong Kong", "British Hong Kong", "Kong")}
    >>> ix = LabelIndex.build(labels.items())
    >>> h = Holders.build(ix, labels)
    >>> sorted(h.held["kong"])
    ['british hong kong', 'hong kong']
    >>> after = {**labels, "hong kong theatres": "Hong Kong theatres"}
    >>> h2 = h.patched(LabelIndex.build(after.items()), labels, after, ["hong kong theatres"])
    >>> h2.held == Holders.build(LabelIndex.build(after.items()), after).held, "hong kong theatres" in h.held["kong"]
    (True, False)
    """

    def __init__(self, held: Mapping[str, Layered], within: Mapping[str, tuple[str, ...]],
                 bytoken: Mapping[str, Layered]):
        self.held, self.within, self.bytoken = held, within, bytoken

    @classmethod
    def build(cls, index: LabelIndex, labels: Mapping[str, str]) -> Holders:
        within: dict[str, tuple[str, ...]] = {}
        bytoken: dict[str, set[str]] = {}
        for nid, label in labels.items():
            names = tuple(n for n in index.names_within(label) if n != nid)
            if names:
                within[nid] = names
            for t in set(tokens(label)):
                bytoken.setdefault(t, set()).add(nid)
        held: dict[str, set[str]] = {}
        for nid, names in within.items():
            for name in names:
                held.setdefault(name, set()).add(nid)
        return cls(Map({n: Layered.of(ids) for n, ids in held.items()}), Map(within),
                   Map({t: Layered.of(ns) for t, ns in bytoken.items()}))._settled()

    def patched(self, index: LabelIndex, before: Mapping[str, str], after: Mapping[str, str],
                changed: Iterable[str]) -> Holders:
        """The map for ``index`` (built from ``after``), from this one (built from ``before``):
        ``changed`` lists the nodes whose label came, went or changed. The names inside a
        label depend on which keys exist, so every label that uses all the words of a changed
        label is looked at again, besides the changed labels themselves. The maps are
        persistent (what the patch does not change is shared), and each word's node set is a
        :class:`kgservice.caches.layered.Layered` set: the patch writes the nodes that came or
        went into its delta, O(the changes), where rebuilding it cost O(the word's nodes) (a
        few thousand for a common word) for every word a changed label uses."""
        changed = [n for n in dict.fromkeys(changed) if before.get(n) != after.get(n)]
        gone_from: dict[str, set[str]] = {}
        come_to: dict[str, set[str]] = {}
        for nid in changed:
            old, new = set(tokens(before.get(nid) or "")), set(tokens(after.get(nid) or ""))
            for t in old - new:
                gone_from.setdefault(t, set()).add(nid)
            for t in new - old:
                come_to.setdefault(t, set()).add(nid)
        bytoken = _changed(self.bytoken, gone_from, come_to)
        # the labels that use every word of a changed label, before or after: read in the new
        # table alone, since a label the patch did not change uses the same words in both, and
        # every changed one is looked at again anyway
        again: set[str] = set(changed)
        for words_of in {frozenset(tokens(label)) for nid in changed
                         for label in (before.get(nid), after.get(nid)) if label}:
            sets = [bytoken.get(t) for t in words_of]
            if sets and all(w is not None for w in sets):  # a word no label uses: no label uses them all
                again |= common(sets)
        within = self.within.mutate()  # type: ignore[attr-defined]
        gains: dict[str, set[str]] = {}
        losses: dict[str, set[str]] = {}
        for nid in again:
            was = set(within.get(nid, ()))
            label = after.get(nid)
            now = {n for n in index.names_within(label) if n != nid} if label is not None else set()
            if now != was:  # an unchanged entry left alone: no trie node copied for it
                if now:
                    within[nid] = tuple(sorted(now))
                else:
                    within.pop(nid, None)
            for name in was - now:
                losses.setdefault(name, set()).add(nid)
            for name in now - was:
                gains.setdefault(name, set()).add(nid)
        held = _changed(self.held, losses, gains)  # a name many labels hold ("united states"): its delta only
        return Holders(held, within.finish(), bytoken)._settled()

    def _settled(self) -> Holders:
        """These maps' new trie nodes and each word's node set out of the cyclic collector's
        work (:func:`kgservice.caches.untracked.settle`: they hold strings only)."""
        settle(self.held, self.within, self.bytoken, of_strings=True)  # node ids: strings by construction
        return self


def _changed(table: Mapping[str, Layered], gone: Mapping[str, set[str]], come: Mapping[str, set[str]]) -> Any:
    """``table`` (a persistent map of layered sets) with the ids in ``gone[key]`` taken from the
    set of each key and those in ``come[key]`` added; an emptied set's key left out."""
    out = table.mutate()  # type: ignore[attr-defined]
    for key in set(gone) | set(come):
        was = out.get(key)
        now = (was.changed(gone.get(key, ()), come.get(key, ())) if was is not None
               else Layered.of(come[key]) if come.get(key) else None)
        if now is not None:
            out[key] = now
        elif was is not None:
            del out[key]
    return out.finish()


class NameHolders:
    """The inverse map beside an entry finder: built from the finder's label index once, then
    patched with it (:meth:`kgservice.entry.step.EntryFinder.holders`)."""

    def __init__(self, store: Any, finder: Any):
        self.finder = finder

    def of(self, names: Iterable[str], limit: int) -> list[str]:
        """The holders of each name that at most ``limit`` labels hold, in name order.

        >>> from kgservice.entry.step import EntryFinder
        >>> from kgservice.model import Node
        >>> class Store:
        ...     def counts(self): return {"nodes": 3}
        ...     def iter_nodes(self):
        ...         return iter([Node(id=n.lower(), label=n, kind="entry") for n in ("Hong Kong", "British Hong Kong", "Kong")])
        >>> h = NameHolders(Store(), EntryFinder(Store()))
        >>> h.of(["hong kong"], 1), h.of(["kong"], 1), h.of(["kong", "hong kong"], 2)
        (['british hong kong'], [], ['british hong kong', 'hong kong'])
        """
        held = self.finder.holders().held
        out: dict[str, None] = {}
        for n in names:
            ids = held.get(n)
            if ids is not None and len(ids) <= limit:
                out.update(dict.fromkeys(sorted(ids)))
        return list(out)


_BY_FINDER: weakref.WeakKeyDictionary[Any, NameHolders] = weakref.WeakKeyDictionary()


def name_holders(store: Any, finder: Any) -> NameHolders:
    """The :class:`NameHolders` beside an entry finder (one per finder: a knowledge base that
    reopens its store makes a new finder, and so a new map)."""
    holders = _BY_FINDER.get(finder)
    if holders is None:
        holders = _BY_FINDER[finder] = NameHolders(store, finder)
    return holders

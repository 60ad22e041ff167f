"""A set of strings patched in O(changes): a frozen base with a small persistent delta over it.

Why: the name holders keep, per word, the nodes whose label uses it (a few thousand ids for a
common word at a million units). A patch that adds one label used to rebuild the whole set of
every word the label uses (``(old - gone) | come``: one C call per word, O(the word's nodes),
leaving a young object that large for the collector to walk). A :class:`Layered` set keeps the
base frozenset as it was and writes what changed into two persistent maps (``added``, nodes not
in the base; ``removed``, nodes of the base that left), so a patch writes O(its changes) trie
entries and shares the base; the delta is merged into a new base only once it grows past a
32nd of the base (:data:`MERGE_SHARE`), so each merge's O(base) is paid for by the base / 32
changes before it: O(1) per change, amortised (a smaller delta is cheaper to read: at 1M units
an 8th cost the intersections below ~10 % more).

Reading stays in C: membership is ``x in added or (x in base and x not in removed)``, and
:func:`common` (the nodes in every one of several sets: which labels use all the words of a
label) starts from the smallest set and filters it through the others with set operations and
``filter`` over the maps' ``__contains__``, O(the smallest set + the deltas).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import filterfalse
from typing import Any

from immutables import Map

EMPTY: Map = Map()
MERGE_SHARE = 32  # merge the delta into the base once it is larger than base / MERGE_SHARE ...
MERGE_MIN = 64  # ... or than this (a small set is cheap to rebuild)


class Layered(tuple):  # type: ignore[type-arg]
    """``(base, added, removed)``: the set ``(base - removed) | added``, with ``added`` disjoint
    from ``base`` and ``removed`` inside it. A tuple, so that :func:`kgservice.caches.untracked.settle`
    can take it out of the cyclic collector's work with what it holds (strings and maps of
    strings). Equal to another :class:`Layered` (or a set) holding the same strings, whatever
    its layers.

    >>> s = Layered.of(["a", "b", "c"]).changed(gone={"b"}, come={"d"})
    >>> sorted(s), len(s), "b" in s, "d" in s, s == {"a", "c", "d"}, s.base == {"a", "b", "c"}
    (['a', 'c', 'd'], 3, False, True, True, True)
    >>> s.changed(gone={"d"}, come={"b"}) == Layered.of("abc"), s.changed(gone={"a", "c", "d"}, come=())
    (True, None)
    """

    __slots__ = ()

    @classmethod
    def of(cls, items: Iterable[str]) -> Layered:
        return tuple.__new__(cls, (frozenset(items), EMPTY, EMPTY))

    @property
    def base(self) -> frozenset[str]:
        return self[0]  # type: ignore[no-any-return]

    @property
    def added(self) -> Map:
        return self[1]  # type: ignore[no-any-return]

    @property
    def removed(self) -> Map:
        return self[2]  # type: ignore[no-any-return]

    def __len__(self) -> int:
        return len(self[0]) - len(self[2]) + len(self[1])

    def __contains__(self, x: object) -> bool:
        return x in self[1] or (x in self[0] and x not in self[2])

    def __iter__(self) -> Iterator[str]:
        base, added, removed = tuple.__iter__(self)
        yield from filterfalse(removed.__contains__, base) if removed else base
        yield from added

    def flat(self) -> frozenset[str]:
        """The set itself, as one frozenset (O(its size))."""
        base, added, removed = tuple.__iter__(self)
        if not added and not removed:
            return base  # type: ignore[no-any-return]
        return base.difference(removed).union(added)  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Layered):
            return self.flat() == other.flat()
        if isinstance(other, (set, frozenset)):
            return self.flat() == other
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Layered({sorted(self)!r})"

    def changed(self, gone: Iterable[str], come: Iterable[str]) -> Layered | None:
        """This set without ``gone`` and with ``come`` (``come`` wins over ``gone``), or None
        when that is empty. Writes only the changes into the delta maps, unless the delta
        then outgrows the base's share: then one new base, and no delta."""
        base, added, removed = tuple.__iter__(self)
        add, rem = added.mutate(), removed.mutate()
        for x in gone:
            if x in add:
                del add[x]
            elif x in base:
                rem[x] = None
        for x in come:
            if x in rem:
                del rem[x]
            elif x not in base:
                add[x] = None
        added, removed = add.finish(), rem.finish()
        if len(added) + len(removed) > max(MERGE_MIN, len(base) // MERGE_SHARE):
            base, added, removed = base.difference(removed).union(added), EMPTY, EMPTY
        if len(base) - len(removed) + len(added) == 0:
            return None
        return tuple.__new__(Layered, (base, added, removed))


def common(sets: Iterable[Layered]) -> frozenset[str] | set[str]:
    """The strings in every one of ``sets`` (none given: an empty set), in C set operations:
    the smallest set's base filtered through the others (:func:`_meet`), then its own delta.
    O(the smallest base + the deltas met), as one ``frozenset.intersection`` of plain sets is.

    >>> a, b = Layered.of("abcd").changed(gone="a", come="x"), Layered.of("bcxy").changed(gone="c", come="")
    >>> sorted(common([a, b])), sorted(common([b])), common([])
    (['b', 'x'], ['b', 'x', 'y'], frozenset())
    """
    ordered = sorted(sets, key=len)
    if not ordered:
        return frozenset()
    base, added, removed = tuple.__iter__(ordered[0])
    out: frozenset[str] | set[str] = base
    for s in ordered[1:]:
        if not out:
            break
        out = _meet(out, s)
    if removed and out:
        out = out.difference(removed) if len(removed) < len(out) else set(filterfalse(removed.__contains__, out))
    if added:
        extra: frozenset[str] | set[str] = set(added)
        for s in ordered[1:]:
            extra = _meet(extra, s)
        out = out.union(extra)
    return out


def _meet(out: frozenset[str] | set[str], s: Layered) -> frozenset[str] | set[str]:
    """The strings of ``out`` that are in ``s``: each step iterates the smaller side (a set's
    intersection does so itself; a delta map is walked when it is the smaller)."""
    base, added, removed = tuple.__iter__(s)
    kept = out.intersection(base)
    if removed and kept:
        kept = kept.difference(removed) if len(removed) < len(kept) else set(filterfalse(removed.__contains__, kept))
    if added:
        kept = kept.union(filter(out.__contains__, added) if len(added) < len(out) else filter(added.__contains__, out))
    return kept


def flat_sets(table: Any) -> dict[str, frozenset[str]]:
    """A map of :class:`Layered` sets as a dict of frozensets (for comparing with a build)."""
    return {k: v.flat() for k, v in table.items()}

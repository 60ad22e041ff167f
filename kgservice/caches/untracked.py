"""Derived indexes kept out of the cyclic garbage collector's work.

The derived indexes (label index, node-label map, name holders, BM25 unit index and its stem
counts) are persistent maps (``immutables.Map``, a hash array mapped trie): a patch shares
what it does not change. CPython tracks every trie node for the cyclic collector, and a
plain ``dict`` of strings and numbers it does not (it untracks a container that can hold no
cycle). So the tries made an index of 100k units ~107k tracked objects instead of ~30k, every
patch promoted its new nodes towards the oldest generation, and a *full* collection (which
holds the interpreter lock for a walk of every tracked object in the process) came sooner
and took longer: the worst single pause a serving process saw.

These tries can hold no reference cycle: their keys are strings or numbers, their values
strings, numbers, numpy arrays, tuples and lists of strings, frozensets of strings; nothing in
them points back at a map or at the index holding it. A container that can be in no cycle
needs no cyclic collection (reference counting frees it), which is why CPython untracks such
dicts and tuples itself. :func:`settle` does the same for a finished trie: it untracks the
nodes a build or a patch made, and the lists and frozensets of strings they hold (the label
index's id lists, the name holders' node set of each word). It walks from the root and stops at a node already untracked: a patch's new nodes are the paths from the root to what it
changed, everything below them is shared with the index before, settled then. So a patch
pays for the nodes it made, not for the index.

The untracking is CPython's own ``PyObject_GC_UnTrack`` (public C API, through ctypes): no
Python-level call does it. An object untracked stays freed by reference counting as soon as
nothing holds it; only a cycle through it could leak, and these values make none. The
alternative weighed, ``gc.freeze()`` after a build, moves *every* object alive in the process
out of collection, including live cycles such as the entry finder and its fed index (a bound
method each way): a reopened knowledge base would never be freed.
"""

from __future__ import annotations

import ctypes
import gc
from typing import Any

from immutables import Map

from kgservice.caches.layered import Layered

_UNTRACK = ctypes.pythonapi.PyObject_GC_UnTrack
_UNTRACK.argtypes = [ctypes.py_object]
_UNTRACK.restype = None


def _node_types() -> frozenset[type]:
    """The node types of immutables' trie (bitmap and array nodes, found in a map big enough to
    have both; the hash-collision node, in a map of two keys with one hash)."""

    class Same:
        def __hash__(self) -> int:
            return 1

    found: set[type] = set()
    for m in (Map({i: i for i in range(4096)}), Map({Same(): 1, Same(): 2})):
        stack = list(gc.get_referents(m))
        while stack:
            name = type(o := stack.pop()).__name__
            if name.startswith("map_") and name.endswith("_node"):
                found.add(type(o))
                stack.extend(gc.get_referents(o))
    return frozenset(found)


_NODES = _node_types()


_ATOMIC = frozenset({str, int})


def _atomic(items: Any) -> bool:
    """Only strings and numbers in ``items`` (the check runs in C: a word's node set can hold
    tens of thousands of ids)."""
    return set(map(type, items)) <= _ATOMIC


def settle(*tables: Any, of_strings: bool = False) -> int:
    """Untracks the trie nodes of each persistent map in ``tables`` that are still tracked (the
    ones the last build or patch made), and the lists of strings among their values; returns
    how many objects it untracked. Lists and frozensets holding anything but strings and numbers
stay tracked, and so does anything else (a dict, a ``MapMutation``). ``of_strings``: the
caller vouches that every list and frozenset in the values holds strings only (checking a
word's node set of tens of thousands of ids would cost a patch as much as rebuilding it).

    >>> from immutables import Map
    >>> m = Map({f"k{i}": [f"v{i}"] for i in range(100)})
    >>> settle(m) > 0, settle(m)
    (True, 0)
    >>> m2 = m.set("k1", ["w"])
    >>> settle(m2) > 0, gc.is_tracked(m2["k1"]), m2["k1"], len(m2), m["k1"]
    (True, False, ['w'], 100, ['v1'])
    """
    nodes, tracked, untrack, referents = _NODES, gc.is_tracked, _UNTRACK, gc.get_referents
    done = 0
    stack = [r for t in tables if isinstance(t, Map) for r in referents(t) if type(r) in nodes]
    while stack:
        node = stack.pop()
        if type(node) in nodes:
            if not tracked(node):  # settled before: so is everything below it
                continue
            untrack(node)
            done += 1
        for r in filter(tracked, referents(node)):  # in C: most entries are strings and settled nodes
            k = type(r)
            if k in nodes:
                stack.append(r)
            elif (k is list or k is frozenset) and (of_strings or _atomic(r)):
                untrack(r)
                done += 1
            elif k is Layered or k is Map:  # a set patched in layers, or a map, as a value: its parts
                untrack(r)
                done += 1
                stack.append(r)
    return done


def settle_list(items: list[Any]) -> None:
    """Untracks a list that holds only strings, numbers and tuples of them (the unit index's
    per-row lists): appending more of those later keeps it cycle-free. Checks only its type:
    the caller vouches for the items (a walk of a million rows would be the cost avoided)."""
    if type(items) is list and gc.is_tracked(items):
        _UNTRACK(items)

"""The derived indexes' tries are out of the cyclic collector's work, and still freed.

Checked independently of :func:`kgservice.caches.untracked.settle`'s own walk: every object
reachable from an index through ``gc.get_referents`` that is a trie node (or a list of strings
in one) must be untracked (``gc.is_tracked``), after a build and after patches; the patched
index still answers as a build of the same units does; and a dropped index's memory comes back
(reference counting frees what the collector no longer sees).
"""

from __future__ import annotations

import gc
import tracemalloc

from immutables import Map

from kgservice.caches.layered import Layered
from kgservice.caches.untracked import settle
from kgservice.entry.match import LabelIndex
from kgservice.expansion.holders import Holders
from kgservice.expansion.lexical import UnitIndex

NODES = {"map_bitmap_node", "map_array_node", "map_collision_node"}


def tracked_in(*roots: object) -> tuple[int, int]:
    """(trie nodes, lists, frozensets, layered sets and the maps in them reachable from ``roots`` through
    maps, how many still tracked)."""
    seen: set[int] = set()
    stack = [r for m in roots if isinstance(m, Map) for r in gc.get_referents(m)]
    total = tracked = 0
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if type(o).__name__ in NODES:
            total += 1
            tracked += gc.is_tracked(o)
            stack.extend(gc.get_referents(o))
        elif type(o) in (list, frozenset):
            total += 1
            tracked += gc.is_tracked(o)
        elif isinstance(o, (Layered, Map)):  # a word's layered node set, its delta maps: and what they hold
            total += 1
            tracked += gc.is_tracked(o)
            stack.extend(gc.get_referents(o))
    return total, tracked


def labels(n: int) -> list[tuple[str, str]]:
    return [(f"n{i}", f"Node {i} of Group {i % 37}") for i in range(n)]


def test_label_index_and_holders_untracked_after_build_and_patches() -> None:
    before = dict(labels(3000))
    ix = LabelIndex.build(before.items())
    held = Holders.build(ix, before)
    for step in range(5):
        after = dict(before)
        for i in range(step * 100, step * 100 + 100):
            after[f"n{i}"] = f"Renamed {i} of Group {i % 11}"
        after[f"x{step}"] = f"Extra {step}"
        ix2 = ix.patched(before, after)
        held = held.patched(ix2, before, after, [k for k in after if before.get(k) != after[k]])
        ix, before = ix2, after
    tables = (ix.keys, ix.bare, ix.postings, ix.vocab_n, ix.lengths, ix.named, held.held, held.within, held.bytoken)
    total, tracked = tracked_in(*tables)
    assert total > 3000 and tracked == 0, (total, tracked)
    built = LabelIndex.build(before.items())
    assert dict(ix.keys) == dict(built.keys) and dict(ix.postings) == dict(built.postings)
    assert dict(held.held) == dict(Holders.build(built, before).held)


def test_unit_index_untracked_after_build_and_patch_and_answers_as_a_build() -> None:
    units = [(f"u{i}", f"unit {i} about topic{i % 53} and place{i % 17}") for i in range(4000)]
    ix = UnitIndex.build(units)
    ix2 = ix.patched(["u1", "u2"], [("u9000", "a new unit about topic5 and marsh")])
    total, tracked = tracked_in(ix2.rows, ix2.postings, ix2.derived(str.lower))
    assert total > 100 and tracked == 0, (total, tracked)
    assert not gc.is_tracked(ix2.ids) and not gc.is_tracked(ix2.toks)
    built = UnitIndex.build([u for u in units if u[0] not in ("u1", "u2")] + [("u9000", "a new unit about topic5 and marsh")])
    assert ix2.top("topic5 marsh", 5) == built.top("topic5 marsh", 5)
    assert ix2.top("topic5 marsh", 1)[0][0] == "u9000"


def test_a_list_holding_a_container_stays_tracked() -> None:
    cyc: list = []
    cyc.append(cyc)  # a cycle through a list: only the collector can free it
    holder = frozenset({(1, 2), "x"})  # a tuple in it: not only strings, left as it is
    m = Map({"a": ["x", "y"], "b": cyc, "c": frozenset({"x", "y"}), "d": holder})
    settle(m)
    assert gc.is_tracked(cyc) and gc.is_tracked(holder)
    assert not gc.is_tracked(m["a"]) and not gc.is_tracked(m["c"])


def test_dropped_indexes_are_freed() -> None:
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(2):
            ix = LabelIndex.build(labels(2000))
            ix.patched(dict(labels(2000)), {"n1": "Other", "n2": None})
            built = tracemalloc.get_traced_memory()[0]
            del ix
        left = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # a built index of 2k labels holds megabytes; what is left after it is dropped is the
    # token memo's few thousand entries at most, far below one index
    assert built - base > 1_000_000
    assert left - base < (built - base) / 2, (base, built, left)

"""The name holders patched in O(changes): a random history of patches ends where a build from
scratch does, and a patch leaves the large node sets it does not rebuild in place.

The expected maps are worked out apart from the patch: ``held`` by :func:`invert` (its own
loop over the label index), ``bytoken`` by tokenising every label of the final state, the
layered sets against a plain Python set given the same changes.
"""

from __future__ import annotations

import random

import pytest

from kgservice.caches import layered
from kgservice.caches.layered import Layered, common
from kgservice.entry.match import LabelIndex, tokens
from kgservice.expansion.holders import Holders, invert

WORDS = ["hong", "kong", "british", "west", "chicago", "high", "school", "prague", "clock", "old", "new", "york"]


def label(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS).title() for _ in range(rng.randint(1, 3)))


def by_word(labels: dict[str, str]) -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for nid, text in labels.items():
        for t in tokens(text):
            out.setdefault(t, set()).add(nid)
    return {t: frozenset(ns) for t, ns in out.items()}


@pytest.mark.parametrize("seed", range(6))
def test_a_random_history_of_patches_ends_where_a_build_does(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # small merge thresholds: the deltas are merged into a new base now and then along the way
    monkeypatch.setattr(layered, "MERGE_MIN", 3)
    monkeypatch.setattr(layered, "MERGE_SHARE", 2)
    rng = random.Random(seed)
    labels = {f"n{i}": label(rng) for i in range(60)}
    index = LabelIndex.build(labels.items())
    held = Holders.build(index, labels)
    merged = layered_seen = 0
    for step in range(40):
        after = dict(labels)
        for _ in range(rng.randint(1, 6)):
            op = rng.random()
            if op < 0.4:
                after[f"n{rng.randint(0, 200)}"] = label(rng)  # a new node or a relabel
            elif op < 0.7 and after:
                after.pop(rng.choice(sorted(after)))
            elif after:
                after[rng.choice(sorted(after))] = label(rng)
        changed = sorted(set(labels) | set(after))  # the patch is told more than changed: it must skip the rest
        index = index.patched(labels, {n: after.get(n) for n in changed})
        held = held.patched(index, labels, after, changed)
        labels = after
        # worked out from the final labels alone
        assert {n: tuple(sorted(ids)) for n, ids in held.held.items()} == invert(
            LabelIndex.build(labels.items()), labels.items()), step
        assert {t: s.flat() for t, s in held.bytoken.items()} == by_word(labels), step
        assert dict(held.within) == dict(Holders.build(LabelIndex.build(labels.items()), labels).within), step
        layered_seen += sum(bool(s.added or s.removed) for s in held.bytoken.values())
        merged += sum(not (s.added or s.removed) for s in held.bytoken.values())
    assert layered_seen and merged  # both shapes met on the way


def test_a_patch_keeps_a_large_word_set_and_writes_only_the_change() -> None:
    labels = {f"n{i}": f"Station {i}" for i in range(2000)}
    held = Holders.build(LabelIndex.build(labels.items()), labels)
    base = held.bytoken["station"].base
    after = {**labels, "x": "Station Square", "n5": "Depot 5"}
    patched = held.patched(LabelIndex.build(after.items()), labels, after, ["x", "n5"])
    word = patched.bytoken["station"]
    assert word.base is base  # the 2,000 ids shared, not copied
    assert set(word.added) == {"x"} and set(word.removed) == {"n5"}
    assert word == {f"n{i}" for i in range(2000) if i != 5} | {"x"}
    assert held.bytoken["station"] == {f"n{i}" for i in range(2000)}  # the index before is unchanged


def test_layered_sets_follow_a_plain_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layered, "MERGE_MIN", 4)
    rng = random.Random(3)
    universe = [f"x{i}" for i in range(40)]
    model = set(rng.sample(universe, 20))
    s: Layered | None = Layered.of(model)
    others = [set(rng.sample(universe, 25)) for _ in range(2)]
    for _ in range(300):
        gone, come = set(rng.sample(universe, rng.randint(0, 4))), set(rng.sample(universe, rng.randint(0, 4)))
        model = (model - gone) | come
        s = (s or Layered.of(())).changed(gone, come)
        if not model:
            assert s is None
            model = {"x0"}
            s = Layered.of(model)
            continue
        assert s is not None
        assert s == model and len(s) == len(model) and sorted(s) == sorted(model)
        assert all((x in s) == (x in model) for x in universe)
        assert set(common([s, *map(Layered.of, others)])) == model & others[0] & others[1]
        assert set(common([Layered.of(others[0]), s])) == model & others[0]

"""Contract tests: every store procedure and both expansions, on both backends.

Expected values are derived by hand from tests/contract/corpus.py; the same assertions
run against the embedded store and the real Neo4j server, so the backends must agree.
"""

from __future__ import annotations

import pytest

from kgservice.expansion import SpreadParams, expand_directed, spread_activation
from kgservice.stores.base import IngestConflict
from tests.contract.corpus import SMALL


@pytest.fixture
def small(ingest):
    ingest(SMALL)


def test_counts(store, small):
    c = store.counts()
    assert c["units"] == 18
    # nodes: smoking, lung cancer, lit:high, who report, 吸烟, death, 香烟, cat, mammal, animal, fur,
    # cells, 哺乳动物, 乳腺, python 3.11, python, python 3.12, python 3.13, free-threaded cpython,
    # cpython, no gil, c, distutils, setuptools, pyproject build = 25
    assert c["nodes"] == 25
    # relation edges (synonym/belongs_to/of/content/related_to): s1 s2 s3 s4 a1 a2 a3 a4 a5 a6 p1 p2 p3 n2 n3 = 15
    assert c["relations"] == 15
    assert c["superseded_units"] == 2  # p1, p2
    assert c["kind:content"] == 7  # s1 s3 s4 p1 p2 p3 n3 and c["kind:synonym"] == 2 and c["kind:belongs_to"] == 2


def test_mentions_is_every_unit_about_a_node_once(store, small, ingest):
    assert store.mentions("smoking") == ["s1", "s2"]  # subject of s1, argument of s2
    for n in ("吸烟", "python", "who report", "lit:high", "nothing here"):
        assert store.mentions(n) == sorted(set(store.subject_mentions(n)) | set(store.context_mentions(n))), n
    ingest("#loop1 {feedback} [causes] {feedback}\n", doc="loop.units")
    assert store.mentions("feedback") == ["loop1"]  # subject and argument: one unit, once


def test_batched_mentions_equal_one_read_per_node(store, small):
    """mentions_of / mention_counts (one round trip on Neo4j) answer what mentions(n) answers
    node by node: unknown nodes, literals, repeats and a node with several units included."""
    nodes = ["python", "smoking", "吸烟", "lit:high", "nothing here", "python", "cpython"]
    assert store.mentions_of(nodes) == {n: store.mentions(n) for n in nodes}
    assert list(store.mentions_of(nodes)) == list(dict.fromkeys(nodes))  # the caller's order, once each
    assert store.mention_counts(nodes) == {n: len(store.mentions(n)) for n in nodes}
    assert store.mention_counts(["python"]) == {"python": 3}
    assert store.mentions_of([]) == {} and store.mention_counts([]) == {}


def test_superseded_end_of_live_unknown_and_repeated_units(store, small):
    assert store.superseded_end(["s1", "unknown", "p1", "p1"]) == {"s1": ["s1"], "unknown": ["unknown"], "p1": ["p3"]}
    assert store.superseded_end([]) == {}


def test_reverse_indexes(store, small):
    assert store.subject_mentions("smoking") == ["s1"]
    assert store.subject_mentions("吸烟") == ["s2"]
    assert store.context_mentions("smoking") == ["s2"]
    assert store.context_mentions("who report") == ["s1"]  # modifier value counts as context
    assert store.context_mentions("lit:high") == ["s1"]
    assert store.context_mentions("python") == ["p1", "p2", "p3"]
    assert store.subject_mentions("nothing here") == []
    assert store.narrowed_by("cpython") == ["free-threaded cpython"]
    assert store.narrows("free-threaded cpython") == ["cpython"]
    assert store.narrowed_by("free-threaded cpython") == []


def test_node_kinds(store, small):
    kinds = {n.id: n.kind.value for n in store.get_nodes(["free-threaded cpython", "cpython", "lit:high", "smoking"])}
    assert kinds == {"free-threaded cpython": "derived", "cpython": "entry", "lit:high": "literal", "smoking": "entry"}


def test_synonym_class_across_languages(store, small):
    assert store.synonym_class("smoking") == ["smoking", "吸烟"]
    assert store.synonym_class("吸烟") == ["smoking", "吸烟"]
    assert store.synonym_class("香烟") == ["香烟"]  # causes is not synonymy


def test_belongs_to_closure(store, small):
    assert store.belongs_to_parents(["cat"]) == ["mammal"]
    assert store.belongs_to_ancestors("cat") == {"mammal": 1, "animal": 2}
    assert store.belongs_to_ancestors("animal") == {}
    # facts on mammal (a2, a3) and animal (a4) sink to cat
    assert store.sunk_units("cat") == [("a2", "mammal"), ("a3", "mammal"), ("a4", "animal")]


def test_superseded_chain_end(store, small):
    assert store.superseded_end(["p1", "p2", "p3", "s1"]) == {"p1": ["p3"], "p2": ["p3"], "p3": ["p3"], "s1": ["s1"]}
    assert store.node_superseded_end("distutils") == ["pyproject build"]
    assert store.node_superseded_end("pyproject build") == ["pyproject build"]


def test_directed_belongs_to_sinking_and_synonyms(store, small):
    r = expand_directed(store, ["cat"])
    # a1 own; a2 a3 from mammal; a4 from animal; a5 a6 from 哺乳动物 (≡ mammal)
    assert sorted(r.units) == ["a1", "a2", "a3", "a4", "a5", "a6"]
    assert set(r.nodes) == {"cat", "mammal", "animal", "哺乳动物"}
    assert "inherited from mammal" in r.units["a3"]


def test_directed_synonym_merge(store, small):
    r = expand_directed(store, ["吸烟"])
    # class {吸烟, smoking}: subject s2 (吸烟), s1 (smoking); context s4 (吸烟), s2 (smoking)
    assert sorted(r.units) == ["s1", "s2", "s4"]
    assert "s3" not in r.units  # lung cancer -> death is two steps away: spread's job, not directed


def test_directed_superseded_chain(store, small):
    r = expand_directed(store, ["python"])
    assert sorted(r.units) == ["p3"]
    assert r.superseded == {"p1": ["p3"], "p2": ["p3"]}


def test_directed_node_supersession(store, small):
    r = expand_directed(store, ["distutils"])
    # distutils -> setuptools -> pyproject build; d1 from distutils, d2 mentions pyproject build
    assert sorted(r.units) == ["d1", "d2"]
    assert "pyproject build" in r.nodes


def test_narrowed_by_not_inherited_by_base(store, small):
    base = expand_directed(store, ["cpython"])
    assert sorted(base.units) == ["n1", "n3"]  # n2 is a fact of the derived node only
    assert "free-threaded cpython" in base.nodes
    derived = expand_directed(store, ["free-threaded cpython"])
    assert sorted(derived.units) == ["n1", "n2", "n3"]  # the derived node inherits its base's n3


def _approx(d: dict[str, float]) -> dict[str, float]:
    return {k: pytest.approx(v, abs=1e-9) for k, v in d.items()}


def test_spread_cross_language_chain(store, small):
    r = spread_activation(store, ["吸烟"], SpreadParams(epsilon=0.05, max_hops=3))
    # hop1: 吸烟 -syn .9-> smoking .9 (香烟 -> 吸烟 is a content edge: forward only, not walked back)
    # hop2: smoking -> 吸烟 .81, smoking -content .3-> lung cancer .27
    # hop3: 吸烟 -> smoking .729, lung cancer -> death .081
    assert r.energy == _approx({"吸烟": 1.81, "smoking": 1.629, "lung cancer": 0.27, "death": 0.081})
    assert [n for n, _ in r.ranked()] == ["吸烟", "smoking", "lung cancer", "death"]


def test_spread_epsilon_prunes(store, small):
    r = spread_activation(store, ["吸烟"], SpreadParams(epsilon=0.3, max_hops=3))
    # lung cancer receives .27 < ε at hop 2: it keeps the energy but does not spread to death
    assert r.energy == _approx({"吸烟": 1.81, "smoking": 1.629, "lung cancer": 0.27})


def test_spread_k_bounds_hops(store, small):
    r = spread_activation(store, ["吸烟"], SpreadParams(max_hops=2))
    assert r.energy == _approx({"吸烟": 1.81, "smoking": 0.9, "lung cancer": 0.27})


def test_spread_family_tau(store, small):
    r = spread_activation(store, ["mammal"], SpreadParams(max_hops=1))
    # out: belongs_to animal .7, of fur .5; in: belongs_to from cat .7, synonym from 哺乳动物 .9
    assert r.energy == _approx({"mammal": 1.0, "哺乳动物": 0.9, "cat": 0.7, "animal": 0.7, "fur": 0.5})


def test_spread_skips_superseded_units_and_weights_seeds(store, small):
    assert spread_activation(store, ["python 3.11"]).energy == _approx({"python 3.11": 1.0})
    r = spread_activation(store, {"python 3.13": 0.5}, SpreadParams(max_hops=1))
    assert r.energy == _approx({"python 3.13": 0.5, "python": 0.15})


def test_spread_fanout_constraint(store, small):
    # relation edges (spreading kinds, both directions): mammal 4 (a1 a2 a3 a5), cat 1, fur 1,
    # animal 2 (a2 a4), 哺乳动物 2 (a5 a6)
    exact = spread_activation(store, ["cat"], SpreadParams(max_hops=3)).energy
    assert spread_activation(store, ["cat"], SpreadParams(max_hops=3, max_fanout=4)).energy == _approx(exact)
    # mammal (4 edges > 3) receives .7 but passes nothing on
    assert spread_activation(store, ["cat"], SpreadParams(max_hops=3, max_fanout=3)).energy == _approx(
        {"cat": 1.0, "mammal": 0.7})
    # the seeds' hop is never limited: hop1 mammal -> 哺乳动物 .9, cat .7, animal .7, fur .5; hop2 only cat and fur
    # (1 edge each) pass on: cat -> mammal .49, fur -> mammal .25; hop3 mammal (4 > 1) is a hub again
    r = spread_activation(store, ["mammal"], SpreadParams(max_hops=3, max_fanout=1))
    assert r.energy == _approx({"mammal": 1.74, "哺乳动物": 0.9, "cat": 0.7, "animal": 0.7, "fur": 0.5})


def test_spread_beam(store, small):
    # hop1 as above; only the most energetic (哺乳动物 .9) spreads: -> mammal .81, 乳腺 .45;
    # hop2 frontier top-1 is mammal .81: -> 哺乳动物 .729, cat .567, animal .567, fur .405
    r = spread_activation(store, ["mammal"], SpreadParams(max_hops=3, max_fire=1))
    assert r.energy == _approx({"mammal": 1.81, "哺乳动物": 1.629, "cat": 1.267, "animal": 1.267, "fur": 0.905,
                                "乳腺": 0.45})
    assert spread_activation(store, ["mammal"], SpreadParams(max_fire=100)).energy == _approx(
        spread_activation(store, ["mammal"]).energy)
    with pytest.raises(ValueError, match="max_fire must be a positive"):
        SpreadParams(max_fire=0)


def test_reingest_is_idempotent(store, small, ingest):
    before = store.counts()
    report = ingest(SMALL)
    assert report.units_added == 0 and report.units_unchanged == 18 and report.nodes_added == 0
    assert store.counts() == before


def test_conflicting_batch_stores_nothing(store, small, ingest):
    before = store.counts()
    bad = "#new1 {x} [has] {y}\n#s1 {smoking} [causes] {heart disease}\n"
    with pytest.raises(IngestConflict, match="#s1 already exists"):
        ingest(bad)
    assert store.counts() == before
    assert store.get_units(["new1"]) == []


def test_unknown_supersedes_reference_rejected(store, ingest):
    with pytest.raises(IngestConflict, match="supersedes #ghost"):
        ingest("#x1 {a} [has] {b}\n    ()[supersedes] #ghost\n")
    assert store.counts()["units"] == 0


def test_supersession_cycle_rejected(store, ingest):
    with pytest.raises(IngestConflict, match="cycle"):
        ingest("#c1 {a} [has] {b}\n    ()[supersedes] #c2\n#c2 {a} [has] {c}\n    ()[supersedes] #c1\n")
    assert store.counts()["units"] == 0


def test_units_round_trip_through_store(store, small, lexicon):
    from kgservice.notation import format_unit, parse_units

    stored = {u.id: u for u in store.iter_units()}
    original = {u.id: u for u in parse_units(SMALL, lexicon, doc="test.units")}
    assert set(stored) == set(original)
    for uid, u in original.items():
        assert format_unit(stored[uid]) == format_unit(u)
        assert stored[uid].doc == "test.units" and stored[uid].ingested_at


def test_spread_degree_damping(store, small):
    # mammal passes along 4 (neighbour, kind) rows in hop 1: out belongs_to animal, out of fur,
    # in belongs_to cat, in synonym 哺乳动物 -> each carries 1.0 * tau / 4 ** δ
    r = spread_activation(store, ["mammal"], SpreadParams(max_hops=1, degree_damping=1.0))
    assert r.energy == _approx({"mammal": 1.0, "哺乳动物": 0.225, "cat": 0.175, "animal": 0.175, "fur": 0.125})
    r = spread_activation(store, ["mammal"], SpreadParams(max_hops=1, degree_damping=0.5))
    assert r.energy == _approx({"mammal": 1.0, "哺乳动物": 0.45, "cat": 0.35, "animal": 0.35, "fur": 0.25})
    # hop 2 (δ = 1): 哺乳动物 .225 over 2 rows (mammal .9, 乳腺 .5): mammal .10125, 乳腺 .05625;
    # cat .175 over 1 row: mammal .1225; animal .175 over 2 rows (in belongs_to mammal .7, out of
    # cells .5): mammal .06125, cells .04375; fur .125 over 1 row: mammal .0625
    r = spread_activation(store, ["mammal"], SpreadParams(max_hops=2, degree_damping=1.0))
    assert r.energy == _approx({"mammal": 1.3475, "哺乳动物": 0.225, "cat": 0.175, "animal": 0.175, "fur": 0.125,
                                "乳腺": 0.05625, "cells": 0.04375})


def test_spread_no_seed_backflow(store, small):
    # as test_spread_cross_language_chain, minus what flows back into the seed: hop 2's
    # smoking -> 吸烟 .81 is dropped, and 吸烟 never spreads again
    r = spread_activation(store, ["吸烟"], SpreadParams(max_hops=3, seed_backflow=False))
    assert r.energy == _approx({"吸烟": 1.0, "smoking": 0.9, "lung cancer": 0.27, "death": 0.081})
    # with damping, the dropped rows still count in d: hop 2 at 哺乳动物 still divides by 2
    r = spread_activation(store, ["mammal"], SpreadParams(max_hops=2, degree_damping=1.0, seed_backflow=False))
    assert r.energy == _approx({"mammal": 1.0, "哺乳动物": 0.225, "cat": 0.175, "animal": 0.175, "fur": 0.125,
                                "乳腺": 0.05625, "cells": 0.04375})

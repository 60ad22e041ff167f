"""Causal chains and derived-node inheritance, on both backends; expectations worked out by hand."""

from __future__ import annotations

import pytest

from kgservice.expansion import expand_directed
from kgservice.expansion.causal import causal_chains
from kgservice.notation import parse_units
from tests.contract.corpus import SMALL

CHAINS = """\
#c1 {drought} [causes] {crop failure}
#c2 {crop failure} [causes] {famine}
#c3 {crop failure} [leads to] {migration}
    ()[supersedes] #c2
#c5 {migration} [引起] {labour shortage}
#c6 {crop failure} [uses] {seed bank}
#c7 {labour shortage} [causes] {drought}
#c8 {migration} [replaced by] {displacement}
#c9 {displacement} [causes] {urban growth}
#c10 {drought} [causes] (dust)
"""

INHERIT = """\
#x1 {CPython} [is a] {interpreter}
#x2 {interpreter} [has] {bytecode loop}
#x3 {解释器} [同义] {interpreter}
#x4 {解释器} [uses] {字节码}
"""


def paths(res):
    return [c.units for c in res.chains]


def test_causal_step(store, ingest):
    ingest(CHAINS)
    # c2 is superseded, c6 is another content family; c10's effect is a value, (dust): a hop too
    assert store.causal_step(["crop failure", "drought"], "导致") == [
        ("crop failure", "migration", "c3"), ("drought", "crop failure", "c1"), ("drought", "lit:dust", "c10")]
    assert store.causal_step(["nothing"], "导致") == []


def test_supersession_of_a_stored_unit_retires_its_edges_like_one_inside_the_batch(store, ingest):
    # the same facts as CHAINS, but c3 arrives in a later batch and supersedes the stored c2:
    # the Neo4j store retires a stored unit's edges in another statement than an in-batch one's
    first, later = CHAINS.split("#c3 ")
    ingest(first)
    assert ("crop failure", "famine", "c2") in store.causal_step(["crop failure"], "导致")
    ingest("#c3 " + later)
    assert store.causal_step(["crop failure", "drought"], "导致") == [
        ("crop failure", "migration", "c3"), ("drought", "crop failure", "c1"), ("drought", "lit:dust", "c10")]
    assert paths(causal_chains(store, "drought")) == [["c1", "c3", "c9"], ["c1", "c3", "c5"], ["c10"]]


def test_causal_chain_follows_live_edges_and_node_supersession(store, ingest):
    ingest(CHAINS)
    r = causal_chains(store, "drought")
    # drought -c1-> crop failure -c3-> migration (c2 retired); migration is replaced by displacement,
    # so hop 3 leaves both: migration -c5-> labour shortage, displacement -c9-> urban growth;
    # drought -c10-> (dust) is a chain of one hop, ending at the value (shortest last)
    assert paths(r) == [["c1", "c3", "c9"], ["c1", "c3", "c5"], ["c10"]]
    assert r.ends == ["labour shortage", "lit:dust", "urban growth"]
    assert [(h.src, h.dst) for h in r.chains[0].hops] == [
        ("drought", "crop failure"), ("crop failure", "migration"), ("displacement", "urban growth")]
    # hop 4 would go labour shortage -c7-> drought: already on the path, so the chains stay as they are
    assert paths(causal_chains(store, "drought", max_hops=4)) == paths(r)
    assert paths(causal_chains(store, "drought", max_hops=1)) == [["c1"], ["c10"]]
    assert causal_chains(store, "urban growth").chains == []
    with pytest.raises(ValueError):
        causal_chains(store, "drought", max_hops=0)


def test_a_chain_ends_at_an_effect_stated_as_a_value(store, ingest, lexicon):
    """What a capable model wrote for "The December 2008 event caused widespread difficulties":
    the effect as a value. The chain reaches it, through a concept hop first, and stops there;
    a value never continues a chain, even when a unit elsewhere has the same words as a subject."""
    ingest("""\
#v1 {cold snap} [caused] {December 2008 snow event}
#v2 {December 2008 snow event} [caused] (widespread difficulties)
#v3 {December 2008 snow event} [is a] {moderate snow event}
#v4 {widespread difficulties} [caused] {school closures}
""")
    r = causal_chains(store, "cold snap")
    assert paths(r) == [["v1", "v2"]] and r.ends == ["lit:widespread difficulties"]
    assert [(h.src, h.dst) for h in r.chains[0].hops] == [
        ("cold snap", "december 2008 snow event"), ("december 2008 snow event", "lit:widespread difficulties")]
    assert paths(causal_chains(store, "widespread difficulties")) == [["v4"]]  # the concept of that name
    # a unit of the family read backwards (inverse: its subject is the effect) has its value as
    # the cause: no hop from the subject to it
    [back] = parse_units("#v5 {school closures} [causes] (heavy snow)", lexicon, doc="test.units")
    store.ingest([back.model_copy(update={"inverse": True})])
    assert store.causal_step(["school closures"], "导致") == []
    assert paths(causal_chains(store, "cold snap")) == [["v1", "v2"]]


def test_causal_chain_through_synonyms(store, ingest):
    ingest(SMALL)
    # 香烟 -s4-> 吸烟 ≡ smoking -s1-> lung cancer -s3-> death
    r = causal_chains(store, "香烟")
    assert paths(r) == [["s4", "s1", "s3"]] and r.ends == ["death"]
    assert paths(causal_chains(store, "香烟", max_hops=2)) == [["s4", "s1"]]


def test_derived_inherits_what_its_base_inherits(store, ingest):
    ingest(SMALL)
    ingest(INHERIT, doc="inherit.units")
    # free-threaded cpython narrows cpython; cpython is an interpreter (≡ 解释器):
    # own n1 n2, base n3 x1, the base's ancestor interpreter x2, its synonym 解释器 x3 x4
    assert sorted(expand_directed(store, ["free-threaded cpython"]).units) == ["n1", "n2", "n3", "x1", "x2", "x3", "x4"]
    # the base still does not inherit the derived node's n2
    assert sorted(expand_directed(store, ["cpython"]).units) == ["n1", "n3", "x1", "x2", "x3", "x4"]

"""The kg.* procedures resident in Neo4j (neo4j-plugin/) against the library.

Spreading activation in one `kg.spreadLists` call must give the embedded store's energies
(bit for bit with the default knobs: same additions in the same order) and, for the
degree-damping and seed-backflow knobs, the energies of a second, plain implementation
written here from the rule; the closures and `kg.expand` must answer what the embedded
store's procedures and `expand_directed` answer. Graphs: the hand-written one (values
worked out by hand below) and seeded random graphs with synonym cycles, hubs, node- and
unit-level supersession and literal arguments. Needs the real server from scripts/test,
which always loads the plugin: a server without it fails here, it is never skipped.
"""

from __future__ import annotations

from tests.neo4j_helpers import wipe_all
import dataclasses
import random
from pathlib import Path

import pytest

from kgservice.expansion import SpreadParams, expand_directed, spread_activation
from kgservice.families import RELATION_KINDS
from kgservice.notation import parse_units
from kgservice.stores.embedded import EmbeddedStore
from kgservice.stores.neo4j import Neo4jStore
from tests.contract.corpus import SMALL
from tests.contract.test_directed_prefetch import random_graph

pytestmark = pytest.mark.neo4j

HAS_KNOBS = {f.name for f in dataclasses.fields(SpreadParams)} >= {"degree_damping", "seed_backflow"}


@pytest.fixture
def neo(neo4j_connection: Neo4jStore):
    s = neo4j_connection
    wipe_all(s)
    assert "kg.spreadLists" in s.plugin_procedures(), (
        "the server has no kg.* plugin: start it with scripts/neo4j (it builds and loads neo4j-plugin/)")
    s.use_resident = None
    yield s
    s.use_resident = None


def _load(neo: Neo4jStore, text: str, lexicon, tmp_path: Path) -> EmbeddedStore:
    units = parse_units(text, lexicon, doc="graph.units")
    neo.ingest(units)
    ref = EmbeddedStore(tmp_path / "reference")
    ref.ingest(units)
    return ref


def _call(neo: Neo4jStore, query: str, **params) -> list[dict]:
    with neo.driver.session(database=neo.database) as s:
        return [r.data() for r in s.run(query, params)]


def _resident(neo: Neo4jStore, seeds: dict[str, float], *, tau=None, epsilon=0.05, max_hops=3, max_fanout=0,
              max_fire=0, degree_damping=0.0, seed_backflow=True) -> dict[str, float]:
    rows = _call(neo, "CALL kg.spread($seeds, $tau, $eps, $k, $fan, $fire, $dd, $back)", seeds=seeds, tau=tau,
                 eps=epsilon, k=max_hops, fan=max_fanout, fire=max_fire, dd=degree_damping, back=seed_backflow)
    return {r["node"]: r["energy"] for r in rows}


def reference_spread(ref: EmbeddedStore, seeds: dict[str, float], tau: dict[str, float], epsilon: float,
                     max_hops: int, max_fanout: int | None, max_fire: int | None, degree_damping: float,
                     seed_backflow: bool) -> dict[str, float]:
    """The rule, written plainly: node n passes e_n * tau[kind] / max(1, d_n) ** damping along
    each (neighbour, kind) row of this hop (d_n of them): content forward, the other kinds both
    ways, live edges, never into literals; without backflow a row into a seed still counts in
    d_n but its energy is dropped (docs/spreading.md). Fan-out from hop 2 on (stored degree),
    max_fire top-N by (energy, id)."""
    s = ref.s

    def live(edges):
        return [e for e in edges if not s.superseded_by.get(e[2])]

    def rows(n: str) -> list[tuple[str, float]]:
        out = []
        for kind in RELATION_KINDS:
            t = tau.get(kind, 0.0)
            if t <= 0:
                continue
            nbrs = {dst for _, dst, _ in live(s.out[kind].get(n, ()))}
            if kind != "content":
                nbrs |= {src for src, _, _ in live(s.inn[kind].get(n, ()))}
            out += [(m, t) for m in nbrs if not m.startswith("lit:")]
        return out

    def degree(n: str) -> int:
        return sum(len(s.out[k].get(n, ())) + len(s.inn[k].get(n, ())) for k in RELATION_KINDS)

    energy = dict(seeds)
    frontier = {n: e for n, e in seeds.items() if e >= epsilon}
    hops = 0
    while frontier and hops < max_hops:
        hops += 1
        incoming: dict[str, float] = {}
        for n, e in frontier.items():
            if n not in s.kinds or (max_fanout and hops > 1 and degree(n) > max_fanout):
                continue
            r = rows(n)
            for m, t in r:
                if seed_backflow or m not in seeds:
                    incoming[m] = incoming.get(m, 0.0) + (e / max(1, len(r)) ** degree_damping) * t
        for m, e in incoming.items():
            energy[m] = energy.get(m, 0.0) + e
        frontier = {m: e for m, e in incoming.items() if e >= epsilon}
        if max_fire and len(frontier) > max_fire:
            frontier = dict(sorted(frontier.items(), key=lambda kv: (-kv[1], kv[0]))[:max_fire])
    return energy


def _approx(d: dict[str, float]) -> dict:
    return {k: pytest.approx(v, rel=1e-12, abs=1e-15) for k, v in d.items()}


# -- the hand-written graph -------------------------------------------------------------

def test_spread_degree_damping_by_hand(neo, lexicon, tmp_path):
    _load(neo, SMALL, lexicon, tmp_path).close()
    # mammal passes along 4 rows: belongs_to animal, cat; of fur; synonym 哺乳动物 -> each / 4
    assert _resident(neo, {"mammal": 1.0}, max_hops=1, degree_damping=1.0) == _approx(
        {"mammal": 1.0, "哺乳动物": 0.225, "cat": 0.175, "animal": 0.175, "fur": 0.125})
    # damping 0.5: / sqrt(4) = / 2
    assert _resident(neo, {"mammal": 1.0}, max_hops=1, degree_damping=0.5) == _approx(
        {"mammal": 1.0, "哺乳动物": 0.45, "cat": 0.35, "animal": 0.35, "fur": 0.25})


def test_spread_without_seed_backflow_by_hand(neo, lexicon, tmp_path):
    _load(neo, SMALL, lexicon, tmp_path).close()
    # hop1 cat -> mammal .7; hop2 mammal -> animal .49, fur .35, 哺乳动物 .63 (not back to cat);
    # hop3 animal -> mammal .343, cells .245; fur -> mammal .175; 哺乳动物 -> mammal .567, 乳腺 .315
    got = _resident(neo, {"cat": 1.0}, seed_backflow=False)
    assert got == _approx({"cat": 1.0, "mammal": 1.785, "animal": 0.49, "fur": 0.35, "哺乳动物": 0.63,
                           "cells": 0.245, "乳腺": 0.315})
    # with damping: hop2 mammal has 4 rows (the one back to cat, a seed, counts but carries nothing) -> each / 4
    got = _resident(neo, {"cat": 1.0}, max_hops=2, degree_damping=1.0, seed_backflow=False)
    assert got == _approx({"cat": 1.0, "mammal": 0.7, "animal": 0.49 / 4, "fur": 0.35 / 4, "哺乳动物": 0.63 / 4})


def test_spread_rows_ordered_and_unknown_seeds_kept(neo, lexicon, tmp_path):
    _load(neo, SMALL, lexicon, tmp_path).close()
    rows = _call(neo, "CALL kg.spread({`吸烟`: 1.0, `not a node`: 0.5})")
    # the lexicon's δ 0.5 and no backflow (the procedure's defaults, as the service's): the seeds
    # keep their energy (吸烟 1.0; not a node .5: kept, spreads nothing), then smoking, lung cancer, death
    assert [r["node"] for r in rows] == ["吸烟", "smoking", "not a node", "lung cancer", "death"]
    assert rows[2]["energy"] == 0.5


def test_spread_rejects_bad_arguments(neo):
    from neo4j.exceptions import ClientError

    for query, words in [("CALL kg.spread({a: 1.0}, {causes: 0.5})", "does not walk"),
                         ("CALL kg.spread({a: 1.0}, null, 0.05, 0)", "maxHops"),
                         ("CALL kg.spread({a: 1.0}, null, 1.5)", "epsilon"),
                         ("CALL kg.spread({a: 'x'})", "numeric energy"),
                         ("CALL kg.spread({a: 1.0}, null, 0.05, 3, 0, 0, 0.0, true, -1)", "limit"),
                         ("CALL kg.spread({a: 1.0}, null, 0.05, 3, 0, 0, 'high')", "degreeDamping"),
                         ("CALL kg.spread({a: 1.0}, null, 0.05, 3, 0, 0, null, 'yes')", "seedBackflow"),
                         ("CALL kg.spreadLists({a: 1.0}, null, 0.05, 3, 0, 0, 0.0, true, 0, 'fast')", "engine")]:
        with pytest.raises(ClientError, match=words):
            _call(neo, query)


# -- spreading on the hand-written and random graphs ---------------------------------------

GRAPHS = [("small", SMALL)] + [(f"random-{seed}", None) for seed in (1, 2, 3)]


def _graph(name: str, text: str | None) -> str:
    if text is not None:
        return text
    seed = int(name.split("-")[1])
    rng = random.Random(seed * 101)
    extra = [f"#lit{i} {{n{rng.randrange(60)}}} [released in] ({1990 + i})" for i in range(12)]
    return random_graph(seed) + "\n".join(extra) + "\n"


KNOBS = [dict(), dict(max_hops=4, epsilon=0.01), dict(max_fanout=6), dict(max_fire=5), dict(max_fanout=8, max_fire=3),
         dict(degree_damping=0.5), dict(degree_damping=1.0, epsilon=0.01), dict(seed_backflow=False),
         dict(degree_damping=0.7, seed_backflow=False, max_fanout=10, max_fire=8, max_hops=5, epsilon=0.01)]


@pytest.mark.parametrize("name,text", GRAPHS, ids=[g[0] for g in GRAPHS])
def test_resident_spread_equals_library(neo, lexicon, tmp_path, name, text):
    ref = _load(neo, _graph(name, text), lexicon, tmp_path)
    try:
        ids = sorted(ref.s.kinds)
        rng = random.Random(5)
        seed_sets = [{i: 1.0} for i in ids[:: max(1, len(ids) // 25)]] + [
            {i: rng.choice([1.0, 0.6, 0.04]) for i in rng.sample(ids, 3)} for _ in range(6)] + [{"not a node": 1.0}]
        tau = dict(SpreadParams().tau)
        compared = 0
        for seeds in seed_sets:
            # default knobs through the library: the resident call is the embedded hop loop, bit for bit
            params = SpreadParams()
            neo.use_resident = None
            got = spread_activation(neo, seeds, params)
            assert neo.use_resident is True
            want = spread_activation(ref, seeds, params)
            assert got.energy == want.energy, seeds
            assert got.hops == want.hops
            neo.use_resident = False  # the Cypher hop loop still agrees (its sums come in another order)
            assert spread_activation(neo, seeds, params).energy == _approx(want.energy)
            for knobs in KNOBS:
                k = dict(epsilon=0.05, max_hops=3, max_fanout=None, max_fire=None, degree_damping=0.0,
                         seed_backflow=True) | knobs
                expect = reference_spread(ref, seeds, tau, **k)
                got_knobs = _resident(neo, seeds, tau=tau, **(k | dict(max_fanout=k["max_fanout"] or 0,
                                                                         max_fire=k["max_fire"] or 0)))
                assert got_knobs == _approx(expect), (seeds, knobs)
                compared += len(expect) > len(seeds)
                if HAS_KNOBS or not {"degree_damping", "seed_backflow"} & set(knobs):
                    lib_knobs = k if HAS_KNOBS else {a: b for a, b in k.items() if a not in ("degree_damping", "seed_backflow")}
                    lib = spread_activation(ref, seeds, SpreadParams(**lib_knobs))
                    assert got_knobs == _approx(lib.energy), (seeds, knobs)
        assert compared > 20  # energy really spread
    finally:
        ref.close()


def test_library_falls_back_without_plugin(neo, lexicon, tmp_path):
    """A server without the plugin (simulated: its procedure list comes back empty)."""
    ref = _load(neo, SMALL, lexicon, tmp_path)
    try:
        neo.use_resident = None
        original = neo.plugin_procedures
        neo.plugin_procedures = lambda: set()  # type: ignore[method-assign]
        try:
            got = spread_activation(neo, ["mammal"])
        finally:
            del neo.plugin_procedures
        assert neo.use_resident is False
        assert original() >= {"kg.spread", "kg.spreadLists"}
        assert got.energy == _approx(spread_activation(ref, ["mammal"]).energy)
    finally:
        ref.close()


# -- closures and directed expansion -------------------------------------------------------

@pytest.mark.parametrize("name,text", GRAPHS, ids=[g[0] for g in GRAPHS])
def test_resident_closures_equal_library(neo, lexicon, tmp_path, name, text):
    ref = _load(neo, _graph(name, text), lexicon, tmp_path)
    try:
        nodes = sorted(ref.s.kinds) + ["not a node"]
        for n in nodes:
            assert [r["node"] for r in _call(neo, "CALL kg.synonymClass($n)", n=n)] == ref.synonym_class(n), n
            closure = _call(neo, "CALL kg.belongsToClosure($n)", n=n)
            assert {r["ancestor"]: r["depth"] for r in closure} == ref.belongs_to_ancestors(n), n
            assert [(r["depth"], r["ancestor"]) for r in closure] == sorted((d, a) for a, d in ref.belongs_to_ancestors(n).items())
            for r in closure:
                assert r["units"] == ref.subject_mentions(r["ancestor"])
            assert [r["node"] for r in _call(neo, "CALL kg.nodeSupersededEnd($n)", n=n)] == ref.node_superseded_end(n), n
            assert [r["unit"] for r in _call(neo, "CALL kg.subjectMentions($n)", n=n)] == ref.subject_mentions(n), n
            assert [r["unit"] for r in _call(neo, "CALL kg.contextMentions($n)", n=n)] == ref.context_mentions(n), n
            assert [r["node"] for r in _call(neo, "CALL kg.narrowedBy($n)", n=n)] == ref.narrowed_by(n), n
            assert [r["node"] for r in _call(neo, "CALL kg.narrows($n)", n=n)] == ref.narrows(n), n
        units = sorted(ref.s.units) + ["not a unit"]
        ends = {r["unit"]: r["ends"] for r in _call(neo, "CALL kg.supersededEnd($u)", u=units)}
        assert ends == ref.superseded_end(units)
        assert any(v != [k] for k, v in ends.items())  # the graph has supersession chains
    finally:
        ref.close()


def _expand_rows(neo: Neo4jStore, seeds: list[str]) -> dict:
    out: dict = {"seeds": seeds, "nodes": {}, "units": {}, "superseded": {}}
    for r in _call(neo, "CALL kg.expand($s)", s=seeds):
        out[{"node": "nodes", "unit": "units", "superseded": "superseded"}[r["kind"]]][r["id"]] = r["why"]
    return out


@pytest.mark.parametrize("name,text", GRAPHS, ids=[g[0] for g in GRAPHS])
def test_resident_expand_equals_library(neo, lexicon, tmp_path, name, text):
    ref = _load(neo, _graph(name, text), lexicon, tmp_path)
    try:
        ids = sorted(ref.s.kinds)
        rng = random.Random(9)
        found = 0
        for seeds in [[i] for i in ids] + [["not a node"], ["not a node", ids[0]]] + [rng.sample(ids, 3) for _ in range(8)]:
            want = expand_directed(ref, seeds).to_dict()
            got = _expand_rows(neo, seeds)
            assert got == want, seeds
            assert list(got["nodes"]) == list(want["nodes"])  # rows come ordered as to_dict orders them
            found += bool(want["units"])
        assert found > 5
    finally:
        ref.close()


# -- the resident graph: engines agree, top-N, coherence with the store ------------------------

def _lists(neo: Neo4jStore, seeds: dict[str, float], engine: str, limit: int = 0, **knobs) -> dict:
    k = dict(tau=dict(SpreadParams().tau), epsilon=0.05, max_hops=3, max_fanout=0, max_fire=0,
             degree_damping=0.0, seed_backflow=True) | knobs
    rows = _call(neo, "CALL kg.spreadLists($seeds, $tau, $epsilon, $max_hops, $max_fanout, $max_fire, "
                      "$degree_damping, $seed_backflow, $limit, $engine)", seeds=seeds, limit=limit, engine=engine, **k)
    r = rows[0]
    assert r["engine"] == engine
    return {"energy": dict(zip(r["nodes"], r["energies"])), "hops": r["hops"], "activated": r["activated"]}


@pytest.mark.parametrize("name,text", GRAPHS, ids=[g[0] for g in GRAPHS])
def test_resident_engine_equals_store_walk(neo, lexicon, tmp_path, name, text):
    """The in-memory graph and the per-call store walk: the same energies bit for bit, under
    every knob (the same additions in the same order), and the same top-N."""
    _load(neo, _graph(name, text), lexicon, tmp_path).close()
    ids = sorted(_call(neo, "MATCH (n:Node) RETURN n.id AS id ORDER BY id"), key=lambda r: r["id"])
    ids = [r["id"] for r in ids]
    rng = random.Random(11)
    spread_any = 0
    for seeds in [{i: 1.0} for i in ids[:: max(1, len(ids) // 15)]] + [
            {i: rng.choice([1.0, 0.6, 0.04]) for i in rng.sample(ids, 3)} for _ in range(4)]:
        for knobs in KNOBS:
            walk = _lists(neo, seeds, "walk", **knobs)
            res = _lists(neo, seeds, "resident", **knobs)
            assert res == walk, (seeds, knobs)
            spread_any += len(res["energy"]) > len(seeds)
            top = _lists(neo, seeds, "resident", limit=3, **knobs)
            want = sorted(walk["energy"].items(), key=lambda kv: (-kv[1], kv[0]))[:3]
            assert sorted(top["energy"].items(), key=lambda kv: (-kv[1], kv[0])) == want
            assert top["activated"] == walk["activated"] == len(walk["energy"])
    assert spread_any > 20
    stats = _call(neo, "CALL kg.spreadGraph()")[0]
    assert stats["engine"] == "resident" and stats["nodes"] == len(ids) and stats["rows"] > 0 and stats["bytes"] > 0


def test_spread_limit_through_the_library(neo, lexicon, tmp_path):
    ref = _load(neo, SMALL, lexicon, tmp_path)
    try:
        params = SpreadParams(degree_damping=0.5, seed_backflow=False)
        for seeds in (["mammal"], ["吸烟", "not a node"], {"cat": 1.0, "animal": 0.3}):
            full = spread_activation(ref, seeds, params)
            for limit in (1, 2, 5, 100):
                got = spread_activation(neo, seeds, params, limit=limit)
                assert neo.use_resident is True
                assert list(got.energy.items()) == full.ranked(limit)
                assert got.activated == len(full.energy) and got.hops == full.hops
                hop_loop = spread_activation(ref, seeds, params, limit=limit)  # the library's own cut agrees
                assert list(hop_loop.energy.items()) == full.ranked(limit) and hop_loop.activated == len(full.energy)
        with pytest.raises(ValueError, match="limit"):
            spread_activation(neo, ["mammal"], params, limit=0)
    finally:
        ref.close()


MORE = """\
#m1 {mammal} [has] {whiskers}
#m2 {whiskers} [belongs to] {sensor}
#m3 {dog} [belongs to] {mammal}
"""
RETIRE = """\
#a7 {mammal} [has] {hair}
    ()[supersedes] #a3
"""


def test_resident_graph_follows_ingests_supersessions_and_wipes(neo, lexicon, tmp_path):
    """Spread, change the store, spread again: the resident graph answers as the embedded store
    given the same changes: new nodes and edges (patched from the change log), a supersession
    that retires edges between nodes the new unit does not mention (fur loses its row to
    mammal), a wipe followed by another graph with the same change-log version (a new epoch),
    and an edge written behind the change log's back (the relationship-count guard)."""
    ref = _load(neo, SMALL, lexicon, tmp_path)
    seeds = ["cat", "fur", "whiskers"]

    def same() -> None:
        for s in seeds + ["mammal"]:
            got = spread_activation(neo, [s])
            assert neo.use_resident is True
            assert got.energy == spread_activation(ref, [s]).energy, s

    try:
        same()
        before = _call(neo, "CALL kg.spreadGraph()")[0]
        for text in (MORE, RETIRE):
            units = parse_units(text, lexicon, doc="more.units")
            neo.ingest(units)
            ref.ingest(units)
            same()
        after = _call(neo, "CALL kg.spreadGraph()")[0]
        assert after["rebuilds"] == before["rebuilds"]  # patched, not rebuilt
        assert after["patches"] >= before["patches"] + 2 and after["nodes"] == before["nodes"] + 4
        assert "mammal" not in spread_activation(neo, ["fur"]).energy  # the retired row is gone
        assert "hair" in spread_activation(neo, ["mammal"]).energy
    finally:
        ref.close()
    # a wipe keeps the version moving (it logs "everything"), then a different graph: the
    # resident graph must not patch the old one
    version = neo.read("changes_version")[0]["version"]
    neo.wipe()
    assert neo.read("changes_version")[0]["version"] > version
    other = "\n".join(f"#w{i} {{mammal}} [has] {{part {i}}}" for i in range(version)) + "\n"
    ref2 = EmbeddedStore(tmp_path / "reference2")
    try:
        for line in other.splitlines():
            units = parse_units(line + "\n", lexicon, doc="other.units")
            neo.ingest(units)
            ref2.ingest(units)
        got = spread_activation(neo, ["mammal"])
        assert got.energy == spread_activation(ref2, ["mammal"]).energy
        assert "cat" not in got.energy and f"part {version - 1}" in got.energy
        # an edge created by hand (no change-log entry): the count guard notices
        _call(neo, "MATCH (a:Node {id: 'part 0'}), (b:Node {id: 'part 1'}) "
                   "CREATE (a)-[:SYNONYM {kind: 'synonym', family: 'synonym', unit: 'hand', live: true}]->(b)")
        assert spread_activation(neo, ["part 0"]).energy["part 1"] > 0
    finally:
        ref2.close()


def test_resident_graph_rebuilds_after_index_rebuild(neo, lexicon, tmp_path):
    """kg doctor's index rebuild drops and re-derives edges without naming nodes: it logs a
    change for everything, and the next spread rebuilds its graph."""
    _load(neo, SMALL, lexicon, tmp_path).close()
    spread_activation(neo, ["cat"])
    before = _call(neo, "CALL kg.spreadGraph()")[0]["rebuilds"]
    neo.rebuild_indexes()
    spread_activation(neo, ["cat"])
    assert _call(neo, "CALL kg.spreadGraph()")[0]["rebuilds"] == before + 1
    assert neo.read("changes_since", after=0, upto=10**9)[-1]["all"] is True

"""``kg doctor``: break each kind of graph <-> vector / reverse-index consistency on purpose,
on both backends, check it is found, repair it, and check the repaired store answers every
query exactly like a store that was never broken."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from kgservice.admin import doctor
from kgservice.cli.app import app
from kgservice.expansion import expand_directed, spread_activation
from kgservice.notation import parse_units
from tests.contract.corpus import SMALL
from tests.reliability.conftest import state_of

STAMP = "2025-01-01T00:00:00+00:00"


def small_units(lexicon):
    return [u.model_copy(update={"ingested_at": STAMP}) for u in parse_units(SMALL, lexicon, doc="small.units")]


PROBES = ("cat", "smoking", "吸烟", "python", "cpython", "distutils", "mammal", "fur")


def answers(store, nodes=None) -> dict:
    """Every procedure and both expansions for every node (or the given ones): what queries observe."""
    out = {}
    for n in sorted(nodes or (x.id for x in store.iter_nodes())):
        out[n] = (store.subject_mentions(n), store.context_mentions(n), store.narrowed_by(n), store.narrows(n),
                  store.synonym_class(n), store.belongs_to_ancestors(n), store.sunk_units(n), store.node_superseded_end(n),
                  expand_directed(store, [n]).to_dict(), sorted(spread_activation(store, [n]).energy.items()))
    ids = sorted(u.id for u in store.iter_units())
    out["#ends"] = store.superseded_end(ids)
    return out


# -- tampering: what a bug, a crash of an older version, or a hand edit could leave behind -------

def _cypher(store, query: str, **params) -> None:
    store.driver.execute_query(query, params, database_=store.database)


def _embedded_edge_drop(s, kind: str, unit: str) -> None:
    for side in (s.out[kind], s.inn[kind]):
        for key, edges in list(side.items()):
            side[key] = [e for e in edges if e[2] != unit]
    if kind in ("synonym", "belongs_to", "of", "content", "related_to"):
        s.relations -= 1


def tamper(store, what: str) -> None:
    if store.backend == "neo4j":
        q = {
            "subject_missing": "MATCH (:Unit {id: 's1'})-[e:SUBJECT]->() DELETE e",
            "context_extra": "MATCH (u:Unit {id: 's3'}), (n:Node {id: 'cat'}) CREATE (u)-[:ARG {pos: 7}]->(n)",
            "relation_missing": "MATCH ()-[r:BELONGS_TO {unit: 'a1'}]->() DELETE r",
            "relation_extra": "MATCH (a:Node {id: 'cat'}), (b:Node {id: 'death'}) "
                              "CREATE (a)-[:CONTENT {kind: 'content', family: 'x', unit: 'a1', live: true}]->(b)",
            "stale_live": "MATCH ()-[r {unit: 'p1'}]->() SET r.live = true",
            "supersession_missing": "MATCH (:Unit {id: 'p1'})-[s:SUPERSEDED_BY]->() DELETE s",
            "orphan_node": "CREATE (:Node {ws: 'default', id: 'orphan', label: 'orphan', kind: 'entry'})",
            "node_missing": "MATCH (n:Node {id: 'fur'}) DETACH DELETE n",
            "wrong_kind": "MATCH (n:Node {id: 'free-threaded cpython'}) SET n.kind = 'entry'",
            "dangling_unit": "MATCH (u:Unit {id: 'p1'}) DETACH DELETE u",
        }[what]
        _cypher(store, q)
        return
    s = store.s
    if what == "subject_missing":
        s.subject["smoking"] = [u for u in s.subject["smoking"] if u != "s1"]
    elif what == "context_extra":
        s.context["cat"] = sorted(s.context.get("cat", []) + ["s3"])
    elif what == "relation_missing":
        _embedded_edge_drop(s, "belongs_to", "a1")
    elif what == "relation_extra":
        s.out["content"].setdefault("cat", []).append(("cat", "death", "a1"))
        s.inn["content"].setdefault("death", []).append(("cat", "death", "a1"))
    elif what in ("stale_live", "supersession_missing"):
        s.superseded_by["p1"] = [u for u in s.superseded_by["p1"] if u != "p2"]
    elif what == "orphan_node":
        s.kinds["orphan"], s.labels["orphan"] = "entry", "orphan"
    elif what == "node_missing":
        del s.kinds["fur"], s.labels["fur"]
        s.context.pop("fur", None)
        _embedded_edge_drop(s, "of", "a3")
    elif what == "wrong_kind":
        s.kinds["free-threaded cpython"] = "entry"
    elif what == "dangling_unit":
        del s.units["p1"]
    store._write_snapshot()  # as if it had been on disk like this


EXPECT = {  # tampering -> (check, problem) findings it must produce
    "subject_missing": {("subject_index", "missing")},
    "context_extra": {("context_index", "extra")},
    "relation_missing": {("relations", "missing")},
    "relation_extra": {("relations", "extra")},
    "stale_live": {("relations", "stale_live")},
    "supersession_missing": {("supersessions", "missing")},
    "orphan_node": {("nodes", "orphan (no unit mentions it)"), ("nodes_without_vectors", "missing vector")},
    "node_missing": {("nodes", "missing")},
    "wrong_kind": {("nodes", "wrong_kind")},
}


_REFERENCE: dict[str, tuple] = {}  # backend -> (answers, state) of a never-broken store


@pytest.fixture
def healthy(backend, make_kb, lexicon):
    kb = make_kb(backend)
    kb.ingest_units(small_units(lexicon))
    if backend not in _REFERENCE:
        first = doctor.check(kb)
        assert first.ok, [f.line() for f in first.findings]
        assert first.vectors == first.nodes - 1  # every node but the literal (high) has its vector
        # state_of holds every derived row; answers() on probe nodes checks the procedures read them alike
        _REFERENCE[backend] = (answers(kb.store, PROBES), state_of(kb.store))
    return (kb, *_REFERENCE[backend])


@pytest.mark.parametrize("what", sorted(EXPECT))
def test_break_each_and_repair(what, healthy):
    kb, reference, state = healthy
    tamper(kb.store, what)
    report = doctor.check(kb)
    found = {(f.check, f.problem) for f in report.findings}
    assert EXPECT[what] <= found, [f.line() for f in report.findings]
    # the backend-specific extras a tampering implies are fine, anything unrepairable is not
    assert all(f.repairable for f in report.findings)
    repaired = doctor.repair(kb, report)
    assert repaired.after is not None and repaired.after.ok, [f.line() for f in repaired.after.findings]
    assert state_of(kb.store) == state
    assert answers(kb.store, PROBES) == reference


def test_vectors_without_nodes_and_nodes_without_vectors(healthy):
    kb, reference, _ = healthy
    kb.vectors.delete(["smoking", "mammal"])
    kb.vectors.upsert(["ghost", "lit:high"], np.ones((2, kb.embedder.dim), dtype=np.float32),
                      [{"label": "ghost"}, {"label": "high"}])
    report = doctor.check(kb)
    (without,) = report.of("nodes_without_vectors")
    (stray,) = report.of("vectors_without_nodes")
    assert without.nodes == ["mammal", "smoking"] and stray.nodes == ["ghost", "lit:high"]
    assert not report.of("nodes") and not report.of("subject_index")
    fixed = doctor.repair(kb, report)
    assert fixed.repaired == {"vectors_deleted": 2, "vectors_embedded": 2}
    assert fixed.after.ok
    assert kb.vector_entry("smoking", top_k=1)[0].node_id == "smoking"


def test_vector_collection_of_another_model_is_recreated(healthy, make_kb):
    kb, _, _ = healthy
    other = make_kb(kb.store.backend, name="kb", wipe=False, embedder="hash:32")  # same data dir, another model
    kb.close()
    report = doctor.check(other)
    assert report.of("vector_collection", "model mismatch") and report.vectors is None
    fixed = doctor.repair(other, report)
    assert fixed.repaired["vectors_recreated"] and fixed.repaired["vectors_embedded"] == report.nodes - 1
    assert fixed.after.ok and other.vectors.dim == 32


def test_unrepairable_problems_are_reported_not_guessed(healthy):
    kb, _, _ = healthy
    tamper(kb.store, "dangling_unit")  # p2 supersedes #p1, which is gone
    report = doctor.check(kb)
    (f,) = report.of("units", "dangling reference")
    assert not f.repairable and "#p2 -> #p1" in f.examples
    after = doctor.repair(kb, report).after
    assert after.of("units", "dangling reference")  # still there: restore from a dump


def test_repair_refused_read_only(healthy, make_kb):
    kb, _, _ = healthy
    if kb.store.backend == "neo4j":
        ro = make_kb("neo4j", name="ro", read_only=True)
        assert doctor.check(ro, vectors=False).ok  # checking is a read: allowed
    else:
        kb.settings = kb.settings.with_overrides(read_only=True)
        ro = kb
    from kgservice.stores.base import ReadOnlyError

    with pytest.raises(ReadOnlyError):
        doctor.repair(ro, vectors=False)


def test_cli_doctor_finds_repairs_and_exit_codes(tmp_path, lexicon):
    runner = CliRunner()
    base = ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64"]
    f = tmp_path / "small.units"
    f.write_text(SMALL, "utf-8")
    assert runner.invoke(app, [*base, "ingest", str(f)]).exit_code == 0
    ok = runner.invoke(app, [*base, "doctor"])
    assert ok.exit_code == 0 and "consistent" in ok.stdout
    from kgservice.stores.embedded import EmbeddedStore

    store = EmbeddedStore(tmp_path / "kg" / "graph")
    tamper(store, "subject_missing")
    tamper(store, "orphan_node")
    store.close()
    bad = runner.invoke(app, [*base, "doctor", "--json"])
    assert bad.exit_code == 1
    rep = json.loads(bad.stdout)
    assert not rep["ok"] and {f["check"] for f in rep["findings"]} >= {"subject_index", "nodes", "nodes_without_vectors"}
    fixed = runner.invoke(app, [*base, "doctor", "--repair"])
    assert fixed.exit_code == 0, fixed.output
    assert "repaired" in fixed.stdout and fixed.stdout.strip().endswith("consistent")
    assert runner.invoke(app, [*base, "doctor", "--no-vectors"]).exit_code == 0


def test_duplicate_aliases_are_checked(healthy):
    """Merged-duplicate aliases: one whose id is also a stored unit's is never read (deleted by
    --repair); one naming no stored unit is damage (reported, left for a restore)."""
    kb, reference, state = healthy
    store = kb.store
    kb.ingest_notation("#dup1 {cat} [is a] {mammal}\n", doc="dup.units")  # a1 states it already
    assert store.aliases(["dup1"]) == {"dup1": "a1"}
    assert doctor.check(kb, vectors=False).ok  # a real merge is no finding
    assert store.add_aliases({"s1": "s3", "gone": "no-such-unit"}) == 2  # a race, a lost unit
    report = doctor.check(kb, vectors=False)
    (shadowed,) = report.of("aliases", doctor.ALIAS_SHADOWED)
    (dangling,) = report.of("aliases", doctor.ALIAS_DANGLING)
    assert shadowed.examples == ["#s1 -> #s3"] and shadowed.repairable and shadowed.category == "drifted"
    assert dangling.examples == ["#gone -> #no-such-unit"] and not dangling.repairable
    assert dangling.category == "damaged" and "kg restore" in dangling.fix
    fixed = doctor.repair(kb, report, vectors=False)
    assert fixed.repaired == {"aliases_removed": 1}
    assert [(f.check, f.problem) for f in fixed.after.findings] == [("aliases", doctor.ALIAS_DANGLING)]
    assert store.aliases(None) == {"dup1": "a1", "gone": "no-such-unit"}
    assert answers(store, PROBES) == reference
    if store.backend == "embedded":  # the deletion is on disk, not only in memory
        from kgservice.stores.embedded import EmbeddedStore

        assert EmbeddedStore(store.dir).aliases(None) == {"dup1": "a1", "gone": "no-such-unit"}

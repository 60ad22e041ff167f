"""Admin operations that change stored data outside an ingest (relabel, index rebuild, wipe,
restore --replace, vector repair) move the change-log version, so another knowledge base's
caches on the same store drop what depended on them (issue 15). Two KnowledgeBase instances
on the test Neo4j, each with its own cache file, as two servers would be."""

from __future__ import annotations

from tests.neo4j_helpers import wipe_all
import pytest

from kgservice.notation import parse_units
from kgservice.service import KnowledgeBase
from tests.jobs.conftest import neo4j_over
from tests.pipeline.conftest import CORPUS, ask_params, make_settings

PY, SMOKE = "Who created Python?", "What does smoking cause?"


@pytest.fixture
def pair(tmp_path, neo4j_connection):
    wipe_all(neo4j_connection)
    a = KnowledgeBase(make_settings(tmp_path / "a", **neo4j_over()))
    b = KnowledgeBase(make_settings(tmp_path / "b", **neo4j_over()))
    a.ingest_units(parse_units(CORPUS, a.lexicon, doc="corpus.units"))
    yield a, b
    a.close()
    b.close()


def _warm(a):
    from kgservice.pipeline import ask

    for q in (PY, SMOKE):
        ask(a, q, params=ask_params())
        assert ask(a, q, params=ask_params()).llm["calls"] == 0


def _calls(a, q) -> int:
    from kgservice.pipeline import ask

    return ask(a, q, params=ask_params()).llm["calls"]


def test_relabel_on_b_invalidates_only_what_depends_on_the_node(pair, boundary):
    a, b = pair
    _warm(a)
    assert b.store.relabel_nodes({"python": "Python (language)"}) == 1
    assert _calls(a, SMOKE) == 0  # unrelated: still a hit
    assert a.caches.last_sync["replayed"] == 1 and a.caches.last_sync["cleared"] is False
    assert _calls(a, PY) > 0  # depended on python: recomputed


def test_rebuild_indexes_on_b_is_replayed_on_a(pair, boundary):
    a, b = pair
    _warm(a)
    b.store.rebuild_indexes(["p1"])
    # A rebuild re-derives edge liveness and node kinds across the whole graph, not only p1's
    # nodes, so it is logged as "everything" (on both backends): A drops every entry.
    assert _calls(a, SMOKE) > 0
    assert a.caches.last_sync["cleared"] is True
    assert _calls(a, PY) > 0


def test_wipe_then_more_ingests_than_before_still_clears_a(pair, boundary):
    """The version never restarts: before, a wipe reset it to 0 and enough later ingests could
    bring it back past the version A had seen, so A replayed only those and kept serving
    answers about wiped units."""
    from kgservice.pipeline import ask

    a, b = pair
    _warm(a)
    seen = a.caches.last_sync["version"]
    b.store.wipe()
    for i in range(seen + 2):  # more batches than A's version, none about Python
        b.ingest_units(parse_units(f"#w{i} {{widget {i}}} [is a] {{gadget}}", b.lexicon))
    res = ask(a, PY, params=ask_params())
    assert a.caches.last_sync["cleared"] is True and a.caches.last_sync["version"] > seen + 2
    assert res.cited == [] and not res.found  # p1 is gone: not answered from the old cache


def test_restore_replace_on_b_clears_a(pair, boundary, tmp_path):
    a, b = pair
    _warm(a)
    dump = tmp_path / "kb.dump"
    b.dump(dump)
    b.restore(dump, replace=True)
    assert _calls(a, SMOKE) > 0 and a.caches.last_sync["cleared"] is True


def test_key_changes_move_the_version_but_invalidate_nothing(pair, boundary):
    from kgservice.stores.changelog import bump_version

    a, b = pair
    _warm(a)
    v = a.caches.clock.feed.version()
    assert bump_version(b.store, by="admin") == v + 1
    assert _calls(a, PY) == 0 and _calls(a, SMOKE) == 0
    assert a.caches.last_sync["replayed"] == 0  # the second ask: nothing new since the first replayed it


def test_swap_carries_the_version_up(tmp_path):
    """Embedded store: a directory built beside the old one gets a version above the old one's
    with an "everything" change, so readers clear instead of trusting a restarted count."""
    from kgservice.stores.changelog import SqliteChangeFeed, carry_version, record_embedded_change

    old, new = tmp_path / "graph", tmp_path / "graph.building"
    old.mkdir()
    new.mkdir()
    for i in range(5):
        record_embedded_change(old, [f"n{i}"])
    record_embedded_change(new, ["x"])  # the new store's own single batch: version 1
    assert carry_version(old, new) == 6
    feed = SqliteChangeFeed(new)
    assert feed.version() == 6 and feed.since(1, 6)[-1].everything is True
    feed.close()
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "changes.sqlite3").write_bytes(b"not a database")
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    assert carry_version(damaged, fresh) > 1_000_000_000  # unreadable old log: the clock's seconds stand in


def test_vector_repair_on_b_logs_the_nodes_whose_vectors_changed(pair, boundary):
    from kgservice.admin import doctor

    a, b = pair
    b.embed_nodes([n.id for n in b.store.iter_nodes() if not n.id.startswith("lit:")])
    _warm(a)
    v = a.caches.clock.feed.version()
    b.vectors.delete(["smoking"])
    fixed = doctor.repair(b, vectors=True)
    assert fixed.repaired["vectors_embedded"] == 1
    (change,) = a.caches.clock.feed.since(v, v + 1)
    assert change.touched == ["smoking"] and not change.everything
    assert _calls(a, PY) == 0  # python's entries do not depend on smoking
    assert _calls(a, SMOKE) > 0

"""The plugin's resident spreading graph is one per workspace, and an ingest into another
workspace of the same database leaves it as it is (docs/spreading.md, docs/workspaces.md).

The graph's guard against edges written behind the change log's back compares relationship
counts, and the count store only has the whole database's: an ingest into team-b moved them, and
team-a's next spread rebuilt its graph. The counter that shows it is ``kg.spreadGraph(ws)``'s
``rebuilds``; the spreads' energies are checked against the embedded store given the same units,
so a graph kept when it should have changed would fail here too. Needs the real server with the
plugin (scripts/neo4j), as tests/contract/test_resident.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kgservice.expansion import spread_activation
from kgservice.notation import parse_units
from kgservice.stores.embedded import EmbeddedStore
from kgservice.stores.neo4j import Neo4jStore
from tests.conftest import _neo4j_params
from tests.contract.corpus import SMALL
from tests.neo4j_helpers import wipe_all

pytestmark = pytest.mark.neo4j

B_UNITS = "#b1 {violin} [has] {strings}\n#b2 {strings} [belongs to] {instrument}\n"
B_MORE = "#b3 {cello} [belongs to] {instrument}\n"
A_MORE = "#m1 {mammal} [has] {whiskers}\n#m2 {whiskers} [belongs to] {sensor}\n"
SEEDS = ["cat", "mammal", "smoking"]


@pytest.fixture
def teams(neo4j_connection: Neo4jStore):
    wipe_all(neo4j_connection)
    assert "kg.spreadLists" in neo4j_connection.plugin_procedures(), "start Neo4j with scripts/neo4j (the plugin)"
    a = Neo4jStore.connect(**_neo4j_params(), workspace="team-a")
    b = Neo4jStore.connect(**_neo4j_params(), workspace="team-b")
    try:
        yield a, b
    finally:
        a.close()
        b.close()
        wipe_all(neo4j_connection)


def _graph(store: Neo4jStore, ws: str) -> dict:
    with store.driver.session(database=store.database) as s:
        return s.run("CALL kg.spreadGraph($ws)", ws=ws).single().data()


def _hand_edge(store: Neo4jStore, ws: str, a: str, b: str) -> None:
    """A synonym edge written as a user would in Browser: no change-log entry."""
    with store.driver.session(database=store.database) as s:
        s.run("MATCH (x:Node {ws: $ws, id: $a}), (y:Node {ws: $ws, id: $b}) "
              "CREATE (x)-[:SYNONYM {kind: 'synonym', family: 'synonym', unit: 'hand', live: true}]->(y)",
              ws=ws, a=a, b=b).consume()


def test_another_workspaces_ingest_does_not_rebuild_a_workspaces_graph(teams, lexicon, tmp_path: Path):
    a, b = teams
    ref = EmbeddedStore(tmp_path / "reference")  # team-a's units, in the library's own store
    try:
        def ingest_a(text: str) -> None:
            units = parse_units(text, lexicon, doc="a.units")
            a.ingest(units)
            ref.ingest(units)

        def same() -> None:
            for s in SEEDS:
                assert spread_activation(a, [s]).energy == spread_activation(ref, [s]).energy, s
            assert a.use_resident is True

        ingest_a(SMALL)
        b.ingest(parse_units(B_UNITS, lexicon, doc="b.units"))
        same()
        built = _graph(a, "team-a")["rebuilds"]

        b.ingest(parse_units(B_MORE, lexicon, doc="b.units"))  # team-b's ingest: team-a's graph is kept
        same()
        after = _graph(a, "team-a")
        assert after["rebuilds"] == built
        assert after["kept"] >= 1  # the database's counts moved and team-a's were read: unchanged

        _hand_edge(b, "team-b", "violin", "cello")  # an unlogged edge of team-b: still not team-a's
        same()
        assert _graph(a, "team-a")["rebuilds"] == built

        ingest_a(A_MORE)  # team-a's own ingest is patched in, then team-b writes again
        same()
        b.ingest(parse_units("#b4 {viola} [belongs to] {instrument}\n", lexicon, doc="b.units"))
        same()
        assert _graph(a, "team-a")["rebuilds"] == built

        # an unlogged edge of team-a's: its counts moved, so its graph is rebuilt and shows the edge
        assert "sensor" not in spread_activation(a, ["smoking"]).energy
        _hand_edge(a, "team-a", "smoking", "sensor")
        assert spread_activation(a, ["smoking"]).energy.get("sensor", 0) > 0
        assert _graph(a, "team-a")["rebuilds"] == built + 1
        # and team-b's graph, built from team-b's nodes only, never saw team-a's
        assert set(spread_activation(b, ["instrument"]).energy) <= {"violin", "cello", "viola", "strings",
                                                                   "instrument"}
    finally:
        ref.close()

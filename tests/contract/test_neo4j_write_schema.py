"""What a Neo4j ingest commit pays for: only indexes some statement reads.

Every unit and node an ingest writes costs an entry in each index on its label at commit.
schema.cypher (run on every writable open, ``kg migrate`` included) drops the ones no statement
reads from a store an older kgservice left them in, and the reads keep their index seeks."""

from __future__ import annotations

import pytest

BATCH = """\
#a {smoking} [causes] {lung cancer}
#d {smoking} [causes] {heart disease}
"""
# what kgservice created before these were found unread (the single-property probe index
# is the twin of the (ws, probe) one every probe seek uses)
LEGACY = {
    "node_kind": "FOR (n:Node) ON (n.kind)",
    "node_label": "FOR (n:Node) ON (n.label)",
    "unit_doc": "FOR (u:Unit) ON (u.doc)",
    "unit_family": "FOR (u:Unit) ON (u.family)",
    "unit_probe": "FOR (u:Unit) ON (u.probe)",
}


def _operators(plan: dict) -> list[str]:
    return [plan["operatorType"].split("@")[0]] + [op for c in plan.get("children", []) for op in _operators(c)]


def test_unread_indexes_are_dropped_and_the_duplicate_check_still_seeks(store, ingest):
    if store.backend != "neo4j":
        pytest.skip("Neo4j indexes")
    ingest(BATCH)
    with store._session(write=True) as s:  # a store as an older kgservice left it
        for name, spec in LEGACY.items():
            s.run(f"CREATE INDEX {name} IF NOT EXISTS {spec}").consume()
        s.run("CALL db.awaitIndexes(300)").consume()
    store.apply_schema()  # what opening the store for writing (and kg migrate) runs
    with store._session(write=False) as s:
        names = {r["name"] for r in s.run("SHOW INDEXES YIELD name")}
        assert not names & set(LEGACY), names & set(LEGACY)
        # the identity constraints' indexes and the probe index the duplicate check reads stay
        assert {"node_ws_id", "unit_ws_id", "unit_ws_probe"} <= names, names
        query = "\n".join(line for line in store_query("live_fact_units").splitlines()
                          if not line.startswith("CYPHER"))
        plan = s.run("EXPLAIN " + query, probes=["smoking\x1flung cancer"]).consume().plan
    ops = _operators(plan)
    assert "NodeIndexSeek" in ops and "NodeByLabelScan" not in ops, ops
    # and it finds the stored duplicate through it
    r = ingest("#h {Smoking} [leads to] {Lung Cancer}\n", doc="again.units")
    assert r.duplicates == {"h": "a"} and r.units_added == 0


def store_query(name: str) -> str:
    from kgservice.stores import cypher

    return cypher.load(name)

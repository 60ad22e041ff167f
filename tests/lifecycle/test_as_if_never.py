"""A forgotten document leaves the graph exactly as if it had never been ingested, on both
backends: every derived row (nodes and their kinds, reverse indexes, relation edges and their
liveness, supersession links), the counts and the spreading energies equal those of a store that
only ever had the remaining document. The forgotten one superseded a unit of the other (which is
live again), made a node derived, added a synonym and hub edges. On Neo4j the kg.* procedures
agree too, their resident graph having been built before the forget (patched through the change
log, not rebuilt)."""

from __future__ import annotations

from pathlib import Path

from kgservice.service import KnowledgeBase

A = """#a1 {Python 2} [end of life] (2015)
#a2 {smoking} [causes] {lung cancer}
#a3 {cat} [is a] {mammal}
#a4 {black cat} [is a] {cat}
#a5 {smoking} [causes] {cough}
"""
B = """#b1 {Python 2} [end of life] (2020-01-01)
    ()[supersedes] #a1
#b2 {smoking} [同义] {吸烟}
#b3 {black cat} [narrows] {cat}
#b4 {lung cancer} [causes] {death}
#b5 {smoking} [causes] {heart disease}
#b6 {smoking} [causes] {chronic cough}
    ()[supersedes] #a5
"""
SEEDS = ["smoking", "cat", "Python 2"]


def graph_state(kb: KnowledgeBase) -> dict:
    rows = kb.store.index_rows()
    return {"nodes": sorted(rows.nodes), "subject": sorted(rows.subject), "context": sorted(rows.context),
            "relations": sorted(rows.relations), "superseded_by": sorted(rows.superseded_by),
            "counts": kb.store.counts(), "labels": sorted((n.id, n.label) for n in kb.store.iter_nodes()),
            "units": sorted(u.model_dump_json(exclude={"ingested_at"}) for u in kb.store.iter_units()),
            "spread": {s: sorted(kb.expand(s, "spread", limit=1000).ranked()) for s in SEEDS}}


def plugin_spread(kb: KnowledgeBase) -> dict:
    store = kb.store
    p = kb.spread_params()
    out = {}
    with store.driver.session(database=store.database) as s:
        for seed in SEEDS:
            rows = s.run("CALL kg.spread($seeds, null, $eps, $k, 0, 0, 0.0, false)",
                         seeds={seed: 1.0}, eps=p.epsilon, k=p.max_hops).data()
            out[seed] = sorted((r["node"], round(r["energy"], 12)) for r in rows)
    return out


def test_forget_leaves_the_graph_as_if_never_ingested(tmp_path: Path, open_kb, fresh_store, backend) -> None:
    with open_kb(tmp_path / "kg") as kb:
        kb.ingest_document("a.units", A)
        kb.ingest_document("b.units", B)
        both = graph_state(kb)
        assert ("smoking", "cough", "content", "a5", False) in both["relations"]  # retired by b6
        resident_before = plugin_spread(kb) if backend == "neo4j" else None
        res = kb.forget(["b.units"])
        assert res.retracted == 6 and res.orphaned_nodes >= 4  # 吸烟, death, heart disease, chronic cough, …
        after = graph_state(kb)
        resident_after = plugin_spread(kb) if backend == "neo4j" else None
    assert after != both
    fresh_store()
    with open_kb(tmp_path / "only-a") as kb:
        kb.ingest_document("a.units", A)
        assert graph_state(kb) == after
        if backend == "neo4j":
            assert resident_after != resident_before and plugin_spread(kb) == resident_after

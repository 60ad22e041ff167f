"""Duplicate facts are merged at ingest (DESIGN §3's merge step), the same way on both backends."""

from __future__ import annotations

import pytest

from kgservice.stores.base import IngestConflict

BATCH = """\
#a {smoking} [causes] {lung cancer}
#b {Smoking} [leads to] {Lung  Cancer}
#c {smoking} [causes] {lung cancer}
    ()[confidence] (high)
#d {smoking} [causes] {heart disease}
#e {lung cancer} [causes] {smoking}
#f {smoking} [causes] (lung cancer)
"""


def test_duplicates_in_a_batch_and_against_the_store(store, ingest):
    r = ingest(BATCH)
    # b: same subject id, family 导致 (leads to = causes), same argument id; c: modifier rows do not count;
    # e: other direction; f: a literal argument is not the node
    assert r.duplicates == {"b": "a", "c": "a"}
    assert r.units_added == 4
    assert store.subject_mentions("smoking") == ["a", "d", "f"]
    r = ingest("#g {SMOKING} [引起] {lung cancer}\n#a {smoking} [causes] {lung cancer}\n", doc="again.units")
    assert r.duplicates == {"g": "a"} and r.units_added == 0 and r.units_unchanged == 1


def test_an_update_is_not_a_duplicate_and_only_live_units_count(store, ingest):
    ingest(BATCH)
    # h restates a but supersedes it: an update, stored; a is no longer live
    r = ingest("#h {smoking} [causes] {lung cancer}\n    ()[supersedes] #a\n", doc="update.units")
    assert r.units_added == 1 and r.duplicates == {}
    r = ingest("#i {smoking} [causes] {lung cancer}\n", doc="later.units")
    assert r.duplicates == {"i": "h"}


def test_units_stored_before_the_probe_property_are_backfilled_on_connect(store, ingest):
    """Neo4j finds stored duplicates by Unit.probe (indexed). A store written before that
    property existed has units without it (and no KgSchema marker): apply_schema, run on
    every connect, gives them their probe once, so their duplicates are found again."""
    if store.backend != "neo4j":
        pytest.skip("Unit.probe is a Neo4j property")
    ingest(BATCH)
    with store._session(write=True) as s:  # what an older kgservice left behind
        s.run("MATCH (u:Unit) REMOVE u.probe").consume()
        s.run("MATCH (m:KgSchema {id: 'unit_probe'}) DELETE m").consume()  # the version record stays
    probe = "smoking\x1flung cancer"

    def found() -> list[str]:
        return sorted(r["id"] for r in store.read("live_fact_units", probes=[probe]))

    assert found() == []  # a is invisible to the duplicate check without its probe
    store.apply_schema()
    assert found() == ["a"]
    with store._session(write=False) as s:
        assert s.run("MATCH (u:Unit) WHERE u.probe IS NULL RETURN count(u) AS n").single()["n"] == 0
        assert s.run("MATCH (m:KgSchema {id: 'unit_probe'}) RETURN count(m) AS n").single()["n"] == 1
    r = ingest("#h {smoking} [causes] {lung cancer}\n", doc="after.units")
    assert r.duplicates == {"h": "a"} and r.units_added == 0


def test_duplicates_found_from_either_side_of_a_hub(store, ingest):
    # Neo4j looks stored duplicates up by (subject, argument 0), walking whichever side has
    # fewer edges: d1's subject is a hub (walked from its argument), d2's argument is one
    # (walked from its subject). n1 shares the subject with s* and the argument with o*, and
    # m1 shares subject and argument 0 with s7 but not argument 1: neither is a duplicate.
    lines = [f"#s{i} {{hub}} [causes] {{t{i}}}" for i in range(60)]
    lines += [f"#o{i} {{x{i}}} [causes] {{target}}" for i in range(60)]
    lines += ["#p1 {hub} [ranges from] {t7} {t8}"]
    ingest("\n".join(lines) + "\n")
    r = ingest("#d1 {hub} [leads to] {t7}\n#d2 {x9} [causes] {target}\n#n1 {hub} [causes] {target}\n"
               "#m1 {hub} [ranges from] {t7} {t9}\n#d3 {hub} [ranges from] {t7} {t8}\n", doc="again.units")
    assert r.duplicates == {"d1": "s7", "d2": "o9", "d3": "p1"}
    assert r.units_added == 2


# A merged duplicate's id is remembered as an alias of the unit it was merged into, so later
# batches can still name it (issue: "unit #x supersedes #b, which is neither in this batch nor stored").
A = "#a {smoking} [causes] {lung cancer}\n"
B = "#b {Smoking} [leads to] {Lung  Cancer}\n"


def test_superseding_a_merged_duplicate_supersedes_the_unit_it_was_merged_into(store, ingest):
    assert ingest(A).units_added == 1
    r = ingest(B, doc="b.units")
    assert r.duplicates == {"b": "a"} and r.units_added == 0
    assert store.aliases(["b", "a", "zz"]) == {"b": "a"}
    r = ingest("#c {smoking} [causes] {lung disease}\n    ()[supersedes] #b\n", doc="c.units")
    assert r.units_added == 1 and r.duplicates == {}
    assert store.superseded_end(["a"]) == {"a": ["c"]}  # a is no longer live
    assert store.get_units(["b"]) == []
    (c,) = store.get_units(["c"])
    assert c.supersedes == ("a",)  # the stored unit carries the resolved reference
    # re-ingesting the same update is unchanged (its reference resolves the same way)
    r = ingest("#c {smoking} [causes] {lung disease}\n    ()[supersedes] #b\n", doc="c.units")
    assert r.units_unchanged == 1 and r.units_added == 0
    # re-ingesting the duplicate itself: a duplicate again, nothing added (though a is no longer live)
    before = store.counts()
    r = ingest(B, doc="b.units")
    assert r.duplicates == {"b": "a"} and r.units_added == 0
    assert store.counts() == before and store.get_units(["b"]) == []


def test_a_modifier_row_reference_to_a_merged_duplicate_resolves(store, ingest):
    ingest(A)
    ingest(B, doc="b.units")
    r = ingest("#d {smoking} [causes] {heart disease}\n    ()[because of] #b\n", doc="d.units")
    assert r.units_added == 1
    (d,) = store.get_units(["d"])
    assert [m.value.unit for m in d.mods] == ["a"]


def test_a_merged_duplicate_within_one_batch_is_remembered(store, ingest):
    r = ingest(A + B)
    assert r.duplicates == {"b": "a"} and r.units_added == 1
    assert store.aliases(None) == {"b": "a"}
    ingest("#c {smoking} [causes] {lung disease}\n    ()[supersedes] #b\n", doc="c.units")
    assert store.superseded_end(["a"]) == {"a": ["c"]}


def test_a_merged_id_cannot_be_reused_for_another_fact(store, ingest):
    ingest(A)
    ingest(B, doc="b.units")
    with pytest.raises(IngestConflict, match=r"#b was merged into #a"):
        ingest("#b {smoking} [causes] {heart disease}\n", doc="other.units")
    assert store.get_units(["b"]) == []


def test_aliases_are_written_with_the_batch_or_not_at_all(store, ingest, monkeypatch):
    """The alias is part of the batch's own transaction (Neo4j) / journal record (embedded): a
    batch that fails after its units were written leaves neither units nor aliases."""
    ingest(A)
    if store.backend == "neo4j":
        from neo4j.exceptions import Neo4jError

        import kgservice.stores.neo4j.writes as mod

        monkeypatch.setattr(mod, "neo4j_change_step", lambda touched, units=None: ("RETURN 1/0 AS boom", {}))
        monkeypatch.setattr(store, "ingest_attempts", 1)
        failure: type[Exception] = Neo4jError
    else:
        from kgservice.stores.base import StoreWriteError

        def boom(records):
            raise OSError("disk full (simulated)")

        monkeypatch.setattr(store, "_append_frame", boom)
        failure = StoreWriteError
    with pytest.raises(failure):
        ingest(B + "#x {x} [has] {y}\n", doc="b.units")
    monkeypatch.undo()
    assert store.aliases(["b"]) == {} and store.get_units(["x"]) == []
    assert ingest(B + "#x {x} [has] {y}\n", doc="b.units").duplicates == {"b": "a"}
    assert store.aliases(["b"]) == {"b": "a"}


def test_a_staged_neo4j_batch_records_its_aliases_when_it_is_published(store, ingest, monkeypatch):
    if store.backend != "neo4j":
        pytest.skip("staging is the Neo4j store's way of writing big batches")
    monkeypatch.setattr(store, "stage_units", 2)
    monkeypatch.setattr(store, "stage_chunk", 2)
    ingest(A)
    r = ingest(B + "".join(f"#s{i} {{s{i}}} [has] {{t}}\n" for i in range(5)), doc="big.units")
    assert r.units_added == 5 and r.duplicates == {"b": "a"}
    assert store.aliases(["b"]) == {"b": "a"}


def test_neo4j_sends_validation_reads_before_validating(store, ingest, monkeypatch):
    """Neo4j: the stored-id read and the duplicate check are sent from worker threads when an
    ingest starts, so the server runs them while the client validates the batch. Validation
    here waits until both are in flight on other threads: sent after validation (or from the
    validating thread) they never would be, and the ingest would find no read started."""
    if store.backend != "neo4j":
        pytest.skip("the embedded store has no server to overlap with")
    import threading

    from kgservice.stores import validate

    ingest(BATCH)
    inflight: dict[str, str] = {}
    both = threading.Event()
    read = store.read

    def recording_read(name, **params):
        if name in ("get_units", "live_fact_units"):
            inflight[name] = threading.current_thread().name
            if len(inflight) == 2:
                both.set()
        return read(name, **params)

    checks = validate.unit_text_problems

    waited: list[bool] = []

    def waiting_check(u):
        if not waited:  # the first unit's check waits for both reads to be in flight
            waited.append(both.wait(timeout=20))
        return checks(u)

    monkeypatch.setattr(store, "read", recording_read)
    monkeypatch.setattr(validate, "unit_text_problems", waiting_check)
    r = ingest("#g {SMOKING} [引起] {lung cancer}\n#a {smoking} [causes] {lung cancer}\n#h {cats} [are] {cute}\n",
               doc="again.units")
    assert both.is_set(), inflight
    assert all(t != threading.main_thread().name for t in inflight.values()), inflight
    assert r.duplicates == {"g": "a"} and r.units_added == 1 and r.units_unchanged == 1
    # a batch validation rejects leaves nothing behind: the next ingest reads and writes as usual
    monkeypatch.setattr(validate, "unit_text_problems", checks)
    with pytest.raises(IngestConflict, match="already exists with different content"):
        ingest("#h {dogs} [are] {cute}\n#i {dogs} [are] {loyal}\n", doc="bad.units")
    assert store.get_units(["i"]) == []
    r = ingest("#i {dogs} [are] {loyal}\n#j {cats} [are] {cute}\n", doc="good.units")
    assert r.units_added == 1 and r.duplicates == {"j": "h"}


def test_new_units_get_an_ingest_stamp_and_given_stamps_are_kept(store, lexicon):
    """Both stores stamp ``ingested_at`` on the units a batch adds (the embedded one writes
    the stamp into its records instead of copying each unit) and keep a stamp a unit brings
    (a restored backup)."""
    from datetime import datetime

    from kgservice.notation import parse_units

    given = "2025-01-02T03:04:05+00:00"
    a, b = parse_units("#a {cat} [is a] {mammal}\n#b {dog} [is a] {mammal}\n", lexicon, doc="s.units")
    store.ingest([a, b.model_copy(update={"ingested_at": given})])
    got = {u.id: u.ingested_at for u in store.iter_units()}
    assert got["b"] == given
    assert got["a"] is not None and datetime.fromisoformat(got["a"]).tzinfo is not None

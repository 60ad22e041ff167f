"""Duplicate aliases follow the unit they name through the lifecycle, and a fact edited in place
(its line keeps its ``#id``) replaces the old version, on both backends (tests/lifecycle/conftest.py).

A document stating one fact twice stores it once: the second id is an alias of the first.
Forgetting the document, undoing a replace that made aliases, or purging must leave a store
that ``kg doctor`` calls consistent, and the same document must be ingestible again. The expected
states below are worked out by hand from the notation, not read back from the code."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from kgservice.jobs.worker import Worker
from kgservice.stores.base import IngestConflict

DUP = "#a1 {x} [has] {y}\n#a2 {x} [has] {y}\n#a3 {x} [has] {z}\n"


def doctor_lines(kb) -> list[str]:
    """The findings of a full check (graph, aliases and vectors), as kg doctor prints them."""
    return [f.line() for f in kb.doctor().findings]


def contents(kb) -> dict[str, str]:
    """Live unit id -> its fact, in notation without the id."""
    from kgservice.notation.serializer import format_unit

    return {u.id: format_unit(u, with_id=False).splitlines()[0] for u in kb.store.iter_units()}


def test_forget_of_a_document_with_a_duplicate_leaves_a_clean_doctor_and_it_can_come_back(tmp_path: Path, open_kb) -> None:
    with open_kb(tmp_path / "kg") as kb:
        first = kb.ingest_document("d.units", DUP)
        assert first.duplicates == {"a2": "a1"} and first.added == 2
        gone = kb.forget(["d.units"])
        assert gone.retracted == 2 and kb.stats()["units"] == 0
        assert doctor_lines(kb) == []
        # the forgotten document comes back as it was: the duplicate merged again, not refused
        again = kb.ingest_document("d.units", DUP)
        assert (again.added, again.duplicates) == (2, {"a2": "a1"})
        assert doctor_lines(kb) == []
        kb.forget(["d.units"])
        # undo of the forget brings the unit and its alias back: a2 names a1 again
        back = kb.undo(kb.history()[-1].id)
        assert back.added == 2 and set(contents(kb)) == {"a1", "a3"}
        with pytest.raises(IngestConflict, match=r"#a2 was merged into #a1"):
            kb.ingest_document("other.units", "#a2 {x} [has] {w}\n")
        assert doctor_lines(kb) == []
    with open_kb(tmp_path / "kg") as kb:  # the same after reopening (embedded: journal replay)
        assert doctor_lines(kb) == [] and set(contents(kb)) == {"a1", "a3"}


def test_an_archived_units_alias_id_can_become_a_unit_of_its_own(tmp_path: Path, open_kb) -> None:
    """While a1 is forgotten its alias a2 is not in force: a new fact may take the id a2, and the
    alias goes (an undo bringing a1 back then finds a2 a unit, not an alias of a1)."""
    with open_kb(tmp_path / "kg") as kb:
        kb.ingest_document("d.units", DUP)
        forgot = kb.forget(["d.units"])
        kb.ingest_document("e.units", "#a2 {p} [has] {q}\n")
        assert contents(kb) == {"a2": "{p} [has] {q}"}
        assert doctor_lines(kb) == []
        kb.undo(forgot.change)
        assert contents(kb) == {"a1": "{x} [has] {y}", "a2": "{p} [has] {q}", "a3": "{x} [has] {z}"}
        assert doctor_lines(kb) == []
    with open_kb(tmp_path / "kg") as kb:
        assert doctor_lines(kb) == [] and set(contents(kb)) == {"a1", "a2", "a3"}


def test_undo_of_a_replace_that_merged_duplicates_leaves_a_clean_doctor(tmp_path: Path, open_kb) -> None:
    v1 = "".join(f"#b{i} {{t{i % 3}}} [has] {{i{i % 3}}}\n" for i in range(6))  # b3..b5 duplicate b0..b2
    v2 = "".join(f"#v{i} {{t{i % 3}}} [relates to] {{j{i % 3}}}\n" for i in range(6))  # v3..v5 duplicate v0..v2
    with open_kb(tmp_path / "kg") as kb:
        assert kb.ingest_document("big.units", v1).duplicates == {"b3": "b0", "b4": "b1", "b5": "b2"}
        rep = kb.ingest_document("big.units", v2)
        assert rep.duplicates == {"v3": "v0", "v4": "v1", "v5": "v2"} and rep.retracted == 3
        assert doctor_lines(kb) == []
        kb.undo(rep.change)
        assert set(contents(kb)) == {"b0", "b1", "b2"}
        assert doctor_lines(kb) == []
        repair = kb.doctor(repair=True)
        assert repair.final.ok and not repair.findings
        # purging the archive takes the aliases of the purged units with it; the live ones stay
        kb.purge("2999-01-01", yes=True)
        assert kb.store.aliases(None) == {"b3": "b0", "b4": "b1", "b5": "b2"}
        assert doctor_lines(kb) == []


def test_a_fact_edited_in_place_replaces_its_old_version(tmp_path: Path, open_kb) -> None:
    v1 = "#t1 {smoking} [causes] {cancer}\n#t2 {tea} [has] {caffeine}\n"
    v2 = "#t1 {smoking} [causes] {lung cancer}\n#t2 {tea} [has] {caffeine}\n"
    with open_kb(tmp_path / "kg") as kb:
        kb.ingest_document("a.units", v1)
        rep = kb.ingest_document("a.units", v2)
        assert (rep.kind, rep.added, rep.retracted, rep.unchanged) == ("replace", 1, 1, 1)
        assert contents(kb) == {"t1": "{smoking} [causes] {lung cancer}", "t2": "{tea} [has] {caffeine}"}
        assert {a.node for u in kb.expand("smoking").live_units for a in u.args} == {"lung cancer"}
        assert kb.store.retracted_units(["t1"])["t1"].unit.args[0].node == "cancer"
        assert [(p.doc, p.lines) for p in kb.provenance("t1")] == [("a.units", (1, 1))]
        assert doctor_lines(kb) == []
        undone = kb.undo(rep.change)
        assert contents(kb)["t1"] == "{smoking} [causes] {cancer}"
        assert kb.store.retracted_units(["t1"])["t1"].unit.args[0].node == "lung cancer"
        assert kb.document("a.units").text() == v1
        assert doctor_lines(kb) == []
        kb.undo(undone.change)  # redo
        assert contents(kb)["t1"] == "{smoking} [causes] {lung cancer}"
        assert doctor_lines(kb) == []
    with open_kb(tmp_path / "kg") as kb:
        assert contents(kb)["t1"] == "{smoking} [causes] {lung cancer}" and doctor_lines(kb) == []


def test_an_edited_fact_that_had_a_duplicate_leaves_the_duplicate_a_fact_of_its_own(tmp_path: Path, open_kb) -> None:
    """t2 stated t1's old fact (an alias of t1); editing t1 in place leaves the old fact stated
    by t2 alone: t2 becomes a unit, t1 the new fact, and no alias names t1 any more."""
    with open_kb(tmp_path / "kg") as kb:
        kb.ingest_document("a.units", "#t1 {x} [has] {y}\n#t2 {x} [has] {y}\n")
        kb.ingest_document("a.units", "#t1 {x} [has] {z}\n#t2 {x} [has] {y}\n")
        assert contents(kb) == {"t1": "{x} [has] {z}", "t2": "{x} [has] {y}"}
        assert kb.store.aliases(None) == {}
        assert doctor_lines(kb) == []


def test_an_edit_in_place_of_a_fact_another_document_states_is_refused(tmp_path: Path, open_kb) -> None:
    with open_kb(tmp_path / "kg") as kb:
        kb.ingest_document("a.units", "#t1 {x} [has] {y}\n")
        kb.ingest_document("b.units", "#t1 {x} [has] {y}\n")
        with pytest.raises(IngestConflict, match=r"#t1 is edited in a.units but b.units still states"):
            kb.ingest_document("a.units", "#t1 {x} [has] {z}\n")
        assert contents(kb) == {"t1": "{x} [has] {y}"} and kb.document("a.units").version == 1


def test_put_of_a_document_with_a_fact_edited_in_place_is_done(tmp_path: Path) -> None:
    """The same edit through PUT /v1/documents: checked when submitted, then done by the worker."""
    from kgservice.config import Settings
    from kgservice.server.app import ServeOptions, create_app
    from kgservice.service import KnowledgeBase

    settings = Settings(data_dir=tmp_path / "kg", embedder="hash:64", local_role="admin", allowed_hosts=("testserver",))
    kb = KnowledgeBase(settings)
    with TestClient(create_app(settings, ServeOptions(kb=kb, no_auth=True))) as c:
        for text in ("#t1 {smoking} [causes] {cancer}\n#t9 {smoking} [causes] {cancer}\n",
                     "#t1 {smoking} [causes] {lung cancer}\n#t9 {smoking} [causes] {cancer}\n"):
            r = c.put("/v1/documents/a.units", json={"text": text})
            assert r.status_code == 202, r.text
            Worker(kb).run_once()
            assert c.get(r.json()["status_url"]).json()["status"] == "done"
        assert contents(kb) == {"t1": "{smoking} [causes] {lung cancer}", "t9": "{smoking} [causes] {cancer}"}
        assert doctor_lines(kb) == []

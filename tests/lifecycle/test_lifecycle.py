"""The knowledge lifecycle on both backends (tests/lifecycle/conftest.py): documents, replace,
forget, retract, undo, history, provenance, sync, and that it all survives reopening the store
(embedded: journal replay; Neo4j: a new connection)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgservice.errors import InputError
from kgservice.service import KnowledgeBase

V1 = "{cat} [is a] {mammal}\n{mammal} [has] {fur}\n"
V2 = "{cat} [is a] {mammal}\n{mammal} [has] {scales}\n"


def labels_about(kb: KnowledgeBase, node: str) -> set[str]:
    return {a.node for u in kb.expand(node).live_units for a in u.args if a.node}


def test_edited_note_replace_forget_undo(tmp_path: Path, open_kb) -> None:
    with open_kb(tmp_path / "kg") as kb:
        first = kb.ingest_document("notes/a.units", V1)
        assert first.kind == "ingest" and first.added == 2
        kept_id = next(u.id for u in kb.store.iter_units() if u.args[0].node == "mammal")
        assert kb.ingest_document("notes/a.units", V1).change is None  # same content: nothing
        rep = kb.ingest_document("notes/a.units", V2)
        assert (rep.kind, rep.added, rep.unchanged, rep.retracted) == ("replace", 1, 1, 1)
        assert labels_about(kb, "mammal") == {"mammal", "scales"}
        assert kb.unit(kept_id) is not None  # the unchanged unit kept its id
        assert kb.stats()["units"] == 2 and "fur" not in {n.id for n in kb.store.iter_nodes()}
        gone = kb.forget(["notes/a.units"])
        assert gone.retracted == 2 and kb.stats()["units"] == 0
        kb.undo(gone.change)
        assert labels_about(kb, "mammal") == {"mammal", "scales"}
        assert [c.kind for c in kb.history("notes/a.units")] == ["ingest", "replace", "forget", "undo"]
        doc = kb.document("notes/a.units")
        assert doc.version == 2 and doc.text() == V2
        prov = kb.provenance(kept_id)
        assert [(p.doc, p.lines, p.snippet) for p in prov] == [("notes/a.units", (1, 1), "{cat} [is a] {mammal}")]
    with open_kb(tmp_path / "kg") as kb:  # all of it is durable
        assert labels_about(kb, "mammal") == {"mammal", "scales"}
        assert len(kb.history()) == 4 and kb.documents()[0].id == "notes/a.units"
        assert set(kb.store.retracted_units()) and kb.store.retracted_units()[next(iter(kb.store.retracted_units()))].unit


def test_shared_fact_lives_until_both_documents_drop_it(tmp_path: Path, open_kb) -> None:
    with open_kb(tmp_path / "kg") as kb:
        kb.ingest_document("a.units", "{cat} [is a] {mammal}\n")
        kb.ingest_document("b.units", "{cat} [is a] {mammal}\n{dog} [is a] {mammal}\n")
        res = kb.forget(["a.units"])
        assert res.retracted == 0 and res.kept_shared == 1 and kb.stats()["units"] == 2
        res = kb.forget(["b.units"])
        assert res.retracted == 2 and kb.stats()["units"] == 0


def test_retract_and_unknown_ids(tmp_path: Path, open_kb) -> None:
    with open_kb(tmp_path / "kg") as kb:
        kb.ingest_document("a.units", V1)
        uid = next(u.id for u in kb.store.iter_units() if u.args[0].node == "fur")
        res = kb.retract([uid], reason="wrong")
        assert res.retracted == 1 and kb.unit(uid) is None
        assert kb.store.retracted_units([uid])[uid].reason == "wrong"
        with pytest.raises(InputError, match="already retracted"):
            kb.retract([uid], reason="again")
        with pytest.raises(InputError, match="nope"):
            kb.forget(["nope"])
        with pytest.raises(InputError, match="c-missing"):
            kb.undo("c-missing")
        with pytest.raises(InputError, match="--yes"):
            kb.purge("2999-01-01")
        purged = kb.purge("2999-01-01", yes=True)
        assert purged.units == 1 and not kb.store.retracted_units()
        with pytest.raises(InputError, match="purged"):
            kb.undo(res.change)


def test_sync_mirrors_a_folder(tmp_path: Path, open_kb) -> None:
    src = tmp_path / "docs"
    (src / "sub").mkdir(parents=True)
    (src / "a.units").write_text("{cat} [is a] {mammal}\n")
    (src / "sub" / "a.units").write_text("{dog} [is a] {mammal}\n")  # same file name, another document
    (src / "b.units").write_text("{owl} [is a] {bird}\n")
    with open_kb(tmp_path / "kg") as kb:
        first = kb.sync(src)
        assert sorted(first.added) == ["a.units", "b.units", "sub/a.units"]
        (src / "b.units").unlink()
        (src / "a.units").write_text("{cat} [is a] {feline}\n")
        (src / "c.units").write_text("{ant} [is a] {insect}\n")
        rep = kb.sync(src)
        assert (rep.added, rep.changed, rep.forgotten, rep.unchanged) == (["c.units"], ["a.units"], ["b.units"],
                                                                           ["sub/a.units"])
        assert {d.id for d in kb.documents()} == {"a.units", "c.units", "sub/a.units"}
        assert "owl" not in {n.id for n in kb.store.iter_nodes()}
        again = kb.sync(src)
        assert again.changes == [] and len(again.unchanged) == 3


def test_cli_commands_and_exit_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend_env) -> None:
    from typer.testing import CliRunner

    from kgservice.cli.app import app

    src = tmp_path / "d"
    src.mkdir()
    (src / "a.units").write_text("{cat} [is a] {mammal}\n")
    monkeypatch.setenv("KG_EMBEDDER", "hash:64")
    for k, v in backend_env.items():
        monkeypatch.setenv(k, v)
    base = ["--data-dir", str(tmp_path / "kg")]
    run = CliRunner().invoke
    r = run(app, [*base, "sync", str(src)])
    assert r.exit_code == 0 and "1 added" in r.output
    r = run(app, [*base, "forget", "nope.md"])
    assert r.exit_code == 2 and "nope.md" in r.output
    r = run(app, [*base, "undo", "c-nothing"])
    assert r.exit_code == 2 and "c-nothing" in r.output
    r = run(app, [*base, "purge", "--retracted-before", "2999-01-01"])
    assert r.exit_code == 2 and "--yes" in r.output
    r = run(app, [*base, "forget", "a.units"])
    assert r.exit_code == 0 and "1 retracted" in r.output
    r = run(app, [*base, "history", "--json"])
    assert r.exit_code == 0 and [c["kind"] for c in __import__("json").loads(r.output)] == ["ingest", "forget"]


def test_text_document_reextracts_only_changed_chunks(tmp_path: Path, open_kb) -> None:
    paras = [("Coffee contains caffeine. " * 45).strip(), ("Tea contains tannins. " * 50).strip(),
             ("Milk contains calcium. " * 48).strip()]
    v1 = "\n\n".join(paras) + "\n"
    v2 = v1.replace(paras[2], ("Milk contains lactose. " * 48).strip())
    with open_kb(tmp_path / "kg", llm_model="kgoffline/rules") as kb:
        first = kb.ingest_document("notes/drinks.md", v1)
        assert first.change and first.chunks_extracted >= 2 and first.chunks_reused == 0
        calls = kb.llm.usage.calls
        assert kb.ingest_document("notes/drinks.md", v1).change is None and kb.llm.usage.calls == calls
        second = kb.ingest_document("notes/drinks.md", v2)
        assert second.chunks_reused == first.chunks_extracted - 1 and second.chunks_extracted == 1
        doc = kb.document("notes/drinks.md")
        assert doc.version == 2 and doc.units == len(doc.unit_lines)
        assert all(ln is not None and 1 <= ln[0] <= ln[1] for ln in doc.unit_lines.values())


@pytest.mark.parametrize("replace", [False, True])
def test_dump_restore_keeps_documents_retractions_history(tmp_path: Path, replace: bool, open_kb, fresh_store) -> None:
    with open_kb(tmp_path / "a") as kb:
        kb.ingest_document("notes/a.units", V1)
        kb.ingest_document("notes/a.units", V2)
        kb.dump(tmp_path / "d.jsonl")
        want = ([d.model_dump() for d in kb.documents()], sorted(kb.store.retracted_units()),
                [c.id for c in kb.history()])
    target = tmp_path / ("a" if replace else "b")
    if not replace:
        fresh_store()  # a new, empty store (on Neo4j the same server)
    with open_kb(target) as kb:
        kb.restore(tmp_path / "d.jsonl", replace=replace)
        got = ([d.model_dump() for d in kb.documents()], sorted(kb.store.retracted_units()),
               [c.id for c in kb.history()])
        assert got == want and len(want[1]) == 1 and len(want[2]) == 2
        kb.undo(want[2][-1])  # the history restored is usable: v1 is back
        assert labels_about(kb, "mammal") == {"mammal", "fur"}


def test_edited_note_story_through_ask_and_export(tmp_path: Path, open_kb) -> None:
    """ingest v1, ask; edit one sentence, re-ingest, ask -> only the new fact; forget -> not in the
    graph (nor in graph.json); undo -> back; the history lists the three changes."""
    import json

    with open_kb(tmp_path / "kg", llm_model="kgoffline/rules") as kb:
        q = "What does smoking cause?"
        kb.ingest_document("notes/health.units", "{smoking} [causes] {lung cancer}\n")
        old = kb.ask(q)
        assert old.found and "lung cancer" in old.answer
        kb.ingest_document("notes/health.units", "{smoking} [causes] {heart disease}\n")
        new = kb.ask(q)
        assert new.found and "heart disease" in new.answer and "lung cancer" not in new.answer
        assert set(new.cited).isdisjoint(old.cited)
        forgot = kb.forget(["notes/health.units"])
        assert not kb.ask(q).found
        kb.export(tmp_path / "out" / "graph.json", communities=False)
        graph = json.loads((tmp_path / "out" / "graph.json").read_text())
        assert not [n for n in graph["nodes"] if "smoking" in json.dumps(n)]
        kb.undo(forgot.change)
        back = kb.ask(q)
        assert back.found and back.cited == new.cited
        assert [c.kind for c in kb.history()] == ["ingest", "replace", "forget", "undo"]


def test_replacement_that_fails_extraction_changes_nothing(tmp_path: Path, open_kb) -> None:
    from kgservice.llm.client import LLMProviderError

    v1 = ("Coffee contains caffeine. " * 10).strip() + "\n"
    with open_kb(tmp_path / "kg", llm_model="kgoffline/rules") as kb:
        kb.ingest_document("notes/c.md", v1)
        before = (sorted(u.id for u in kb.store.iter_units()), kb.document("notes/c.md").version, len(kb.history()))
    # the scripted provider, chosen (so no up-front "no model configured" refusal), has no answer
    # recorded for this text: extraction fails
    with open_kb(tmp_path / "kg", llm_model="kgoffline/scripted", llm_model_chosen=True, llm_max_retries=0) as kb:
        with pytest.raises(LLMProviderError):
            kb.ingest_document("notes/c.md", "Tea contains tannins.\n")
        after = (sorted(u.id for u in kb.store.iter_units()), kb.document("notes/c.md").version, len(kb.history()))
    assert after == before and before[0]


def test_a_replacement_prepared_against_an_older_version_is_refused(tmp_path: Path, open_kb) -> None:
    """Two concurrent replacements of one document: the store serialises them, and the one
    prepared from the version the other already replaced is refused (409 / exit 2), not mixed in."""
    from kgservice.lifecycle.ops import new_change
    from kgservice.stores.base import IngestConflict

    with open_kb(tmp_path / "kg") as kb:
        kb.ingest_document("notes/a.units", V1)
        v1 = kb.document("notes/a.units")
        kb.ingest_document("notes/a.units", V2)
        before = (sorted(u.id for u in kb.store.iter_units()), kb.document("notes/a.units").version, len(kb.history()))
        late = new_change("replace", docs=["notes/a.units"], docs_before={"notes/a.units": v1},
                          docs_after={"notes/a.units": v1})
        with pytest.raises(IngestConflict, match="notes/a.units"):
            kb.store.apply_change([], list(v1.unit_lines), {"notes/a.units": v1}, late)
        after = (sorted(u.id for u in kb.store.iter_units()), kb.document("notes/a.units").version, len(kb.history()))
        assert after == before


def test_undo_of_a_retraction_links_the_superseding_unit_again(tmp_path: Path, open_kb) -> None:
    """A retracted unit that a live unit superseded comes back superseded by it (its edges
    retired), and neither state is a doctor finding (superseding an archived unit is not a
    dangling reference)."""
    from kgservice.admin.doctor import check

    with open_kb(tmp_path / "kg") as kb:
        kb.ingest_document("a.units", "#x1 {a} [has] {b}\n")
        kb.ingest_document("b.units", "#x2 {a} [has] {c}\n    ()[supersedes] #x1\n")
        live_before = sorted(r for r in kb.store.index_rows().relations if r[3] == "x1")
        assert live_before and not any(r[4] for r in live_before)
        gone = kb.forget(["a.units"])
        assert gone.retracted == 1 and kb.unit("x1") is None
        assert check(kb, vectors=False).findings == []
        kb.undo(gone.change)
        assert kb.store.superseded_end(["x1"]) == {"x1": ["x2"]}
        assert sorted(r for r in kb.store.index_rows().relations if r[3] == "x1") == live_before
        assert check(kb, vectors=False).findings == []


@pytest.mark.parametrize("replace", [False, True])
def test_dump_restore_of_a_unit_superseding_a_retracted_one(tmp_path: Path, replace: bool, open_kb,
                                                            fresh_store) -> None:
    """A live unit keeps superseding a unit retracted after it: the dump of that store restores
    (the live unit, the archived one, the history), and an undo of the retraction then links
    the two again as before."""
    with open_kb(tmp_path / "a") as kb:
        kb.ingest_document("a.units", "#x1 {a} [has] {b}\n")
        kb.ingest_document("b.units", "#x2 {a} [has] {c}\n    ()[supersedes] #x1\n")
        gone = kb.retract(["x1"], "wrong")
        kb.dump(tmp_path / "d.jsonl")
        want = ([d.model_dump() for d in kb.documents()], sorted(kb.store.retracted_units()),
                [c.id for c in kb.history()], kb.unit("x2"))
    if not replace:
        fresh_store()
    with open_kb(tmp_path / ("a" if replace else "b")) as kb:
        kb.restore(tmp_path / "d.jsonl", replace=replace)
        got = ([d.model_dump() for d in kb.documents()], sorted(kb.store.retracted_units()),
               [c.id for c in kb.history()], kb.unit("x2"))
        assert got == want and want[1] == ["x1"] and want[3] is not None and kb.unit("x1") is None
        assert kb.stats()["superseded_units"] == 0
        kb.undo(gone.change)
        assert kb.store.superseded_end(["x1"]) == {"x1": ["x2"]}


def test_retract_of_no_unit_is_refused(tmp_path: Path, open_kb) -> None:
    with open_kb(tmp_path / "kg") as kb:
        kb.ingest_document("a.units", "#x1 {a} [has] {b}\n")
        with pytest.raises(InputError, match="unit_ids is empty"):
            kb.retract([], "no reason needed")
        assert [c.kind for c in kb.history()] == ["ingest"] and kb.unit("x1") is not None

"""The knowledge lifecycle on the embedded store: documents, replace, forget, retract, undo,
history, provenance, sync, and that it all survives reopening the store (journal replay)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgservice.config import Settings
from kgservice.errors import InputError
from kgservice.service import KnowledgeBase

V1 = "{cat} [is a] {mammal}\n{mammal} [has] {fur}\n"
V2 = "{cat} [is a] {mammal}\n{mammal} [has] {scales}\n"


def kb_at(d: Path) -> KnowledgeBase:
    return KnowledgeBase(Settings(data_dir=d, embedder="hash:64"))


def labels_about(kb: KnowledgeBase, node: str) -> set[str]:
    return {a.node for u in kb.expand(node).live_units for a in u.args if a.node}


def test_edited_note_replace_forget_undo(tmp_path: Path) -> None:
    with kb_at(tmp_path / "kg") as kb:
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
    with kb_at(tmp_path / "kg") as kb:  # all of it is durable
        assert labels_about(kb, "mammal") == {"mammal", "scales"}
        assert len(kb.history()) == 4 and kb.documents()[0].id == "notes/a.units"
        assert set(kb.store.retracted_units()) and kb.store.retracted_units()[next(iter(kb.store.retracted_units()))].unit


def test_shared_fact_lives_until_both_documents_drop_it(tmp_path: Path) -> None:
    with kb_at(tmp_path / "kg") as kb:
        kb.ingest_document("a.units", "{cat} [is a] {mammal}\n")
        kb.ingest_document("b.units", "{cat} [is a] {mammal}\n{dog} [is a] {mammal}\n")
        res = kb.forget(["a.units"])
        assert res.retracted == 0 and res.kept_shared == 1 and kb.stats()["units"] == 2
        res = kb.forget(["b.units"])
        assert res.retracted == 2 and kb.stats()["units"] == 0


def test_retract_and_unknown_ids(tmp_path: Path) -> None:
    with kb_at(tmp_path / "kg") as kb:
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


def test_sync_mirrors_a_folder(tmp_path: Path) -> None:
    src = tmp_path / "docs"
    (src / "sub").mkdir(parents=True)
    (src / "a.units").write_text("{cat} [is a] {mammal}\n")
    (src / "sub" / "a.units").write_text("{dog} [is a] {mammal}\n")  # same file name, another document
    (src / "b.units").write_text("{owl} [is a] {bird}\n")
    with kb_at(tmp_path / "kg") as kb:
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

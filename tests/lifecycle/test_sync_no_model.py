"""`kg sync` with a new text and no model refuses before anything is stored, as `kg ingest`
does, and takes `--llm` as `kg ingest` does. Before, it found the missing model only at that
text: the documents sorted before it were stored (a unit file "added"), then exit 2, halfway."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgservice.cli.app import app
from kgservice.config import DEFAULT_LLM_MODEL, Settings
from kgservice.llm.check import NoModelConfigured
from kgservice.service import KnowledgeBase


def folder(tmp_path: Path) -> Path:
    f = tmp_path / "notes"
    f.mkdir()
    (f / "aa.units").write_text("#aa1 {assam} [is a] {tea}\n", "utf-8")  # sorted before the text
    (f / "puerh.md").write_text("# Pu-erh\n\nPu-erh is a tea.\n", "utf-8")
    return f


def test_sync_refuses_a_text_with_no_model_before_storing_anything(tmp_path):
    notes = folder(tmp_path)
    settings = Settings(data_dir=tmp_path / "kg", embedder="hash:64", llm_model=DEFAULT_LLM_MODEL)
    with KnowledgeBase(settings) as kb:
        with pytest.raises(NoModelConfigured, match="puerh.md"):
            kb.sync(notes)
        assert kb.documents() == [] and kb.stats()["units"] == 0
    # with the model chosen for this run, the same sync stores both; again with none, nothing to extract
    runner = CliRunner()
    base = ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64"]
    r = runner.invoke(app, [*base, "sync", str(notes), "--llm", "kgoffline/rules"], env={"KG_LLM_MODEL": ""})
    assert r.exit_code == 0 and "2 added" in r.output, r.output
    r = runner.invoke(app, [*base, "sync", str(notes)], env={"KG_LLM_MODEL": ""})
    assert r.exit_code == 0 and "2 unchanged" in r.output, r.output


def test_the_check_reads_no_text_and_nothing_with_a_model_set(tmp_path, monkeypatch):
    """The check before storing reads what it needs of each document: with a model chosen it
    can refuse nothing, so it reads no document at all; with none, only the records' meta (the
    hash and the mode). It read every document whole (text and original file: a PDF over the
    wire on Neo4j) once more per sync, whatever the model (review55)."""
    notes = folder(tmp_path)
    settings = Settings(data_dir=tmp_path / "kg", embedder="hash:64", llm_model="kgoffline/rules",
                        llm_model_chosen=True)
    with KnowledgeBase(settings) as kb:
        kb.sync(notes)
        real, asked = kb.store.documents, []

        def documents(ids=None, **kw):
            asked.append((None if ids is None else list(ids), kw.get("parts", "whole")))
            return real(ids, **kw)

        monkeypatch.setattr(kb.store, "documents", documents)
        kb.sync(notes)  # nothing changed
        # the listing, then each file's own ingest reading its current version: no check read
        assert asked == [(None, "meta"), (["aa.units"], "whole"), (["puerh.md"], "whole")], asked
    unchosen = Settings(data_dir=tmp_path / "kg", embedder="hash:64", llm_model=DEFAULT_LLM_MODEL)
    with KnowledgeBase(unchosen) as kb:
        real, asked = kb.store.documents, []
        monkeypatch.setattr(kb.store, "documents", lambda ids=None, **kw: (asked.append(kw.get("parts", "whole")),
                                                                          real(ids, **kw))[1])
        assert kb.sync(notes).unchanged
        assert asked[:2] == ["meta", "meta"], asked  # the listing, then the text's check: meta only

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

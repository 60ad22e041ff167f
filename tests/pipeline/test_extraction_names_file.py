"""An extraction error in a multi-file text ingest names the file it came from."""

from __future__ import annotations

from pathlib import Path

import pytest

import kgservice.extraction as extraction
from kgservice.config import Settings
from kgservice.pipeline.ingest import ingest_text
from kgservice.service import KnowledgeBase


def test_extraction_error_names_the_failing_file(tmp_path: Path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("Tea contains caffeine.\\n", "utf-8")
    (docs / "b.md").write_text("Coffee contains caffeine.\\n", "utf-8")
    real = extraction.extract_text

    def fails_on_coffee(llm, text, *a, **kw):
        if "Coffee" in text:
            raise ValueError("the model's reply is not a unit list")
        return real(llm, text, *a, **kw)

    monkeypatch.setattr(extraction, "extract_text", fails_on_coffee)
    kb = KnowledgeBase(Settings(data_dir=tmp_path / "kg", embedder="hash:64", llm_model="kgoffline/rules"))
    try:
        with pytest.raises(ValueError) as got:
            ingest_text(kb, docs, "summary")
    finally:
        kb.close()
    assert str(docs / "b.md") in str(got.value) and "not a unit list" in str(got.value)

"""Converted documents in the store, on both graph backends: a PDF's format, page starts and
original file are kept with the document (within KG_DOC_TEXT_MAX_BYTES), survive a dump and
restore, leave the history with a purge, and a unit extracted from it cites its page and the
printed lines of its sentence. A text document's units cite their sentence too. Expected
pages and lines are read off the files by hand (tests/documents/test_convert.py says how)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgservice.errors import InputError
from kgservice.service import KnowledgeBase
from tests.pipeline.conftest import make_settings

DATA = Path(__file__).resolve().parents[1] / "data"
PDF = DATA / "documents" / "rivers.pdf"
# what a model states about the Fowler River (its own words, as the recorded run's reply has it)
FOWLER = {"units": [{"subject": "Fowler River", "predicate": "inflow to", "args": [{"node": "Newfound Lake"}]},
                    {"subject": "Turtle River", "predicate": "flows almost entirely in",
                     "args": [{"node": "Grand Forks County"}]}], "mentions": []}


def test_a_pdf_keeps_its_pages_and_original_and_a_unit_cites_its_page(kb: KnowledgeBase, script, tmp_path: Path):
    script.override_task("extract", lambda p: FOWLER)
    kb.ingest_file(PDF, base=PDF.parent)
    [info] = kb.documents()
    assert (info.id, info.format, info.original_stored, info.size) == ("rivers.pdf", "pdf", True, PDF.stat().st_size)
    rec = kb.document("rivers.pdf")
    assert len(rec.pages) == 3
    orig = kb.original("rivers.pdf")
    assert orig.data == PDF.read_bytes() and orig.media_type == "application/pdf" and orig.name == "rivers.pdf"
    by_subject = {kb.unit(u).unit.subject: u for u in rec.unit_lines}
    [fowler] = kb.provenance(by_subject["Fowler River"])
    # page 2 as printed: heading, 3 lines, heading "Fowler River", then "... It is an inflow to" / "Newfound Lake, ..."
    assert (fowler.page, fowler.page_lines, fowler.location) == (2, (6, 7), "rivers.pdf, page 2, lines 6–7")
    assert fowler.section == "Fowler River" and fowler.snippet.startswith("The Fowler River is a river located")
    [turtle] = kb.provenance(by_subject["Turtle River"])
    assert turtle.location == "rivers.pdf, page 3, line 3"  # "States. It flows for almost its entire length in ..."

    dump = tmp_path / "kb.dump"
    kb.dump(dump)
    with KnowledgeBase(make_settings(tmp_path / "other")) as other:
        other.restore(dump)
        assert other.original("rivers.pdf").data == PDF.read_bytes() and other.document("rivers.pdf").pages == rec.pages

    kb.forget(["rivers.pdf"])
    kb.purge("2999-01-01", yes=True)
    for change in kb.history():
        for side in (change.docs_before, change.docs_after):
            assert all(r is None or r.original_z is None for r in side.values())


def test_an_original_over_the_text_cap_is_not_kept(tmp_path: Path, script):
    script.override_task("extract", lambda p: FOWLER)
    with KnowledgeBase(make_settings(tmp_path, doc_text_max_bytes=20_000)) as kb:  # the PDF is 30 kB, its text 2 kB
        kb.ingest_file(PDF, base=PDF.parent)
        info = kb.documents()[0]
        assert info.original_stored is False and info.text_stored is True
        with pytest.raises(InputError, match="larger than KG_DOC_TEXT_MAX_BYTES"):
            kb.original("rivers.pdf")
        assert kb.provenance(next(iter(kb.document("rivers.pdf").unit_lines)))[0].page == 2


def test_text_units_cite_their_sentence_not_the_chunk(kb: KnowledgeBase, script):
    """Real replies (GNU gzip's README, exchange 46 of the first real-model run) on a document
    that starts four lines higher: each unit's lines are its sentence's, found by hand."""
    rec = next(json.loads(line) for line in (DATA / "gzip-extraction.jsonl").open(encoding="utf-8")
               if json.loads(line)["n"] == 46)
    script.override_task("extract", lambda p: rec["reply"])
    text = "# gzip notes\n\nCopied from the README.\n\n" + rec["text"]
    kb.ingest_document("notes/gzip.md", text)
    doc = kb.document("notes/gzip.md")
    got = {(kb.unit(u).unit.subject, kb.unit(u).unit.predicate): ln for u, ln in doc.unit_lines.items()}
    assert got == {("gzip", "used for"): (6, 6), ("gzip", "must be"): (6, 6), ("patches", "should be tested"): (5, 6),
                   ("znew", "is a"): (8, 9), ("gzexe", "is a"): (8, 9), ("znew", "benefits from"): (8, 9),
                   ("gzexe", "benefits from"): (8, 9), ("cpmod", "transfers"): (8, 9)}
    assert doc.chunk_lines and list(doc.chunk_lines.values()) == [(1, 9)]  # the chunk, as before

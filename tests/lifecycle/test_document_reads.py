"""Document reads take only what they need, on both backends: the listing (``kg docs list``,
``GET /v1/documents``, MCP's list, the web page) and every answer's source lines (the no-model
answer, the model path's citations, ``kg show``'s provenance) never read the original converted
file, and they show the same text as the whole record does; a document's split text is kept
between asks and is never served after the document changed (a stale citation is a defect)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from kgservice.answer.retrieval_only import unit_sources
from kgservice.lifecycle.model import cut_lines
from kgservice.lifecycle.place import locate
from kgservice.lifecycle.rows import ROWS
from kgservice.service import KnowledgeBase

HTML = Path(__file__).resolve().parents[1] / "data" / "documents" / "universities.html"
NOTE_V1 = "{cat} [is a] {mammal}\n{mammal} [has] {fur}\n"
# the same two facts a line lower: the units are unchanged, their lines move
NOTE_V2 = "{dog} [is a] {mammal}\n{cat} [is a] {mammal}\n{mammal} [has] {fur}\n"


def refuse_originals(kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make the store refuse to hand out an original file; returns the ``parts`` each read asked."""
    store = kb.store
    real = store.documents
    asked: list[str] = []

    def documents(ids: Any = None, **kw: Any) -> list[Any]:
        asked.append(kw.get("parts", "whole"))
        got = real(ids, **kw)
        read = [d.id for d in got if d.original_z is not None]
        assert not read, f"the original file of {read} was read"
        return got

    monkeypatch.setattr(store, "documents", documents)
    return asked


@pytest.fixture
def ingested(tmp_path: Path, open_kb) -> Path:
    """A knowledge base holding a converted web page (its original file kept) and a unit note,
    ingested with the rule-based stand-in model."""
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(HTML, folder / HTML.name)
    (folder / "note.units").write_text(NOTE_V1)
    ROWS.clear()
    with open_kb(tmp_path / "kg", llm_model="kgoffline/rules") as kb:
        kb.ingest_paths([folder])
        assert kb.document(HTML.name).original_stored and kb.document(HTML.name).original_z
    return tmp_path / "kg"


def whole_sources(kb: KnowledgeBase) -> dict[str, list[tuple[str, str | None, str]]]:
    """Each stated unit's (document, snippet, location), read from the whole records as before."""
    out: dict[str, list[tuple[str, str | None, str]]] = {}
    for rec in kb.store.documents():
        rows = rec.rows()
        for uid, ln in rec.unit_lines.items():
            whole = cut_lines(rows, ln) if rows is not None and ln else None
            out.setdefault(uid, []).append((rec.id, whole, locate(rec, ln).location))
    return out


def test_listing_and_every_source_read_leave_the_original_file(ingested: Path, open_kb, monkeypatch) -> None:
    with open_kb(ingested) as kb:  # no model: the retrieval-only answer
        listed = [d.model_dump() for d in kb.documents()]
        assert [d["id"] for d in listed] == ["note.units", HTML.name]
        assert listed[1]["original_stored"] and listed[1]["format"] == "html"
        expected = whole_sources(kb)
        najand = next(u for u, s in expected.items() if "Najand" in (s[0][1] or ""))
        asked = refuse_originals(kb, monkeypatch)
        assert [d.model_dump() for d in kb.documents()] == listed  # the same listing
        assert asked[-1] == "meta"  # and neither the text nor the original was read for it
        res = kb.ask("Where is the Najand Institute of Higher Education?")
        assert res.sources  # the answer cites the page's lines ...
        got = {p.doc: (p.snippet, p.location) for p in kb.provenance(najand)}
        assert got == {d: (s if s is None or len(s) <= 600 else s[:600] + "…", loc) for d, s, loc in expected[najand]}
        assert "whole" not in asked
    with open_kb(ingested, llm_model="kgoffline/rules") as kb:  # the model path's citations
        asked = refuse_originals(kb, monkeypatch)
        res = kb.ask("Where is the Najand Institute of Higher Education?")
        assert res.sources and "whole" not in asked
        monkeypatch.undo()
        assert kb.original(HTML.name).data == HTML.read_bytes()  # the file itself is still served


def test_source_lines_are_the_whole_records_text(ingested: Path, open_kb) -> None:
    with open_kb(ingested) as kb:
        expected = whole_sources(kb)
        ids = sorted(expected)
        for _ in range(2):  # cold, then from the split texts kept between asks
            got = unit_sources(kb.store, ids)
            assert got == {u: "\n".join(s for _, s, _ in expected[u] if s is not None) for u in ids
                           if any(s is not None for _, s, _ in expected[u])}
            for uid in ids:
                assert [(p.doc, p.location) for p in kb.provenance(uid)] == [(d, loc) for d, _, loc in expected[uid]]


def test_a_replaced_or_reingested_document_is_never_cited_from_its_old_text(ingested: Path, open_kb) -> None:
    with open_kb(ingested) as kb:
        fur = next(u for u, s in whole_sources(kb).items() if s[0][0] == "note.units" and "fur" in (s[0][1] or ""))
        assert unit_sources(kb.store, [fur]) == {fur: "{mammal} [has] {fur}"}  # line 2, now kept split
        res = kb.ingest_document("note.units", NOTE_V2)
        assert res.unchanged == 2 and kb.document("note.units").unit_lines[fur] == (3, 3)
        assert unit_sources(kb.store, [fur]) == {fur: "{mammal} [has] {fur}"}  # line 3 of the new text
        assert [p.snippet for p in kb.provenance(fur)] == ["{mammal} [has] {fur}"]
        # undone: the first version's record and text again (a key seen before, the old rows)
        kb.undo(res.change)
        assert unit_sources(kb.store, [fur]) == {fur: "{mammal} [has] {fur}"}
        assert kb.document("note.units").unit_lines[fur] == (2, 2)


def test_rows_follow_the_record_not_the_document_id(ingested: Path, open_kb) -> None:
    """A forget + re-ingest starts the version again at 1: the rows are keyed by the content
    hash and the time of writing as well, so the new text is read."""
    with open_kb(ingested) as kb:
        fur = next(u for u, ln in kb.document("note.units").unit_lines.items() if ln == (2, 2))
        assert unit_sources(kb.store, [fur]) == {fur: "{mammal} [has] {fur}"}  # version 1's rows kept
        kb.forget(["note.units"])
        rec = kb.ingest_document("note.units", NOTE_V2)
        doc = kb.document("note.units")
        assert rec.kind == "ingest" and doc.version == 1
        cat = next(u for u, ln in doc.unit_lines.items() if ln == (2, 2))
        assert unit_sources(kb.store, [cat]) == {cat: "{cat} [is a] {mammal}"}


def test_each_part_reads_the_same_fields_on_every_backend(ingested: Path, open_kb) -> None:
    """``parts`` means the same on both stores, and a value outside the three is refused rather
    than read as some subset (before the check, "Meta" read the text on Neo4j and nothing
    bulky on the embedded store)."""
    with open_kb(ingested) as kb:
        whole, text, meta = (kb.store.documents([HTML.name], parts=p)[0] for p in ("whole", "text", "meta"))
        assert whole.text_z and whole.original_z
        assert text.text_z == whole.text_z and text.original_z is None
        assert meta.text_z is None and meta.original_z is None
        assert meta.text_stored and meta.original_stored  # what is kept is still said
        with pytest.raises(ValueError, match="parts must be one of 'whole', 'text', 'meta', not 'Meta'"):
            kb.store.documents([HTML.name], parts="Meta")  # type: ignore[arg-type]

"""The four test documents (a PDF, a DOCX, a PPTX, a web page) ingested with no model but the
rule-based stand-in (``kgoffline/rules``), as a team without a model key would: each becomes a
document of its format with its pages, its units cite where a reader finds their sentence, and an
answer cites the PDF's page and printed lines.

Expected values read off the files by hand, not through the converter: the PDF's pages and
printed lines with poppler's ``pdftotext -layout`` (page 2: line 1 the heading "North Branch
Millers River", lines 2-3 "The North Branch of the Millers River is a river in ... / Massachusetts
in the United States.", lines 3-4 "It is a tributary of the Millers River, which flows west to the
/ Connecticut River ..."); the deck's slides from ppt/slides/slide*.xml (slide 6: title "Two
Olympians", then Ambra Migliori, "She swam ...", "Ralph Gomes (born June 13, 1937 in Uitvlugt)
..."); the Word file's 9th line is "It is owned by the Mingo County Airport Authority." under
the heading "Appalachian Regional Airport" (tests/documents/test_model_replay.py), its 10th "The
airport was built on a reclaimed mine site near Varney, ..."; the web page's
Najand sentence is under its heading "Najand Institute of Higher Education"."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgservice.config import Settings
from kgservice.service import KnowledgeBase

DOCUMENTS = Path(__file__).resolve().parents[1] / "data" / "documents"


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory):
    settings = Settings(data_dir=tmp_path_factory.mktemp("kg"), embedder="hash:256", llm_model="kgoffline/rules")
    with KnowledgeBase(settings) as kb:
        kb.ingest_paths([DOCUMENTS])
        yield kb


def _locations(kb: KnowledgeBase, doc: str) -> dict[str, str]:
    """Each unit's subject and first argument -> where its source says it is."""
    out = {}
    for uid in kb.document(doc).unit_lines:
        u = kb.unit(uid).unit
        [src] = kb.provenance(uid)
        out[f"{u.subject} | {u.args[0].node}"] = src.location
    return out


def test_each_format_is_a_document_with_its_pages(kb: KnowledgeBase):
    got = {d.id: (d.format, len(kb.document(d.id).pages), d.units > 0, d.original_stored) for d in kb.documents()}
    # pdfinfo: 3 pages; the deck has slide1..slide6.xml; Word and web pages have no fixed pages
    assert got == {"rivers.pdf": ("pdf", 3, True, True), "airports.docx": ("docx", 0, True, True),
                   "olympics.pptx": ("pptx", 6, True, True), "universities.html": ("html", 0, True, True)}


def test_units_cite_the_page_slide_or_section_of_their_sentence(kb: KnowledgeBase):
    pdf = _locations(kb, "rivers.pdf")
    assert pdf["North Branch of the Millers River | New Hampshire"] == "rivers.pdf, page 2, lines 2–3"
    docx = _locations(kb, "airports.docx")
    assert docx["airport | reclaimed mine site near Varney"] == \
        'airports.docx, section "Appalachian Regional Airport", line 10'
    pptx = _locations(kb, "olympics.pptx")
    assert pptx["Ralph Gomes | Uitvlugt"] == "olympics.pptx, slide 6, line 4"
    html = _locations(kb, "universities.html")
    # one sentence, three units (is a public university; located in Urmia, ..., Iran): each cites that section
    najand = [loc for key, loc in html.items() if key.startswith("Najand Institute of Higher Education |")]
    assert najand and all(loc.startswith('universities.html, section "Najand Institute of Higher Education", line ')
                          for loc in najand)


def test_an_answer_cites_the_pdf_page_and_printed_lines(kb: KnowledgeBase):
    res = kb.ask("What is the North Branch of the Millers River?")
    assert [s["location"] for s in res.sources] == ["rivers.pdf, page 2, lines 3–4"]
    assert "tributary of the Millers River" in res.answer

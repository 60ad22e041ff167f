"""Each test document converts to the text a reader sees in it, with its pages and headings where
the file has them. Expected values are read off the files by hand (the PDF as printed: pages
and lines as LibreOffice laid them out, see tests/data/documents-src; the deck slide by slide;
the web page's article without its menus, banner and footer)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from kgservice.convert import UnreadableDocument, convert, format_of
from kgservice.lifecycle.place import page_of

DATA = Path(__file__).resolve().parents[1] / "data" / "documents"


def _conv(name: str):
    return convert((DATA / name).read_bytes(), name)


def _line_of(text: str, needle: str) -> int:
    [n] = [i for i, row in enumerate(text.split("\n"), 1) if needle in row]
    return n


def test_pdf_pages_lines_and_headings():
    c = _conv("rivers.pdf")
    rows = c.text.split("\n")
    assert c.format == "pdf" and len(c.pages) == 3
    # printed page 2 begins with the heading "North Branch Millers River"; page 3 with "Turtle River"
    assert rows[c.pages[1] - 1] == "## North Branch Millers River" and rows[c.pages[2] - 1] == "## Turtle River"
    assert rows[0] == "# Rivers of the United States: a short field guide"  # 24 pt title; 18 pt headings are ##
    # "Newfound Lake, part of the Pemigewasset ..." is the 7th printed line of page 2 (heading, 3 lines, heading, 2)
    assert page_of(list(c.pages), _line_of(c.text, "Newfound Lake, part of"), rows) == (2, 7)
    # lines stay as printed: the sentence about the Fowler River's inflow is cut where the page cuts it
    assert rows[_line_of(c.text, "It is an inflow to")].startswith("Newfound Lake")


def test_docx_headings_sentences_and_table():
    c = _conv("airports.docx")
    rows = c.text.split("\n")
    assert c.format == "docx" and c.pages == ()  # Word reflows: no fixed pages, headings are the positions
    assert [r[3:] for r in rows if r.startswith("## ")] == [
        "Appalachian Regional Airport", "Penticton Regional Airport", "Edward F. Knapp State Airport",
        "Winner Regional Airport", "Thief River Falls Regional Airport", "Bundaberg Airport", "Other names"]
    assert "It is owned by the Mingo County Airport Authority." in rows  # one sentence a line
    assert any(r.startswith("Edward F. Knapp State Airport is a general aviation airport") for r in rows)  # F. is an initial
    assert "Winner Regional Airport | Bob Wiley Field" in rows


def test_pptx_one_page_per_slide():
    c = _conv("olympics.pptx")
    rows = c.text.split("\n")
    assert c.format == "pptx"
    assert [rows[s - 1] for s in c.pages] == [
        "# Four Olympic stories", "# 1904 Summer Olympics", "# Basketball at the 1936 Summer Olympics",
        "# Tug of war at the Summer Olympics", "# 2024 Summer Olympics", "# Two Olympians"]
    n = _line_of(c.text, "played between 7 August and 14 August 1936 in Berlin")
    assert page_of(list(c.pages), n, rows) == (3, 3)  # slide 3: title, first bullet, this bullet
    assert rows[n - 1].startswith("- ")


def test_html_article_without_the_page_around_it():
    c = _conv("universities.html")
    assert c.format == "html" and c.pages == ()
    for gone in ("cookies", "About us", "Search this site", "Related posts", "newsletter", "dataLayer", "Privacy"):
        assert gone not in c.text
    rows = c.text.split("\n")
    assert [r for r in rows if r.startswith("#")] == [
        "# How five universities began", "## Missouri Western State University",
        "## Ostfalia University of Applied Sciences", "## University of Notre Dame: the College of Engineering",
        "## Botanical Garden of the University of Vienna", "## Najand Institute of Higher Education"]
    assert "- computer science and engineering" in rows
    assert "In 1917 it adopted the Griffon as its mascot." in rows
    assert "The college offers eight B.S. degrees." in rows  # B.S. ends no sentence


def test_xlsx_one_page_per_sheet():
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Airports"
    ws.append(["Airport", "Opened"])
    ws.append(["Appalachian Regional Airport", 2012])
    wb.create_sheet("Rivers").append(["Fowler River", "New Hampshire"])
    buf = io.BytesIO()
    wb.save(buf)
    c = convert(buf.getvalue(), "facts.xlsx")
    assert c.text == ("# Sheet: Airports\n\nAirport | Opened\nAppalachian Regional Airport | 2012\n\n"
                      "# Sheet: Rivers\n\nFowler River | New Hampshire")
    assert c.pages == (1, 6)


def test_format_by_suffix_any_case():
    assert format_of("Q3/Report.PDF").name == "pdf" and format_of("notes.md") is None
    with pytest.raises(UnreadableDocument, match="notes.md: not a document type"):
        convert(b"text", "notes.md")

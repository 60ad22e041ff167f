"""Where some lines of a stored document are, as a reader finds them: "rivers.pdf, page 2, lines
2–3" for a converted PDF (lines counted within the page as printed on it: blank lines, which
only separate paragraphs in the text, are not counted), "slide 3"
for a deck, the heading the lines are under for any text, and "notes.md, lines 3–4" for the
rest. The CLI's sources, ``kg show``, REST, MCP and the web page show this label."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel

from kgservice.lifecycle.model import Lines

if TYPE_CHECKING:
    from kgservice.lifecycle.model import DocumentRecord

class Place(BaseModel):
    """Where some lines of a document are, as a reader finds them: ``page`` (1-based) and
    ``page_lines`` (lines within that page) for a paged document (``page_word``: page, slide,
    sheet), ``section`` the heading they are under, ``location`` the whole in words:
    ``rivers.pdf, page 2, lines 2–3``."""

    page: int | None = None
    page_word: str | None = None
    page_lines: Lines | None = None
    section: str | None = None
    location: str


_HEADING = re.compile(r"\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")


def _lines_word(a: int, b: int) -> str:
    return f"line {a}" if a == b else f"lines {a}–{b}"


def page_of(starts: list[int], line: int, rows: Sequence[str] | None = None) -> tuple[int, int] | None:
    """(1-based page, line within it) of ``line``, given each page's first line; with the
    text's ``rows``, blank lines are not counted (a page's lines as printed on it).

    >>> page_of([1, 20, 32], 25), page_of([1, 20, 32], 1), page_of([], 3)
    ((2, 6), (1, 1), None)
    >>> page_of([1, 4], 6, ["a", "", "b", "## Head", "", "text"])
    (2, 2)
    """
    if not starts:
        return None
    i = max(bisect_right(starts, line) - 1, 0)
    if rows is None:
        return i + 1, line - starts[i] + 1
    return i + 1, max(1, sum(1 for r in rows[starts[i] - 1:line] if r.strip()))


def section_in(rows: Sequence[str], line: int) -> str | None:
    """The Markdown heading nearest above ``line`` (1-based) of a text split into ``rows``
    (:func:`kgservice.lifecycle.model.text_rows`), or None.

    >>> section_in(["# Tea", "green", "## Kinds", "oolong"], 4), section_in(["plain"], 1)
    ('Kinds', None)
    """
    for row in reversed(rows[: max(line, 0)]):
        m = _HEADING.match(row)
        if m:
            return m.group(1)
    return None


def locate(rec: DocumentRecord, lines: Lines | None, rows: Sequence[str] | None = None) -> Place:
    """Where ``lines`` of ``rec``'s text are: the page (slide, sheet) they start on and their
    lines within it, the heading they are under, and the label a reader sees. ``rows``: the
    text already split (:meth:`DocumentRecord.rows`, or an answer's cached rows), so a caller
    placing many lines of one document does not unpack its text for each."""
    from kgservice.convert import page_word

    if not lines:
        return Place(location=rec.id)
    a, b = lines[0], lines[1]
    if rows is None:
        rows = rec.rows()
    section = section_in(rows, a) if rec.mode != "manual" and rows is not None else None
    word = page_word(rec.format)
    first = page_of(rec.pages, a, rows) if word else None
    if first is None:
        where = f"{rec.id}, {_lines_word(a, b)}"
        if section and rec.format:
            where = f'{rec.id}, section "{section}", {_lines_word(a, b)}'
        return Place(section=section, location=where)
    page, pa = first
    last = page_of(rec.pages, b, rows)
    assert last is not None
    if last[0] == page:
        span: Lines = (pa, last[1])
        where = f"{rec.id}, {word} {page}, {_lines_word(pa, last[1])}"
    else:
        span = (pa, pa)
        where = f"{rec.id}, {word} {page}, line {pa} to {word} {last[0]}, line {last[1]}"
    return Place(page=page, page_word=word, page_lines=span, section=section, location=where)

"""DOCX -> text with python-docx: the body's paragraphs and tables in document order; paragraphs
styled Title / Heading N become Markdown headings (the positions a Word file has: it is
reflowed, so it has no fixed pages), list paragraphs ``-`` items, table rows ``a | b``, and
body paragraphs one sentence a line."""

from __future__ import annotations

import io
import re
import zipfile
from typing import Any

from kgservice.convert.formats import UnreadableDocument
from kgservice.convert.layout import assemble, heading
from kgservice.extraction.sentences import one_sentence_a_line


def _heading_level(style: str) -> int | None:
    if style == "Title":
        return 1
    m = re.fullmatch(r"Heading (\d)", style)
    return int(m.group(1)) if m else None


def _is_list(p: Any) -> bool:
    ppr = p._p.pPr
    return (ppr is not None and ppr.numPr is not None) or "List" in (p.style.name if p.style is not None else "")


def table_rows(rows: list[list[str]]) -> str:
    """A table as ``a | b`` rows, one per line; empty rows and repeated merged cells dropped.

    >>> table_rows([["Airport", "Also known as"], ["Winner", "Bob Wiley Field"], ["", ""]])
    'Airport | Also known as\\nWinner | Bob Wiley Field'
    """
    out = []
    for row in rows:
        cells = [" ".join(c.split()) for c in row]
        kept = [c for i, c in enumerate(cells) if i == 0 or c != cells[i - 1]]
        if any(kept):
            out.append(" | ".join(kept))
    return "\n".join(out)


def docx_text(data: bytes, name: str) -> tuple[str, list[int]]:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        doc = docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise UnreadableDocument(f"{name}: the Word document is damaged and cannot be read ({exc}); open it in "
                                 "Word or LibreOffice and save it as .docx again") from None
    except Exception as exc:  # python-docx raises its own and lxml's errors for a malformed part
        raise UnreadableDocument(f"{name}: the Word document cannot be read ({type(exc).__name__}: "
                                 f"{str(exc)[:120]}); open it in Word or LibreOffice and save it as .docx again") from None
    blocks: list[str] = []
    items: list[str] = []
    for el in doc.element.body.iterchildren():
        tag = el.tag.rsplit("}", 1)[-1]
        if tag == "p":
            p = Paragraph(el, doc)
            text = " ".join(p.text.split())
            if not text:
                continue
            style = p.style.name if p.style is not None else ""
            level = _heading_level(style)
            if _is_list(p) and level is None:
                items.append("- " + text)
                continue
            if items:
                blocks.append("\n".join(items))
                items = []
            blocks.append(heading(text, level) if level else one_sentence_a_line(text))
        elif tag == "tbl":
            if items:
                blocks.append("\n".join(items))
                items = []
            rows = [[cell.text for cell in row.cells] for row in Table(el, doc).rows]
            table = table_rows(rows)
            if table:
                blocks.append(table)
    if items:
        blocks.append("\n".join(items))
    text, _ = assemble([blocks])
    return text, []

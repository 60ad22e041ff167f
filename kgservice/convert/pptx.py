"""PPTX -> text with python-pptx: one page per slide, in the deck's order. A slide's title is a
Markdown heading; its other text frames follow top to bottom, left to right (a paragraph
indented as a bullet is a ``-`` item, one sentence a line otherwise), then its tables and the
speaker notes (``Notes:``)."""

from __future__ import annotations

import io
import zipfile
from typing import Any

from kgservice.convert.formats import UnreadableDocument
from kgservice.convert.docx import table_rows
from kgservice.convert.layout import assemble, heading
from kgservice.extraction.sentences import one_sentence_a_line


def _shapes(shapes: Any) -> list[Any]:
    """Every shape, groups opened, in reading order (top to bottom, then left to right)."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    flat: list[Any] = []
    for s in shapes:
        if s.shape_type == MSO_SHAPE_TYPE.GROUP:
            flat += _shapes(s.shapes)
        else:
            flat.append(s)
    return sorted(flat, key=lambda s: (s.top or 0, s.left or 0))


def _frame(frame: Any) -> list[str]:
    """A text frame's blocks: bullet runs as one ``-`` list, other paragraphs one sentence a line."""
    blocks: list[str] = []
    items: list[str] = []
    paras = [(p.level, " ".join(p.text.split())) for p in frame.paragraphs]
    paras = [(lv, t) for lv, t in paras if t]
    bulleted = len(paras) > 1  # a body placeholder's paragraphs are its bullets
    for level, text in paras:
        if bulleted:
            items.append("  " * level + "- " + text)
        else:
            blocks.append(one_sentence_a_line(text))
    if items:
        blocks.append("\n".join(items))
    return blocks


def pptx_text(data: bytes, name: str) -> tuple[str, list[int]]:
    from pptx import Presentation

    try:
        prs = Presentation(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise UnreadableDocument(f"{name}: the PowerPoint deck is damaged and cannot be read ({exc}); open it in "
                                 "PowerPoint or LibreOffice and save it as .pptx again") from None
    except Exception as exc:  # python-pptx raises its own and lxml's errors for a malformed part
        raise UnreadableDocument(f"{name}: the PowerPoint deck cannot be read ({type(exc).__name__}: "
                                 f"{str(exc)[:120]}); open it in PowerPoint or LibreOffice and save it as .pptx "
                                 "again") from None
    pages: list[list[str]] = []
    for slide in prs.slides:
        blocks: list[str] = []
        title = slide.shapes.title
        if title is not None and title.has_text_frame and title.text_frame.text.strip():
            blocks.append(heading(title.text_frame.text, 1))
        for shape in _shapes(slide.shapes):
            if title is not None and shape.shape_id == title.shape_id:
                continue
            if shape.has_text_frame:
                blocks += _frame(shape.text_frame)
            elif getattr(shape, "has_table", False) and shape.has_table:
                rows = table_rows([[c.text for c in row.cells] for row in shape.table.rows])
                if rows:
                    blocks.append(rows)
        if slide.has_notes_slide:
            notes = " ".join(slide.notes_slide.notes_text_frame.text.split()) if slide.notes_slide.notes_text_frame else ""
            if notes:
                blocks.append(one_sentence_a_line("Notes: " + notes))
        pages.append(blocks)
    return assemble(pages)

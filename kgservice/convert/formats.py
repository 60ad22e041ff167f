"""The formats kgservice converts, their names and media types, what a converted document is,
and the error an unreadable file raises (shared by every converter)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kgservice.errors import InputFileError


class UnreadableDocument(InputFileError):
    """A document kgservice cannot turn into text; the message names the file and the fix."""


@dataclass(frozen=True)
class Format:
    name: str  # pdf | docx | pptx | html | xlsx
    media_type: str
    page: str | None  # what one of its pages is called ("page", "slide", "sheet"); None: not paged
    what: str  # how a person names the kind of file, for messages


FORMATS: dict[str, Format] = {
    ".pdf": Format("pdf", "application/pdf", "page", "a PDF"),
    ".docx": Format("docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", None,
                    "a Word document (DOCX)"),
    ".pptx": Format("pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation", "slide",
                    "a PowerPoint deck (PPTX)"),
    ".xlsx": Format("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "sheet",
                    "an Excel workbook (XLSX)"),
    ".html": Format("html", "text/html", None, "a web page (HTML)"),
    ".htm": Format("html", "text/html", None, "a web page (HTML)"),
}
BY_NAME: dict[str, Format] = {f.name: f for f in FORMATS.values()}


def format_of(name: str | Path) -> Format | None:
    """The document format a file name's suffix names (any case), or None for text / notation.

    >>> format_of("Q3/Report.PDF").name, format_of("notes.md")
    ('pdf', None)
    """
    return FORMATS.get(Path(str(name)).suffix.lower())


def page_word(fmt: str | None) -> str | None:
    """What a page of a stored document of format ``fmt`` is called, or None (not paged)."""
    f = BY_NAME.get(fmt or "")
    return f.page if f else None


@dataclass(frozen=True)
class Converted:
    """A document as text: ``pages`` holds the 1-based first line of each page (slide, sheet)
    in order, empty for a format without pages; an empty page starts where the next one does."""

    text: str
    format: str
    pages: tuple[int, ...] = field(default=())

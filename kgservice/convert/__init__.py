"""Office documents and web pages as text the extraction reads, with their page, slide and
heading positions kept (docs/documents.md).

:func:`convert` turns a file's bytes into a :class:`Converted`: Markdown-like text (headings
as ``#`` lines, so chunks know their section; lists as ``-`` lines; table rows as ``a | b``)
and, for paged formats, the first line of every page / slide / sheet, so a unit's lines
name the page they are on ("rivers.pdf, page 2, lines 6–7"). Reflowable text (Word, slides,
web pages) is laid out one sentence a line, so a unit's lines are the sentence that states
it; a PDF keeps the lines as printed, so they can be found on the page.

One library per format, chosen on the quality of the text, the positions it gives and its
install weight (measured in docs/documents.md): pdfminer.six (PDF: paragraphs and font sizes,
hence headings), python-docx (DOCX), python-pptx (PPTX), trafilatura (HTML: the article
without menus, banners and footers), openpyxl (XLSX). Each is imported only when a file of
its format is read.

A file that cannot be read (password-protected or image-only PDF, damaged archive, contents
of another type than its name says) is an :class:`UnreadableDocument` (exit 2, HTTP 422)
naming the file and what to do; nothing is stored.
"""

from __future__ import annotations

import re
from pathlib import Path

from kgservice.convert.formats import (BY_NAME, FORMATS, Converted, Format, UnreadableDocument, format_of,
                                       page_word)

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")


def convert(data: bytes, name: str | Path) -> Converted:
    """The text of the document ``data``, read as the format its name's suffix says; the
    contents are checked against that first (a web page saved as ``.pdf`` is refused, naming
    what it is). Raises :class:`UnreadableDocument` naming ``name``."""
    from kgservice.convert.sniff import check_kind

    fmt = format_of(name)
    if fmt is None:
        raise UnreadableDocument(f"{name}: not a document type kgservice converts "
                                 f"({', '.join(sorted(FORMATS))})")
    check_kind(data, name, fmt)
    if fmt.name == "pdf":
        from kgservice.convert.pdf import pdf_text as run
    elif fmt.name == "docx":
        from kgservice.convert.docx import docx_text as run
    elif fmt.name == "pptx":
        from kgservice.convert.pptx import pptx_text as run
    elif fmt.name == "xlsx":
        from kgservice.convert.xlsx import xlsx_text as run
    else:
        from kgservice.convert.html import html_text as run
    text, pages = run(data, str(name))
    # a PDF's broken font map or a stray byte in a Word file can yield control characters and lone
    # surrogates; no reader sees them, and a store refuses them: they go (TAB and LF stay)
    text = _CONTROL.sub("", text)
    if not text.strip():
        raise UnreadableDocument(f"{name}: {fmt.what} with no text in it; nothing to ingest")
    return Converted(text=text, format=fmt.name, pages=tuple(pages))


__all__ = ["BY_NAME", "FORMATS", "Converted", "Format", "UnreadableDocument", "convert", "format_of", "page_word"]

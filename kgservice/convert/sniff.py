"""What a file really is, from its first bytes: a document whose name promises one format and
whose bytes are another (a web page saved as ``report.pdf``, a PDF renamed ``.docx``) is
refused with both named, instead of a parser's error about a missing /Root object."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kgservice.convert.formats import Format

# the part each Office format must hold, and what the zip is when it holds another
_OFFICE = {"docx": "word/document.xml", "pptx": "ppt/presentation.xml", "xlsx": "xl/workbook.xml"}
_SUFFIX = {"pdf": ".pdf", "docx": ".docx", "pptx": ".pptx", "xlsx": ".xlsx", "html": ".html"}


def kind_of(data: bytes) -> str:
    """``pdf``, ``docx``, ``pptx``, ``xlsx``, ``zip``, ``html``, ``image``, ``text`` or ``binary``.

    >>> kind_of(b"%PDF-1.7 ..."), kind_of(b"<!DOCTYPE html><p>hi"), kind_of(b"\\x89PNG\\r\\n"), kind_of(b"plain words")
    ('pdf', 'html', 'image', 'text')
    """
    head = data[:1024]
    if b"%PDF-" in head:
        return "pdf"
    if data[:4] == b"PK\x03\x04":
        try:
            names = set(zipfile.ZipFile(io.BytesIO(data)).namelist())
        except (zipfile.BadZipFile, ValueError, OSError):
            return "zip"
        return next((k for k, part in _OFFICE.items() if part in names), "zip")
    if head[:4] == b"\x89PNG" or head[:3] == b"\xff\xd8\xff" or head[:6] in (b"GIF87a", b"GIF89a"):
        return "image"
    low = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if low.startswith((b"<!doctype html", b"<html", b"<?xml")) or b"<body" in low or b"<head" in low:
        return "html"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # a cut multi-byte character at the end is still text
            return "binary"
    return "text" if b"\x00" not in head else "binary"


_SAYS = {"pdf": "a PDF", "docx": "a Word document (DOCX)", "pptx": "a PowerPoint deck (PPTX)",
         "xlsx": "an Excel workbook (XLSX)", "zip": "a ZIP archive", "html": "a web page (HTML)",
         "image": "an image", "text": "plain text", "binary": "binary data of an unknown type"}


def check_kind(data: bytes, name: str | Path, fmt: Format) -> None:
    """Refuse ``data`` when it is not what ``fmt`` (from the file name) says it is."""
    from kgservice.convert.formats import UnreadableDocument

    if not data:
        raise UnreadableDocument(f"{name}: the file is empty")
    kind = kind_of(data)
    if kind == fmt.name or (fmt.name == "html" and kind == "text"):
        return
    if fmt.name in _OFFICE and kind == "zip":
        if data[:4] == b"PK\x03\x04" and not _zip_complete(data):
            raise UnreadableDocument(f"{name}: {fmt.what} that is damaged: the ZIP archive it is made of is incomplete "
                                     "(cut short, e.g. by an interrupted download or copy); get or export it again")
        raise UnreadableDocument(f"{name}: a ZIP archive without the parts of {fmt.what} "
                                 f"({_OFFICE[fmt.name]} is missing); open it in its program and save it as "
                                 f"{Path(str(name)).suffix.lower()} again")
    fix = f"rename it to {Path(str(name)).stem}{_SUFFIX[kind]}" if kind in _SUFFIX else "check that it is the right file"
    raise UnreadableDocument(f"{name}: named like {fmt.what}, but the file is {_SAYS[kind]}; {fix}")


def _zip_complete(data: bytes) -> bool:
    try:
        zipfile.ZipFile(io.BytesIO(data)).testzip()
    except (zipfile.BadZipFile, ValueError, OSError, EOFError):
        return False
    return True

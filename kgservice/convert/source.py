"""The converter step before text extraction: a file (or an upload's bytes) as the text the
extraction reads, plus, for a converted document, its format, page starts and the original
bytes a citation can show. Text and Markdown pass through (UTF-8 checked); unit notation is
not read here."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path

from kgservice.errors import InputFileError


@dataclass(frozen=True)
class Source:
    text: str
    format: str | None = None  # pdf | docx | pptx | html | xlsx; None: the file was text
    pages: tuple[int, ...] = field(default=())  # first line of each page / slide / sheet
    original: bytes | None = None  # the file as given (converted documents only)
    sha256: str | None = None  # of the original bytes, to notice a file changed between two reads


def decode(data: bytes, name: str | Path) -> str:
    """UTF-8 text, or an :class:`InputFileError` naming the file, the line and the byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputFileError(f"{name}:{line}: file is not valid UTF-8 (byte 0x{data[exc.start]:02x})") from None


def source_of(data: bytes, name: str | Path, *, keep_original: bool = True) -> Source:
    """``data`` (the bytes of a file called ``name``) as a :class:`Source`: converted when the
    name's suffix is a document format (:mod:`kgservice.convert`), else decoded as UTF-8."""
    from kgservice.convert import convert, format_of

    if format_of(name) is None:
        return Source(text=decode(data, name))
    conv = convert(data, name)
    return Source(text=conv.text, format=conv.format, pages=conv.pages, original=data if keep_original else None,
                  sha256=hashlib.sha256(data).hexdigest())


def read_source(path: Path | str, *, keep_original: bool = True) -> Source:
    """A file as a :class:`Source`; ``keep_original`` False leaves the bytes out (a folder's
    files are all read before any is stored; :func:`with_original` reads them again)."""
    from kgservice.disk import read_input

    return source_of(read_input(path), path, keep_original=keep_original)


def with_original(src: Source, path: Path | str) -> Source:
    """``src`` with its original bytes read from ``path`` again; converted anew when the file
    changed since ``src`` was made from it."""
    if src.format is None or src.original is not None:
        return src
    from kgservice.disk import read_input

    data = read_input(path)
    if hashlib.sha256(data).hexdigest() != src.sha256:
        return source_of(data, path)
    return replace(src, original=data)

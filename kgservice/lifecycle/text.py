"""A document's new version from its text or notation (:func:`ingest_document`): chunks (with their line ranges and
content hashes) and the units each states, re-extracting only the chunks whose hash is new."""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any

from kgservice.errors import ReadOnlyError
from kgservice.lifecycle.model import ChangeResult, Lines, text_rows
from kgservice.model import Unit

if TYPE_CHECKING:
    from kgservice.convert.source import Source
    from kgservice.parts import Parts


def _find(text: str, needle: str, at: int) -> tuple[int, int]:
    """(start, end) of ``needle`` in ``text`` from ``at``, any run of whitespace matching any
    other (a chunk joins a long paragraph's sentences with spaces); (-1, -1) if absent."""
    m = re.compile(r"\s+".join(map(re.escape, needle.split()))).search(text, at)
    return (m.start(), m.end()) if m else (-1, -1)


def chunk_lines(text: str, pieces: list[str]) -> list[Lines | None]:
    """1-based inclusive line ranges of each chunk in ``text`` (located by their first and last
    paragraph, whitespace-insensitively; None when a chunk cannot be found)."""
    norm = text.replace("\r\n", "\n").replace("\r", "\n")
    out: list[Lines | None] = []
    at = 0
    for piece in pieces:
        paras = [p for p in piece.split("\n\n") if p.strip()]
        if not paras:
            out.append(None)
            continue
        start, end = _find(norm, paras[0].strip()[:80], at)
        if start < 0:
            out.append(None)
            continue
        t0, t1 = _find(norm, paras[-1].strip()[-80:], start)
        end = t1 if t0 >= 0 else end
        out.append((norm.count("\n", 0, start) + 1, norm.count("\n", 0, max(start, end - 1)) + 1))
        at = end
    return out


def chunk_hash(text: str, mode: str, tag: str) -> str:
    return hashlib.sha256(f"{mode}\x1f{tag}\x1f{text}".encode()).hexdigest()[:24]


def _changes(old: Any, sha: str, mode: str, force: bool) -> bool:
    """Whether a new version with content hash ``sha`` in ``mode`` changes the document whose
    current version is ``old`` (None: there is none): only then is anything extracted."""
    return old is None or old.sha256 != sha or old.mode != mode or force


def ingest_document(parts: Parts, doc_id: str, text: str, *, mode: str | None = None, title: str | None = None,
                    root: str | None = None, expect_version: int | None = None, embed: bool = True,
                    force: bool = False, source: Source | None = None) -> ChangeResult:
    """``text`` as the current version of document ``doc_id`` (a relative path): the first
    version is ingested, a new one replaces the old one's units (unchanged units keep their
    ids, units no longer stated are retracted unless another document states them, only
    changed chunks are extracted again); the same content again changes nothing. ``mode``:
    ``manual`` for unit notation, ``summary``/``detail`` for text (default: by the id's suffix).

    Changes of one document are serialised (:func:`kgservice.lifecycle.ops.document_claim`);
    ``expect_version``: the version this new one is based on (0: none yet); another current
    version is a :class:`~kgservice.stores.base.IngestConflict` and changes nothing.
    ``source``: the converted file (PDF, DOCX, ...) ``text`` was made from
    (:func:`kgservice.convert.source.read_source`): its format, page starts and original
    bytes are kept with the document, so a citation names and shows its page."""
    from kgservice.lifecycle.ops import check_doc_id, check_version, document_claim
    from kgservice.pipeline.ingest import content_hash, document_mode

    if parts.settings.read_only:  # also when nothing would change: a read-only service refuses every write
        raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); ingest refused")
    doc_id = check_doc_id(doc_id)
    m = document_mode(doc_id, mode)
    with document_claim([doc_id]):
        check_version(parts, doc_id, content_hash(text), m, expect_version)
        if m == "manual":
            return ingest_document_notation(parts, doc_id, text, title=title, root=root, embed=embed, force=force)
        return ingest_document_text(parts, doc_id, text, m, title=title, root=root, embed=embed, force=force,
                                    source=source)


def needs_extraction(parts: Parts, doc_id: str, text: str, mode: str, force: bool = False) -> bool:
    """Whether ``text`` as the new version of ``doc_id`` goes to the model: yes unless the
    document already holds exactly this text in this mode (then nothing changes, whichever
    model is configured). Asked before anything is stored or queued, for
    :func:`kgservice.llm.check.refuse_text_without_model`."""
    from kgservice.pipeline.ingest import content_hash

    # the hash and mode are in the record's meta: no text or original file is read for them
    return _changes(next(iter(parts.store.documents([doc_id], parts="meta")), None), content_hash(text), mode, force)


def ingest_document_text(parts: Parts, doc_id: str, text: str, mode: str, *, title: str | None = None,
                         size: int | None = None, root: str | None = None, embed: bool = True,
                         force: bool = False, source: Source | None = None) -> ChangeResult:
    """Text through LLM extraction, one chunk at a time, as the new version of ``doc_id``: a
    chunk whose content hash the old version has keeps its units (no LLM call). Extraction
    runs before anything is written, so a failure changes nothing. ``force`` extracts every
    chunk again, also when the text is unchanged. ``source``: the converted file ``text``
    came from (format, page starts, original bytes), stored with the document.

    Each unit's lines are those of the sentence(s) in its chunk that state it
    (:mod:`kgservice.extraction.align`), reused chunks' units too (the lines move with an
    edit above them); a unit no sentence matches keeps the chunk's lines."""
    from kgservice.extraction import Resolver, extract_text, to_units
    from kgservice.extraction.align import unit_lines
    from kgservice.extraction.chunking import chunk_text
    from kgservice.extraction.extract import extract_prompt
    from kgservice.lifecycle.ops import _units_any, replace_document
    from kgservice.pipeline.ingest import content_hash

    if parts.settings.read_only:
        from kgservice.errors import ReadOnlyError

        raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); ingest refused")
    sha = content_hash(text)
    old = next(iter(parts.store.documents([doc_id])), None)
    if old is not None and not _changes(old, sha, mode, force):
        return ChangeResult(kind="replace", docs=[doc_id], unchanged=old.units)
    chunks = chunk_text(text)
    ranges = chunk_lines(text, [c.text for c in chunks])
    tag = extract_prompt().tag
    reuse = _units_any(parts, sorted({u for us in old.chunks.values() for u in us})) if old is not None else {}
    resolver = None
    statements: list[tuple[Unit, Lines | None]] = []
    hashes: dict[str, list[str]] = {}
    lines_of: dict[str, Lines | None] = {}
    extracted = reused = 0
    rows = text_rows(text)
    for chunk, ln in zip(chunks, ranges):
        h = chunk_hash(chunk.text, mode, tag)
        if old is not None and not force and h in old.chunks and all(u in reuse for u in old.chunks[h]):
            units = [reuse[u] for u in old.chunks[h]]
            reused += 1
        else:
            if resolver is None:
                from kgservice.llm.check import refuse_text_without_model

                refuse_text_without_model(parts.settings, [doc_id])  # before the first model call
                resolver = Resolver.for_kb(parts, parts.llm)
            ex = extract_text(parts.llm, chunk.text, mode, purpose="extract", section=chunk.section)
            rename = resolver.resolve(ex)
            units = to_units(ex, parts.lexicon, doc=doc_id, mode=mode, rename=rename)  # type: ignore[arg-type]
            extracted += 1
        hashes[h] = [u.id for u in units]
        lines_of[h] = ln
        if ln and ln[0] == ln[1]:
            # a chunk inside one line: every sentence of it is on that line, so that is each unit's
            # line. Aligning would read the whole line for every chunk cut from it: a one-line text
            # of 100 kB took 36 s (1 MB: minutes), against 4 s with a sentence a line
            found: list[Lines | None] = [ln] * len(units)
        else:
            found = unit_lines(units, "\n".join(rows[ln[0] - 1:ln[1]]), ln[0]) if ln else [None] * len(units)
        statements += [(u, at or ln) for u, at in zip(units, found)]
    if size is None:
        size = len(source.original) if source is not None and source.original is not None else len(text.encode())
    res = replace_document(parts, doc_id, statements, title=title or _title(text, doc_id), sha256=sha, mode=mode,
                           size=size, text=text, chunks=hashes,
                           chunk_lines=lines_of, root=root, embed=embed, force=force, source=source)
    res.chunks_extracted, res.chunks_reused = extracted, reused
    return res


def ingest_document_notation(parts: Parts, doc_id: str, text: str, *, title: str | None = None,
                             root: str | None = None, embed: bool = True, force: bool = False) -> ChangeResult:
    """Unit notation (a ``.units`` file) as the new version of ``doc_id``; each unit's lines are
    where it is written, its unit line through its last modifier row (as the parser read it),
    so a cited unit's excerpt carries its modifiers."""
    from kgservice.lifecycle.ops import replace_document
    from kgservice.notation import parse_units_with_lines
    from kgservice.pipeline.ingest import content_hash

    statements: list[tuple[Unit, Lines | None]] = list(parse_units_with_lines(text, parts.lexicon, doc=doc_id))
    return replace_document(parts, doc_id, statements, title=title or _notation_title(text, doc_id),
                            sha256=content_hash(text),
                            mode="manual", size=len(text.encode()), text=text, root=root, embed=embed, force=force)


def _title(text: str, doc_id: str) -> str:
    """A text's first line, without a Markdown heading's ``#`` marks (only those: ``#`` not
    followed by a space starts a word, such as a unit id, and is kept); none: the file name."""
    for row in text.splitlines():
        row = row.strip()
        heading = re.match(r"#+(\s|$)", row)
        row = row[heading.end():].strip() if heading else row
        if row:
            return row[:120]
    return doc_id.rsplit("/", 1)[-1]


def _notation_title(text: str, doc_id: str) -> str:
    """A unit file's title: its first comment's text without the ``%`` marks (a file states
    its subject in a comment, e.g. ``% Python: who made it``); a file without comments: its
    first line as written (a unit id keeps its ``#``); an empty one: the file name."""
    text = text.removeprefix("\ufeff")
    for row in text.splitlines():
        row = row.strip()
        if row.startswith("%") and row.lstrip("%").strip():
            return row.lstrip("%").strip()[:120]
    return next((row.strip()[:120] for row in text.splitlines() if row.strip()), doc_id.rsplit("/", 1)[-1])

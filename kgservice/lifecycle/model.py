"""The lifecycle's records: documents, changes, retracted units, and what each operation reports.

They are pydantic models at the boundary (CLI ``--json``, REST, MCP) and plain dicts inside a
store (``model_dump()``: the embedded snapshot pickles no classes; Neo4j keeps them as JSON)."""

from __future__ import annotations

import base64
import zlib
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from kgservice.model import Unit

ChangeKind = Literal["ingest", "replace", "forget", "retract", "undo", "purge"]
Lines = tuple[int, int]
# which bulky fields a document read returns (GraphStore.documents): "whole" the text and the
# original converted file, "text" the text only, "meta" neither (listings, cached source rows)
DocumentParts = Literal["whole", "text", "meta"]
DOCUMENT_PARTS: tuple[DocumentParts, ...] = ("whole", "text", "meta")


def document_parts(parts: str) -> DocumentParts:
    """``parts`` checked, for a store's ``documents``: each backend reads a different subset for
    each value, so a misspelt one would read a different subset on each instead of failing.

    >>> document_parts("meta")
    'meta'
    >>> document_parts("Meta")
    Traceback (most recent call last):
    ...
    ValueError: parts must be one of 'whole', 'text', 'meta', not 'Meta'
    """
    for known in DOCUMENT_PARTS:
        if parts == known:
            return known
    raise ValueError(f"parts must be one of {', '.join(map(repr, DOCUMENT_PARTS))}, not {parts!r}")


class DocumentInfo(BaseModel):
    """One ingested source, as listed (``kg docs list``, ``GET /v1/documents``)."""

    id: str  # path relative to the folder given to ingest/sync, or the --doc-id given
    title: str
    sha256: str  # of the normalised text (line endings, BOM, outer whitespace)
    mode: str  # summary | detail | manual (unit files)
    size: int  # bytes of the source
    version: int  # 1 at the first ingest, +1 per replacement
    who: str | None = None
    when: str  # ISO timestamp of this version
    units: int = 0  # units this version states
    text_stored: bool = False
    text_truncated: bool = False
    root: str | None = None  # the folder `kg sync` mirrors this document from
    format: str | None = None  # pdf | docx | pptx | html | xlsx: the text was converted from such a file
    original_stored: bool = False  # that file is kept as given (within KG_DOC_TEXT_MAX_BYTES)


class DocumentRecord(DocumentInfo):
    """What the store keeps per document: the listing fields, the compressed text (``text_z``,
    base64 of zlib) and which units the document states, with the lines each came from."""

    text_z: str | None = None
    unit_lines: dict[str, Lines | None] = Field(default_factory=dict)
    # chunk content hash -> unit ids extracted from it (text documents): a replacement
    # re-extracts only the chunks whose hash is new
    chunks: dict[str, list[str]] = Field(default_factory=dict)
    chunk_lines: dict[str, Lines | None] = Field(default_factory=dict)
    # a converted document: the first line of each page / slide / sheet of its text, and the
    # file it was converted from (base64 of zlib), so a citation can name and show its page
    pages: list[int] = Field(default_factory=list)
    original_z: str | None = None

    def remapped(self, dups: dict[str, str]) -> "DocumentRecord":
        """This record with its statements of merged duplicates naming the unit they merged into."""
        if not dups or not any(u in dups for u in self.unit_lines):
            return self
        lines = {dups.get(u, u): ln for u, ln in self.unit_lines.items()}
        chunks = {h: [dups.get(u, u) for u in us] for h, us in self.chunks.items()}
        return self.model_copy(update={"unit_lines": lines, "chunks": chunks, "units": len(lines)})

    def info(self) -> DocumentInfo:
        return DocumentInfo(**{k: getattr(self, k) for k in DocumentInfo.model_fields})

    def view(self) -> dict[str, Any]:
        """One document as ``kg docs show --json``, GET /v1/documents/{id} and MCP show it: the
        listing fields, each unit's lines, the page starts (converted documents) and the text."""
        return {**self.info().model_dump(), "unit_lines": self.unit_lines, "pages": self.pages, "text": self.text()}

    def text(self) -> str | None:
        if self.text_z is None:
            return None
        return zlib.decompress(base64.b64decode(self.text_z)).decode("utf-8", "replace")

    def original(self) -> bytes | None:
        if self.original_z is None:
            return None
        return zlib.decompress(base64.b64decode(self.original_z))

    @staticmethod
    def pack_original(data: bytes, cap: int) -> str | None:
        """The original file compressed, when it is at most ``cap`` bytes (a file cut short
        cannot be opened, so a larger one is not kept at all)."""
        if cap <= 0 or len(data) > cap:
            return None
        return base64.b64encode(zlib.compress(data, 6)).decode("ascii")

    @staticmethod
    def pack_text(text: str, cap: int) -> tuple[str | None, bool]:
        """(text_z, truncated): the text compressed, cut to ``cap`` bytes of UTF-8 first."""
        if cap <= 0:
            return None, bool(text)
        data = text.encode("utf-8")
        cut = len(data) > cap
        data = data[:cap]
        return base64.b64encode(zlib.compress(data, 6)).decode("ascii"), cut

    def rows(self) -> list[str] | None:
        """The stored text's lines (:func:`text_rows`), for :func:`cut_lines`; None when no text
        is kept. A caller cutting several units' lines from one document splits it once."""
        text = self.text()
        return None if text is None else text_rows(text)

    def snippet(self, lines: Lines | None, max_chars: int = 600) -> str | None:
        """The source lines ``lines`` (1-based, inclusive) of the stored text."""
        return cut_snippet(self.rows(), lines, max_chars)


def text_rows(text: str) -> list[str]:
    """A text's lines whatever its line endings (CRLF, CR, LF): the rows a unit's ``Lines``
    number from 1, as ingest counted them.

    >>> text_rows("a\\r\\nb\\rc\\n")
    ['a', 'b', 'c', '']
    """
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def cut_snippet(rows: Sequence[str] | None, lines: Lines | None, max_chars: int = 600) -> str | None:
    """:meth:`DocumentRecord.snippet` on a text already split into ``rows``: the lines, cut
    to ``max_chars`` (an ellipsis marks the cut); None without rows or lines.

    >>> cut_snippet(["ab", "cd"], (1, 2), 4), cut_snippet(["ab"], None), cut_snippet(None, (1, 1))
    ('ab\\nc…', None, None)
    """
    if rows is None or lines is None:
        return None
    out = cut_lines(rows, lines)
    return out if len(out) <= max_chars else out[:max_chars] + "…"


def cut_lines(rows: Sequence[str], lines: Lines) -> str:
    """Lines ``lines`` (1-based, inclusive) of a text split into ``rows``.

    >>> cut_lines(["a", "b", "c"], (2, 3)).splitlines(), cut_lines(["a"], (1, 1)), cut_lines(["a"], (2, 3))
    (['b', 'c'], 'a', '')
    """
    return "\n".join(rows[max(0, lines[0] - 1):lines[1]])


class ChangeRecord(BaseModel):
    """One lifecycle change, in the history (``kg history``) and enough to undo it: the units it
    made live (``added``), the units it retracted and the document records before and after."""

    id: str
    seq: int = 0
    kind: ChangeKind
    at: str
    who: str | None = None
    docs: list[str] = Field(default_factory=list)
    units: list[str] = Field(default_factory=list)  # units named by a retract
    reason: str | None = None
    added: list[str] = Field(default_factory=list)
    retracted: list[str] = Field(default_factory=list)
    undoes: str | None = None
    docs_before: dict[str, DocumentRecord | None] = Field(default_factory=dict)
    docs_after: dict[str, DocumentRecord | None] = Field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The history row: no document texts."""
        return {"id": self.id, "seq": self.seq, "kind": self.kind, "at": self.at, "who": self.who,
                "docs": self.docs, "units": self.units, "reason": self.reason, "added": len(self.added),
                "retracted": len(self.retracted), "undoes": self.undoes}


class RetractedUnit(BaseModel):
    """A unit out of the graph, kept until purged: the change that retracted it and when."""

    unit: Unit
    change: str
    at: str
    reason: str | None = None


class ChangeResult(BaseModel):
    """What one lifecycle operation did (``kg forget``, ``kg retract``, a replacement, ``kg undo``)."""

    change: str | None = None  # None: nothing to change (the same content again)
    kind: ChangeKind
    docs: list[str] = Field(default_factory=list)
    added: int = 0  # units made live
    unchanged: int = 0  # units the new version states again (ids kept)
    retracted: int = 0
    kept_shared: int = 0  # units no longer stated here but still stated by another document
    orphaned_nodes: int = 0  # nodes no live unit mentions any more (removed with their vectors)
    chunks_extracted: int = 0
    chunks_reused: int = 0
    nodes_added: int = 0
    embedded_nodes: int = 0  # new nodes given a vector now (0 when asked not to embed)
    # a unit id of this version -> the live unit already stating the same fact (not added)
    duplicates: dict[str, str] = Field(default_factory=dict)
    # new nodes left without a vector because the caller embeds them later, all at once
    # (``kg ingest``: one vector phase after every document's graph write); not in replies
    unembedded: list[str] = Field(default_factory=list, exclude=True)


class Original(BaseModel):
    """The file a converted document was ingested from, as given (``KnowledgeBase.original``)."""

    doc: str
    name: str  # the file name (the document id's last part)
    media_type: str
    data: bytes


class Provenance(BaseModel):
    """Where a unit comes from: each document stating it, with its lines and their text, and
    (``page``, ``page_lines``, ``section``, ``location``) where those lines are."""

    doc: str
    lines: Lines | None = None
    snippet: str | None = None
    page: int | None = None
    page_word: str | None = None
    page_lines: Lines | None = None
    section: str | None = None
    location: str | None = None


class SyncReport(BaseModel):
    added: list[str] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list)
    forgotten: list[str] = Field(default_factory=list)
    unchanged: list[str] = Field(default_factory=list)
    kept: list[str] = Field(default_factory=list)  # --no-delete: files gone, documents kept
    changes: list[str] = Field(default_factory=list)


class PurgeReport(BaseModel):
    units: int = 0  # retracted units deleted for good
    documents: int = 0  # forgotten documents' texts dropped from the history
    before: str

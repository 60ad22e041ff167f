"""The documents stating an answer's units, with their texts as lines, read the way every ask
needs them: the records without the original converted file, and each text unpacked and split
once per version rather than once per ask.

An answer's source lines (the no-model answer's :func:`kgservice.answer.retrieval_only.unit_sources`,
the model path's :func:`kgservice.answer.sources.cited_sources`) cut a few lines out of each
document stating a pool unit. Reading the whole record brought the compressed text *and* the
original file (a PDF / DOCX of up to KG_DOC_TEXT_MAX_BYTES, over the wire on Neo4j) on every
ask, and decompressing + splitting its text cost milliseconds of CPU per MB each time
(scripts/bench/document_reads.py).

Coherence: the rows are keyed by (document id, sha256, version, when, text_truncated) and the
key is read from
the store on every call (the records' ``"meta"`` read, no text), so a replaced, forgotten,
re-ingested or undone document is never served from stale rows, on any server: a replacement
bumps ``version`` and ``when``, a forget + re-ingest starts again at version 1 with a new
``when`` (or, within the same second, a new content hash when the text differs), an undo brings the old record (and key) back with its old text. The cache only saves
unpacking text that has not changed; it never decides what is current. It is per process and
bounded by about the memory its rows take (:data:`MAX_SIZE`), least recently used first out.
The one case the key cannot tell apart: a document forgotten and re-ingested with the same
content within the same second by a server whose KG_DOC_TEXT_MAX_BYTES cuts its text elsewhere
(``text_truncated`` in the key catches it unless both versions were cut).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kgservice.lifecycle.model import DocumentRecord
    from kgservice.stores.base import GraphStore

# ~64 MB of split text (characters plus a str's overhead per line): a team's most cited
# documents stay unpacked; a text larger than the whole bound is not kept
MAX_SIZE = 64_000_000
_ROW_OVERHEAD = 56  # bytes of a short str object beyond its characters (sys.getsizeof("") is 49)

Rows = tuple[str, ...]
RowsKey = tuple[str, str, int, str, bool]


def rows_key(rec: DocumentRecord) -> RowsKey:
    """What a document's stored text is a function of: its id, content hash, version, the
    time that version was written (a forget + re-ingest restarts the version but not the time)
    and whether the text was cut to KG_DOC_TEXT_MAX_BYTES."""
    return (rec.id, rec.sha256, rec.version, rec.when, rec.text_truncated)


class RowsCache:
    """Split texts by :func:`rows_key`, least recently used out past ``max_size`` (characters
    plus a per-line overhead: :func:`rows_size`).

    >>> c = RowsCache(max_size=rows_size(("abc",)) + rows_size(("de",)) + rows_size(("fg",)) - 1)
    >>> a, b, d = (("a", "h", 1, "t", False), ("b", "h", 1, "t", False), ("d", "h", 1, "t", False))
    >>> c.put(a, ("abc",)); c.put(b, ("de",)); c.get(a)
    ('abc',)
    >>> c.put(d, ("fg",)); c.get(b) is None, c.get(a), c.size == rows_size(("abc",)) + rows_size(("fg",))
    (True, ('abc',), True)
    """

    def __init__(self, max_size: int = MAX_SIZE) -> None:
        self.max_size = max_size
        self.size = 0
        self._rows: OrderedDict[RowsKey, Rows] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: RowsKey) -> Rows | None:
        with self._lock:
            rows = self._rows.get(key)
            if rows is not None:
                self._rows.move_to_end(key)
            return rows

    def put(self, key: RowsKey, rows: Rows) -> None:
        size = rows_size(rows)
        if size > self.max_size:
            return
        with self._lock:
            old = self._rows.pop(key, None)
            if old is not None:
                self.size -= rows_size(old)
            self._rows[key] = rows
            self.size += size
            while self.size > self.max_size:
                _, gone = self._rows.popitem(last=False)
                self.size -= rows_size(gone)

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()
            self.size = 0


def rows_size(rows: Rows) -> int:
    """About the memory ``rows`` take: their characters and a str's overhead per line.

    >>> rows_size(("ab", "")) == 2 + 2 * _ROW_OVERHEAD
    True
    """
    return sum(map(len, rows)) + _ROW_OVERHEAD * len(rows)


ROWS = RowsCache()


def source_documents(store: GraphStore, ids: Iterable[str],
                     cache: RowsCache = ROWS) -> tuple[dict[str, DocumentRecord], dict[str, Rows]]:
    """The records of documents ``ids`` (statements, pages, listing fields; never the original
    file, ``text_z`` not kept) and, for each that keeps its text, that text's lines. One store
    read when every text's rows are cached, a second for the texts that are not (only those,
    without their originals)."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}, {}
    docs = {d.id: d for d in store.documents(wanted, parts="meta")}
    rows: dict[str, Rows] = {}
    missing = []
    for d in docs.values():
        if not d.text_stored:
            continue
        got = cache.get(rows_key(d))
        if got is None:
            missing.append(d.id)
        else:
            rows[d.id] = got
    if missing:
        fresh = {d.id: d for d in store.documents(missing, parts="text")}
        for doc_id in missing:
            d = fresh.get(doc_id)
            if d is None:  # forgotten between the two reads
                del docs[doc_id]
                continue
            docs[doc_id] = d  # this read's record: its statements and its text are of one version
            split = d.rows()
            if split is not None:
                rows[doc_id] = tuple(split)
                cache.put(rows_key(d), rows[doc_id])
    return docs, rows

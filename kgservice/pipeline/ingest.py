"""The ingest pipeline for text (DESIGN §3): ``ingest_text(parts, paths, mode)``.

Per document: read (UTF-8) -> content hash -> skip if this (hash, mode) was ingested
before -> chunk -> per chunk: LLM extraction (validated; no field may mirror a source
sentence) and entity resolution against the graph and the earlier chunks -> one atomic
batch through :func:`ingest_units` (units, relations, reverse indexes, vectors,
cache invalidation). Units get content-hash ids, so the same fact is stored once however
often it is extracted.

The document ledger (``<data_dir>/documents.sqlite3``) keeps the content hash, the file
name, the mode and counts — never the text (invariant 6).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgservice.errors import InputFileError, InvalidArgument, ReadOnlyError
from kgservice.extraction.chunking import DEFAULT_MAX_CHARS, chunk_text
from kgservice.families import Lexicon
from kgservice.llm import LLM
from kgservice.model import IngestReport, Unit
from kgservice.notation import NotationErrors, doc_name, parse_file, parse_units
from kgservice.stores import sqlite_file
from kgservice.disk import read_input
from kgservice.convert import FORMATS as DOCUMENT_FORMATS
from kgservice.convert.source import source_of

if TYPE_CHECKING:
    from kgservice.parts import Parts

TEXT_MODES: dict[str, str] = {
    ".md": "summary", ".markdown": "summary", ".rst": "summary",  # documents, papers, docs
    ".txt": "detail", ".text": "detail",  # notes, interviews, reviews, user input
    # office documents and web pages, converted to text first (kgservice.convert)
    **dict.fromkeys(DOCUMENT_FORMATS, "summary"),
}
UNIT_SUFFIXES = frozenset({".units", ".kgu"})
LEDGER_FILE = "documents.sqlite3"

Progress = Callable[[str, dict[str, Any]], None]


# text types read from their bytes by a converter, not as UTF-8 (an upload sends them as bytes):
# PDF, Word, PowerPoint, web pages, Excel (kgservice.convert)
FILE_SUFFIXES: frozenset[str] = frozenset(DOCUMENT_FORMATS)


def accepted_formats() -> list[dict[str, str]]:
    """The file types ``kg ingest`` (and so an upload) reads, by suffix: ``kind`` "units" (unit
    notation, parsed), "text" (UTF-8 text extracted by the model, in ``mode``) or "file" (bytes a
    converter turns into text first). Clients ask for this list instead of keeping their own, so
    a format added here is offered everywhere."""
    return ([{"suffix": s, "kind": "units", "mode": "manual"} for s in sorted(UNIT_SUFFIXES)]
            + [{"suffix": s, "kind": "file" if s in FILE_SUFFIXES else "text", "mode": m} for s, m in TEXT_MODES.items()])


def split_inputs(paths: Sequence[Path | str]) -> tuple[list[Path], list[Path]]:
    """(unit files, text files) named by the arguments; folders are searched recursively.

    A named file that is not a unit file counts as text (its mode is checked later)."""
    units: list[Path] = []
    texts: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file())
            units += [f for f in found if f.suffix in UNIT_SUFFIXES]
            texts += [f for f in found if f.suffix.lower() in TEXT_MODES]
        elif p.is_file():
            (units if p.suffix in UNIT_SUFFIXES else texts).append(p)
        elif p.exists():
            raise InputFileError(f"{p} is not a regular file or folder (a device, FIFO or socket cannot be ingested)")
        else:
            raise InputFileError(f"no such file or folder: {p}")
    if not units and not texts:
        raise InputFileError(f"nothing to ingest under {', '.join(map(str, paths))} "
                         f"(unit files {', '.join(sorted(UNIT_SUFFIXES))}, or text / Markdown)")
    return units, texts


def parse_unit_files(files: Sequence[Path], lexicon: Lexicon) -> list[Unit]:
    """Every unit of every file, or :class:`NotationErrors` listing the problems of all files
    together: nothing is stored when one line anywhere is bad."""
    units: list[Unit] = []
    problems = []
    for f in files:
        try:
            units += parse_file(f, lexicon)  # doc: notation.doc_name(f), storable whatever the name's bytes
        except NotationErrors as exc:
            problems += exc.errors
    if problems:
        raise NotationErrors(problems)
    return units


def ingest_units(parts: Parts, units: Sequence[Unit], embed: bool = True,
                 progress: Callable[[int], None] | None = None,
                 on_vectors: Callable[[int], None] | None = None) -> IngestReport:
    """Graph first (atomic), then vectors for the entry/derived nodes it added
    (``on_vectors(n)`` is called when that second phase starts, with how many nodes: a
    progress bar of the graph write would otherwise sit at 100 % while they are written).

    If embedding fails after the graph batch landed, the graph is still consistent and
    `kg doctor --repair` embeds the missing nodes; vectors never point at absent nodes."""
    if parts.settings.read_only:
        raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); ingest refused")
    from kgservice.stores.validate import paused_gc
    from kgservice.vectors.embedder import runs_in_process

    # The collector is held off for the whole batch when the model runs in-process (its
    # batches allocate no cycles): otherwise its first full pass after the graph write
    # lands in the embedding loop and walks the caller's parsed batch too (tens of
    # thousands of pydantic objects). The pass still comes, after the batch, over what the
    # store keeps once the caller has dropped its units, which is much cheaper.
    # The model loads on first use, in NodeVectors.embed, so a batch that adds no node never waits
    # for it (loading beside the graph write saves nothing: both hold the GIL).
    with (paused_gc() if embed and runs_in_process(parts.embedder) else nullcontext(),
          parts.node_vectors.owing() if embed else nullcontext()):
        report = parts.store.ingest(units, progress=progress)
        if embed and report.new_embeddable_nodes:
            if on_vectors is not None:
                on_vectors(len(report.new_embeddable_nodes))
            parts.node_vectors.embed(report.new_embeddable_nodes, known=report.new_labels)
    parts.caches.invalidate(report.touched_nodes)
    return report


def ingest_saved_results(parts: Parts, memory_dir: Path | None, graph_path: Path | None) -> IngestReport | None:
    """Saved answers as units, so they come back as nodes in the next graph.json: those kept in
    the store (``POST /v1/results`` on any server) and graphify ``save-result`` docs under
    ``memory_dir``; None when there is nothing to feed back."""
    from kgservice.graphify.memory import docs_of_records, memory_units

    lines = memory_units(memory_dir, graph_path, docs=docs_of_records(parts.store.saved_results()))
    if not lines:
        return None
    return ingest_units(parts, parse_units("\n".join(lines), parts.lexicon, source=str(memory_dir or "saved results"),
                                       doc="memory"))


def text_files(paths: Sequence[Path]) -> list[Path]:
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in TEXT_MODES)
        elif p.is_file():
            files.append(p)
        else:
            raise InputFileError(f"no such file or folder: {p}")
    return files


# data, not prose: extraction would read them as text, so no --mode is suggested for them
DATA_SUFFIXES = frozenset({".json", ".jsonl", ".ndjson", ".gz"})


def check_mode(mode: str | None) -> None:
    """``--mode``, checked before anything is read: with unit files alone no text file asks
    for it, and a typo must not pass unnoticed."""
    if mode is not None and mode not in ("summary", "detail"):
        raise InvalidArgument(f"--mode must be summary or detail, got {mode!r}")


def mode_for(path: Path, override: str | None = None) -> str:
    if override:
        check_mode(override)
        return override
    mode = TEXT_MODES.get(path.suffix.lower())
    if mode is None:
        known = (f"unit notation ({', '.join(sorted(UNIT_SUFFIXES))}) and text by type "
                 f"({', '.join(f'{k}={v}' for k, v in TEXT_MODES.items())})")
        if path.suffix.lower() in DATA_SUFFIXES:
            raise InputFileError(f"{path}: kg ingest reads {known}, not {path.suffix!r} data; write the facts as "
                                 "units in a .units file, or restore a `kg dump` file with `kg restore`")
        kind = repr(path.suffix) if path.suffix else "(no suffix)"
        raise InputFileError(f"{path}: unknown text type {kind}; kg ingest reads {known}; for plain text under "
                             "another name give --mode summary|detail")
    return mode


def document_mode(doc_id: str, mode: str | None = None) -> str:
    """The mode a document is ingested in: ``manual`` (unit notation) for a ``.units`` id or
    when asked, else ``summary``/``detail`` as given or by the id's suffix (InputError)."""
    from kgservice.errors import InputError

    if mode == "manual" or (mode is None and Path(doc_id).suffix in UNIT_SUFFIXES):
        return "manual"
    try:
        return mode_for(Path(doc_id), mode)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def content_hash(text: str) -> str:
    norm = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff").strip()
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()


class DocLedger:
    def __init__(self, path: Path | None):
        self.path = path
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite_file.connect(path if path else ":memory:", timeout=30)
        self._db.execute("CREATE TABLE IF NOT EXISTS docs (hash TEXT NOT NULL, mode TEXT NOT NULL, name TEXT NOT NULL, "
                         "units INTEGER NOT NULL, ingested_at TEXT NOT NULL, model TEXT, prompt TEXT, "
                         "PRIMARY KEY (hash, mode))")
        self._db.commit()

    def seen(self, digest: str, mode: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT name, units, ingested_at FROM docs WHERE hash = ? AND mode = ?",
                               (digest, mode)).fetchone()
        return None if row is None else {"name": row[0], "units": row[1], "ingested_at": row[2]}

    def record(self, digest: str, mode: str, name: str, units: int, model: str, prompt: str) -> None:
        stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self._db.execute("INSERT OR REPLACE INTO docs VALUES (?, ?, ?, ?, ?, ?, ?)",
                         (digest, mode, name, units, stamp, model, prompt))
        self._db.commit()

    def close(self) -> None:
        self._db.close()


@dataclass
class DocReport:
    path: str
    mode: str
    status: str  # ingested | unchanged
    chunks: int = 0
    units_extracted: int = 0
    units_added: int = 0
    units_unchanged: int = 0
    nodes_added: int = 0
    resolution: dict[str, int] = field(default_factory=dict)  # exact / synonym / vector / vector+llm / new
    previously: str | None = None  # for unchanged documents: when and as what they were ingested


@dataclass
class TextIngestReport:
    documents: list[DocReport] = field(default_factory=list)
    llm: dict[str, Any] = field(default_factory=dict)

    def total(self, name: str) -> int:
        return sum(getattr(d, name) for d in self.documents)

    @property
    def units_added(self) -> int:
        return self.total("units_added")

    @property
    def nodes_added(self) -> int:
        return self.total("nodes_added")

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": len(self.documents),
            "ingested": sum(d.status == "ingested" for d in self.documents),
            "unchanged_documents": sum(d.status == "unchanged" for d in self.documents),
            "units_extracted": self.total("units_extracted"),
            "units_added": self.units_added,
            "units_unchanged": self.total("units_unchanged"),
            "nodes_added": self.nodes_added,
            "documents": [asdict(d) for d in self.documents],
            "llm": self.llm,
        }


def ingest_text(
    parts: Parts,
    paths: Path | str | Sequence[Path | str],
    mode: str | None = None,
    *,
    llm: LLM | None = None,
    progress: Progress | None = None,
    embed: bool = True,
    force: bool = False,
    max_chars: int = DEFAULT_MAX_CHARS,
    doc_prefix: str = "",
) -> TextIngestReport:
    """Ingest text / Markdown files and folders. ``mode`` None picks it by file type
    (:data:`TEXT_MODES`). ``force`` re-extracts documents the ledger has seen. The units'
    ``doc`` is ``doc_prefix`` + the file name (the service prefixes the writer: ``user/``)."""
    from kgservice.extraction import Resolver, extract_text, to_units
    from kgservice.extraction.extract import extract_prompt

    if parts.settings.read_only:  # before any LLM call: a refused ingest must not spend tokens first
        from kgservice.errors import ReadOnlyError

        raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); ingest refused")
    if isinstance(paths, (str, Path)):
        paths = [paths]
    files = text_files([Path(p) for p in paths])
    if not files:
        raise InputFileError(f"no text files ({', '.join(TEXT_MODES)}) under {', '.join(map(str, paths))}")
    plan = []
    for f in files:
        m = mode_for(f, mode)
        text = source_of(read_input(f), f, keep_original=False).text  # a PDF, DOCX ... converted first
        plan.append((f, m, text))
    llm = llm or parts.llm
    usage0 = llm.usage.snapshot()
    ledger = DocLedger(parts.settings.kb_dir / LEDGER_FILE)
    report = TextIngestReport()
    emit = progress or (lambda event, info: None)
    try:
        chunked = []
        for f, m, text in plan:
            digest = content_hash(text)
            prev = None if force else ledger.seen(digest, m)
            chunked.append((f, m, digest, prev, [] if prev else chunk_text(text, max_chars)))
        emit("start", {"documents": len(chunked), "chunks": sum(len(c[4]) for c in chunked)})
        for f, m, digest, prev, chunks in chunked:
            if prev is not None:
                doc = DocReport(str(f), m, "unchanged", previously=f"{prev['ingested_at']} as {prev['name']}")
                report.documents.append(doc)
                emit("document", asdict(doc))
                continue
            resolver = Resolver.for_kb(parts, llm)
            units = []
            for chunk in chunks:
                try:
                    ex = extract_text(llm, chunk.text, m, purpose="extract", section=chunk.section)
                    rename = resolver.resolve(ex)
                    units += to_units(ex, parts.lexicon, doc=doc_prefix + doc_name(f), mode=m, rename=rename)  # type: ignore[arg-type]
                except (ValueError, RuntimeError) as exc:
                    raise _naming(exc, f, chunk.index) from exc
                emit("chunk", {"path": str(f), "index": chunk.index, "units": len(ex.units)})
            rep = ingest_units(parts, units, embed=embed)
            doc = DocReport(str(f), m, "ingested", chunks=len(chunks), units_extracted=len(units),
                            units_added=rep.units_added, units_unchanged=rep.units_unchanged,
                            nodes_added=rep.nodes_added, resolution=resolver.summary())
            ledger.record(digest, m, doc_prefix + doc_name(f), len(units), llm.model, extract_prompt().tag)
            report.documents.append(doc)
            emit("document", asdict(doc))
    finally:
        ledger.close()
        report.llm = llm.usage.since(usage0).to_dict()
    return report


def _naming(exc: BaseException, path: Path, chunk: int) -> BaseException:
    """The extraction error with the file (and chunk) it came from in front, same type, so a
    batch of many files says which one failed; the error itself when it cannot be rebuilt."""
    if str(path) in str(exc):
        return exc
    try:
        named = type(exc)(f"{path} (chunk {chunk + 1}): {exc}")
    except Exception:
        return exc
    return named

"""``kg ingest PATH...`` as documents: every file becomes (or replaces) the document named by its
path relative to the folder given, and the reports have the shape ``kg ingest`` always printed.

The id rule: a folder argument names each file under it by its path relative to that folder
(``kg ingest notes`` -> ``team/coffee.md``, as ``kg sync notes`` does); a file given alone is
named by its file name (the file relative to its own folder: ``kg ingest notes/team/coffee.md``
-> ``coffee.md``); ``--doc-id`` names a single file. Each path component keeps the notation's
escapes for bytes that are not text (:func:`kgservice.notation.doc_name`). Two arguments that
would give one id are refused before anything is stored (give their common folder instead).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from kgservice.errors import InputError
from kgservice.model import IngestReport

if TYPE_CHECKING:
    from kgservice.convert.source import Source
    from kgservice.pipeline.ingest import Progress, TextIngestReport
    from kgservice.parts import Parts


def document_files(paths: Sequence[Path | str], doc_id: str | None = None) -> list[tuple[Path, str, Path]]:
    """(file, document id, the folder it is named relative to) for every file the arguments
    name, unit files and text files alike, in argument order; duplicate ids are an InputError."""
    from kgservice.notation import doc_name
    from kgservice.pipeline.ingest import TEXT_MODES, UNIT_SUFFIXES

    out: list[tuple[Path, str, Path]] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file()
                           and (f.suffix in UNIT_SUFFIXES or f.suffix.lower() in TEXT_MODES))
            out += [(f, "/".join(doc_name(part) for part in f.relative_to(p).parts), p) for f in found]
        else:
            out.append((p, doc_name(p), p.parent))
    if doc_id is not None:
        if len(out) != 1:
            raise InputError(f"--doc-id names one document; the arguments hold {len(out)} files")
        out = [(out[0][0], doc_id, out[0][2])]
    seen: dict[str, Path] = {}
    for f, did, _ in out:
        if did in seen:
            raise InputError(f"{seen[did]} and {f} would both be the document {did!r}: give the folder that holds "
                             "both (ids are paths relative to it), or ingest one with --doc-id")
        seen[did] = f
    return out


def ingest_documents(parts: Parts, paths: Sequence[Path | str], mode: str | None = None, *,
                     doc_id: str | None = None, embed: bool = True, force: bool = False,
                     progress: Progress | None = None) -> tuple[IngestReport | None, TextIngestReport | None]:
    """What ``kg ingest`` does (:func:`_ingest_documents`), the vectors each write adds owed
    until written (:meth:`~kgservice.vectors.upkeep.NodeVectors.owing`: a writer stopped
    part-way leaves them for the next one to embed)."""
    with parts.node_vectors.owing() if embed else nullcontext():
        return _ingest_documents(parts, paths, mode, doc_id=doc_id, embed=embed, force=force, progress=progress)


def _ingest_documents(parts: Parts, paths: Sequence[Path | str], mode: str | None = None, *,
                      doc_id: str | None = None, embed: bool = True, force: bool = False,
                      progress: Progress | None = None) -> tuple[IngestReport | None, TextIngestReport | None]:
    """Every file as the current version of its document (:func:`kgservice.lifecycle.text.ingest_document`):
    new documents are ingested, changed ones replaced, unchanged ones left alone. Unit files
    are all parsed before anything is stored (one bad line anywhere stores nothing), then each
    is one change; text files follow, each extracted (changed chunks only) and stored whole or
    not at all. Returns (unit-file report, text report); ``progress`` as
    :meth:`KnowledgeBase.ingest_paths` documents it."""
    from kgservice.convert.source import read_source, with_original
    from kgservice.lifecycle.ops import check_doc_id
    from kgservice.lifecycle.text import ingest_document
    from kgservice.notation import NotationErrors, parse_file
    from kgservice.pipeline.ingest import DocReport, TextIngestReport, UNIT_SUFFIXES, check_mode, mode_for, split_inputs

    check_mode(mode)
    try:
        split_inputs(paths)  # a missing path or an empty folder is named before anything is read
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if parts.settings.read_only:  # before anything is read: an unchanged file is refused too
        from kgservice.errors import ReadOnlyError

        raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); ingest refused")
    emit = progress or (lambda event, info: None)
    files = document_files(paths, doc_id)
    for _, did, _ in files:
        check_doc_id(did)
    unit_files = [(f, d, b) for f, d, b in files if f.suffix in UNIT_SUFFIXES]
    text_files = [(f, d, b) for f, d, b in files if f.suffix not in UNIT_SUFFIXES]
    plan: list[tuple[Path, str, Path, str, Source]] = []
    if text_files:
        try:
            # every file read and converted before anything is stored (a bad PDF stores nothing);
            # a document's original bytes are read again when it is stored, not held for all at once
            plan = [(f, did, base, mode_for(f, mode), read_source(f, keep_original=False))
                    for f, did, base in text_files]
        except ValueError as exc:
            raise InputError(str(exc)) from None
        from kgservice.lifecycle.text import needs_extraction
        from kgservice.llm.check import refuse_text_without_model

        # before any unit file is stored: a text to extract with no model to do it stores nothing
        refuse_text_without_model(parts.settings, [str(f) for f, did, _, m, src in plan
                                                if needs_extraction(parts, did, src.text, m, force)])
    units = None
    if unit_files:
        texts, problems, total = [], [], 0
        for f, did, base in unit_files:
            try:
                total += len(parse_file(f, parts.lexicon, doc=did))
            except NotationErrors as exc:
                problems += exc.errors
                continue
            texts.append((did, f.read_text("utf-8"), base))
        if problems:
            raise NotationErrors(problems)
        emit("units-start", {"files": len(unit_files), "units": total})
        units, embedded, pending = IngestReport(), 0, {}
        for did, text, base in texts:
            with _naming(did):
                # vectors after every file's graph write: one phase of its own (``units-vectors``)
                res = ingest_document(parts, did, text, mode="manual", root=str(base.resolve()), embed=False,
                                      force=force)
            units.units_added += res.added
            units.units_unchanged += res.unchanged
            units.nodes_added += res.nodes_added
            units.duplicates.update(res.duplicates)
            pending.update(dict.fromkeys(res.unembedded))
            emit("units", {"added": res.added})
        if embed and pending:
            emit("units-vectors", {"nodes": len(pending)})
            parts.node_vectors.embed(list(pending))
            embedded = len(pending)
        emit("units-done", {"files": len(unit_files), "report": units, "nodes_embedded": embedded})
    report = None
    if text_files:
        from kgservice.extraction.chunking import chunk_text

        report = TextIngestReport()
        usage0 = parts.llm.usage.snapshot()
        try:
            emit("start", {"documents": len(plan), "chunks": sum(len(chunk_text(src.text)) for *_, src in plan)})
            for f, did, base, m, src in plan:
                old = next(iter(parts.store.documents([did])), None)
                src = with_original(src, f)
                with _naming(did):
                    res = ingest_document(parts, did, src.text, mode=m, root=str(base.resolve()), embed=embed,
                                          force=force, source=src)
                for i in range(res.chunks_extracted + res.chunks_reused):
                    emit("chunk", {"path": str(f), "index": i, "units": 0})
                if res.change is None:
                    doc = DocReport(str(f), m, "unchanged", units_unchanged=res.unchanged,
                                    previously=f"{old.when} as {old.id}" if old is not None else None)
                else:
                    doc = DocReport(str(f), m, "ingested", chunks=res.chunks_extracted + res.chunks_reused,
                                    units_extracted=res.added + res.unchanged, units_added=res.added,
                                    units_unchanged=res.unchanged, nodes_added=res.nodes_added)
                report.documents.append(doc)
                emit("document", asdict(doc))
        finally:
            report.llm = parts.llm.usage.since(usage0).to_dict()
    return units, report



@contextmanager
def _naming(doc_id: str) -> Iterator[None]:
    """A store that cannot write (full disk, read-only files) fails one document: its error
    says which one was not stored (the documents before it are, each whole)."""
    from kgservice.errors import StoreWriteError

    try:
        yield
    except StoreWriteError as exc:
        try:
            named = type(exc)(f"{exc} (the document {doc_id!r} was not stored; documents before it were)")
        except Exception:
            raise exc from None
        raise named from exc

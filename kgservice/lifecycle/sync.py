"""``kg sync DIR``: the documents ingested from a folder mirror it (added / changed / forgotten /
unchanged; with ``--no-delete`` the documents whose files are gone are kept, and listed); document
ids are paths relative to the folder.

Each document is its own atomic change, so a sync killed midway leaves the documents before the
kill in their new version and the rest in their old one (never half of one document); the
same sync run again finishes the job: done documents are unchanged, the rest are done, and the
vectors the killed run owed are embedded (:mod:`kgservice.vectors.owed`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kgservice.errors import InputError
from kgservice.lifecycle.model import SyncReport

if TYPE_CHECKING:
    from kgservice.convert.source import Source
    from kgservice.parts import Parts


def doc_id_for(path: Path, base: Path | str | None) -> str:
    """The path relative to ``base`` (default: the current directory); outside it, the path as given."""
    root = Path(base) if base is not None else Path.cwd()
    try:
        rel = path.resolve().relative_to(root.resolve())
    except ValueError:
        rel = path
    return rel.as_posix()


def _refuse_text_without_model(parts: Parts, folder: Path, sources: dict[Path, Source], mode: str | None) -> None:
    """Before the first document is stored, as ``kg ingest`` does: a new or changed text to
    extract with no model to do it stores nothing. Found only at that file, the sync had
    stored the documents sorted before it and stopped (exit 2) halfway."""
    from kgservice.lifecycle.text import needs_extraction
    from kgservice.llm.check import refuse_text_without_model, refuses_text
    from kgservice.pipeline.ingest import UNIT_SUFFIXES, mode_for

    if not refuses_text(parts.settings):  # a model is set: no document need be read to refuse nothing
        return
    refuse_text_without_model(parts.settings, [
        str(f) for f, src in sources.items()
        if f.suffix not in UNIT_SUFFIXES and needs_extraction(parts, doc_id_for(f, folder), src.text, mode_for(f, mode))])


def sync(parts: Parts, folder: Path, *, delete: bool = True, mode: str | None = None,
         progress: Callable[[str, str], None] | None = None) -> SyncReport:
    """Make the documents ingested from ``folder`` mirror it (:func:`_sync`), the vectors each
    write adds owed until written (:meth:`~kgservice.vectors.upkeep.NodeVectors.owing`)."""
    with parts.node_vectors.owing():
        return _sync(parts, folder, delete=delete, mode=mode, progress=progress)


def _sync(parts: Parts, folder: Path, *, delete: bool = True, mode: str | None = None,
          progress: Callable[[str, str], None] | None = None) -> SyncReport:
    from kgservice.convert.source import read_source, with_original
    from kgservice.lifecycle.ops import forget_documents
    from kgservice.lifecycle.text import ingest_document
    from kgservice.pipeline.ingest import TEXT_MODES, UNIT_SUFFIXES, check_mode

    check_mode(mode)  # before the first file: a bad --mode must not stop a sync halfway
    if not folder.is_dir():
        raise InputError(f"kg sync needs a folder; {folder} is not one")
    root = str(folder.resolve())
    files = sorted(f for f in folder.rglob("*") if f.is_file()
                   and (f.suffix in UNIT_SUFFIXES or f.suffix.lower() in TEXT_MODES))
    emit = progress or (lambda event, doc: None)
    known = {d.id: d for d in parts.store.documents(parts="meta") if d.root == root}  # ids and roots only
    report = SyncReport()
    seen = set()
    # every file read (a document converted) before the first is stored: a bad file stores nothing
    sources = {f: read_source(f, keep_original=False) for f in files}
    _refuse_text_without_model(parts, folder, sources, mode)
    for f in files:
        did = doc_id_for(f, folder)
        seen.add(did)
        src = with_original(sources.pop(f), f)
        res = ingest_document(parts, did, src.text, mode=None if f.suffix in UNIT_SUFFIXES else mode, root=root,
                              source=src if src.format else None)
        # a document of that id ingested from elsewhere is replaced: changed, not added
        kind = "unchanged" if res.change is None else ("added" if res.kind == "ingest" else "changed")
        getattr(report, kind).append(did)
        if res.change:
            report.changes.append(res.change)
        emit(kind, did)
    gone = sorted(d for d in known if d not in seen)
    if gone and delete:
        res = forget_documents(parts, gone)
        report.forgotten = gone
        if res.change:
            report.changes.append(res.change)
        for d in gone:
            emit("forgotten", d)
    elif gone:  # --no-delete: said, so a file deleted by mistake is noticed
        report.kept = gone
        for d in gone:
            emit("kept", d)
    return report

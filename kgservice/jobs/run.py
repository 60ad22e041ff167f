"""Running one ingest job through the library's own ingest paths, as the submitting user.

* ``{"units": ...}``: the notation parser, then :func:`kgservice.pipeline.ingest.ingest_units`;
* ``{"text": ..., "mode": ..., "doc": ...}``: ``kgservice.pipeline.ingest.ingest_text`` on the
  text written to a private temporary file named ``doc``;
* either of them with ``document`` (a document id) instead of ``doc``: the text or notation is
  the current version of that document (:func:`kgservice.lifecycle.text.ingest_document`): the same id again
  replaces it. The REST, MCP and web front ends name an upload's document ``<user>/<name>``
  (:func:`job_document_id`);
* ``{"file": ..., "doc"|"document": ..., "mode": ...}``: an uploaded PDF, DOCX, PPTX, HTML or
  XLSX (base64), converted (:mod:`kgservice.convert`) and ingested as the document
  ``<user>/<doc>`` with its pages and original file kept;
* a ``replace`` job (``doc``, ``text``, ``mode``, ``title``, ``version``): a new version of any
  document, refused as a conflict when the document moved past ``version`` meanwhile; a
  ``forget`` job (``doc``): the document forgotten.

The units keep ``<user>/<doc>`` as their document (the provenance both stores keep, shown by
GET /v1/units and graph.json's source_file): who wrote them. User names cannot contain "/",
so the writer is the part before the first one; a fact already stored keeps its first writer.

Both are idempotent (unit ids are content hashes or the notation's own ids; a unit already
stored counts as unchanged), so a job run twice — its first worker killed after the graph
write, before it could report — stores nothing twice. Every ingest inside is logged in the
change log as written by the job's user (:func:`kgservice.stores.changelog.attributed`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgservice.stores.changelog import attributed
from kgservice.jobs.model import InvalidJob, Job

if TYPE_CHECKING:
    from kgservice.parts import Parts


def _doc_name(job_id: str, payload: dict[str, Any], suffix: str) -> str:
    """The name an upload's units are stored under (after ``<user>/``): ``doc``, or one made
    from the job id."""
    return payload.get("doc") or f"job-{job_id[:12]}{suffix}"


def job_document_id(user: str, name: str) -> str:
    """The document a client's upload named ``name`` becomes: the name under the uploading
    user's own folder (the units keep who wrote them, and two users' ``notes.md`` differ)."""
    return f"{user}/{name}"


def validate_document_job(parts: Parts, kind: str, payload: dict[str, Any]) -> None:
    """A replace / forget job checked before it is queued: the document id is a relative path,
    the mode fits, the notation parses or the text is storable; forget needs the document."""
    from kgservice.errors import InputError
    from kgservice.lifecycle.ops import check_doc_id, get_documents
    from kgservice.pipeline.ingest import document_mode

    try:
        doc = check_doc_id(payload["doc"])
        if kind == "forget":
            get_documents(parts.store, [doc])
            return
        mode = document_mode(doc, payload.get("mode"))
    except InvalidJob:
        raise
    except InputError as exc:
        if str(exc).startswith("no document"):
            raise
        raise InvalidJob(f"payload.doc: {exc}") from None
    _validate_body(parts, {"units": payload["text"]} if mode == "manual" else {"text": payload["text"], "mode": mode},
                   doc, replaces=doc)


def validate_payload(parts: Parts, kind: str, payload: dict[str, Any]) -> None:
    """Refuse at submit time what the job would certainly reject, so a client hears it as a
    422 instead of a job that fails later: unit notation that does not parse, texts no store
    can hold (NUL and other control characters, lone surrogates, over-long labels), a unit id
    the store already holds with other content, a ``supersedes`` reference to nothing. The
    store's own batch check (:func:`kgservice.stores.validate.prepare_batch`) runs as a dry
    run against the units stored now; it writes nothing."""
    if kind in ("replace", "forget"):
        validate_document_job(parts, kind, payload)
        return
    name = payload.get("document")
    if "file" in payload:
        _validate_file(parts, payload)
    else:
        _validate_body(parts, payload, payload.get("doc") or name or "payload.units",
                       replaces=name)
    if name is not None:
        from kgservice.errors import InputError
        from kgservice.lifecycle.ops import check_doc_id

        try:
            check_doc_id(name)
        except InputError as exc:
            raise InvalidJob(f"payload.document: {exc}") from None


def _validate_body(parts: Parts, payload: dict[str, Any], doc: str, replaces: str | None = None) -> None:
    """``replaces``: the document this version replaces; the units its current version states
    are not held against the new one (an edited line may keep its unit id)."""
    if "units" in payload:
        from kgservice.notation import NotationErrors, parse_units
        from kgservice.errors import IngestConflict
        from kgservice.stores.validate import prepare_batch

        try:
            units = parse_units(payload["units"], parts.lexicon, source=doc)
        except NotationErrors as exc:
            raise InvalidJob(f"payload.units: {exc}") from None
        store = parts.store
        current = next(iter(store.documents([replaces])), None) if replaces else None
        mine = set(current.unit_lines) if current is not None else set()

        def existing(ids: Any) -> dict[str, Any]:
            return {u.id: u for u in store.get_units([i for i in dict.fromkeys(ids) if i not in mine])}

        def aliases(ids: Any) -> dict[str, Any]:  # an alias of one of them may go with it, too
            return {d: k for d, k in store.aliases_in_force(ids).items() if k not in mine}

        try:
            prepare_batch(units, existing, aliases=aliases, stamp=False)
        except IngestConflict as exc:
            raise InvalidJob(f"payload.units: {exc}") from None
    elif "text" in payload:
        from kgservice.stores.validate import text_body_problem

        why = text_body_problem(payload["text"])
        if why:
            raise InvalidJob(f"payload.text {why}; nothing was queued")
        _refuse_without_model(parts, payload["text"], payload.get("mode", "summary"), replaces)


def file_source(payload: dict[str, Any]) -> Any:
    """An upload's document converted (:func:`kgservice.convert.source.source_of`), named by its
    file name; an unreadable file is an :class:`InvalidJob` (HTTP 422) saying why and what to do."""
    import base64

    from kgservice.convert import UnreadableDocument
    from kgservice.convert.source import source_of

    name = payload.get("document") or payload["doc"]
    try:
        return source_of(base64.b64decode(payload["file"]), name.rsplit("/", 1)[-1])
    except UnreadableDocument as exc:
        raise InvalidJob(f"payload.file: {exc}") from None


def _validate_file(parts: Parts, payload: dict[str, Any]) -> None:
    """An uploaded document: converted now (a password-protected or image-only PDF, a damaged
    file are refused before anything is queued) and its text checked as a text's is."""
    from kgservice.stores.validate import text_body_problem

    src = file_source(payload)
    why = text_body_problem(src.text)
    if why:
        raise InvalidJob(f"payload.file: its text {why}; nothing was queued")
    _refuse_without_model(parts, src.text, payload.get("mode", "summary"), payload.get("document"))


def _refuse_without_model(parts: Parts, text: str, mode: str, document: str | None) -> None:
    """Text the job would send to the model while none is configured: refused now, in the
    words ``kg ingest`` uses (:func:`kgservice.llm.check.refuse_text_without_model`), instead of
    a job that is accepted and then fails on "no recorded response". A document that already
    holds exactly this text needs no model (the job would change nothing); an upload named by
    no document is always extracted."""
    from kgservice.lifecycle.text import needs_extraction
    from kgservice.llm.check import refuse_text_without_model

    if document is None or needs_extraction(parts, document, text, mode):
        what = f"the text of document {document!r}" if document is not None else "the request's 'text'"
        refuse_text_without_model(parts.settings, [what])


def run_job(parts: Parts, job: Job) -> dict[str, Any]:
    """Do the job's work; returns its result (counts). Raises what the ingest raises."""
    payload = job.payload or {}
    with attributed(job.user):
        if job.kind in ("replace", "forget") or "document" in payload or "file" in payload:
            return run_document_job(parts, job)
        if "units" in payload:
            from kgservice.notation import parse_units

            doc = _doc_name(job.id, payload, ".units")
            units = parse_units(payload["units"], parts.lexicon, source=doc, doc=f"{job.user}/{doc}")
            from kgservice.pipeline.ingest import ingest_units

            rep = ingest_units(parts, units)
            return {"units": len(units), "units_added": rep.units_added, "units_unchanged": rep.units_unchanged,
                    "nodes_added": rep.nodes_added, "nodes_touched": len(rep.touched_nodes)}
        if "text" in payload:
            from kgservice.pipeline.ingest import ingest_text

            doc = _doc_name(job.id, payload, ".txt")
            with tempfile.TemporaryDirectory(prefix="kg-job-") as tmp:
                path = Path(tmp) / doc
                path.write_text(payload["text"], "utf-8")
                text_rep = ingest_text(parts, path, payload.get("mode", "summary"), doc_prefix=f"{job.user}/")
            d = text_rep.to_dict()
            return {k: d[k] for k in ("units_extracted", "units_added", "units_unchanged", "nodes_added",
                                      "unchanged_documents")} | {"llm_calls": d["llm"].get("calls", 0)}
    raise InvalidJob(f"job {job.id}: payload has neither 'units' nor 'text'")


def run_document_job(parts: Parts, job: Job) -> dict[str, Any]:
    """A lifecycle job: the change's report (``ChangeResult`` fields) with the document id and,
    for text, the LLM calls it made. Run again after its worker died, a replacement finds its
    own content already current and changes nothing."""
    payload = job.payload or {}
    if job.kind == "forget":
        from kgservice.lifecycle.model import ChangeResult

        if not parts.store.documents([payload["doc"]]):  # forgotten already (this job's first run, or another)
            return ChangeResult(kind="forget", docs=[payload["doc"]]).model_dump() | {"doc": payload["doc"]}
        from kgservice.lifecycle.ops import forget_documents

        res = forget_documents(parts, [payload["doc"]])
        return res.model_dump() | {"doc": payload["doc"]}
    if job.kind == "replace":
        doc, text, mode = payload["doc"], payload["text"], payload.get("mode")
        version = payload.get("version")
    else:
        doc = payload.get("document") or job_document_id(job.user, payload["doc"])
        text, version = payload.get("units", payload.get("text")), None
        mode = "manual" if "units" in payload else payload.get("mode", "summary")
    source = file_source(payload) if "file" in payload else None  # a document's bytes: converted first
    if source is not None:
        text = source.text
    from kgservice.lifecycle.text import ingest_document

    before = parts.llm.usage.snapshot() if mode != "manual" else None
    res = ingest_document(parts, doc, text, mode=mode, title=payload.get("title"), expect_version=version, source=source)
    calls = parts.llm.usage.since(before).calls if before is not None else 0
    return res.model_dump() | {"doc": doc, "units_added": res.added, "units_unchanged": res.unchanged,
                               "llm_calls": calls}

"""Running one ingest job through the library's own ingest paths, as the submitting user.

* ``{"units": ...}``: the notation parser, then ``KnowledgeBase.ingest_units``;
* ``{"text": ..., "mode": ..., "doc": ...}``: ``kgservice.pipeline.ingest.ingest_text`` on the
  text written to a private temporary file named ``doc``.

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
    from kgservice.parts import Ingesting


def _doc_name(job_id: str, payload: dict[str, Any], suffix: str) -> str:
    return payload.get("doc") or f"job-{job_id[:12]}{suffix}"


def validate_payload(kb: Ingesting, kind: str, payload: dict[str, Any]) -> None:
    """Refuse at submit time what the job would certainly reject, so a client hears it as a
    422 instead of a job that fails later: unit notation that does not parse, texts no store
    can hold (NUL and other control characters, lone surrogates, over-long labels), a unit id
    the store already holds with other content, a ``supersedes`` reference to nothing. The
    store's own batch check (:func:`kgservice.stores.validate.prepare_batch`) runs as a dry
    run against the units stored now; it writes nothing."""
    if "units" in payload:
        from kgservice.notation import NotationErrors, parse_units
        from kgservice.stores.base import IngestConflict
        from kgservice.stores.validate import prepare_batch

        doc = payload.get("doc") or "payload.units"
        try:
            units = parse_units(payload["units"], kb.lexicon, source=doc)
        except NotationErrors as exc:
            raise InvalidJob(f"payload.units: {exc}") from None
        store = kb.store

        def existing(ids: Any) -> dict[str, Any]:
            return {u.id: u for u in store.get_units(dict.fromkeys(ids))}

        try:
            prepare_batch(units, existing, aliases=store.aliases, stamp=False)
        except IngestConflict as exc:
            raise InvalidJob(f"payload.units: {exc}") from None
    elif "text" in payload:
        from kgservice.stores.validate import text_body_problem

        why = text_body_problem(payload["text"])
        if why:
            raise InvalidJob(f"payload.text {why}; nothing was queued")


def run_job(kb: Ingesting, job: Job) -> dict[str, Any]:
    """Do the job's work; returns its result (counts). Raises what the ingest raises."""
    payload = job.payload or {}
    with attributed(job.user):
        if "units" in payload:
            from kgservice.notation import parse_units

            doc = _doc_name(job.id, payload, ".units")
            units = parse_units(payload["units"], kb.lexicon, source=doc, doc=f"{job.user}/{doc}")
            rep = kb.ingest_units(units)
            return {"units": len(units), "units_added": rep.units_added, "units_unchanged": rep.units_unchanged,
                    "nodes_added": rep.nodes_added, "nodes_touched": len(rep.touched_nodes)}
        if "text" in payload:
            from kgservice.pipeline.ingest import ingest_text

            doc = _doc_name(job.id, payload, ".txt")
            with tempfile.TemporaryDirectory(prefix="kg-job-") as tmp:
                path = Path(tmp) / doc
                path.write_text(payload["text"], "utf-8")
                rep = ingest_text(kb, path, payload.get("mode", "summary"), doc_prefix=f"{job.user}/")
            d = rep.to_dict()
            return {k: d[k] for k in ("units_extracted", "units_added", "units_unchanged", "nodes_added",
                                      "unchanged_documents")} | {"llm_calls": d["llm"].get("calls", 0)}
    raise InvalidJob(f"job {job.id}: payload has neither 'units' nor 'text'")

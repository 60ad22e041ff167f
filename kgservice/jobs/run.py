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
    from kgservice.service import KnowledgeBase


def _doc_name(job_id: str, payload: dict[str, Any], suffix: str) -> str:
    return payload.get("doc") or f"job-{job_id[:12]}{suffix}"


def validate_payload(kb: KnowledgeBase, kind: str, payload: dict[str, Any]) -> None:
    """Refuse at submit time what would certainly fail: unit notation that does not parse."""
    if "units" in payload:
        from kgservice.notation import NotationErrors, parse_units

        try:
            parse_units(payload["units"], kb.lexicon, source=payload.get("doc") or "payload.units")
        except NotationErrors as exc:
            raise InvalidJob(f"payload.units: {exc}") from None


def run_job(kb: KnowledgeBase, job: Job) -> dict[str, Any]:
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

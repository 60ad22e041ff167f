"""Job outcomes in words for the page's tables (the JSON stays the API's): "3 units added,
1 unchanged (2 model calls)" instead of ``{"units_added": 3, ...}``."""

from __future__ import annotations

from typing import Any


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def job_words(job: dict[str, Any]) -> str:
    """What a finished job did, from its ``result`` (an ingest's counts or a lifecycle change's
    report); a failed one says so with its error; a pending one its status."""
    status, r = str(job.get("status", "")), job.get("result") or {}
    if status in ("failed", "cancelled"):
        return status + (f": {job['error']}" if job.get("error") else "")
    if status != "done":
        return status
    parts = []
    if "doc" in r:
        parts.append(f"{r['doc']}:")
    added = r.get("units_added", r.get("added", 0))
    if "units_extracted" in r:
        parts.append(f"{plural(r['units_extracted'], 'unit')} extracted,")
    elif "units" in r:
        parts.append(f"{plural(r['units'], 'unit')} read,")
    if job.get("kind") == "forget" or r.get("kind") == "forget":
        parts.append(f"{r.get('retracted', 0)} retracted")
    else:
        parts.append(f"{plural(added, 'unit')} added")
        same = r.get("units_unchanged", r.get("unchanged", 0))
        if same:
            parts[-1] += f", {same} unchanged"
        if r.get("retracted"):
            parts[-1] += f", {r['retracted']} retracted"
    if r.get("kept_shared"):
        parts[-1] += f", {r['kept_shared']} kept (stated by another document)"
    if r.get("nodes_added"):
        parts[-1] += f"; {plural(r['nodes_added'], 'new node')}"
    if r.get("llm_calls"):
        parts.append(f"({plural(r['llm_calls'], 'model call')})")
    if "change" in r and r.get("change") is None and job.get("kind") != "forget":
        parts.append("— no change: the same content")
    return " ".join(parts)

"""The four caches of DESIGN §5 with dependency node-id sets and invalidation on ingest."""

from __future__ import annotations

from typing import Any

from kgservice.caches.store import ANY_INGEST, CACHES, MEMORY_CACHES, Caches

CACHE_FILE = "caches.sqlite3"

__all__ = ["ANY_INGEST", "CACHES", "MEMORY_CACHES", "CACHE_FILE", "Caches", "cache_key", "decision_key"]


def cache_key(*parts: Any) -> str:
    """A stable key from JSON-able parts (sha256); keys never hold the question text itself."""
    import hashlib
    import json

    blob = json.dumps(parts, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:40]


def decision_key(kind: str, model: str, messages: list[dict[str, str]]) -> str:
    """Key of a ``decision`` entry: the whole request (prompt, hit units in order, key nodes,
    mode, ...) with the question in its normalised form, plus the model — i.e. (hit-unit
    signature, question) and everything else the reply depends on."""
    import json

    from kgservice.ids import normalise_label
    from kgservice.llm.keys import request_key

    canon = []
    for m in messages:
        content = m.get("content", "")
        if m.get("role") == "user":
            try:
                payload = json.loads(content)
                if isinstance(payload, dict) and isinstance(payload.get("question"), str):
                    payload["question"] = normalise_label(payload["question"])
                    content = json.dumps(payload, ensure_ascii=False, sort_keys=True)
            except json.JSONDecodeError:
                pass
        canon.append({"role": m.get("role", ""), "content": content})
    return cache_key(kind, model, request_key(canon))

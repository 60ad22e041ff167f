"""The side effects graphify's query / path / explain have besides printing.

- ``<graph dir>/cache/last_query_stamp``: unix time of the last orientation; graphify's
  strict hook guard and nudge budget read it (a fresh stamp = "the agent oriented recently").
- the opt-in JSONL query log: ``GRAPHIFY_QUERY_LOG=<file>``, or ``GRAPHIFY_QUERY_LOG_ENABLE=1``
  (``~/.cache/graphify-queries.log``); ``GRAPHIFY_QUERY_LOG_DISABLE=1`` wins;
  ``GRAPHIFY_QUERY_LOG_RESPONSES=1`` adds the full answer.
- the graph-size cap: ``GRAPHIFY_MAX_GRAPH_BYTES`` (bytes, or ``<N>MB`` / ``<N>GB``, binary
  units), 512 MiB when unset or unparseable; checked before the file is read.

All fail silently (stamp and log) exactly where graphify's do: they must never cost an answer.
"""

from __future__ import annotations

import json
import os
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

DEFAULT_MAX_GRAPH_BYTES = 512 * 1024 * 1024
_TRUE = ("1", "true", "yes")
_NODES_RE = re.compile(r"(\d+)\s+nodes?\s+found")


class GraphTooLarge(ValueError):
    """graph.json is bigger than the configured cap."""


def max_graph_bytes() -> int:
    raw = os.environ.get("GRAPHIFY_MAX_GRAPH_BYTES", "").strip()
    if not raw:
        return DEFAULT_MAX_GRAPH_BYTES
    text = raw.upper()
    mult = 1
    if text.endswith("GB"):
        mult, text = 1024 ** 3, text[:-2].strip()
    elif text.endswith("MB"):
        mult, text = 1024 ** 2, text[:-2].strip()
    try:
        value = int(text)
    except ValueError:
        return DEFAULT_MAX_GRAPH_BYTES
    return value * mult if value > 0 else DEFAULT_MAX_GRAPH_BYTES


def check_size_cap(path: Path) -> None:
    """Raise :class:`GraphTooLarge` (graphify's message) when ``path`` exceeds the cap."""
    cap = max_graph_bytes()
    try:
        size = path.stat().st_size
    except OSError:
        return
    if size > cap:
        raise GraphTooLarge(f"graph file {path} is {size:_d} bytes, exceeds {cap:_d}-byte cap\n"
                            f"(set GRAPHIFY_MAX_GRAPH_BYTES=<bytes> or "
                            f"GRAPHIFY_MAX_GRAPH_BYTES=<N>GB to raise the limit)")


def touch_query_stamp(graph_path: Path) -> None:
    """Write ``time.time()`` to ``<graph dir>/cache/last_query_stamp`` atomically; never raises."""
    try:
        stamp = Path(graph_path).parent / "cache" / "last_query_stamp"
        stamp.parent.mkdir(parents=True, exist_ok=True)
        from kgservice.disk import replaced

        with replaced(stamp) as fh:
            fh.write(str(time.time()).encode("ascii"))
    except Exception:
        pass


def query_log_path() -> Path | None:
    if os.environ.get("GRAPHIFY_QUERY_LOG_DISABLE", "").lower() in _TRUE:
        return None
    override = os.environ.get("GRAPHIFY_QUERY_LOG", "").strip()
    if override:
        return Path(override).expanduser()
    if os.environ.get("GRAPHIFY_QUERY_LOG_ENABLE", "").lower() in _TRUE:
        return Path.home() / ".cache" / "graphify-queries.log"
    return None


def nodes_from_result(result: str | None) -> int | None:
    """The ``N nodes found`` count of a query answer (the log's ``nodes_returned``)."""
    m = _NODES_RE.search(result or "")
    return int(m.group(1)) if m else None


def log_query(*, kind: str, question: str, corpus: str, result: str | None = None,
              nodes_returned: int | None = None, duration_ms: float | None = None, **extra: Any) -> None:
    """Append one JSONL record (graphify's fields and order) when the log is on; never raises."""
    try:
        path = query_log_path()
        if path is None:
            return
        if nodes_returned is None and result is not None:
            nodes_returned = nodes_from_result(result)
        rec: dict[str, Any] = {"ts": datetime.now(timezone.utc).isoformat(), "kind": kind,
                               "question": question, "corpus": corpus, "nodes_returned": nodes_returned}
        if result is not None:
            rec["result_chars"] = len(result)
        if duration_ms is not None:
            rec["duration_ms"] = round(duration_ms, 3)
        for k, v in extra.items():
            if v is not None:
                rec[k] = v
        if result is not None and os.environ.get("GRAPHIFY_QUERY_LOG_RESPONSES", "").lower() in _TRUE:
            rec["response"] = result
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    except Exception:
        pass

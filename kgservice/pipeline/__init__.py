"""Ingest and query pipelines with the LLM in the loop (DESIGN §3-§5).

``ingest_text(kb, paths, mode)`` and ``ask(kb, question, trace)``, reached through
:class:`kgservice.service.KnowledgeBase` (``kb.ingest_text``, ``kb.ask``). Imports are lazy so that loading the
CLI does not load the pipelines.
"""

from __future__ import annotations

from typing import Any

__all__ = ["AskParams", "AskResult", "TextIngestReport", "ask", "ingest_text"]


def __getattr__(name: str) -> Any:
    if name in ("AskParams", "AskResult", "ask"):
        from kgservice.pipeline import asking

        return getattr(asking, name)
    if name in ("TextIngestReport", "ingest_text"):
        from kgservice.pipeline import ingest

        return getattr(ingest, name)
    raise AttributeError(name)

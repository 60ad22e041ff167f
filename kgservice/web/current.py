"""The workspace a page request acts in, shared by the gate (which chooses it) and the pages
(which read and write only it): a context variable, copied into the worker threads a page runs
its reads in, and the chooser's cookie name."""

from __future__ import annotations

from contextvars import ContextVar

WS_COOKIE = "kg_ws"  # the workspace the page's chooser picked (only a pick among the key's own)
CURRENT: ContextVar[str | None] = ContextVar("kg_web_workspace", default=None)

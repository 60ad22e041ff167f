"""The id of the request being served, for the library parts that record it (a job's
"submitted" event): a context variable the server sets (:mod:`kgservice.server.request_ids`)
and nothing else does, so outside a server it is None. A leaf module: the library reads it
without importing the server."""

from __future__ import annotations

from contextvars import ContextVar

_current: ContextVar[str | None] = ContextVar("kg_request_id", default=None)


def bind_request_id(request_id: str | None) -> None:
    _current.set(request_id)


def current_request_id() -> str | None:
    return _current.get()

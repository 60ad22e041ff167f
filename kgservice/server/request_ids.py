"""Request ids: one per HTTP request, in its response (``X-Request-ID``), its error body
(``request_id``) and every log line written while it is served, so one line of a client's
report finds the request in the logs of whichever server answered it.

The id is the one a trusted proxy sent (:mod:`kgservice.server.proxies`), or a new one. It lives
in a context variable (:mod:`kgservice.request_context`) set by the outermost middleware: everything below it in the same task
sees it, the route's worker thread included (anyio copies the context into it), and so does
uvicorn's own access line and its "Exception in ASGI application" report, which run in the
request's task after the app returns.

>>> accepted("lb-7f3a.12"), accepted("two words"), accepted("x" * 129), accepted(None)
('lb-7f3a.12', None, None, None)
>>> len(new_id()), new_id() != new_id()
(32, True)
"""

from __future__ import annotations

import logging
import re
import uuid
from typing import Any

from kgservice.request_context import bind_request_id, current_request_id

HEADER = b"x-request-id"
_ID = re.compile(r"[A-Za-z0-9._:@+=/-]{1,128}")


def accepted(value: str | None) -> str | None:
    """``value`` if it can serve as a request id (1-128 characters of letters, digits and
    ``._:@+=/-``: nothing that could break a log line or a header), else None."""
    return value if value is not None and _ID.fullmatch(value) else None


def new_id() -> str:
    return uuid.uuid4().hex


def bind(request_id: str | None) -> None:
    """The request id of everything that runs from here on in this context (not reset on
    purpose: the server's own report of the request comes after the app returned)."""
    bind_request_id(request_id)


def current() -> str | None:
    return current_request_id()


class RequestIdFilter(logging.Filter):
    """Gives every record a ``request_id`` attribute (``-`` outside a request) for the format."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = current_request_id() or "-"
        return True


def log_config(level: str = "info") -> dict[str, Any]:
    """uvicorn's logging configuration with the request id on every line: its own loggers
    (start-up, errors, the access line) and the root logger, where the service's warnings go."""
    from uvicorn.config import LOGGING_CONFIG

    cfg: dict[str, Any] = {k: (dict(v) if isinstance(v, dict) else v) for k, v in LOGGING_CONFIG.items()}
    cfg["filters"] = {"request_id": {"()": "kgservice.server.request_ids.RequestIdFilter"}}
    cfg["formatters"] = {
        "default": {**LOGGING_CONFIG["formatters"]["default"], "fmt": "%(levelprefix)s [%(request_id)s] %(message)s"},
        "access": {**LOGGING_CONFIG["formatters"]["access"],
                   "fmt": '%(levelprefix)s [%(request_id)s] %(client_addr)s - "%(request_line)s" %(status_code)s'},
    }
    cfg["handlers"] = {name: {**h, "filters": ["request_id"]} for name, h in LOGGING_CONFIG["handlers"].items()}
    cfg["loggers"] = {**LOGGING_CONFIG["loggers"], "": {"handlers": ["default"], "level": "WARNING"}}
    return cfg

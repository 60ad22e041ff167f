"""Access-log hygiene: query strings are logged with their values replaced by ``***``.

Keys belong in the ``Authorization`` / ``X-API-Key`` headers, but clients put them in the URL
too (``?api_key=…``). Such a request is refused, yet uvicorn's access log would keep the whole
URL, key included, for every log reader. Parameter names stay (they help debugging); values go.
"""

from __future__ import annotations

import logging
import re

ACCESS_LOGGER = "uvicorn.access"
_QUERY_VALUE = re.compile(r"=([^&#]*)")


def redact_query(path: str) -> str:
    """``/v1/stats?api_key=SECRET&x=1`` -> ``/v1/stats?api_key=***&x=***``."""
    head, sep, query = path.partition("?")
    if not sep:
        return path
    return head + "?" + _QUERY_VALUE.sub(lambda m: "=***" if m.group(1) else "=", query)


class RedactQueryFilter(logging.Filter):
    """Rewrites the path argument of uvicorn's access records (client, method, path, version, status)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str) and "?" in args[2]:
            record.args = (*args[:2], redact_query(args[2]), *args[3:])
        return True


def install_access_log_redaction() -> None:
    """Add the filter to uvicorn's access logger once (idempotent)."""
    logger = logging.getLogger(ACCESS_LOGGER)
    if not any(isinstance(f, RedactQueryFilter) for f in logger.filters):
        logger.addFilter(RedactQueryFilter())

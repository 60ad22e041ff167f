"""REST routes under /v1, one module per area; each route declares its role (deps.need / public)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request
from fastapi.sse import format_sse_event

from kgservice.server.context import ServerContext


def ctx_of(request: Request) -> ServerContext:
    """The context of the workspace the request acts in (:func:`kgservice.server.context.of_scope`)."""
    from kgservice.server.context import of_scope

    return of_scope(request.app.state.ctx, request.scope)


def sse(event: str, data: Any, id: str | None = None) -> bytes:
    return format_sse_event(data_str=json.dumps(data, ensure_ascii=False, default=str), event=event, id=id)

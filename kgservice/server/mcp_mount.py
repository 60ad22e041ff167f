"""MCP at ``/mcp``, built after the server starts listening.

The MCP SDK's import (its pydantic protocol types) is about a second of CPU, as much as the rest
of a server's start; building it before the port opens kept ``/livez`` (and every REST route)
waiting for a part only MCP clients use. :class:`LazyMCP` is mounted in its place: the app's
lifespan builds the real one in a worker thread and runs its session manager, and a request
that reaches MCP before then waits for it (or gets a 503 saying why it could not start).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

    from kgservice.config import Settings
    from kgservice.server.context import ServerContext

log = logging.getLogger(__name__)


class LazyMCP:
    """An ASGI app that becomes the MCP Streamable HTTP app once :meth:`run` has built it."""

    def __init__(self, sc: ServerContext, settings: Settings) -> None:
        self.sc, self.settings = sc, settings
        self.mcp: Any = None  # the MCPServer (kgservice.server.mcp_server.build_mcp)
        self.app: Any = None  # its ASGI app, serving /mcp
        self.error: BaseException | None = None
        self._ready: anyio.Event | None = None
        self._stop: anyio.Event | None = None

    def prepare(self) -> None:
        """In the lifespan, before any request: the events requests and :meth:`stop` use."""
        self._ready, self._stop = anyio.Event(), anyio.Event()

    def _build(self) -> tuple[Any, Any]:
        from mcp.server.transport_security import TransportSecuritySettings

        from kgservice.server.mcp_server import build_mcp

        mcp = build_mcp(self.sc)
        # Host and Origin are checked by HostCheck for every path (one allow-list, wildcards included)
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        app = mcp.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, json_response=True,
                                      transport_security=security, max_request_body_size=self.settings.max_body)
        return mcp, app

    async def run(self) -> None:
        """Build MCP in a worker thread, then run its session manager until :meth:`stop`."""
        assert self._ready is not None and self._stop is not None
        try:
            self.mcp, app = await anyio.to_thread.run_sync(self._build)
        except Exception as exc:  # noqa: BLE001 - REST keeps working; MCP requests say why they fail
            log.error("MCP could not start: %s: %s", type(exc).__name__, exc)
            self.error = exc
            self._ready.set()
            return
        async with self.mcp.session_manager.run():
            self.app = app
            self._ready.set()
            await self._stop.wait()

    def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not _is_mcp(scope.get("path", "")):
            # mounted at "/", this app receives every request no route took: an unknown path, or a
            # known one with another method. Answer those as the rest of the API does (the JSON
            # error envelope, 405 with Allow), not with the MCP app's plain-text "Not Found".
            await _no_route(scope, receive, send)
            return
        if self.app is None and self._ready is not None:
            await self._ready.wait()
        if self.app is None:
            from starlette.responses import JSONResponse

            why = f"{type(self.error).__name__}: {self.error}" if self.error else "the server has not started"
            await JSONResponse({"detail": f"MCP is not available ({why})"}, status_code=503)(scope, receive, send)
            return
        await self.app(scope, receive, send)


MCP_PATH = "/mcp"


def _is_mcp(path: str) -> bool:
    """The paths the MCP app serves (``/mcp``; a trailing slash it redirects itself).

    >>> [_is_mcp(p) for p in ("/mcp", "/mcp/", "/v1/nope", "/mcpx", "/")]
    [True, True, False, False, False]
    """
    return path == MCP_PATH or path.startswith(MCP_PATH + "/")


async def _no_route(scope: Scope, receive: Receive, send: Send) -> None:
    """404 in the error envelope for a path no route serves; 405 (with ``Allow``) for a path a
    route serves with other methods."""
    from starlette.responses import JSONResponse
    from starlette.routing import Match

    from kgservice.server.errors import error_body

    allowed: set[str] = set()
    app = scope.get("app")
    for route in getattr(getattr(app, "router", None), "routes", ()):
        methods = getattr(route, "methods", None)
        if methods and route.matches(scope)[0] == Match.PARTIAL:
            allowed |= set(methods)
    if allowed:
        body = error_body(405, f"method {scope.get('method')} is not allowed here; use {', '.join(sorted(allowed))}")
        response = JSONResponse(body, status_code=405, headers={"Allow": ", ".join(sorted(allowed))})
    else:
        response = JSONResponse(error_body(404, f"no route {scope.get('path')!r} (the API's routes: /docs)"),
                                status_code=404)
    await response(scope, receive, send)


__all__ = ["LazyMCP"]

"""The team service: `kg serve` (REST under /v1 + MCP Streamable HTTP at /mcp) and `kg mcp` (stdio).

``create_app(settings)`` builds one app per process; see :mod:`kgservice.server.app`.
"""

from kgservice.server.app import ServeOptions, create_app

__all__ = ["ServeOptions", "create_app"]

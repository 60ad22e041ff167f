"""The team's web page, served by ``kg serve`` at ``/``: sign in with an API key (a server-side
session behind an HttpOnly, SameSite=Strict cookie), ask, explore, jobs, admin.

The browser never holds the key: :class:`kgservice.web.gate.WebGate` turns the session into
the same principal the API uses and forwards ``/ui/v1/...`` to the ``/v1`` routes, so roles,
rate limits and SSE are the API's own.
"""

from kgservice.web.gate import WebGate

__all__ = ["WebGate"]

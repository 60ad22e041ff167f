"""Read-your-writes for HTTP clients (:mod:`kgservice.stores.causal`): the ``X-KG-Bookmark``
request header makes every store query of the request wait for the writes it names (on any
server of the deployment), and a reply whose request wrote carries the bookmark of its writes
in the same header (202 job replies also in their ``bookmark`` field).

It sits outside the key check, so a key created on one server and presented with the create
reply's bookmark on another is found there too. A malformed token is a 422 before anything
reads the store; the embedded store (one process) ignores tokens and returns none. A request
without the header accepts a bounded-stale cached answer (:func:`causal.accepting_stale`).
"""

from __future__ import annotations

from typing import Any

from kgservice.errors import InvalidArgument
from kgservice.server.middleware import _header, send_json
from kgservice.stores import causal

HEADER = causal.HEADER.lower().encode()


class ReadYourWrites:
    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            wait_for = causal.parse(_header(scope, HEADER))
        except InvalidArgument as exc:
            await send_json(send, 422, str(exc))
            return

        started = False
        with causal.reading_after(wait_for), causal.capturing() as got, causal.accepting_stale(not wait_for):
            async def with_bookmark(message: dict) -> None:
                nonlocal started
                if message["type"] == "http.response.start":
                    started = True
                    token = got.bookmark
                    if token:
                        message = {**message, "headers": [*message.get("headers", ()), (HEADER, token.encode())]}
                await send(message)

            try:
                await self.app(scope, receive, with_bookmark)
            except InvalidArgument as exc:  # the database refused the token, in a layer before the routes
                if started:
                    raise
                await send_json(send, 422, str(exc))

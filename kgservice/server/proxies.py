"""The client behind a proxy, and the request id: the outermost gate of every request.

Behind a load balancer every request arrives from the balancer's address. When the direct
peer is one of ``KG_TRUSTED_PROXIES`` (addresses or networks), the client is read from
``X-Forwarded-For``: walking it from the right, each hop a trusted proxy added is skipped, and
the first address that is not a trusted proxy is the client (what a client writes into the
header itself sits further left and is never reached, so nobody chooses their own address).
``X-Forwarded-Proto`` (http / https) sets the scheme, so a cookie is marked Secure when the
balancer terminated TLS, and an ``X-Request-ID`` from a trusted proxy is kept as the request id.
A peer that is not trusted is taken at its word for none of the three.

The client address it settles on replaces ``scope["client"]`` in place, so everything after
it sees the same one: the failed-authentication limit, the web page's sign-in throttle and
uvicorn's access line.

>>> from kgservice.net import parse_networks
>>> lb = parse_networks(["10.0.0.0/24"], "test")
>>> forwarded_client("10.0.0.5", ["6.6.6.6", "203.0.113.9", "10.0.0.7"], lb)  # client spoofed 6.6.6.6
'203.0.113.9'
>>> forwarded_client("198.51.100.1", ["6.6.6.6"], lb)  # not from a proxy: the peer
'198.51.100.1'
>>> forwarded_client("10.0.0.5", ["garbage", "10.0.0.7"], lb)  # all trusted, then junk: the last proxy
'10.0.0.7'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kgservice.net import Network, address, is_in
from kgservice.server import request_ids

REQUEST_ID = "kg.request_id"  # scope key of the request's id
SCHEMES = {"http": ("http", "ws"), "https": ("https", "wss")}


def forwarded_client(peer: str, hops: list[str], trusted: Iterable[Network]) -> str:
    """The client address: from ``peer`` leftwards through ``hops`` (X-Forwarded-For, left to
    right) while the address at hand is a trusted proxy."""
    trusted = tuple(trusted)
    client = peer
    for hop in reversed(hops):
        if not is_in(client, trusted):
            break
        ip = address(hop)
        if ip is None:  # junk left of the proxies' own entries: the last proxy is all we know
            break
        client = str(ip)
    return client


def _values(scope: dict, name: bytes) -> list[str]:
    return [v.decode("latin-1") for k, v in scope.get("headers", ()) if k.lower() == name]


class ProxyHeaders:
    """Settles the client address, the scheme and the request id of each request (module doc),
    and puts ``X-Request-ID`` on every response."""

    def __init__(self, app: Any, trusted: Iterable[Network] = ()):
        self.app = app
        self.trusted = tuple(trusted)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        peer = (scope.get("client") or (None, 0))[0]
        rid = None
        if peer is not None and self.trusted and is_in(peer, self.trusted):
            hops = [h.strip() for v in _values(scope, b"x-forwarded-for") for h in v.split(",") if h.strip()]
            if hops:
                scope["client"] = (forwarded_client(peer, hops, self.trusted), 0)
            proto = next(iter(_values(scope, b"x-forwarded-proto")), "").split(",")[0].strip().lower()
            if proto in SCHEMES:
                scope["scheme"] = SCHEMES[proto][0 if scope["type"] == "http" else 1]
            rid = request_ids.accepted(next(iter(_values(scope, request_ids.HEADER)), None))
        rid = rid or request_ids.new_id()
        scope[REQUEST_ID] = rid
        request_ids.bind(rid)
        header = (request_ids.HEADER, rid.encode())

        async def tagged(message: dict) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() != request_ids.HEADER]
                message = {**message, "headers": [*kept, header]}
            await send(message)

        await self.app(scope, receive, tagged)

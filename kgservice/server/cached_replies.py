"""The cached-reply fast path: a pure-ASGI gate inside the key check that answers ``POST
/v1/ask`` and ``POST /v1/expand`` from the in-memory front of cached results
(:meth:`Caches.front_peek`) without going through FastAPI's routing, dependency and
validation layers — and, for expand, a successful miss too (computed in a worker thread).

Why: a front hit is a dictionary lookup, and the full stack's framework layers (exception
middlewares, dependency solving, body parsing, response model) would be most of its cost;
under many concurrent clients that CPU is the queue. What stays the same:
the gates outside (metrics, Host, body limit, key and rate limit) have run; the route's own
role declaration is checked here with the same :func:`refusal` (a refused caller goes on to
the route, which refuses it); the body is validated by the route's pydantic model and
anything it refuses, any non-JSON content type, an SSE request and every ask miss go to the
route unchanged (the body is replayed); an expand error gets the app's own exception handler
(the route's status and body); the reply is the route's JSON;
metrics count it under the route's template and record the cache hits.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from kgservice.server import ops
from kgservice.server.deps import ROLE_ATTR, refusal
from kgservice.server.middleware import PRINCIPAL, _header
from kgservice.server.models import AskIn, ExpandIn


@dataclass(frozen=True)
class Cached:
    """A route whose cache hits the gate may answer: the path, its body model and the lookup
    ``(server context, body) -> reply model or None`` (on the event loop; it records its own
    metrics). ``compute``, if given, answers a miss too (blocking: run in a worker thread, as
    the route would); an error it raises is answered by the app's own exception handler for
    it (the route's status and body), or, without one, left to the route."""

    path: str
    body: type[BaseModel]
    lookup: Callable[[Any, Any], BaseModel | None]
    compute: Callable[[Any, Any], BaseModel] | None = None


def _ask_hit(sc: Any, body: AskIn) -> BaseModel | None:
    hit = ops.ask_cached(sc.kb, body)
    if hit is None:
        return None
    sc.metrics.record_ask(hit[1])
    return hit[0]


def _expand_hit(sc: Any, body: ExpandIn) -> BaseModel | None:
    out = ops.expand_cached(sc.kb, body)
    if out is not None:
        sc.metrics.record_cache("expand", True)
    return out


def _expand(sc: Any, body: ExpandIn) -> BaseModel:
    return sc.expand(body)


# ask misses stay with the route (LLM calls, SSE); an expand miss is a few graph reads, and
# FastAPI's layers are a large share of its cost
CACHED = (Cached("/v1/ask", AskIn, _ask_hit), Cached("/v1/expand", ExpandIn, _expand_hit, _expand))


def role_of(route: Any) -> Any:
    """The role a route declares (:mod:`kgservice.server.deps`); every route declares one."""
    for dep in route.dependant.dependencies:  # route-level and parameter dependencies alike
        if hasattr(dep.call, ROLE_ATTR):
            return getattr(dep.call, ROLE_ATTR)
    raise ValueError(f"route {route.path} declares no role")


class CachedReplies:
    def __init__(self, app: Any, ctx: Any, routes: dict[str, Any], cached: tuple[Cached, ...] = CACHED,
                 handlers: dict[Any, Any] | None = None):
        """``routes``: path -> the POST APIRoute (metrics label by its template; its role is checked).
        ``handlers``: the FastAPI app's exception handlers (this gate sits outside the layer
        that applies them), so an error of ``compute`` gets the reply the route would give."""
        self.app = app
        self.ctx = ctx
        self.gates = {c.path: (c, routes[c.path], role_of(routes[c.path])) for c in cached}
        self.handlers = handlers or {}

    def _handler(self, exc: BaseException) -> Any:
        return next((self.handlers[k] for k in type(exc).__mro__ if k in self.handlers), None)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        gate = self.gates.get(scope.get("path", "")) if scope["type"] == "http" else None
        if gate is None or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        cached, route, role = gate
        principal = scope.get(PRINCIPAL)
        ctype = (_header(scope, b"content-type") or "").split(";", 1)[0].strip().lower()
        accept = _header(scope, b"accept") or ""
        if (principal is None or (role is not None and refusal(principal, role) is not None)
                or ctype != "application/json" or "text/event-stream" in accept):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay() -> dict:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        try:
            parsed = cached.body.model_validate_json(body)
        except ValidationError:
            await self.app(scope, replay, send)  # the route reports it (422 naming the field)
            return
        from kgservice.server.context import of_scope

        sc = of_scope(self.ctx, scope)  # the workspace the key check chose
        out = cached.lookup(sc, parsed)
        if out is None and cached.compute is not None:
            try:
                out = await anyio.to_thread.run_sync(cached.compute, sc, parsed)
            except Exception as exc:
                handler = self._handler(exc)
                if handler is None:
                    raise
                scope["route"] = route
                reply = handler(Request(scope, replay), exc)
                reply = await reply if inspect.isawaitable(reply) else reply
                await reply(scope, replay, send)
                return
        if out is None:
            await self.app(scope, replay, send)
            return
        scope["route"] = route
        payload = out.model_dump_json().encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})

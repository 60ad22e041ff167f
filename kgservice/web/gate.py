"""ASGI gate for the web page, between the body limit and the API's key check.

``/`` and ``/ui/...`` are the pages (session cookie, CSRF on every write); ``/ui/v1/...`` is
the API for the page's own scripts: the session's key is verified, its principal is put in
the scope and the request goes on to the ``/v1`` route with the API's own role checks and
rate limits (the key check accepts a principal set here). The pages themselves take from the
same per-key bucket, and failed sign-ins from the same per-address bucket as failed API keys,
so the page is no way around the API's limits. Every reply gets the page's security headers:
a strict Content-Security-Policy and ``Cache-Control: no-store`` (static files set their own
caching: :mod:`kgservice.web.assets`). ``/docs``, the REST reference, is served here too, under
the same policy.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from kgservice.server.auth import KeyStore
from kgservice.server.middleware import HINT, NAMED, PRINCIPAL, TokenBuckets, choose_workspace, send_json
from kgservice.web.current import CURRENT, WS_COOKIE
from kgservice.web.session import cookie_of, csrf_ok, sessions_for

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]
SAFE = ("GET", "HEAD", "OPTIONS")


def header_of(scope: dict, name: bytes) -> str | None:
    for k, v in scope.get("headers", ()):
        if k.lower() == name:
            return v.decode("latin-1")
    return None


def with_headers(send: Callable) -> Callable:
    async def wrapped(message: dict) -> None:
        if message["type"] == "http.response.start":
            names = {k.lower() for k, _ in message.get("headers", [])}
            extra = [(k, v) for k, v in SECURITY_HEADERS if k not in names]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)
    return wrapped


class WebGate:
    def __init__(self, app: Any, keys: Callable[[], KeyStore], settings: Any, ctx: Any,
                 limiter: TokenBuckets | None = None, failures: TokenBuckets | None = None):
        from kgservice.web.pages import build_pages

        self.app = app
        self.keys = keys
        self.limiter = limiter or TokenBuckets(0, 1)
        self.failures = failures or TokenBuckets(0, 1)
        # in the store, so every server behind a balancer knows every sign-in (kgservice.web.session)
        self.sessions = sessions_for(settings, ctx.kb.store)
        self.ctx = ctx
        self.pages = build_pages(self, settings, ctx)

    async def principal(self, scope: dict):
        """(session, principal) of the request's cookie, or (None, None). The session's key is
        checked every time: a key revoked on any server ends its sessions on all of them."""
        session = await self.sessions.aget(cookie_of(scope))
        if session is None:
            return None, None
        principal = await self.keys().aprincipal(session.key_id)
        if principal is None:  # revoked since sign-in: the session ends with the key
            import anyio.to_thread

            await anyio.to_thread.run_sync(self.sessions.drop, session.token)
            return None, None
        if scope.get(PRINCIPAL + ".page") is not None:  # a page request: acting in its workspace
            narrowed, _, _ = choose_workspace(principal, scope.get(NAMED), self.hint(scope, principal),
                                           self.ctx.serves, self.ctx.only)
            return session, narrowed
        return session, principal

    def hint(self, scope: dict, principal: Any) -> str | None:
        """The page's workspace when the path names none: the chooser's cookie if the key holds
        it, else the key's first (``default`` first)."""
        chosen = cookie_of(scope, WS_COOKIE)
        held = sorted(principal.workspaces or {}, key=lambda w: (w != "default", w))
        if chosen in held and self.ctx.serves(chosen):
            return chosen
        return next((w for w in held if self.ctx.serves(w)), None)

    async def __call__(self, scope: dict, receive, send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not (path in ("/", "/ui", "/favicon.ico", "/docs") or path.startswith("/ui/")):
            await self.app(scope, receive, send)
            return
        send = with_headers(send)
        if path.startswith("/ui/v1/"):
            session, principal = await self.principal(scope)
            if principal is None:
                await send_json(send, 401, "not signed in (or the session expired): sign in at /ui/login")
                return
            if scope.get("method", "GET") not in SAFE and not csrf_ok(session, header_of(scope, b"x-csrf-token")):
                await send_json(send, 403, "missing or wrong CSRF token (X-CSRF-Token)")
                return
            inner = path[len("/ui"):]
            # the key check (Authenticate) narrows it to the workspace named, or the page's
            scope = {**scope, "path": inner, "raw_path": inner.encode(), PRINCIPAL: principal,
                     HINT: self.hint(scope, principal)}
            await self.app(scope, receive, send)
            return
        if not path.startswith("/ui/static/") and path != "/docs":
            scope = {**scope, PRINCIPAL + ".page": True}
            session, principal = await self.principal(scope)
            if principal is None and session is not None:  # a workspace named that this key lacks
                named = scope.get(NAMED) or "?"
                await send_json(send, 404, f"no workspace {named!r}")
                return
            token = CURRENT.set(principal.workspace if principal is not None else None)
            try:
                await self._page(scope, receive, send, principal)
            finally:
                CURRENT.reset(token)
            return
        await self.pages(scope, receive, send)

    async def _page(self, scope: dict, receive, send, principal: Any) -> None:
        if principal is not None:
            wait = self.limiter.take(principal.key_id or f"user:{principal.user}")
            if wait > 0:
                await too_many(send, wait, f"rate limit for this key reached ({self.limiter.described()}); "
                                           "retry after the given seconds")
                return
        await self.pages(scope, receive, send)

    def failed_sign_in(self, scope: dict) -> float:
        """Counts a failed sign-in against the client's address; >0: seconds to wait (429)."""
        client = (scope.get("client") or ("?", 0))[0]
        return self.failures.take(f"ip:{client}")


async def too_many(send: Callable, wait: float, detail: str) -> None:
    await send_json(send, 429, detail, [("retry-after", str(max(1, math.ceil(wait))))])

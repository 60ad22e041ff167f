"""Pure-ASGI gates in front of REST and MCP alike (no BaseHTTPMiddleware: it buffers SSE).

Order, outermost first: proxy headers and request id (:mod:`kgservice.server.proxies`) →
metrics → Host check (421) → body limit (413) → key check (401) and
per-key rate limit (429). The principal lands in ``scope["kg.principal"]``; REST routes
check its role with :func:`kgservice.server.deps.need`, MCP tools with the same function.
Keys are never logged: only the key id appears anywhere.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from kgservice.errors import StoreUnavailable
from kgservice.outage import is_outage
from kgservice.server.auth import KeyStore, Principal

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]], Awaitable[None]]

PRINCIPAL = "kg.principal"
WORKSPACE = "kg.workspace"  # the workspace a request acts in, once the key check chose it
NAMED = "kg.workspace_named"  # the workspace the path named (/w/<name>/...), before any check
HINT = "kg.workspace_hint"  # the page's chosen workspace (its cookie): used only if the key holds it
PREFIX = "/w/"


async def send_json(send: Callable[[dict], Awaitable[None]], status: int, detail: str,
                    headers: Iterable[tuple[str, str]] = ()) -> None:
    from kgservice.server.errors import error_body

    body = json.dumps(error_body(status, detail)).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *((k.encode(), v.encode()) for k, v in headers)]})
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> str | None:
    for k, v in scope.get("headers", ()):
        if k.lower() == name:
            return v.decode("latin-1")
    return None


# -- outages -----------------------------------------------------------------------------------

class Outage:
    """Any request whose store is down ends as a 503 JSON envelope with Retry-After, whichever
    layer noticed it (the key check, the cached-reply gate, a route): never a plain-text 500.
    How long the store is waited for is the driver's bound (``store_timeout``)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: dict) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:
            if started or not is_outage(exc):
                raise
            text = str(exc) if isinstance(exc, StoreUnavailable) else (
                f"the graph store is not answering ({type(exc).__name__}); retry once it is back")
            await send_json(send, 503, text, [("retry-after", "5")])


# -- Host ---------------------------------------------------------------------------------------

def host_allowed(host: str, allowed: Iterable[str]) -> bool:
    """``host`` is the Host header (``name`` or ``name:port``). Entries: ``*``, ``name``
    (any port), ``name:port``, ``name:*``, ``*.domain``."""
    host = host.strip().lower()
    if host.startswith("["):
        name, _, rest = host.partition("]")
        name, port = name + "]", rest.lstrip(":")
    else:
        name, _, port = host.partition(":")
    for entry in allowed:
        e = entry.strip().lower()
        if e == "*":
            return True
        if e.startswith("["):
            en, _, erest = e.partition("]")
            en, eport = en + "]", erest.lstrip(":")
        else:
            en, _, eport = e.partition(":")
        name_ok = name == en or (en.startswith("*.") and name.endswith(en[1:]))
        if name_ok and (not eport or eport == "*" or eport == port):
            return True
    return False


class HostCheck:
    """Refuses a Host header not in ``allowed_hosts`` (DNS-rebinding guard) with 421 and a
    message naming the setting, so a proxy deployment knows what to configure; a browser
    Origin whose host is not allowed gets 403. One check for REST and MCP alike (the MCP
    SDK's own Host/Origin check is switched off in favour of this one)."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str]):
        self.app = app
        self.allowed = tuple(allowed)

    async def __call__(self, scope: Scope, receive, send) -> None:
        if scope["type"] == "http":
            host = _header(scope, b"host") or ""
            if not host_allowed(host, self.allowed):
                await send_json(send, 421, f"Host {host!r} is not served here; add it to allowed_hosts "
                                           f"(KG_ALLOWED_HOSTS, comma-separated)")
                return
            origin = _header(scope, b"origin")
            if origin and origin != "null":
                origin_host = origin.split("://", 1)[-1].split("/", 1)[0]
                if not host_allowed(origin_host, self.allowed):
                    await send_json(send, 403, f"Origin {origin!r} is not allowed (allowed_hosts / KG_ALLOWED_HOSTS)")
                    return
        await self.app(scope, receive, send)


# -- body size ----------------------------------------------------------------------------------

class BodyLimit:
    """413 from Content-Length before a byte of the body is read; a chunked body is counted
    as it streams and cut off at the limit."""

    def __init__(self, app: ASGIApp, max_bytes: int):
        self.app = app
        self.max = int(max_bytes)

    async def __call__(self, scope: Scope, receive, send) -> None:
        if scope["type"] != "http" or self.max <= 0:
            await self.app(scope, receive, send)
            return
        length = _header(scope, b"content-length")
        if length is not None:
            try:
                too_big = int(length) > self.max
            except ValueError:
                await send_json(send, 422, "Content-Length is not a number")
                return
            if too_big:
                await send_json(send, 413, f"request body of {length} bytes is over the limit of {self.max} "
                                           f"(max_body / KG_MAX_BODY)")
                return
        seen = 0
        exceeded = False
        started = False

        async def counted_receive() -> dict:
            # past the limit the app sees a disconnect (so it stops reading); its reply is then
            # swallowed and replaced by the 413 below
            nonlocal seen, exceeded
            if exceeded:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max:
                    exceeded = True
                    return {"type": "http.disconnect"}
            return message

        async def tracking_send(message: dict) -> None:
            nonlocal started
            if exceeded:
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted_receive, tracking_send)
        except Exception:
            if not exceeded:
                raise
        if exceeded and not started:
            await send_json(send, 413, f"request body is over the limit of {self.max} bytes "
                                       f"(max_body / KG_MAX_BODY)")


# -- rate limit ---------------------------------------------------------------------------------

class TokenBuckets:
    """One token bucket per caller key. ``rate`` / ``burst`` are the deployment's: with ``share``
    (how many servers share the limit, :mod:`kgservice.server.peers`) this server refills at
    rate/N and holds burst/N (at least one token), so N servers behind an even balancer admit
    the setting, not N times it."""

    def __init__(self, rate: float, burst: int, share: Callable[[], int] | None = None):
        self.rate = float(rate)
        self.burst = max(1, int(burst))
        self.share = share or (lambda: 1)
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def here(self) -> tuple[float, float]:
        """(rate, bucket size) this server enforces now."""
        n = max(1, int(self.share()))
        return self.rate / n, max(1.0, self.burst / n)

    def take(self, who: str) -> float:
        """0 if allowed, else the seconds to wait before a token is available."""
        if self.rate <= 0:
            return 0.0
        rate, size = self.here()
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(who, (size, now))
            tokens = min(size, tokens + (now - last) * rate)
            if tokens >= 1.0:
                self._buckets[who] = (tokens - 1.0, now)
                return 0.0
            self._buckets[who] = (tokens, now)
            return (1.0 - tokens) / rate

    def described(self) -> str:
        """The limit as a 429 says it: the deployment's, and this server's share when shared."""
        n = max(1, int(self.share()))
        whole = f"{self.rate:g}/s, burst {self.burst}"
        return whole if n == 1 else f"{whole} across {n} servers: {self.rate / n:.3g}/s on this one"


# -- keys ---------------------------------------------------------------------------------------

def presented_key(scope: Scope) -> str | None:
    auth = _header(scope, b"authorization")
    if auth:
        scheme, _, value = auth.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    key = _header(scope, b"x-api-key")
    return key.strip() if key and key.strip() else None


class WorkspacePrefix:
    """``/w/<name>/<path>`` is ``/<path>`` acting in workspace ``name``, for every route, MCP and
    the page alike: the prefix is taken off here, outermost, and the name left in the scope for
    the key check (:func:`choose_workspace`), which alone decides whether the caller may use it.
    The workspace is named by the path, not by a header: a path is what a link, a bookmark, an
    MCP client's URL and a proxy rule all carry, and the key it meets still decides."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive, send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path.startswith(PREFIX):
            name, _, rest = path[len(PREFIX):].partition("/")
            rest = "/" + rest
            scope = {**scope, "path": rest, "raw_path": rest.encode(), NAMED: name}
        await self.app(scope, receive, send)


DEPLOYMENT_PATHS = ("/v1/workspaces", "/v1/admin/workspaces", "/metrics")


def deployment_path(path: str) -> bool:
    """Routes about the deployment rather than one workspace: the caller's workspaces, their
    administration and the process metrics act in none (the role is the key's highest)."""
    return any(path == p or path.startswith(p + "/") for p in DEPLOYMENT_PATHS)


def choose_workspace(principal: Principal, named: str | None, hint: str | None,
                     serves: Callable[[str], bool], only: str | None) -> tuple[Principal | None, int, str]:
    """(the caller acting in its workspace, 200, "") or (None, status, why): 404 or 400. A
    workspace the key does not hold is answered exactly as one that does not exist (404), so a
    key learns nothing of other teams' workspaces. A key with one workspace needs none named;
    with several, the path names one (the page: its chooser)."""
    if named is None:
        held = list(principal.workspaces) if principal.workspaces is not None else [only or "default"]
        held = [w for w in held if only is None or w == only]
        if hint in held:
            held = [hint]
        if not held:
            return None, 404, "this server serves none of this key's workspaces"
        if len(held) > 1:
            return None, 400, (f"this key acts in several workspaces ({', '.join(sorted(held))}): name one in the "
                               f"path, {PREFIX}<workspace>/v1/... (or /mcp)")
        named = held[0]
    narrowed = principal.within(named)
    if narrowed is None or not serves(named):
        return None, 404, f"no workspace {named!r}"
    return narrowed, 200, ""


class Authenticate:
    """Every path except ``public`` needs a valid key (401 otherwise, with WWW-Authenticate).
    ``local`` (``--no-auth`` on loopback) is the principal of every request instead.
    Failed attempts are limited per client address, valid keys per key id (429)."""

    def __init__(self, app: ASGIApp, keys: Callable[[], KeyStore], public: Callable[[str], bool],
                 limiter: TokenBuckets, failures: TokenBuckets, local: Principal | None = None,
                 on_event: Callable[[str], None] | None = None, ctx: Any = None):
        self.app = app
        self.ctx = ctx  # the server's context: which workspaces it serves (None: tests of the gate alone)
        self.keys = keys
        self.public = public
        self.limiter = limiter
        self.failures = failures
        self.local = local
        self.on_event = on_event or (lambda event: None)

    async def __call__(self, scope: Scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from kgservice.stores.changelog import request_arrived

        with request_arrived():  # version reads for this request start from now (shared, coherent)
            await self._serve(scope, receive, send)

    async def _serve(self, scope: Scope, receive, send) -> None:
        path = scope.get("path", "")
        # a principal already in the scope was set by the web page's session gate (kgservice.web)
        principal: Principal | None = scope.get(PRINCIPAL) or self.local
        if principal is None:
            presented = presented_key(scope)
            if presented is not None and not self.public(path):
                principal = await self.keys().averify(presented)
            if principal is None and not self.public(path):
                client = (scope.get("client") or ("?", 0))[0]
                wait = self.failures.take(f"ip:{client}")
                self.on_event("auth_failed")
                if wait > 0:
                    await send_json(send, 429, "too many failed authentications; retry later",
                                    [("retry-after", str(max(1, math.ceil(wait))))])
                    return
                msg = ("missing API key: send `Authorization: Bearer <key>` or `X-API-Key: <key>`"
                       if presented is None else "invalid or revoked API key")
                await send_json(send, 401, msg, [("www-authenticate", 'Bearer realm="kgservice"')])
                return
        if principal is not None and not self.public(path):
            wait = self.limiter.take(principal.key_id or f"user:{principal.user}")
            if wait > 0:
                self.on_event("rate_limited")
                await send_json(send, 429, f"rate limit for this key reached ({self.limiter.described()}); "
                                           "retry after the given seconds",
                                [("retry-after", str(max(1, math.ceil(wait))))])
                return
        if principal is not None and not self.public(path) and not deployment_path(path) and self.ctx is not None:
            narrowed, status, why = choose_workspace(principal, scope.get(NAMED), scope.get(HINT), self.ctx.serves,
                                                     self.ctx.only)
            if narrowed is None:
                await send_json(send, status, why)
                return
            principal = narrowed
            scope[WORKSPACE] = narrowed.workspace
        elif scope.get(NAMED) is not None and self.ctx is not None and not self.public(path):
            if principal is None or principal.role_in(scope[NAMED]) is None or not self.ctx.serves(scope[NAMED]):
                await send_json(send, 404, f"no workspace {scope[NAMED]!r}")
                return
        scope[PRINCIPAL] = principal
        await self.app(scope, receive, send)

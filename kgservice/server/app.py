"""``create_app(settings)``: one FastAPI app serving /v1 REST and MCP Streamable HTTP at /mcp.

A factory, not a module-level app: the MCP SDK's session manager runs once per instance, so
each process (and each test) builds its own app, knowledge base and MCP server.
"""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import Depends, FastAPI

from kgservice.config import ConfigError, Settings
from kgservice.server import errors
from kgservice.server.auth import Principal, Role
from kgservice.server.context import ServerContext
from kgservice.server.deps import PUBLIC, READER
from kgservice.server.mcp_mount import LazyMCP
from kgservice.server.metrics import MetricsMiddleware
from kgservice.server.middleware import Authenticate, BodyLimit, HostCheck, Outage, TokenBuckets

if TYPE_CHECKING:
    from kgservice.service import KnowledgeBase

# /docs is the web gate's (Swagger UI from the package, kgservice.web.assets)
PUBLIC_PATHS = ("/livez", "/readyz", "/docs", "/openapi.json")


@dataclass(frozen=True)
class ServeOptions:
    host: str = "127.0.0.1"  # the address uvicorn binds (decides whether --no-auth is allowed)
    no_auth: bool = False  # loopback only: every request is the local operator (settings.local_role)
    kb: KnowledgeBase | None = None  # an existing KnowledgeBase (tests, benchmarks); default: a new one from settings
    announce: bool = False  # say on stderr when the app has shut down (kg serve)
    # run queued jobs in this process (the embedded store: the server owns it, so no worker can)
    run_jobs: bool = False
    job_poll: float = 0.5  # seconds between claims of the in-process worker while the queue is empty
    warm_up: bool = False  # load the model client, embedder and indexes in the background at start (kg serve)
    # ping the answering model once at start, in the background (kg serve); /readyz reports the outcome
    check_model: bool = False
    # (settings) -> lock: take a named workspace's embedded directory as the server opens it (kg serve)
    claim: Any = None


def is_loopback(host: str) -> bool:
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def create_app(settings: Settings, options: ServeOptions | None = None) -> FastAPI:
    from kgservice.service import KnowledgeBase

    options = options or ServeOptions()
    if options.no_auth and not is_loopback(options.host):
        raise ConfigError(f"--no-auth is only allowed on a loopback address, not {options.host!r}: "
                          "anyone who can reach the port would have the local role; create keys with `kg keys create`")
    kb = options.kb if options.kb is not None else KnowledgeBase(settings)
    local = Principal("local", Role.parse(settings.local_role)) if options.no_auth else None
    from kgservice.config import DEFAULT_WORKSPACE

    # started for `default` it serves every workspace of the deployment, each opened on first use;
    # started for a named workspace (kg --workspace NAME serve), that one only
    sc = ServerContext(settings=settings, kb=kb, local=local, owns_kb=options.kb is None,
                       runs_jobs=options.run_jobs and not settings.read_only,
                       only=None if settings.workspace == DEFAULT_WORKSPACE else settings.workspace,
                       claim=options.claim)
    sc.metrics.watch_version(kb.caches.clock)
    hosts = list(settings.allowed_hosts)
    mcp_app = LazyMCP(sc, settings)  # built in the lifespan, after the port opens

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        import anyio

        mcp_app.prepare()
        async with anyio.create_task_group() as tg:
            # the port opens as soon as this yields: MCP, the model check and the warm-up are
            # built and run beside it, /readyz reports the check ("checking" until it ends), and
            # a question asked during the warm-up waits for it (KnowledgeBase.ask)
            tg.start_soon(mcp_app.run)
            sc.peers.start()  # heartbeats in the store (a thread): how many servers share the rate limits
            if options.check_model:
                sc.start_model_check(announce=options.announce)
            if sc.runs_jobs:
                sc.start_jobs(options.job_poll)
            if options.warm_up:
                kb.start_warm_up()
            try:
                yield
            finally:
                mcp_app.stop()
                sc.peers.stop()
                sc.stop_jobs()
                sc.close()
                if options.announce:
                    import sys

                    print("kg serve: stopped cleanly (requests finished, stores closed)", file=sys.stderr, flush=True)

    app = FastAPI(title="kgservice", version="1", lifespan=lifespan, redoc_url=None, docs_url=None,
                  description="REST and MCP over one knowledge base. Send `Authorization: Bearer <key>` or "
                              "`X-API-Key: <key>` (keys: `kg keys create`).")
    app.state.ctx = sc
    app.state.mcp = mcp_app
    errors.install(app)

    from kgservice.server.routes import admin, graphify, health, jobs, lifecycle, query, workspaces

    for module in (query, graphify, jobs, admin, health, lifecycle, workspaces):
        # the routes themselves, not include_router's wrapper: app.routes stays a flat table that
        # tests walk to check every route's role declaration
        app.router.routes.extend(module.router.routes)
    app.add_api_route("/metrics", health.metrics, methods=["GET"], tags=["health"],
                      dependencies=[Depends(PUBLIC if settings.metrics_public else READER)])
    app.mount("/", mcp_app)  # last: serves /mcp; FastAPI's own routes match first

    public = set(PUBLIC_PATHS) | ({"/metrics"} if settings.metrics_public else set())

    def is_public(path: str) -> bool:
        return path in public

    from fastapi.routing import APIRoute

    from kgservice.server.cached_replies import CachedReplies

    posts = {r.path: r for r in app.routes if isinstance(r, APIRoute) and "POST" in (r.methods or ())}
    app.add_middleware(CachedReplies, ctx=sc, routes=posts,  # innermost: after the key check
                       handlers=app.exception_handlers)
    # the limits are the deployment's, shared out among the servers of the store (kgservice.server.peers)
    limiter = TokenBuckets(settings.rate_limit, settings.rate_burst, share=sc.peers.share)
    failures = TokenBuckets(settings.auth_fail_rate, settings.auth_fail_burst, share=sc.peers.share)
    app.add_middleware(Authenticate, keys=sc.keys, public=is_public, limiter=limiter, failures=failures,
                       local=local, on_event=lambda e: sc.metrics.auth.labels(e).inc(), ctx=sc)
    from kgservice.web import WebGate  # the team's web page at / (session cookie -> the same principals)

    app.add_middleware(WebGate, keys=sc.keys, settings=settings, ctx=sc, limiter=limiter, failures=failures)
    app.add_middleware(Outage)  # outside the key check: a key read from a store that is down is a 503 too
    from kgservice.server.bookmarks import ReadYourWrites

    app.add_middleware(ReadYourWrites)  # X-KG-Bookmark: the key check waits for a bookmark too
    app.add_middleware(BodyLimit, max_bytes=settings.max_body)
    app.add_middleware(HostCheck, allowed=hosts)
    app.add_middleware(MetricsMiddleware, metrics=sc.metrics)
    from kgservice.server.middleware import WorkspacePrefix

    app.add_middleware(WorkspacePrefix)  # /w/<name>/...: the workspace named, for the key check to allow
    from kgservice.net import parse_networks
    from kgservice.server.proxies import ProxyHeaders

    # outermost: every gate, route and log line after it sees the client and the request id it settles
    app.add_middleware(ProxyHeaders, trusted=parse_networks(settings.trusted_proxies, "KG_TRUSTED_PROXIES"))
    return app

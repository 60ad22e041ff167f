"""Prometheus metrics of one app (its own registry, so several apps can live in one process)."""

from __future__ import annotations

import time
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

__all__ = ["CONTENT_TYPE_LATEST", "Metrics", "MetricsMiddleware"]


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("kg_http_requests_total", "HTTP requests by route template and status",
                                ["route", "code"], registry=r)
        self.seconds = Histogram("kg_request_seconds", "Request duration by route template", ["route"], registry=r,
                                 buckets=(.002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30))
        self.auth = Counter("kg_auth_events_total", "Refused authentications and rate-limited requests",
                            ["event"], registry=r)
        self.llm_calls = Counter("kg_llm_calls_total", "LLM calls made while answering requests", registry=r)
        self.llm_tokens = Counter("kg_llm_tokens_total", "LLM tokens spent while answering requests", registry=r)
        self.cache = Counter("kg_cache_requests_total", "Query cache lookups while answering requests",
                             ["cache", "result"], registry=r)
        self.up = Gauge("kg_up", "1 while the app serves", registry=r)
        self.up.set(1)

    def watch_version(self, clock: Any) -> None:
        """Export the change-log version clock's counters: round trips made vs requests that
        needed the version (their ratio is the per-request cost of coherence, docs/SERVICE.md §5.6)."""
        if clock is None:
            return
        Gauge("kg_version_reads", "Change-log version reads sent to the store (round trips)",
              registry=self.registry).set_function(lambda: clock.reads)
        Gauge("kg_version_read_calls", "Version checks requested (key checks and cache syncs); "
              "one read answers every request that arrived before it started",
              registry=self.registry).set_function(lambda: clock.calls)

    def watch_peers(self, peers: Any) -> None:
        """How many servers this one counts as sharing its store (the rate limits' divisor)."""
        Gauge("kg_servers_live", "kg serve processes with a live heartbeat in the store (this one included); "
              "each enforces 1/N of the rate limits", registry=self.registry).set_function(peers.share)

    def watch_mirror(self, mirror: Any) -> None:
        """Where this server's graphify mirror came from: built here from the store, or read
        from the store after another server built that version (kgservice.export.shared_mirror)."""
        Gauge("kg_graph_mirror_builds",
              "graphify mirrors (graph.json) this process built from a full read of the store", registry=self.registry).set_function(lambda: mirror.builds)
        Gauge("kg_graph_mirror_loads", "graphify mirrors this process read from the store, built by another server",
              registry=self.registry).set_function(lambda: mirror.loads)

    def expose(self) -> bytes:
        """This app's metrics, then the process-wide default registry: the job counters
        (kgservice.jobs.metrics, counted where job state changes) and process metrics."""
        return generate_latest(self.registry) + generate_latest(REGISTRY)

    def record_ask(self, result: Any) -> None:
        llm = getattr(result, "llm", {}) or {}
        self.llm_calls.inc(int(llm.get("calls", 0) or 0))
        self.llm_tokens.inc(int(llm.get("total_tokens", 0) or 0))
        for name, c in (getattr(result, "caches", {}) or {}).items():
            self.cache.labels(name, "hit").inc(int(c.get("hits", 0)))
            self.cache.labels(name, "miss").inc(int(c.get("misses", 0)))

    def record_cache(self, name: str, hit: bool) -> None:
        """One lookup of an in-memory cache (``expand``: one per request)."""
        self.cache.labels(name, "hit" if hit else "miss").inc()


class MetricsMiddleware:
    """Counts every response, the gates' refusals included, by route *template* (bounded
    label values: never a raw path, which would carry node names and ids)."""

    def __init__(self, app: Any, metrics: Metrics):
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        status = 500

        async def watch(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            route = scope.get("route")
            label = getattr(route, "path", None) or "unmatched"
            self.metrics.requests.labels(label, str(status)).inc()
            self.metrics.seconds.labels(label).observe(time.perf_counter() - t0)

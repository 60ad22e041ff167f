"""What one server process holds: the knowledge base, the graph.json mirror, the key store,
the metrics and, for key-less transports, the local principal. Built once per app (factory)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgservice.config import Settings
from kgservice.server.auth import KeyStore, Principal
from kgservice.server.graphify_tools import GraphMirror
from kgservice.server.metrics import Metrics

if TYPE_CHECKING:
    from kgservice.server.models import ExpandIn, ExpandOut
    from kgservice.service import KnowledgeBase


@dataclass
class ServerContext:
    settings: Settings
    kb: KnowledgeBase
    local: Principal | None = None  # the caller when there is no key: stdio, in-memory, --no-auth
    metrics: Metrics = field(default_factory=Metrics)
    graph_dir: Path | None = None
    owns_kb: bool = True  # close the knowledge base with the app (not when the caller passed one in)
    runs_jobs: bool = False  # an in-process worker runs the queue (the embedded store: one owner)
    _worker: Any = None
    _worker_thread: threading.Thread | None = None
    _keys: KeyStore | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _mirror: GraphMirror | None = None
    _peers: Any = None

    @property
    def peers(self) -> Any:
        """The servers sharing this store (:class:`kgservice.server.peers.Peers`), made on first use."""
        with self._lock:
            if self._peers is None:
                from kgservice.server.peers import Peers

                self._peers = Peers(self.kb.store.server_registry(), read_only=self.settings.read_only)
                self.metrics.watch_peers(self._peers)
            return self._peers

    @property
    def out_dir(self) -> Path:
        return self.graph_dir or Path(self.settings.kb_dir) / "graphify-out"

    @property
    def memory_dir(self) -> Path:
        return self.out_dir / "memory"

    @property
    def mirror(self) -> GraphMirror:
        with self._lock:
            if self._mirror is None:
                self._mirror = GraphMirror(self.kb, self.out_dir / "graph.json")
                self.metrics.watch_mirror(self._mirror)
            return self._mirror

    def expand(self, body: ExpandIn) -> ExpandOut:
        """``ops.expand`` counted in the expand cache's hit/miss metrics: the one way REST (the
        route and the cached-reply gate) and MCP expand, so /metrics counts every caller."""
        from kgservice.server import ops

        out = ops.expand(self.kb, body)
        self.metrics.record_cache("expand", out.cached)
        return out

    def start_model_check(self, announce: bool = False) -> threading.Thread:
        """Ping the answering model once, in a background thread (a model that never answers
        holds it for KG_LLM_TIMEOUT, not the server's start); the outcome goes to the knowledge
        base's model health, which /readyz reports, and with ``announce`` to stderr."""
        from kgservice.llm.check import check_model

        health = self.kb.model_health
        token = health.checking()

        def run() -> None:
            status = check_model(self.settings)
            if announce:  # before /readyz shows it: a reader of both never sees one without the other
                import sys

                print(f"kg serve: model {status.model}: {status.state}" + (f" ({status.detail})" if status.detail else ""),
                      file=sys.stderr, flush=True)
            health.checked(status, token)

        t = threading.Thread(target=run, name="kg-model-check", daemon=True)
        t.start()
        return t

    def keys(self) -> KeyStore:
        with self._lock:
            if self._keys is None:
                self._keys = self.kb.key_store()
            return self._keys

    def start_jobs(self, poll_s: float) -> None:
        """Run queued jobs on this server's own knowledge base in a background thread: the
        embedded store has one owner, so jobs submitted here finish with no `kg worker`."""
        import logging

        from kgservice.jobs.worker import Worker

        log = logging.getLogger("kgservice.jobs")
        self._worker = Worker(self.kb.parts, worker_id=f"serve:{__import__('os').getpid()}", log=log.warning)
        self._worker_thread = threading.Thread(target=self._worker.run_forever, args=(poll_s,),
                                               name="kg-jobs", daemon=True)
        self._worker_thread.start()

    def stop_jobs(self) -> None:
        """Let the job in hand finish, then stop the in-process worker."""
        if self._worker is not None:
            self._worker.stop.set()
        if self._worker_thread is not None:
            self._worker_thread.join()
            self._worker_thread = None

    def close(self) -> None:
        if self._keys is not None:
            self._keys.close()
        if self.owns_kb:
            self.kb.close()

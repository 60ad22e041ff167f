"""What one server process holds: the knowledge base, the graph.json mirror, the key store,
the metrics and, for key-less transports, the local principal. Built once per app (factory).

One server serves every workspace of the deployment (or, started with a named workspace, that
one only). The app's context is the ``default`` workspace's, which also holds what belongs to
the deployment (keys, web sessions, peers, metrics); :meth:`ServerContext.for_workspace` opens
another workspace's context, a knowledge base of its own, on first use and keeps it. A request
never switches a shared store between workspaces: each has its own, opened for it."""

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
    # the workspaces this server serves: None every workspace of the deployment, else that one
    only: str | None = None
    root: "ServerContext | None" = None  # the deployment's (default workspace's) context; None: this is it
    claim: Any = None  # (settings) -> lock: take a workspace's embedded directory before opening it
    _opened: dict[str, "ServerContext"] = field(default_factory=dict)
    _holds: list[Any] = field(default_factory=list)
    _poll: float | None = None  # the in-process workers' poll interval, once started

    @property
    def workspace(self) -> str:
        return self.settings.workspace

    def serves(self, name: str) -> bool:
        """Whether ``name`` is a workspace this server serves and that exists now."""
        from kgservice.config import check_workspace_name
        from kgservice.errors import KgError

        top = self.root or self
        if top.only is not None:
            return name == top.only
        if name == top.workspace or name in top._opened:
            return True
        try:
            check_workspace_name(name)  # a path's name is caller input: a bad one names no workspace
        except KgError:
            return False
        from kgservice.stores.factory import in_process
        from kgservice.workspaces import exists

        return exists(top.settings, name, store=None if in_process(top.settings) else top.kb.store)

    def for_workspace(self, name: str) -> "ServerContext":
        """The context of workspace ``name`` (which :meth:`serves`): this one for the workspace
        it was made for, else one opened on first use with its own knowledge base, graph mirror
        and, when this server runs jobs, its own in-process worker; keys, peers and metrics
        stay the deployment's."""
        top = self.root or self
        if name == top.workspace:
            return top
        with top._lock:
            found = top._opened.get(name)
            if found is not None:
                return found
            from dataclasses import replace

            from kgservice.service import KnowledgeBase

            settings = replace(top.settings, workspace=name)
            if top.claim is not None:
                top._holds.append(top.claim(settings))
            child = ServerContext(settings=settings, kb=KnowledgeBase(settings), local=top.local,
                                  metrics=top.metrics, runs_jobs=top.runs_jobs, root=top)
            top._opened[name] = child
        if top._poll is not None and child.runs_jobs:
            child.start_jobs(top._poll)
        return child

    def close_workspace(self, name: str) -> None:
        """Stop and close workspace ``name``'s context (before it is renamed or deleted): the
        next request naming it opens it afresh, or finds it gone."""
        top = self.root or self
        with top._lock:
            child = top._opened.pop(name, None)
        if child is not None:
            child.stop_jobs()
            child.close()
            for hold in list(top._holds):
                if getattr(hold, "path", None) is not None and hold.path.parent == child.settings.kb_dir:
                    hold.release()
                    top._holds.remove(hold)

    @property
    def peers(self) -> Any:
        """The servers sharing this store (:class:`kgservice.server.peers.Peers`), made on first use."""
        if self.root is not None:
            return self.root.peers
        with self._lock:
            if self._peers is None:
                from kgservice.server.peers import Peers

                self._peers = Peers(self.kb.store.server_registry(), read_only=self.settings.read_only,
                                    serves="*" if self.only is None else self.only)
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
                if self.root is None:  # the gauges are the deployment's: they follow default's mirror
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
        """The deployment's keys (the default workspace's context opens them)."""
        if self.root is not None:
            return self.root.keys()
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
        self._poll = poll_s
        if self.root is None and self.only is None:
            self._resume_workspaces()
        self._worker = Worker(self.kb.parts, worker_id=f"serve:{__import__('os').getpid()}:{self.workspace}",
                              log=log.warning)
        self._worker_thread = threading.Thread(target=self._worker.run_forever, args=(poll_s,),
                                               name="kg-jobs", daemon=True)
        self._worker_thread.start()

    def _resume_workspaces(self) -> None:
        """Open now every named workspace that has a job queue, so jobs queued before a restart
        run without waiting for a request to open their workspace."""
        import logging
        from dataclasses import replace

        from kgservice.stores.embedded.jobs import JOBS_FILE
        from kgservice.workspaces import list_workspaces

        for name in list_workspaces(self.settings):
            if name != self.workspace and (replace(self.settings, workspace=name).kb_dir / JOBS_FILE).exists():
                try:
                    self.for_workspace(name)
                except Exception:  # noqa: BLE001 - one damaged workspace must not stop the server
                    logging.getLogger("kgservice.jobs").warning("workspace %s: its jobs wait (not opened)", name)

    def stop_jobs(self) -> None:
        """Let the job in hand finish, then stop the in-process worker (every workspace's)."""
        for child in list(self._opened.values()):
            child.stop_jobs()
        if self._worker is not None:
            self._worker.stop.set()
        if self._worker_thread is not None:
            self._worker_thread.join()
            self._worker_thread = None

    def close(self) -> None:
        for name in list(self._opened):
            self.close_workspace(name)
        for hold in self._holds:
            hold.release()
        self._holds.clear()
        if self._keys is not None:
            self._keys.close()
        if self.owns_kb:
            self.kb.close()


def of_scope(sc: ServerContext, scope: Any) -> ServerContext:
    """The context of the workspace a request acts in (the key check put it in the scope); the
    server's own workspace for a request that acts in none (public and deployment routes)."""
    from kgservice.server.middleware import WORKSPACE

    name = scope.get(WORKSPACE) if isinstance(scope, dict) else None
    return sc.for_workspace(name) if name else (sc.root or sc)

"""Where a deployment's state lives, and the checks that keep several processes from silently
diverging or writing one data directory at once.

* Vectors: the Neo4j graph is shared by every ``kg serve`` / ``kg worker`` that points at it,
  but a local vector directory belongs to one process. Without a shared vector store
  (``vector_backend = "neo4j"``: Neo4j's own vector index, or ``qdrant_url``) each process would answer vector searches from its own copy, so a
  multi-process deployment is refused up front unless the operator says it is one process
  (``single_process`` / ``KG_SINGLE_PROCESS=1``).
* The embedded store: a ``kg serve`` on it owns the data directory (it runs its own jobs);
  it holds an advisory lock on ``<data_dir>/serve.lock`` naming its URL, and any other
  process that would write there (``kg worker``, ``kg ingest``, a second ``kg serve``) is
  refused before it writes anything, with a message pointing at the server.
* Neo4j: servers and workers share the database, but an operation that replaces or moves a
  workspace (restore, rename, delete) is refused while a server's heartbeat names it
  (:func:`refuse_if_served` with ``exclusive``: the same check on both backends).
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from kgservice.config import DEFAULT_WORKSPACE, ConfigError, Settings, redact_uri
from kgservice.errors import ServiceError
from kgservice.stores.factory import capabilities

SERVE_LOCK = "serve.lock"


@dataclass(frozen=True)
class VectorPlacement:
    """Where entry vectors live and whether every process of the deployment sees the same ones."""

    location: str  # a server URL (redacted) or a local directory
    shared: bool
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"location": self.location, "shared": self.shared, "why": self.why}


def vector_placement(settings: Settings) -> VectorPlacement:
    if settings.vectors_in_graph:
        return VectorPlacement(f"{redact_uri(settings.neo4j_uri) or ''} (Neo4j vector index)", True,
                               "Neo4j's vector index, in the graph database every process uses")
    if settings.qdrant_url:
        return VectorPlacement(redact_uri(settings.qdrant_url) or "", True, "a vector server every process uses")
    where = str(settings.kb_dir / "qdrant")
    if capabilities(settings).one_process:
        return VectorPlacement(where, False, "beside the embedded store, in the one process that owns it")
    if settings.single_process:
        return VectorPlacement(where, False, "this process's own directory (single_process / KG_SINGLE_PROCESS)")
    return VectorPlacement(where, False, "this process's own directory: other processes on the same Neo4j "
                                         "keep their own vectors")


class VectorsNotShared(ConfigError):
    """A process that shares the graph with others would keep vectors of its own."""


def require_shared_vectors(settings: Settings, command: str) -> None:
    """Refuse a ``kg serve`` / ``kg worker`` on the shared Neo4j graph whose vectors would stay
    in its own directory (every process would answer vector searches differently)."""
    if vector_placement(settings).shared or capabilities(settings).one_process or settings.single_process:
        return
    raise VectorsNotShared(
        f"`{command}` on the Neo4j backend would keep entry vectors in its own {settings.kb_dir / 'qdrant'}, "
        "so every server and worker would search different vectors. Set KG_VECTOR_BACKEND=neo4j to keep them "
        "in Neo4j's vector index (nothing else to run), or KG_QDRANT_URL to a Qdrant server all of them share "
        "(compose/ starts one), or, if this is the only kg serve / kg worker of this Neo4j, set KG_SINGLE_PROCESS=1")


class StoreOwned(ServiceError):
    """Another process (a running ``kg serve``) owns the embedded data directory."""


@dataclass
class ServeLock:
    """The running server's hold on an embedded data directory (released by :meth:`release`
    or by the process ending: the kernel drops the lock of a killed process)."""

    path: Path
    handle: IO[str]

    def release(self) -> None:
        try:
            fcntl.flock(self.handle, fcntl.LOCK_UN)
        finally:
            self.handle.close()


def _owner(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text("utf-8") or "{}")
    except (OSError, ValueError):
        return {}


def claim_data_dir(settings: Settings, url: str, *, whole: bool = False) -> ServeLock | None:
    """Take the embedded data directory for a server at ``url``; None for a shared backend.
    Raises :class:`StoreOwned` when another server holds it. ``whole``: the server already holds
    the data directory (it serves every workspace) and takes a named workspace's as it opens it."""
    if not capabilities(settings).one_process:
        return None
    if settings.kb_dir != settings.data_dir and not whole:  # a server of every workspace holds the data directory's
        refuse_if_served(replace(settings, workspace=DEFAULT_WORKSPACE), "a second `kg serve`")
    settings.kb_dir.mkdir(parents=True, exist_ok=True)
    path = settings.kb_dir / SERVE_LOCK
    handle = open(path, "a+", encoding="utf-8")
    for attempt in range(20):  # a command checking for a server holds a shared lock for an instant
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if attempt == 19:
                handle.close()
                raise StoreOwned(_refusal(settings, "a second `kg serve`", _owner(path))) from None
            time.sleep(0.05)
    handle.seek(0)
    handle.truncate()
    handle.write(json.dumps({"url": url, "pid": os.getpid()}))
    handle.flush()
    return ServeLock(path, handle)


def refuse_if_served(settings: Settings, what: str, *, exclusive: bool = False, served_here: bool = False,
                     store: Any | None = None) -> None:
    """Raise :class:`StoreOwned` if a running ``kg serve`` serves ``settings.workspace`` and
    ``what`` (e.g. "`kg worker`", "renaming workspace 'a'") may not go on beside it. The one
    check every such command makes, on both backends, before it writes anything:

    * embedded: the server owns the data directory (its lock), so any writer is refused;
    * a shared store (Neo4j): writers work beside servers (that is the deployment's shape), but
      an ``exclusive`` operation - one that replaces or moves the workspace under a server's
      open caches (restore, rename, delete) - is refused while a live server's heartbeat in the
      store names the workspace, or ``*`` (a server of every workspace). ``store``: that store,
      already open (else one is opened for the check and closed).

    ``served_here``: the caller is one of those servers and closed the workspace itself (its
    own admin route), so its own hold does not count."""
    if not capabilities(settings).one_process:
        if exclusive:
            _refuse_if_heartbeat(settings, what, served_here, store)
        return
    if served_here:
        return
    if settings.kb_dir != settings.data_dir:
        # `kg serve` holds the data directory's lock and serves every workspace under it
        refuse_if_served(replace(settings, workspace=DEFAULT_WORKSPACE), what)
    path = settings.kb_dir / SERVE_LOCK
    if not path.exists():
        return
    with open(path, "a+", encoding="utf-8") as handle:
        try:  # shared: checkers never refuse each other, only the server's exclusive hold
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreOwned(_refusal(settings, what, _owner(path))) from None
        fcntl.flock(handle, fcntl.LOCK_UN)


def _refuse_if_heartbeat(settings: Settings, what: str, served_here: bool, store: Any | None) -> None:
    """:func:`refuse_if_served` on a shared store: the live servers' heartbeats that name the
    workspace (``servers_serving.cypher``)."""
    if store is None:
        from kgservice.stores.factory import open_store

        opened = open_store(replace(settings, workspace=DEFAULT_WORKSPACE))
        try:
            return _refuse_if_heartbeat(settings, what, served_here, opened)
        finally:
            opened.close()
    live = int(store.workspace_served(settings.workspace)) - (1 if served_here else 0)
    if live > 0:
        where = redact_uri(settings.neo4j_uri) or "the database"
        raise StoreOwned(f"{what} refused: workspace {settings.workspace!r} is served by {live} "
                         f"{'other ' if served_here else ''}running kg serve process(es) on {where} (their "
                         "heartbeats in the store name it, or every workspace). Stop them first, or wait a "
                         "minute after one was killed (its heartbeat lapses). Nothing was written")


def _refusal(settings: Settings, what: str, owner: dict[str, Any]) -> str:
    url = owner.get("url") or "a running kg serve"
    pid = f" (pid {owner['pid']})" if owner.get("pid") else ""
    if "ingest" in what or "worker" in what:
        via = f"`kg ingest --server {url} FILES` with a writer key in KG_API_KEY, or POST {url}/v1/ingest"
    elif "ask" in what or "search" in what:
        # a reader that needs the vectors: the server holds the local vector store open, and one
        # process at a time opens it; waiting for it would wait for the server to stop
        return (f"{what} refused: {settings.kb_dir} is served by {url}{pid}, which holds its vectors (a local "
                f"vector store is opened by one process at a time). Ask the server: the web page {url}/ui/ask, "
                f"or POST {url}/v1/ask (/v1/search) with a reader key; or stop the server first. `kg expand`, "
                "`kg stats`, `kg query`, `kg docs` and `kg history` read the store beside it")
    elif "keys create" in what:
        via = (f"POST {url}/v1/admin/keys with an admin key; while the store has no admin key, "
               "`kg keys create --role admin` may make the first one beside the server")
    else:
        via = f"its REST API at {url}/v1/, with an admin key for keys, cache and doctor"
    return (f"{what} refused: {settings.kb_dir} is served by {url}{pid}, which owns this embedded store and "
            f"runs its jobs itself. Send the work to the server ({via}), "
            "or stop the server first. Nothing was written")

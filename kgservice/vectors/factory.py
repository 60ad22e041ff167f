"""Open the configured vector store: a Qdrant server, qdrant-edge (embedded default),
qdrant-client local mode, or Neo4j's vector index, mirroring :mod:`kgservice.stores.factory`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from kgservice.errors import ConfigError
from .base import VectorStore, VectorStoreLocked
from .edge_store import EdgeVectorStore, edge_available
from .qdrant_store import QdrantVectorStore

__all__ = ["BACKENDS", "open_vector_store", "resolve_backend"]

BACKENDS = ("auto", "qdrant", "edge")


def resolve_backend(backend: str, *, path: str | Path | None, url: str | None, collection: str) -> str:
    """``"auto"``: a server when ``url`` is given (or in memory without a path); otherwise
    whichever format already exists under ``path`` (an existing qdrant-client local store
    keeps working), and for a new directory qdrant-edge when it is installed, else local mode.
    Vectors kept in the graph database are the graph store's (:meth:`GraphStore.graph_vectors`)."""
    if backend not in BACKENDS:
        raise ConfigError(f"unknown vector backend {backend!r}: expected auto, qdrant or edge")
    if backend != "auto":
        return backend
    if url is not None or path is None:
        return "qdrant"
    p = Path(path)
    if (p / collection / "edge_config.json").exists():
        return "edge"
    if (p / "meta.json").exists():  # qdrant-client local mode
        return "qdrant"
    return "edge" if edge_available() else "qdrant"


def open_vector_store(
    *,
    dim: int,
    model_name: str,
    path: str | Path | None = None,
    url: str | None = None,
    api_key: str | None = None,
    collection: str = "kg_nodes",
    backend: str = "auto",
    recreate: bool = False,
    lock_wait: float = 0.0,
    layout: Any = None,
    family: str | None = None,
) -> VectorStore:
    """Open the vector store for a data directory or server.

    ``backend``: ``"qdrant"`` (qdrant-client: ``url`` server, ``path`` local mode, neither =
    in memory), ``"edge"`` (qdrant-edge-py on ``path``), or ``"auto"`` (:func:`resolve_backend`).

    ``lock_wait``: a local directory is owned by one process at a time. Writers hold it only
    while they upsert (see ``KnowledgeBase.embed_nodes``), so a reader that finds it locked
    waits up to ``lock_wait`` seconds for it instead of failing at once.

    ``layout``: a :class:`~kgservice.vectors.qdrant_store.QdrantLayout` for a collection a Qdrant
    server creates (shards, replicas, write consistency, quantization); local stores ignore it.

    ``family``: the base collection name of the workspaces (``qdrant_collection``); a qdrant-edge
    directory then adopts its workspace's shard left under a former workspace name
    (:func:`~kgservice.vectors.edge_store.adopt_renamed_shard`). A Qdrant collection (server or
    local mode) is moved by the rename itself (``kgservice.workspaces._vectors_follow``).
    """
    backend = resolve_backend(backend, path=path, url=url, collection=collection)
    deadline = time.monotonic() + max(0.0, float(lock_wait))
    pause = 0.05
    while True:
        try:
            return _open(backend, dim=dim, model_name=model_name, path=path, url=url, api_key=api_key,
                         collection=collection, recreate=recreate, layout=layout, family=family)
        except VectorStoreLocked:
            left = deadline - time.monotonic()
            if left <= 0:
                raise
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.5)


def _open(backend: str, *, dim: int, model_name: str, path: str | Path | None, url: str | None,
          api_key: str | None, collection: str, recreate: bool, layout: Any = None,
          family: str | None = None) -> VectorStore:
    if backend == "edge":
        if path is None or url is not None:
            raise ConfigError("the edge backend needs a local path (and no url)")
        return EdgeVectorStore(dim=dim, model_name=model_name, path=path, collection=collection, recreate=recreate,
                               family=family)
    return QdrantVectorStore(
        dim=dim, model_name=model_name, path=path, url=url, api_key=api_key, collection=collection, recreate=recreate,
        layout=layout if url is not None else None,
    )

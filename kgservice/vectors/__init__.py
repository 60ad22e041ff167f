"""Embeddings + vector store: text -> normalised vectors (:mod:`.embedder`), node vectors
in Qdrant keyed by node id (:mod:`.qdrant_store`)."""

from .edge_store import EdgeVectorStore, edge_available
from .embedder import (
    DEFAULT_PACKAGED,
    PACKAGED_MODELS,
    Embedder,
    EmbedderUnavailable,
    HashEmbedder,
    LiteLLMEmbedder,
    PackagedEmbedder,
    make_embedder,
)
from .qdrant_store import (
    VectorStore,
    VectorStoreError,
    VectorStoreLocked,
    VectorStoreMismatch,
    VectorStoreUnavailable,
    point_id,
)

__all__ = [
    "DEFAULT_PACKAGED",
    "EdgeVectorStore",
    "edge_available",
    "open_vector_store",
    "PACKAGED_MODELS",
    "Embedder",
    "EmbedderUnavailable",
    "HashEmbedder",
    "LiteLLMEmbedder",
    "PackagedEmbedder",
    "VectorStore",
    "VectorStoreError",
    "VectorStoreLocked",
    "VectorStoreMismatch",
    "VectorStoreUnavailable",
    "make_embedder",
    "point_id",
]


def open_vector_store(
    *,
    dim: int,
    model_name: str,
    path: str | None = None,
    url: str | None = None,
    api_key: str | None = None,
    collection: str = "kg_nodes",
    backend: str = "auto",
    recreate: bool = False,
) -> VectorStore | EdgeVectorStore:
    """Open the vector store for a data directory or server.

    ``backend``: ``"qdrant"`` (qdrant-client: ``url`` server, ``path`` local mode, neither =
    in memory), ``"edge"`` (qdrant-edge-py on ``path``), or ``"auto"``: a server when ``url``
    is given; otherwise whichever format already exists under ``path``; for a new directory
    qdrant-edge if it is installed, else qdrant-client local mode.
    """
    from pathlib import Path

    if backend not in ("auto", "qdrant", "edge"):
        raise ValueError(f"unknown vector backend {backend!r}: expected auto, qdrant or edge")
    if backend == "auto":
        if url is not None or path is None:
            backend = "qdrant"
        else:
            p = Path(path)
            if (p / collection / "edge_config.json").exists():
                backend = "edge"
            elif (p / "meta.json").exists():  # qdrant-client local mode
                backend = "qdrant"
            else:
                backend = "edge" if edge_available() else "qdrant"
    if backend == "edge":
        if path is None or url is not None:
            raise ValueError("the edge backend needs a local path (and no url)")
        return EdgeVectorStore(dim=dim, model_name=model_name, path=path, collection=collection, recreate=recreate)
    return VectorStore(
        dim=dim, model_name=model_name, path=path, url=url, api_key=api_key, collection=collection, recreate=recreate
    )

"""Embeddings + vector store: text -> normalised vectors (:mod:`.embedder`), node vectors
keyed by node id behind one interface (:mod:`.base`), opened by :mod:`.factory`
(qdrant-edge embedded, qdrant-client server or local mode, Neo4j's vector index)."""

from .base import (
    VectorStore,
    VectorStoreError,
    VectorStoreLocked,
    VectorStoreMismatch,
    VectorStoreDiskFull,
    VectorStoreUnavailable,
    node_id_of,
    point_id,
)
from .edge_store import EdgeVectorStore, edge_available
from . import embedder as _embedder
from .embedder import *  # noqa: F403 (the embedders, listed in embedder.__all__)
from .factory import open_vector_store
from .qdrant_store import QdrantVectorStore

__all__ = [
    *_embedder.__all__,
    "EdgeVectorStore",
    "QdrantVectorStore",
    "VectorStore",
    "VectorStoreError",
    "VectorStoreLocked",
    "VectorStoreMismatch",
    "VectorStoreDiskFull",
    "VectorStoreUnavailable",
    "edge_available",
    "node_id_of",
    "open_vector_store",
    "point_id",
]

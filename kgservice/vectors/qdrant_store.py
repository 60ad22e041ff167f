"""Vector store over ``qdrant-client``: one collection of entry/derived node vectors.

* keyed by node id: the Qdrant point id is ``uuid5(NODE_NAMESPACE, node_id)`` and the node
  id itself is kept in the payload under ``"node_id"`` — upserting the same node twice
  replaces its point (idempotent);
* cosine distance; scores returned are cosines, best first;
* the collection records the embedding model's ``name`` and ``dim`` in its Qdrant
  collection metadata (``kg_model_name`` / ``kg_dim``). Opening it with another model or
  dim raises :class:`VectorStoreMismatch` (re-embed with ``kg doctor --repair``); opening
  with ``recreate=True`` drops and re-creates the collection instead;
* ``path`` → qdrant-client *local mode* (exact scan, fine up to ~20k points; the directory
  is locked by one process — a second opener gets :class:`VectorStoreLocked`);
  ``url`` → a Qdrant server (≥ 1.16, for collection metadata); neither → in memory.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from kgservice.errors import InvalidArgument
from .base import (
    NODE_NAMESPACE,
    check_shape,
    SCROLL_PAGE,
    VectorStoreError,
    VectorStoreLocked,
    VectorStoreMismatch,
    VectorStoreUnavailable,
    as_matrix,
    finish_hits,
    locked_message,
    mismatch_message,
    point_id,
    prepare_upsert,
    scroll_ids,
    unavailable_message,
    vectors_by_node,
)

__all__ = ["NODE_NAMESPACE", "QdrantLayout", "QdrantVectorStore"]

_META_MODEL = "kg_model_name"
_META_DIM = "kg_dim"
_META_SCHEMA = "kg_vectors_schema"
_SCHEMA = 1
_BATCH = 1024


@dataclass(frozen=True)
class QdrantLayout:
    """How a collection on a Qdrant server (a cluster) is laid out; applied when it is created.

    ``shards`` (shard_number) spread the points over nodes; ``replicas`` (replication_factor)
    keep that many copies of each shard (>= 2: losing one node loses nothing);
    ``write_consistency`` (write_consistency_factor) is how many replicas acknowledge a write
    before it returns; ``quantization`` keeps a compressed copy in RAM for search (``scalar``:
    int8, a quarter of float32; ``binary``: 1 bit per dimension) and ``on_disk`` keeps the full
    vectors on disk (memory-mapped), for rescoring. None / "none" / False: the server's default.
    Shard count and replication are fixed at creation (Qdrant changes them by moving shards, an
    operator's task): a collection created otherwise is used as it is, with a warning."""

    shards: int | None = None
    replicas: int | None = None
    write_consistency: int | None = None
    quantization: str = "none"
    on_disk: bool = False

    @classmethod
    def of(cls, settings: Any) -> "QdrantLayout":
        return cls(shards=settings.qdrant_shards, replicas=settings.qdrant_replicas,
                   write_consistency=settings.qdrant_write_consistency,
                   quantization=settings.qdrant_quantization, on_disk=settings.qdrant_on_disk)

    def quantization_config(self) -> Any:
        from qdrant_client import models

        if self.quantization == "scalar":
            return models.ScalarQuantization(scalar=models.ScalarQuantizationConfig(
                type=models.ScalarType.INT8, always_ram=True))
        if self.quantization == "binary":
            return models.BinaryQuantization(binary=models.BinaryQuantizationConfig(always_ram=True))
        return None

    def differences(self, params: Any) -> list[str]:
        """What an existing collection's params (``info.config.params``) hold that this layout does not."""
        found = []
        for name, want, have in (("shard_number", self.shards, getattr(params, "shard_number", None)),
                                 ("replication_factor", self.replicas, getattr(params, "replication_factor", None)),
                                 ("write_consistency_factor", self.write_consistency,
                                  getattr(params, "write_consistency_factor", None))):
            if want is not None and have is not None and want != have:
                found.append(f"{name} {have} (configured {want})")
        return found


#: writes go through each shard's permanent leader, in one order on every replica: a forget's
#: delete and a re-ingest's upsert of the same node from two workers cannot end in a state
#: that differs between replicas (the cost: writes wait while a shard's leader is down)
WRITE_ORDERING = "strong"


class _Guard:
    """Held around every call into the client: local mode is a plain-Python store on SQLite, so
    it serialises access there; and it is where the client's own failures (SQLite under local
    mode, an HTTP error from a server) become a :class:`VectorStoreError` naming the store."""

    def __init__(self, where: str, local: bool):
        self.where = where
        self._lock = threading.RLock() if local else None

    def __enter__(self) -> None:
        if self._lock is not None:
            self._lock.acquire()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._lock is not None:
            self._lock.release()
        if isinstance(exc, sqlite3.Error):
            raise VectorStoreError(f"{self.where}: a local database under the data directory could not be written "
                                   f"({type(exc).__name__}: {exc}); free space or make the data directory "
                                   "writable") from exc
        from qdrant_client.http.exceptions import ApiException, ResponseHandlingException

        if isinstance(exc, ResponseHandlingException):  # no answer at all: the server is down or unreachable
            raise VectorStoreUnavailable(unavailable_message(self.where, 1, exc)) from exc
        if isinstance(exc, ApiException):
            raise VectorStoreError(f"{self.where}: {type(exc).__name__}: {exc}") from exc


class QdrantVectorStore:
    def __init__(
        self,
        *,
        dim: int,
        model_name: str,
        path: Path | str | None = None,
        url: str | None = None,
        api_key: str | None = None,
        collection: str = "kg_nodes",
        recreate: bool = False,
        timeout: int | None = None,
        connect_attempts: int = 4,
        layout: QdrantLayout | None = None,
    ):
        from qdrant_client import QdrantClient

        check_shape(dim, model_name)
        if path is not None and url is not None:
            raise InvalidArgument("give either path (local mode) or url (server), not both")
        self.dim = int(dim)
        self.model_name = str(model_name)
        self.collection = collection
        self.path = Path(path) if path is not None else None
        self.url = url
        self.layout = layout or QdrantLayout()
        self._where = str(self.path) if self.path is not None else (url or ":memory:")
        self._lock = _Guard(self._where, local=url is None)

        if self.path is not None:
            self.path.mkdir(parents=True, exist_ok=True)
            try:
                self._client = QdrantClient(path=str(self.path), force_disable_check_same_thread=True)
            except RuntimeError as exc:
                if "already accessed" in str(exc):
                    raise VectorStoreLocked(locked_message(self.path)) from exc
                raise
        elif url is not None:
            self._client = QdrantClient(url=url, api_key=api_key, timeout=timeout)
        else:
            self._client = QdrantClient(location=":memory:")
        self._closed = False
        try:
            if url is None:
                self._open_collection(recreate)
            else:
                self._open_remote(recreate, max(1, int(connect_attempts)))
        except BaseException:
            self.close()
            raise

    def _open_remote(self, recreate: bool, attempts: int) -> None:
        """A server may be starting: bounded retries with backoff on connection failures,
        then :class:`VectorStoreUnavailable` with a message that says what to check."""
        from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

        try:
            for attempt in Retrying(retry=retry_if_exception_type((VectorStoreUnavailable, ConnectionError)),
                                    stop=stop_after_attempt(attempts), wait=wait_exponential(multiplier=0.2, max=2),
                                    reraise=True):
                with attempt:
                    self._open_collection(recreate)
        except (VectorStoreUnavailable, ConnectionError) as exc:
            cause = exc.__cause__ or exc  # the client's own error, which the message names
            raise VectorStoreUnavailable(unavailable_message(self._where, attempts, cause)) from None

    # ------------------------------------------------------------------ setup

    def _metadata(self) -> dict[str, Any]:
        return {_META_MODEL: self.model_name, _META_DIM: self.dim, _META_SCHEMA: _SCHEMA}

    def _create(self) -> None:
        from qdrant_client import models

        lay = self.layout
        self._client.create_collection(
            self.collection,
            vectors_config=models.VectorParams(size=self.dim, distance=models.Distance.COSINE,
                                               on_disk=True if lay.on_disk else None),
            shard_number=lay.shards,
            replication_factor=lay.replicas,
            write_consistency_factor=lay.write_consistency,
            quantization_config=lay.quantization_config(),
            metadata=self._metadata(),
        )

    def _open_collection(self, recreate: bool) -> None:
        with self._lock:
            exists = self._client.collection_exists(self.collection)
            if exists and recreate:
                self._client.delete_collection(self.collection)
                exists = False
            if not exists:
                self._create()
                return
            info = self._client.get_collection(self.collection)
            vectors = info.config.params.vectors
            stored_dim = getattr(vectors, "size", None)
            stored_distance = getattr(vectors, "distance", None)
            meta = dict(info.config.metadata or {})
            stored_model = meta.get(_META_MODEL)
            stored_meta_dim = meta.get(_META_DIM)
            if stored_model is None:
                count = self._client.count(self.collection, exact=True).count
                if count == 0 and stored_dim == self.dim:
                    # an empty collection without our record (e.g. created by hand): claim it
                    self._client.update_collection(self.collection, metadata=self._metadata())
                    return
            if stored_dim is None:
                raise VectorStoreMismatch(
                    f"Vector collection '{self.collection}' at {self._where} does not hold one unnamed "
                    "dense vector per point (was it created by another tool?). Re-embed the nodes: "
                    "run `kg doctor --repair`."
                )
            problems = []
            if stored_model is None:
                problems.append(f"no recorded model (configured: {self.model_name!r})")
            elif stored_model != self.model_name:
                problems.append(f"model {stored_model!r} (configured: {self.model_name!r})")
            if stored_dim != self.dim or (stored_meta_dim is not None and stored_meta_dim != self.dim):
                problems.append(f"dim {stored_dim} (configured: {self.dim})")
            if str(stored_distance).lower().rsplit(".", 1)[-1] != "cosine":
                problems.append(f"distance {stored_distance} (expected Cosine)")
            if problems:
                raise VectorStoreMismatch(mismatch_message(self.collection, self._where, problems))
            other = self.layout.differences(info.config.params) if self.url is not None else []
            if other:
                logging.getLogger(__name__).warning(
                    "Qdrant collection %r at %s was created with %s; it is used as it is (shards and replicas "
                    "are changed on the server: Qdrant's replicate/move shard operations)", self.collection,
                    self._where, ", ".join(other))

    # ------------------------------------------------------------------ helpers

    def _check_open(self) -> None:
        if self._closed:
            raise VectorStoreError(f"QdrantVectorStore at {self._where} is closed")

    # ------------------------------------------------------------------ API

    def upsert(self, ids: Sequence[str], vectors: np.ndarray, payloads: Sequence[dict] | None = None) -> None:
        """Insert or replace the vectors of ``ids`` (idempotent; the last duplicate wins)."""
        from qdrant_client import models

        self._check_open()
        rows = prepare_upsert(ids, vectors, payloads, self.dim)
        with self._lock:
            for start in range(0, len(rows), _BATCH):
                chunk = rows[start : start + _BATCH]
                self._client.upsert(
                    self.collection,
                    points=models.Batch(
                        ids=[r[1] for r in chunk], vectors=[r[2].tolist() for r in chunk], payloads=[r[3] for r in chunk]
                    ),
                    wait=True,
                    ordering=models.WriteOrdering(WRITE_ORDERING),
                )

    def search(self, vector: np.ndarray, top_k: int = 10, threshold: float = 0.0) -> list[tuple[str, float]]:
        """Nearest nodes to ``vector``: ``[(node_id, cosine)]`` best first, cosine >= threshold."""
        return self.search_many(as_matrix(vector, self.dim)[:1], top_k, threshold)[0]

    def search_many(
        self, vectors: np.ndarray, top_k: int = 10, threshold: float = 0.0
    ) -> list[list[tuple[str, float]]]:
        """:meth:`search` for each row of ``vectors``, in one batched request."""
        from qdrant_client import models

        self._check_open()
        m = as_matrix(vectors, self.dim)
        if m.shape[0] == 0 or top_k <= 0:
            return [[] for _ in range(m.shape[0])]
        # qdrant drops score <= threshold in some modes; ask a hair lower, filter >= ourselves
        qthr = float(threshold) - 1e-6
        requests = [
            models.QueryRequest(
                query=row.tolist(), limit=int(top_k), score_threshold=qthr, with_payload=["node_id"]
            )
            for row in m
        ]
        with self._lock:
            responses = self._client.query_batch_points(self.collection, requests=requests)
        return [finish_hits(resp.points, threshold) for resp in responses]

    def delete(self, ids: Iterable[str]) -> None:
        """Remove these nodes' vectors (unknown ids are ignored)."""
        from qdrant_client import models

        self._check_open()
        pids = [point_id(str(i)) for i in ids]
        with self._lock:
            for s in range(0, len(pids), _BATCH):
                self._client.delete(
                    self.collection, points_selector=models.PointIdsList(points=pids[s : s + _BATCH]), wait=True,
                    ordering=models.WriteOrdering(WRITE_ORDERING),
                )

    def ids(self) -> set[str]:
        """Every node id present (scrolls the whole collection)."""
        self._check_open()

        def page(offset: Any) -> tuple[list[Any], Any]:
            return self._client.scroll(self.collection, limit=SCROLL_PAGE, offset=offset,
                                       with_payload=["node_id"], with_vectors=False)

        with self._lock:
            return scroll_ids(page)

    def get_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored (normalised) vectors of the given node ids that are present."""
        self._check_open()
        with self._lock:
            return vectors_by_node(self._client.retrieve(
                self.collection, ids=[point_id(i) for i in ids], with_payload=["node_id"], with_vectors=True))

    def optimize(self) -> None:
        """No-op here (qdrant-client local mode has no index; a server optimises by itself).
        Kept so every backend has the same interface."""
        self._check_open()

    #: qdrant-client local mode and servers make each write durable on return
    lost_writes = False

    def flush(self) -> None:
        self._check_open()

    def recovered(self) -> None:
        """Nothing to forget (see :attr:`lost_writes`)."""

    def count(self) -> int:
        self._check_open()
        with self._lock:
            return int(self._client.count(self.collection, exact=True).count)

    def close(self) -> None:
        if getattr(self, "_closed", True):
            return
        self._closed = True
        with self._lock:
            self._client.close()

    def __enter__(self) -> QdrantVectorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # release the local-mode directory lock if the caller forgot
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return (
            f"QdrantVectorStore({self._where!r}, collection={self.collection!r}, "
            f"model={self.model_name!r}, dim={self.dim})"
        )


def move_collection(*, old: str, new: str, path: Path | str | None = None, url: str | None = None,
                    api_key: str | None = None) -> int:
    """The points of collection ``old`` moved to a new collection ``new`` (same vector
    parameters, layout and metadata), then ``old`` dropped; the number of points moved.

    Why: Qdrant renames no collection, and a workspace's collection is named after the workspace
    (``Settings.vector_collection``), so ``kg workspaces rename`` must carry its points over, or
    the renamed workspace would open a new, empty collection and lose every vector to search.
    ``old`` stays the truth until the copy is whole: a move stopped midway leaves both, and the
    next move drops the partial ``new`` and copies again. Nothing to move (no ``old``) is 0.
    ``path``: qdrant-client local mode; ``url``: a server (one of the two).
    """
    from qdrant_client import QdrantClient, models

    if (path is None) == (url is None):
        raise InvalidArgument("give either path (local mode) or url (server)")
    client = QdrantClient(path=str(path)) if path is not None else QdrantClient(url=url, api_key=api_key)
    try:
        if not client.collection_exists(old):
            return 0
        if client.collection_exists(new):  # a move stopped midway: old is still whole
            client.delete_collection(new)
        info = client.get_collection(old)
        params = info.config.params
        client.create_collection(
            new, vectors_config=params.vectors, shard_number=params.shard_number,
            replication_factor=params.replication_factor, write_consistency_factor=params.write_consistency_factor,
            quantization_config=info.config.quantization_config, metadata=info.config.metadata)
        moved, offset = 0, None
        while True:
            points, offset = client.scroll(old, limit=SCROLL_PAGE, offset=offset, with_payload=True, with_vectors=True)
            if points:
                client.upsert(new, points=[models.PointStruct(id=p.id, vector=p.vector, payload=p.payload)
                                           for p in points], wait=True)
                moved += len(points)
            if offset is None:
                break
        client.delete_collection(old)
        return moved
    finally:
        client.close()


def drop_collection(*, name: str, url: str, api_key: str | None = None) -> bool:
    """Collection ``name`` dropped from a Qdrant server (a deleted workspace's vectors, which a
    local directory loses with the workspace's folder); False if there was none."""
    from qdrant_client import QdrantClient

    client = QdrantClient(url=url, api_key=api_key)
    try:
        return bool(client.collection_exists(name) and client.delete_collection(name))
    finally:
        client.close()

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

from kgservice.errors import ServiceError
import threading
import uuid
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "NODE_NAMESPACE",
    "VectorStore",
    "VectorStoreError",
    "VectorStoreLocked",
    "VectorStoreMismatch",
    "VectorStoreUnavailable",
    "point_id",
]

#: fixed namespace for point ids; never change it (existing collections are keyed by it)
NODE_NAMESPACE = uuid.UUID("f333c3f6-49a0-4622-8817-a1165f0c2aac")
_META_MODEL = "kg_model_name"
_META_DIM = "kg_dim"
_META_SCHEMA = "kg_vectors_schema"
_SCHEMA = 1
_BATCH = 256


class VectorStoreError(ServiceError, RuntimeError):
    """Base class for vector store errors."""


class VectorStoreLocked(VectorStoreError):
    """The local Qdrant directory is held by another process."""


class VectorStoreMismatch(VectorStoreError):
    """The collection was embedded with another model or dimension."""


class VectorStoreUnavailable(VectorStoreError):
    """The Qdrant server did not answer (after bounded retries)."""


def unavailable_message(url: str, attempts: int, exc: BaseException) -> str:
    return (
        f"Qdrant at {url} did not answer after {attempts} attempt(s) ({type(exc).__name__}: {exc}). "
        "Is it running? (compose: `docker compose ps`). If this happened during an ingest, the graph "
        "part is stored: run `kg doctor --repair` once Qdrant is back to embed the missing nodes."
    )


def point_id(node_id: str) -> str:
    """Qdrant point id of a node id (uuid5, stable across processes and machines)."""
    return str(uuid.uuid5(NODE_NAMESPACE, node_id))


# ---- helpers shared by every backend (qdrant-client here, qdrant-edge in edge_store) ----


def as_matrix(vectors: Any, dim: int, n: int | None = None) -> np.ndarray:
    m = np.asarray(vectors, dtype=np.float32)
    if m.ndim == 1:
        m = m[None, :]
    if m.ndim != 2 or m.shape[1] != dim:
        raise ValueError(f"expected vectors of dim {dim}, got shape {np.shape(vectors)}")
    if n is not None and m.shape[0] != n:
        raise ValueError(f"got {m.shape[0]} vectors for {n} ids")
    if not np.isfinite(m).all():
        raise ValueError("vectors contain NaN or infinity")
    return m


def prepare_upsert(
    ids: Sequence[str], vectors: Any, payloads: Sequence[dict] | None, dim: int
) -> list[tuple[str, str, list[float], dict]]:
    """Validate an upsert; return ``(node_id, point_id, vector, payload)`` rows, the last
    duplicate of an id winning, with ``node_id`` put into each payload."""
    ids = [str(i) for i in ids]
    if not ids:
        return []
    m = as_matrix(vectors, dim, len(ids))
    if payloads is None:
        payloads = [{} for _ in ids]
    if len(payloads) != len(ids):
        raise ValueError(f"got {len(payloads)} payloads for {len(ids)} ids")
    if np.any(np.linalg.norm(m, axis=1) == 0):
        raise ValueError("zero vector: cosine is undefined")
    last: dict[str, int] = {}
    for i, nid in enumerate(ids):
        if not nid:
            raise ValueError("empty node id")
        other = payloads[i].get("node_id", nid)
        if other != nid:
            raise ValueError(f"payload node_id {other!r} differs from id {nid!r}")
        last[nid] = i
    return [(nid, point_id(nid), m[i].tolist(), {**payloads[i], "node_id": nid}) for nid, i in last.items()]


def node_id_of(payload: dict | None, pid: Any) -> str:
    if payload and "node_id" in payload:
        return str(payload["node_id"])
    raise VectorStoreError(f"point {pid} has no 'node_id' in its payload")


def finish_hits(points: Iterable[Any], threshold: float) -> list[tuple[str, float]]:
    """ScoredPoints -> ``[(node_id, cosine)]`` with cosine >= threshold, best first."""
    hits = [(node_id_of(p.payload, p.id), float(p.score)) for p in points]
    hits = [h for h in hits if h[1] >= threshold]
    hits.sort(key=lambda h: (-h[1], h[0]))
    return hits


def mismatch_message(collection: str, where: str, problems: list[str]) -> str:
    return (
        f"Vector collection '{collection}' at {where} was embedded with "
        + " and ".join(problems)
        + ". Its vectors cannot be searched with the configured embedder: re-embed the nodes "
        "with `kg doctor --repair` (re-creates the collection with the configured model), "
        "or switch the embedder back to the stored model."
    )


def locked_message(path: Path) -> str:
    return (
        f"Qdrant local storage {path} is locked by another process (or another open "
        "VectorStore in this one). Close that kg process first, or point several processes "
        "at a Qdrant server (url=...) instead of a local path."
    )


class VectorStore:
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
    ):
        from qdrant_client import QdrantClient

        if int(dim) <= 0:
            raise ValueError(f"dim must be positive, got {dim}")
        if not model_name:
            raise ValueError("model_name is required (the embedder's stable name)")
        if path is not None and url is not None:
            raise ValueError("give either path (local mode) or url (server), not both")
        self.dim = int(dim)
        self.model_name = str(model_name)
        self.collection = collection
        self.path = Path(path) if path is not None else None
        self.url = url
        self._where = str(self.path) if self.path is not None else (url or ":memory:")
        # local mode is a plain-Python store on SQLite: serialise access to it
        self._lock: Any = threading.RLock() if url is None else nullcontext()

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
        from qdrant_client.http.exceptions import ResponseHandlingException
        from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

        try:
            for attempt in Retrying(retry=retry_if_exception_type((ResponseHandlingException, ConnectionError)),
                                    stop=stop_after_attempt(attempts), wait=wait_exponential(multiplier=0.2, max=2),
                                    reraise=True):
                with attempt:
                    self._open_collection(recreate)
        except (ResponseHandlingException, ConnectionError) as exc:
            raise VectorStoreUnavailable(unavailable_message(self._where, attempts, exc)) from None

    # ------------------------------------------------------------------ setup

    def _metadata(self) -> dict[str, Any]:
        return {_META_MODEL: self.model_name, _META_DIM: self.dim, _META_SCHEMA: _SCHEMA}

    def _create(self) -> None:
        from qdrant_client import models

        self._client.create_collection(
            self.collection,
            vectors_config=models.VectorParams(size=self.dim, distance=models.Distance.COSINE),
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

    # ------------------------------------------------------------------ helpers

    def _check_open(self) -> None:
        if self._closed:
            raise VectorStoreError(f"VectorStore at {self._where} is closed")

    # ------------------------------------------------------------------ API

    def upsert(self, ids: list[str], vectors: np.ndarray, payloads: list[dict] | None = None) -> None:
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
                        ids=[r[1] for r in chunk], vectors=[r[2] for r in chunk], payloads=[r[3] for r in chunk]
                    ),
                    wait=True,
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
                    self.collection, points_selector=models.PointIdsList(points=pids[s : s + _BATCH]), wait=True
                )

    def ids(self) -> set[str]:
        """Every node id present (scrolls the whole collection)."""
        self._check_open()
        found: set[str] = set()
        offset = None
        with self._lock:
            while True:
                records, offset = self._client.scroll(
                    self.collection, limit=1024, offset=offset, with_payload=["node_id"], with_vectors=False
                )
                found.update(node_id_of(r.payload, r.id) for r in records)
                if offset is None:
                    break
        return found

    def get_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored (normalised) vectors of the given node ids that are present."""
        self._check_open()
        with self._lock:
            recs = self._client.retrieve(
                self.collection, ids=[point_id(i) for i in ids], with_payload=["node_id"], with_vectors=True
            )
        return {node_id_of(r.payload, r.id): np.asarray(r.vector, dtype=np.float32) for r in recs}

    def optimize(self) -> None:
        """No-op here (qdrant-client local mode has no index; a server optimises by itself).
        Kept so every backend has the same interface."""
        self._check_open()

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

    def __enter__(self) -> VectorStore:
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
            f"VectorStore({self._where!r}, collection={self.collection!r}, "
            f"model={self.model_name!r}, dim={self.dim})"
        )

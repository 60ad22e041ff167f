"""The vector store interface every backend implements, its errors, and the helpers the
backends share (point ids, input validation, hit ordering, paged id listing).

Backends: :class:`~kgservice.vectors.edge_store.EdgeVectorStore` (qdrant-edge, the embedded
default), :class:`~kgservice.vectors.qdrant_store.QdrantVectorStore` (qdrant-client: a server
``url``, local mode on a ``path``, or in memory), :class:`~kgservice.stores.neo4j.vectors.Neo4jVectorStore`
(Neo4j's vector index, in the graph database every process shares). :func:`~kgservice.vectors.factory.open_vector_store`
picks one. Every backend stores one cosine vector per node, keyed by node id:

* the point id is ``uuid5(NODE_NAMESPACE, node_id)`` and the node id itself is kept in the
  payload under ``"node_id"``, so upserting a node twice replaces its point;
* scores are cosines, best first, ties by node id;
* the embedding model's name and dim are recorded with the collection: opening it with
  another model raises :class:`VectorStoreMismatch` (``kg doctor --repair`` re-embeds).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from kgservice.disk import free_bytes
from kgservice.errors import InvalidArgument, ServiceError

__all__ = [
    "NODE_NAMESPACE",
    "VectorStore",
    "VectorStoreError",
    "VectorStoreLocked",
    "VectorStoreMismatch",
    "VectorStoreUnavailable",
    "node_id_of",
    "point_id",
]

#: fixed namespace for point ids; never change it (existing collections are keyed by it)
NODE_NAMESPACE = uuid.UUID("f333c3f6-49a0-4622-8817-a1165f0c2aac")
_NS_SHA1 = hashlib.sha1(NODE_NAMESPACE.bytes)  # uuid5 = SHA-1 over namespace bytes + name, copied per id
SCROLL_PAGE = 1024


class EmbedderFailed(ServiceError, RuntimeError):
    """The embedding model ran but gave something unusable (wrong shape or count, zero vectors),
    or its files could not be read."""


class VectorStoreError(ServiceError, RuntimeError):
    """Base class for vector store errors."""


class VectorStoreLocked(VectorStoreError):
    """The local vector directory is held by another process."""


class VectorStoreMismatch(VectorStoreError):
    """The collection was embedded with another model or dimension."""


class VectorStoreDiskFull(VectorStoreError):
    """Too little free disk to open or write an in-process vector store safely."""


# qdrant-edge maps its segment files into memory; on a full file system a write to such a page
# kills the whole process with SIGBUS (measured here on a 4 MB tmpfs), which no handler can turn
# into a message. So a store that maps its files refuses to open or write below this much free space.
MIN_FREE_BYTES = 64 << 20


def check_free_space(path: Path, what: str, need: int = MIN_FREE_BYTES) -> None:
    """Raise :class:`VectorStoreDiskFull` when the file system holding ``path`` has less than
    ``need`` bytes free (the nearest existing parent is measured)."""
    free = free_bytes(path)
    if free < need:
        raise VectorStoreDiskFull(
            f"{what}: only {free // (1 << 20)} MiB free on the file system of {path} (the in-process vector "
            f"store maps its files into memory and needs at least {need >> 20} MiB to work without crashing). "
            "Free space, then run the command again; units already stored are safe, and "
            "`kg doctor --repair` embeds any node left without a vector")


_OS_ERROR = re.compile(r"\(os error (\d+)\)")


def file_failure(path: Path | str, exc: BaseException, what: str) -> VectorStoreError:
    """The error for ``exc``, an OS failure while ``what`` (``"cannot open"``, ...) one of a local
    vector store's files at ``path``: :class:`VectorStoreDiskFull` on a full disk, else a
    :class:`VectorStoreError`; both name the file and the fix. qdrant-edge reports its own as
    plain exceptions ending in ``(os error N)``, read here for the number.

    >>> print(file_failure("/d/qdrant", PermissionError(13, "Permission denied", "/d/qdrant/x.lock"), "cannot open"))
    cannot open /d/qdrant/x.lock: Permission denied; make /d/qdrant writable for this user (the vector store locks and maps its files even to read), then run the command again
    """
    code = getattr(exc, "errno", None)
    if code is None and (m := _OS_ERROR.search(str(exc))):
        code = int(m.group(1))
    where = Path(getattr(exc, "filename", None) or path)
    why = getattr(exc, "strerror", None) or (os.strerror(code) if code else f"{type(exc).__name__}: {exc}")
    if code in (errno.ENOSPC, errno.EDQUOT):
        return VectorStoreDiskFull(
            f"{what} {where}: {why}. Free space, then run the command again; units already stored are safe, "
            "and `kg doctor --repair` embeds any node left without a vector")
    return VectorStoreError(
        f"{what} {where}: {why}; make {Path(path) if where == Path(path) else where.parent} writable for this "
        "user (the vector store locks and maps its files even to read), then run the command again")


class VectorStoreUnavailable(VectorStoreError):
    """The Qdrant server did not answer (after bounded retries)."""


@runtime_checkable
class VectorStore(Protocol):
    """Node vectors: what the knowledge base, ``kg doctor`` and ``kg restore`` use."""

    dim: int
    model_name: str
    collection: str

    def upsert(self, ids: Sequence[str], vectors: Any, payloads: Sequence[dict] | None = None) -> None:
        """Insert or replace the vectors of ``ids`` (idempotent; the last duplicate wins)."""

    def search(self, vector: Any, top_k: int = 10, threshold: float = 0.0) -> list[tuple[str, float]]:
        """Nearest nodes: ``[(node_id, cosine)]`` best first, cosine >= threshold."""

    def search_many(self, vectors: Any, top_k: int = 10, threshold: float = 0.0) -> list[list[tuple[str, float]]]:
        """:meth:`search` for each row of ``vectors``."""

    def delete(self, ids: Iterable[str]) -> None:
        """Remove these nodes' vectors (unknown ids are ignored)."""

    def ids(self) -> set[str]:
        """Every node id present."""

    def get_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored (normalised) vectors of the given node ids that are present."""

    def count(self) -> int: ...

    def optimize(self) -> None:
        """Build search indexes after a bulk load (a no-op where the backend does it itself)."""

    def flush(self) -> None:
        """Make the writes so far durable (a no-op where each write is durable on return)."""

    #: a writer of this store stopped between a write and its flush, so some vectors may be
    #: missing; the knowledge base embeds them again, then calls :meth:`recovered`
    lost_writes: bool

    def recovered(self) -> None:
        """Every vector :attr:`lost_writes` refers to was written again."""

    def close(self) -> None: ...


def check_shape(dim: int, model_name: str) -> int:
    """The collection's shape, checked the same way by every backend before it opens anything:
    a zero dimension or a nameless model would make a collection no later run can match."""
    if int(dim) <= 0:
        raise InvalidArgument(f"dim must be positive, got {dim}")
    if not model_name:
        raise InvalidArgument("model_name is required (the embedder's stable name)")
    return int(dim)


def point_id(node_id: str) -> str:
    """Qdrant point id of a node id: ``str(uuid.uuid5(NODE_NAMESPACE, node_id))``, stable across
    processes and machines. Computed here from a pre-hashed namespace, without building UUID
    objects: the same string at a third of the cost (an ingest hashes every new
    node's id); tests/vectors check both agree."""
    h = _NS_SHA1.copy()
    h.update(node_id.encode())
    b = bytearray(h.digest()[:16])
    b[6] = (b[6] & 0x0F) | 0x50  # version 5
    b[8] = (b[8] & 0x3F) | 0x80  # RFC 4122 variant
    x = b.hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


def node_id_of(payload: dict | None, pid: Any) -> str:
    """The node id a point belongs to (kept in its payload: a uuid5 cannot be reversed)."""
    if payload and "node_id" in payload:
        return str(payload["node_id"])
    raise VectorStoreError(f"point {pid} has no 'node_id' in its payload")


def as_matrix(vectors: Any, dim: int, n: int | None = None) -> np.ndarray:
    m = np.asarray(vectors, dtype=np.float32)
    if m.ndim == 1:
        m = m[None, :]
    if m.ndim != 2 or m.shape[1] != dim:
        raise InvalidArgument(f"expected vectors of dim {dim}, got shape {np.shape(vectors)}")
    if n is not None and m.shape[0] != n:
        raise InvalidArgument(f"got {m.shape[0]} vectors for {n} ids")
    # finite row sums prove every value finite (a NaN or infinity makes its sum non-finite) without
    # a temporary of m's size; only an overflowing or bad sum gets the exact per-value check
    if not np.isfinite(m.sum(axis=1)).all() and not np.isfinite(m).all():
        raise InvalidArgument("vectors contain NaN or infinity")
    return m


def prepare_upsert(
    ids: Sequence[str], vectors: Any, payloads: Sequence[dict] | None, dim: int
) -> list[tuple[str, str, np.ndarray, dict]]:
    """Validate an upsert; return ``(node_id, point_id, vector, payload)`` rows, the last
    duplicate of an id winning, with ``node_id`` put into each payload. Vectors stay float32
    numpy rows: qdrant-edge takes them as they are, and turning 5k x 384 floats into Python
    lists cost more than the upsert itself."""
    ids = [str(i) for i in ids]
    if not ids:
        return []
    m = as_matrix(vectors, dim, len(ids))
    if payloads is not None and len(payloads) != len(ids):
        raise InvalidArgument(f"got {len(payloads)} payloads for {len(ids)} ids")
    # squared norms without a temporary of m's size (np.linalg.norm squares into one, and
    # fresh pages of that size are slow in a long-lived process); zero exactly where the norm is
    if not np.einsum("ij,ij->i", m, m).all():
        raise InvalidArgument("zero vector: cosine is undefined")
    if "" in ids:
        raise InvalidArgument("empty node id")
    last = dict(zip(ids, range(len(ids))))  # the last duplicate wins
    for nid, p in zip(ids, payloads or ()):
        other = p.get("node_id", nid)
        if other != nid:
            raise InvalidArgument(f"payload node_id {other!r} differs from id {nid!r}")
    m = np.ascontiguousarray(m, dtype=np.float32)
    if payloads is None:  # what the knowledge base sends: the node id is the whole payload
        return [(nid, point_id(nid), m[i], {"node_id": nid}) for nid, i in last.items()]
    return [(nid, point_id(nid), m[i], {**payloads[i], "node_id": nid}) for nid, i in last.items()]


def finish_hits(points: Iterable[Any], threshold: float) -> list[tuple[str, float]]:
    """ScoredPoints -> ``[(node_id, cosine)]`` with cosine >= threshold, best first."""
    hits = [(node_id_of(p.payload, p.id), float(p.score)) for p in points]
    hits = [h for h in hits if h[1] >= threshold]
    hits.sort(key=lambda h: (-h[1], h[0]))
    return hits


def scroll_ids(page: Callable[[Any], tuple[list[Any], Any]]) -> set[str]:
    """Every node id, paging with ``page(offset) -> (records, next_offset)`` until the
    backend returns no next offset (the one scroll loop both Qdrant APIs share)."""
    found: set[str] = set()
    offset = None
    while True:
        records, offset = page(offset)
        found.update(node_id_of(r.payload, r.id) for r in records)
        if offset is None:
            return found


def vectors_by_node(records: Iterable[Any]) -> dict[str, np.ndarray]:
    """Retrieved records (payload + vector) -> ``{node_id: vector}``."""
    return {node_id_of(r.payload, r.id): np.asarray(r.vector, dtype=np.float32) for r in records}


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


def unavailable_message(url: str, attempts: int, exc: BaseException) -> str:
    return (
        f"Qdrant at {url} did not answer after {attempts} attempt(s) ({type(exc).__name__}: {exc}). "
        "Is it running? (compose: `docker compose ps`). If this happened during an ingest, the graph "
        "part is stored: run `kg doctor --repair` once Qdrant is back to embed the missing nodes."
    )

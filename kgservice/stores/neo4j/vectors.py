"""The vector store interface over Neo4j's own vector index: node vectors kept in the graph
database every ``kg serve`` / ``kg worker`` of a deployment already shares, so a team that runs
Neo4j needs no vector server and every process searches the same vectors by construction.

Layout: one ``:KgVector {node_id, pid, payload, embedding}`` per node id (``pid`` the same
uuid5 point id the Qdrant backends use, ``payload`` its JSON text, ``embedding`` the normalised
vector stored as a float32 array), one HNSW vector index over ``:KgVector(embedding)`` with
cosine similarity, and one ``:KgVectorSet`` recording the collection name, embedding model and
dimension. A Neo4j database holds one knowledge graph, so it holds one vector collection:
opening it with another collection name, model or dimension raises
:class:`VectorStoreMismatch` (``recreate=True`` / ``kg doctor --repair`` re-embeds). Every
query is a file in ``kgservice/stores/procedures/vectors_*.cypher``, values as parameters.

Search: the index is asked for ``max(top_k, candidates)`` neighbours (HNSW beam width; more
candidates buy recall for latency: ``KG_NEO4J_VECTOR_CANDIDATES``, default chosen by the recall
curve in scripts/bench/RESULTS.md) and the best ``top_k`` are kept. The index runs without
quantization, so its scores are exact float32 cosines (Neo4j reports ``(1 + cos) / 2``; it is
turned back into the cosine here). While the index is missing or being built (a bulk load, a
rebuild, a writer that stopped in between), a search scans the stored vectors exactly instead
(``vectors_scan``): slower, never wrong.

How the index is written (docs/neo4j-vectors.md has the measurements and Neo4j's code behind
them): Neo4j's vector index is Lucene HNSW, and every committed transaction that touches
``:KgVector`` vectors becomes a Lucene segment of its own, merged only 50 at a time; a search
walks every segment's graph with the full candidate count, so an index filled by many small
transactions costs several times the CPU of the same vectors indexed in one population. So a
large load (:meth:`bulk_load`, used by ``KnowledgeBase.embed_nodes``: at least ``bulk_min``
vectors and at least as many as are stored) drops the index, writes the vectors in big
transactions with no index upkeep, and creates it again: one population, the shape of a freshly
built index, and a faster load. :meth:`rebuild_index` (``kg doctor --repair``) does the same for
an index that many small ingests have fragmented.

Durability: each write is its own committed transaction, so :meth:`flush` has nothing to do and
no writer can lose vectors by stopping between a write and a flush (:attr:`lost_writes` stays
False). There is no lock: Neo4j serialises concurrent writers itself. The index is derived
data: a writer that stops during a bulk load leaves the vectors stored and the index absent;
the next process that opens the store writable creates it again (one population).

The store talks to Neo4j through a :class:`kgservice.stores.neo4j.Neo4jStore` (its named reads
and writes): the knowledge base's own graph connection (:meth:`Neo4jStore.graph_vectors`), or
one a tool opened and hands over (``owns_connection=True``: closed with the vector store).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

import numpy as np

from kgservice.vectors.base import (VectorStoreError, VectorStoreMismatch, as_matrix, check_shape, mismatch_message,
                                    prepare_upsert)

__all__ = ["INDEX_NAME", "Neo4jVectorStore"]

log = logging.getLogger(__name__)

INDEX_NAME = "kg_vectors"
_BATCH = 1000  # rows per upsert transaction while the index is kept up to date (each row carries dim floats)
_BULK_BATCH = 10_000  # rows per transaction of a bulk load (no index to update)
_DELETE_BATCH = 5000
_SEARCH_BATCH = 64  # query vectors per round trip
DEFAULT_CANDIDATES = 50  # recall@10 0.92 on 100k label vectors (tune set), RESULTS.md
BULK_MIN = 20_000  # vectors in one load from which the index is built once instead of updated per write
_INDEX_WAIT = 300  # seconds to wait for a new index to come online
# what Neo4j answers when the index is absent or still populating (the search then scans)
_NOT_SEARCHABLE = ("no such vector schema index", "not online", "is not available", "does not exist",
                   "populating", "no such index")


class _Connection(Protocol):
    """What the store needs of a Neo4j connection (``kgservice.stores.neo4j.Neo4jStore``)."""

    read_only: bool
    where: str

    def read(self, name: str, **params: Any) -> list[Any]: ...

    def write(self, name: str, **params: Any) -> list[dict[str, Any]]: ...

    def write_statements(self, name: str) -> None: ...

    def close(self) -> None: ...


def _unit_rows(m: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (as Qdrant stores cosine vectors). The norm is taken in float64,
    so finite rows whose float32 sum of squares overflows still get their direction."""
    m64 = m.astype(np.float64)
    return (m64 / np.sqrt(np.einsum("ij,ij->i", m64, m64))[:, None]).astype(np.float32)


class Neo4jVectorStore:
    def __init__(
        self,
        conn: _Connection,
        *,
        dim: int,
        model_name: str,
        collection: str = "kg_nodes",
        recreate: bool = False,
        candidates: int = DEFAULT_CANDIDATES,
        owns_connection: bool = False,
        bulk_min: int = BULK_MIN,
    ):
        check_shape(dim, model_name)
        self._conn = conn
        self._owns = owns_connection
        self.dim = int(dim)
        self.model_name = str(model_name)
        self.collection = collection
        self.candidates = max(1, int(candidates))
        self.bulk_min = max(1, int(bulk_min))
        self._unindexed = False  # this store dropped the index for a bulk load and owes its creation
        self.lost_writes = False  # every write is a committed transaction: nothing is ever pending
        self._closed = False
        self._lock = threading.Lock()
        self.where = f"{conn.where} (vector index {INDEX_NAME})"
        try:
            self._open(recreate)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ setup

    def _options(self) -> dict[str, Any]:
        return {"indexConfig": {"vector.dimensions": self.dim, "vector.similarity_function": "cosine",
                                "vector.quantization.enabled": False}}

    def _index_dim(self) -> int | None:
        rows = self._conn.read("vectors_index_info", index=INDEX_NAME)
        if not rows:
            return None
        config = (rows[0]["options"] or {}).get("indexConfig") or {}
        return int(config["vector.dimensions"]) if "vector.dimensions" in config else None

    def _open(self, recreate: bool) -> None:
        if self._conn.read_only:  # no schema, no writes: whatever is there is searched as it is
            self._check_meta()
            return
        self._retry_schema(lambda: self._conn.write_statements("vectors_schema"))
        if recreate:
            self._conn.write_statements("vectors_clear")
            self._conn.write("vectors_index_drop", index=INDEX_NAME)
        else:
            self._check_meta()
        self._create_index()
        self._conn.write("vectors_meta_set", collection=self.collection, model_name=self.model_name, dim=self.dim)

    def _create_index(self) -> bool:
        """Create the index if absent (a population of every stored vector) and wait until it is
        online, at most ``_INDEX_WAIT`` seconds; False when it was still populating then (a big
        collection on a busy server): it comes online by itself, searches scan exactly until then."""
        self._retry_schema(lambda: self._conn.write("vectors_index", index=INDEX_NAME, options=self._options()))
        try:
            self._conn.read("vectors_index_await", index=INDEX_NAME, seconds=_INDEX_WAIT)
        except Exception as exc:
            if "ProcedureTimedOut" not in str(getattr(exc, "code", "")) and "did not come online" not in str(exc):
                raise
            log.warning("the vector index %s is still being built after %d s; searches scan the stored "
                        "vectors until it is online", INDEX_NAME, _INDEX_WAIT)
            return False
        return True

    @staticmethod
    def _retry_schema(create: Any) -> None:
        """Schema commands from processes opening at once can collide (one creates what the other
        was creating); each is IF NOT EXISTS, so running it again settles it."""
        for attempt in range(5):
            try:
                create()
                return
            except Exception as exc:
                if attempt == 4 or "already exists" not in str(exc).lower() and "Schema" not in type(exc).__name__:
                    raise
                time.sleep(0.1 * (attempt + 1))

    def _check_meta(self) -> None:
        """Refuse a collection embedded otherwise. A missing record (a graph wipe removes it with the
        vectors) is taken as what the index says, when there is one."""
        rows = self._conn.read("vectors_meta_get")
        problems = []
        if rows:
            meta = rows[0]
            if meta["collection"] != self.collection:
                problems.append(f"collection {meta['collection']!r} (configured: {self.collection!r}; a Neo4j "
                                "database keeps one vector collection)")
            if meta["model_name"] != self.model_name:
                problems.append(f"model {meta['model_name']!r} (configured: {self.model_name!r})")
            if meta["dim"] is not None and int(meta["dim"]) != self.dim:
                problems.append(f"dim {meta['dim']} (configured: {self.dim})")
        index_dim = self._index_dim()
        if index_dim is not None and index_dim != self.dim and not any(p.startswith("dim") for p in problems):
            problems.append(f"dim {index_dim} (configured: {self.dim})")
        if problems and self._conn.read_only:
            raise VectorStoreMismatch(mismatch_message(self.collection, self._conn.where, problems))
        if problems:
            if int(self._conn.read("vectors_count")[0]["n"]):
                raise VectorStoreMismatch(mismatch_message(self.collection, self._conn.where, problems))
            # no vector to lose (a wiped graph keeps its indexes): make the index again for this model
            self._conn.write_statements("vectors_clear")
            self._conn.write("vectors_index_drop", index=INDEX_NAME)

    def _check_open(self) -> None:
        if self._closed:
            raise VectorStoreError(f"Neo4jVectorStore at {self.where} is closed")

    # ------------------------------------------------------------------ API

    def upsert(self, ids: Sequence[str], vectors: Any, payloads: Sequence[dict] | None = None) -> None:
        self._check_open()
        rows = prepare_upsert(ids, vectors, payloads, self.dim)
        if not rows:
            return
        unit = _unit_rows(np.stack([r[2] for r in rows]))
        step = _BULK_BATCH if self._unindexed else _BATCH
        for start in range(0, len(rows), step):
            part = rows[start:start + step]
            batch = [{"id": nid, "pid": pid, "payload": json.dumps(pl, ensure_ascii=False, sort_keys=True),
                      "vector": vec} for (nid, pid, _, pl), vec in zip(part, unit[start:start + step].tolist())]
            self._conn.write("vectors_upsert", rows=batch)

    @contextmanager
    def bulk_load(self, expected: int) -> Iterator[bool]:
        """Around a load of about ``expected`` vectors (upserts inside the block): when it is at
        least ``bulk_min`` and at least as many as are stored, the index is dropped first and
        created again at the end (also when the block fails), so it is built in one population
        instead of one Lucene segment per write transaction. Yields whether it did that.

        Searches meanwhile (any process) scan the stored vectors exactly. A load smaller than
        what is stored keeps the index: rebuilding it would cost more than the load saves."""
        self._check_open()
        bulk = (not self._conn.read_only and not self._unindexed and expected >= self.bulk_min
                and expected >= self.count())
        if not bulk:
            yield False
            return
        self._conn.write("vectors_index_drop", index=INDEX_NAME)
        self._unindexed = True
        try:
            yield True
        finally:
            self._unindexed = False
            self._create_index()

    def rebuild_index(self) -> dict[str, Any]:
        """Drop the index and build it again from the stored vectors in one population: the
        shape a bulk load leaves, for an index that many small write transactions have split
        into many segments (each searched in full). Searches scan exactly until it is online.
        Returns what was done (vectors, seconds) for ``kg doctor --repair``."""
        self._check_open()
        if self._conn.read_only:
            raise VectorStoreError(f"{self.where} is read-only: the vector index cannot be rebuilt")
        t0 = time.monotonic()
        self._conn.write("vectors_index_drop", index=INDEX_NAME)
        online = self._create_index()
        return {"vectors": self.count(), "seconds": round(time.monotonic() - t0, 1), "online": online}

    def search(self, vector: Any, top_k: int = 10, threshold: float = 0.0) -> list[tuple[str, float]]:
        return self.search_many(as_matrix(vector, self.dim)[:1], top_k, threshold)[0]

    def search_many(self, vectors: Any, top_k: int = 10, threshold: float = 0.0) -> list[list[tuple[str, float]]]:
        self._check_open()
        m = as_matrix(vectors, self.dim)
        out: list[list[tuple[str, float]]] = [[] for _ in range(m.shape[0])]
        if m.shape[0] == 0 or top_k <= 0:
            return out
        k = max(int(top_k), self.candidates)
        queries = m.astype(np.float64).tolist()
        for start in range(0, len(queries), _SEARCH_BATCH):
            for r in self._search_rows(k, int(top_k), queries[start:start + _SEARCH_BATCH]):
                cos = 2.0 * float(r["score"]) - 1.0
                if cos >= threshold:
                    out[start + int(r["q"])].append((str(r["node_id"]), cos))
        for hits in out:
            hits.sort(key=lambda h: (-h[1], h[0]))
            del hits[top_k:]
        return out

    def _search_rows(self, k: int, top_k: int, queries: list[list[float]]) -> list[Any]:
        """The index's neighbours, or - while the index is absent or populating - the exact
        ``top_k`` from a scan of the stored vectors (same score scale)."""
        if not self._unindexed:
            try:
                return self._conn.read("vectors_search", index=INDEX_NAME, candidates=k, queries=queries)
            except Exception as exc:  # only "the index is not there / not online" falls through
                if not any(s in str(exc).lower() for s in _NOT_SEARCHABLE):
                    raise
        return self._conn.read("vectors_scan", top=top_k, queries=queries)

    def delete(self, ids: Iterable[str]) -> None:
        self._check_open()
        ids = [str(i) for i in ids]
        for start in range(0, len(ids), _DELETE_BATCH):
            self._conn.write("vectors_delete", ids=ids[start:start + _DELETE_BATCH])

    def ids(self) -> set[str]:
        self._check_open()
        return {str(r["node_id"]) for r in self._conn.read("vectors_ids")}

    def get_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        self._check_open()
        return {str(r["node_id"]): np.asarray(r["vector"], dtype=np.float32)
                for r in self._conn.read("vectors_get", ids=[str(i) for i in ids])}

    def payloads(self, ids: Sequence[str]) -> dict[str, tuple[str, dict]]:
        """``{node_id: (point_id, payload)}`` of these ids that are present (tests, tools)."""
        self._check_open()
        return {str(r["node_id"]): (str(r["pid"]), json.loads(r["payload"] or "{}"))
                for r in self._conn.read("vectors_get", ids=[str(i) for i in ids])}

    def count(self) -> int:
        self._check_open()
        return int(self._conn.read("vectors_count")[0]["n"])

    def optimize(self) -> None:
        """Neo4j keeps its vector index current on every commit: nothing to build."""
        self._check_open()

    def flush(self) -> None:
        """Every write is already committed."""
        self._check_open()

    def recovered(self) -> None:
        self.lost_writes = False

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._owns:
                self._conn.close()

    def __enter__(self) -> Neo4jVectorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Neo4jVectorStore({self.where!r}, model={self.model_name!r}, dim={self.dim})"

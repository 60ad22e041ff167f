"""The same vector store interface over ``qdrant-edge-py`` (Qdrant's own storage and search
engine, in-process): fast upserts and HNSW search for the one-user embedded default.

Layout under ``path``: ``<collection>/`` is the edge shard, ``<collection>.kg.json`` records
the embedding model name and dim (the shard has no collection metadata). One process owns a
shard: a second opener gets :class:`VectorStoreLocked`.

Search: a segment smaller than the indexing threshold (``INDEX_KB``, ~20k vectors of dim
512) is scanned exactly; :meth:`optimize` (run by the writer after each upsert, a no-op when
nothing is due) builds an HNSW index for segments past it, searched with ``hnsw_ef``. So a
small knowledge base (every shard that never held a segment past ``INDEX_KB``) gets exact
answers, and a large one stays within milliseconds per query (an exact scan grows with the
collection). ``exact=True`` forces exact scans.

Once a shard holds an HNSW segment its answers are approximate anyway, and scanning the rest
exactly buys little: on the 51k-node eval graph the exact scan of its second, 18.5k-vector
segment was most of the vector search (~2.5 ms of ~4 ms). So from then on the shard is *large*:
:meth:`optimize` lowers its indexing and full-scan thresholds to ``TAIL_INDEX_KB`` (~5k vectors
of dim 512: Qdrant's default full-scan threshold, half its documented default indexing threshold
of 20,000 KB) and indexes the tail too; the shard's recorded config
keeps that, so it is decided once (a shard that shrinks again stays large). The writer's next
optimize gives a large shard made before this its tail index. Index builds run inside the
writer's lease on the directory, during which readers wait (``KG_VECTOR_LOCK_WAIT``): seconds
per build, each of at most ``2 * INDEX_KB`` of vectors as before (qdrant-edge's optimizer merges
a new indexed tail with an indexed segment up to that size); a large shard builds more often,
every ~5k new vectors instead of every ~20k. Measured on a copy of the 51k-node shard growing by
3k random vectors a write (load ~5, 2 cores): a build of 4.7-6.7 s of CPU every second write,
against builds of 9 and 24 s of CPU over the same 24k vectors before (scripts/eval/RESULTS.md,
"The vector store's tail indexed ...").

Durability: new shards run without qdrant-edge's write-ahead log (every vector would be
serialised twice, and the graph can rebuild what it protects), so a write is durable once
:meth:`flush` returns (``close``
flushes; the knowledge base flushes after each batch it embeds). Between the first write and
that flush a marker file ``<collection>.unflushed`` exists; a process that dies in between
leaves it, and the next opener sees :attr:`lost_writes` - the shard itself reopens at its last
flush (checked by a killed writer in tests/vectors), so what was lost is exactly some nodes'
vectors, which the knowledge base embeds again from the graph before its next write
(:meth:`KnowledgeBase.vector_writer`) and ``kg doctor`` reports meanwhile. Shards created
before keep the log they were made with (qdrant-edge refuses to change ``wal_enabled`` on an
existing shard).

``qdrant-edge-py`` is a binary wheel (abi3) published for Linux x86_64 (glibc >= 2.17),
aarch64 (glibc >= 2.28) and musl, macOS x86_64/arm64 and Windows x86_64: a core dependency; :func:`edge_available` says whether it is
installed, and ``open_vector_store(backend="auto")`` falls back to qdrant-client local mode
where it is not.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import logging
import os
import shutil
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kgservice.disk import fsync_dir, replaced

from .base import (
    SCROLL_PAGE,
    check_shape,
    VectorStoreError,
    VectorStoreLocked,
    VectorStoreMismatch,
    as_matrix,
    check_free_space,
    file_failure,
    finish_hits,
    locked_message,
    mismatch_message,
    point_id,
    prepare_upsert,
    scroll_ids,
    vectors_by_node,
)

__all__ = ["EdgeVectorStore", "adopt_renamed_shard", "edge_available"]

log = logging.getLogger(__name__)

_BATCH = 1024
_SCHEMA = 1
#: segments past this size (KB of vector data) get an HNSW index on optimize()
INDEX_KB = 40_000
#: once a shard holds an HNSW segment: the indexing threshold and the full-scan threshold (a
#: segment below it is scanned even when indexed) of its later segments, in KB (the module doc)
TAIL_INDEX_KB = 10_000
HNSW_M = 16
HNSW_EF_CONSTRUCT = 100
#: threads in each shard's search pool (qdrant-edge's ``max_search_threads``). Its default is
#: 8 threads a shard whatever the cores, each pool its own: a process serving 20 workspaces
#: holds 160, and a search of a shard not searched lately pays waking its idle pool (measured:
#: 0.31-0.38 ms of process CPU a query round 20 shards against 0.04 ms with one thread, and
#: the ask p95 of 20 workspaces above one's). The pool runs one segment per thread, and a
#: shard below ``INDEX_KB`` has one segment; up to ``POOL_SEGMENTS`` segments are searched in turn
#: (:func:`search_threads`), a larger shard's on a pool.
SEARCH_THREADS = 1
#: a shard of more segments than this (from ~40k vectors of dim 512 on; a small workspace's shard
#: has one) gets a pool of one thread a core, at most 8 (qdrant-edge's default) and one a
#: segment. The pool spends no more CPU a search; it spreads the segments over the cores: with a
#: free core, 2 threads cut a search's p50 to 0.50-0.70x on 3, 4, 7 and 16 segments (40k-300k x
#: 512, 2 cores), and at load 8-29 several askers of a 16-segment shard got 1.42x the searches a
#: second (scripts/bench/RESULTS.md, "qdrant-edge's search pool on a large shard"). On 2
#: segments one thread was measured faster than the default pool of 8.
POOL_SEGMENTS = 2


def search_threads(segments: int, cpus: int | None = None) -> int:
    """The search pool of a shard holding ``segments`` segments on a machine of ``cpus`` cores:
    ``SEARCH_THREADS`` for up to ``POOL_SEGMENTS`` segments (every small workspace's shard, so
    a process serving many holds one thread each), else one thread a core, at most 8 and at
    most one a segment."""
    if segments <= POOL_SEGMENTS:
        return SEARCH_THREADS
    return max(1, min(cpus or os.cpu_count() or 1, 8, segments))


def _segments(shard_path: Path) -> int:
    """How many segments the shard on disk holds (0: none yet, or unreadable)."""
    try:
        return sum(1 for p in (shard_path / "segments").iterdir() if p.is_dir())
    except OSError:
        return 0


def _own(lock_path: Path, shard_path: Path) -> int:
    """An exclusive lock on ``lock_path``, held as long as the returned descriptor is open;
    :class:`VectorStoreLocked` at once when another handle holds it (the factory waits and
    retries, ``KG_VECTOR_LOCK_WAIT``)."""
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise file_failure(lock_path.parent, exc, "cannot open the vector store's lock file") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise VectorStoreLocked(locked_message(shard_path)) from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def adopt_renamed_shard(path: Path | str, collection: str, family: str) -> str | None:
    """Give the one shard of a workspace's own vector directory the name the workspace now asks
    for, and return the name it had (None: nothing to adopt).

    A named workspace's shard is called ``<family>-ws-<name>`` (``Settings.vector_collection``,
    the name it would have on a shared Qdrant server), but it lives in the workspace's own
    directory, which ``kg workspaces rename`` moves whole: after ``rename a b`` the directory
    of ``b`` holds ``<family>-ws-a`` while ``b`` opens ``<family>-ws-b``, which would be a new,
    empty shard beside the real one (every vector lost to search until rebuilt). So when
    ``collection`` has no shard here and exactly one other shard of the same family does, it is
    renamed to ``collection``, sidecar files first and the shard directory last: a process
    stopped midway leaves the old shard directory, found again by the next opener. Several
    candidates are left alone (which one is meant cannot be told); a shard another process holds
    (its lock) is not touched. Each directory belongs to one workspace, so no other workspace's
    shard can be here. The caller holds ``collection``'s lock (:class:`EdgeVectorStore` does),
    so two openers of the new name never both adopt or one create beside the other."""
    root = Path(path)
    if (root / collection).exists() or not root.is_dir():  # its shard is here (or being made): nothing to adopt
        return None
    try:
        names = sorted(p.name for p in root.iterdir()
                       if p.name != collection and (p.name == family or p.name.startswith(f"{family}-ws-"))
                       and (p / "edge_config.json").exists())
    except OSError:
        return None
    if len(names) != 1:
        if names:
            log.warning("vector directory %s holds %d shards (%s) and none named %s: none adopted",
                        root, len(names), ", ".join(names), collection)
        return None
    old = names[0]
    try:
        owner = _own(root / f"{old}.lock", root / old)
    except VectorStoreLocked:
        return None  # in use under its old name: left as it is
    try:
        for suffix in (".kg.json", ".unflushed"):  # the unflushed marker must follow, or lost writes go unseen
            src = root / f"{old}{suffix}"
            if src.exists() and not (root / f"{collection}{suffix}").exists():
                os.rename(src, root / f"{collection}{suffix}")
        os.rename(root / old, root / collection)
        (root / f"{old}.lock").unlink(missing_ok=True)
        fsync_dir(root)
    finally:
        os.close(owner)
    log.info("vector shard %s in %s renamed to %s (its workspace was renamed)", old, root, collection)
    return old


def edge_available() -> bool:
    return importlib.util.find_spec("qdrant_edge") is not None


class EdgeVectorStore:
    def __init__(
        self,
        *,
        dim: int,
        model_name: str,
        path: Path | str,
        collection: str = "kg_nodes",
        recreate: bool = False,
        exact: bool = False,
        hnsw_ef: int = 256,
        family: str | None = None,
    ):
        """``family``: the collection name the workspace names are built on (``qdrant_collection``);
        given, a shard of this family left under a workspace's former name is adopted
        (:func:`adopt_renamed_shard`)."""
        try:
            import qdrant_edge as qe
        except ImportError as exc:
            raise ImportError(
                "EdgeVectorStore needs qdrant-edge-py: pip install 'qdrant-edge-py>=0.9,<0.10'"
            ) from exc
        check_shape(dim, model_name)
        self._qe = qe
        self.dim = int(dim)
        self.model_name = str(model_name)
        self.collection = collection
        self.path = Path(path)
        self.shard_path = self.path / collection
        self.meta_path = self.path / f"{collection}.kg.json"
        self.unflushed_path = self.path / f"{collection}.unflushed"
        #: a writer of this shard stopped between a write and its flush: some vectors are gone
        self.lost_writes = False
        self._unflushed = False  # this handle wrote since its last flush (the marker exists)
        self.exact = exact
        self.hnsw_ef = hnsw_ef
        self._lock = threading.RLock()
        self._closed = True
        check_free_space(self.path, f"opening the vector store {self.shard_path}")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise file_failure(self.path, exc, "cannot create the vector store directory") from None
        # qdrant-edge locks a shard through its write-ahead log only; without one (new shards),
        # this lock file is what keeps a shard to one process at a time
        self._owner = _own(self.path / f"{collection}.lock", self.shard_path)
        try:
            try:
                if family is not None:
                    adopt_renamed_shard(self.path, collection, family)
                self._open(qe, recreate)
            except OSError as exc:
                raise file_failure(self.path, exc, "cannot use the vector store file") from None
        except BaseException:
            os.close(self._owner)
            raise

    def _open(self, qe: Any, recreate: bool) -> None:
        if recreate:
            self._check_not_locked()
            shutil.rmtree(self.shard_path, ignore_errors=True)
            self.meta_path.unlink(missing_ok=True)
            self.unflushed_path.unlink(missing_ok=True)
        exists = (self.shard_path / "edge_config.json").exists()
        stored: dict[str, Any] = {}
        if exists:
            stored = self._check_meta()
        config = self._config(large=False, threads=SEARCH_THREADS, wal=False)  # wal: durable at flush()
        # the pool is chosen on each open by the shard's size then (a shard grown past
        # POOL_SEGMENTS while open gets its pool on the next open)
        threads = search_threads(_segments(self.shard_path)) if exists else SEARCH_THREADS
        self._threads = threads
        self._large = (stored.get("optimizers") or {}).get("indexing_threshold") == TAIL_INDEX_KB
        try:
            if exists and stored.get("max_search_threads") == threads:
                self._shard = qe.EdgeShard.load(str(self.shard_path))
            elif exists:
                # a shard made before SEARCH_THREADS (or with another count): its pool size is
                # set once and recorded in its config; every other setting (the write-ahead log
                # above all, fixed at creation) keeps its stored value, as only the vectors
                # (already checked against the stored ones) are given beside it
                self._shard = qe.EdgeShard.load(str(self.shard_path), qe.EdgeConfig(
                    vectors=qe.EdgeVectorParams(size=self.dim, distance=qe.Distance.Cosine),
                    max_search_threads=threads))
            else:
                self._shard = qe.EdgeShard.create(str(self.shard_path), config)
        except Exception as exc:
            if "WouldBlock" in str(exc) or "lock" in str(exc).lower():
                raise VectorStoreLocked(locked_message(self.shard_path)) from exc
            if "os error" in str(exc):  # qdrant-edge's own I/O failure, a plain Exception
                raise file_failure(self.shard_path, exc, "cannot open the vector store") from exc
            raise
        self._closed = False
        if not exists:
            self._write_meta()
        # read only once the shard's lock is ours: no live writer can be between write and flush
        self.lost_writes = self._unflushed = self.unflushed_path.exists()

    # ------------------------------------------------------------------ setup

    def _config(self, *, large: bool, threads: int, wal: bool | None) -> Any:
        """The shard's qdrant-edge config: a small shard's (``INDEX_KB``) or a large one's
        (``TAIL_INDEX_KB``, the module doc). ``wal`` None keeps a shard's own (fixed at creation)."""
        qe = self._qe
        index_kb = TAIL_INDEX_KB if large else INDEX_KB
        return qe.EdgeConfig(
            vectors=qe.EdgeVectorParams(size=self.dim, distance=qe.Distance.Cosine),
            # a small shard's indexed segment (>= INDEX_KB) is always past its full-scan threshold;
            # a large shard's tail, indexed from TAIL_INDEX_KB on, is searched through its index too
            hnsw_config=qe.HnswIndexConfig(m=HNSW_M, ef_construct=HNSW_EF_CONSTRUCT,
                                           full_scan_threshold=TAIL_INDEX_KB if large else INDEX_KB // 2),
            # segments stay <= 2 x INDEX_KB, so one optimize() indexes at most ~40k vectors
            # (seconds) instead of merging everything into one index rebuilt from scratch
            wal_enabled=wal,
            optimizers=qe.EdgeOptimizersConfig(indexing_threshold=index_kb, max_segment_size=2 * INDEX_KB),
            max_search_threads=threads,
        )

    def _check_not_locked(self) -> None:
        if (self.shard_path / "edge_config.json").exists():
            try:
                self._qe.EdgeShard.load(str(self.shard_path)).close()
            except Exception as exc:
                if "WouldBlock" in str(exc) or "lock" in str(exc).lower():
                    raise VectorStoreLocked(locked_message(self.shard_path)) from exc

    def _write_meta(self) -> None:
        meta = {"kg_model_name": self.model_name, "kg_dim": self.dim, "kg_vectors_schema": _SCHEMA}
        with replaced(self.meta_path) as fh:
            fh.write(json.dumps(meta, indent=2).encode("utf-8"))

    def _check_meta(self) -> dict[str, Any]:
        """The shard's stored qdrant-edge config ({} when unreadable), once its recorded model
        and dim are checked against the configured ones."""
        problems = []
        try:
            meta = json.loads(self.meta_path.read_text())
        except FileNotFoundError:
            meta = {}
        except ValueError:
            meta = {}
        cfg: Any = {}
        try:
            cfg = json.loads((self.shard_path / "edge_config.json").read_text())
            vec = (cfg.get("vectors") or {}).get("", {})
            stored_dim = vec.get("size")
        except (OSError, ValueError, AttributeError):
            stored_dim = None
        stored_model = meta.get("kg_model_name")
        if stored_dim is None:
            stored_dim = meta.get("kg_dim")
        if stored_model is None:
            problems.append(f"no recorded model (configured: {self.model_name!r})")
        elif stored_model != self.model_name:
            problems.append(f"model {stored_model!r} (configured: {self.model_name!r})")
        if stored_dim is not None and int(stored_dim) != self.dim:
            problems.append(f"dim {stored_dim} (configured: {self.dim})")
        if problems:
            raise VectorStoreMismatch(mismatch_message(self.collection, str(self.path), problems))
        return cfg if isinstance(cfg, dict) else {}

    def _check_open(self) -> None:
        if self._closed:
            raise VectorStoreError(f"EdgeVectorStore at {self.shard_path} is closed")

    def _mark_unflushed(self) -> None:
        """Before the first write since a flush: leave a durable sign that writes are pending,
        so a crash before the flush is noticed by the next opener (one small file per batch)."""
        if self._unflushed:
            return
        try:
            fd = os.open(self.unflushed_path, os.O_WRONLY | os.O_CREAT, 0o644)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise file_failure(self.path, exc, "cannot write the vector store's marker file") from None
        fsync_dir(self.path)
        self._unflushed = True

    # ------------------------------------------------------------------ API

    def upsert(self, ids: Sequence[str], vectors: np.ndarray, payloads: Sequence[dict] | None = None) -> None:
        qe = self._qe
        self._check_open()
        rows = prepare_upsert(ids, vectors, payloads, self.dim)
        check_free_space(self.path, f"writing {len(rows)} vector(s) to {self.shard_path}")
        with self._lock:
            self._mark_unflushed()
            for start in range(0, len(rows), _BATCH):
                # a memoryview of the float32 row (``.data``: the same view memoryview(vec) makes):
                # qdrant-edge reads its items as the same floats (stored vectors bit-identical,
                # tests/vectors) more cheaply than the ndarray row, whose items are numpy scalars
                pts = [qe.Point(id=pid, vector=vec.data, payload=pl)
                       for _, pid, vec, pl in rows[start : start + _BATCH]]
                self._shard.update(qe.UpdateOperation.upsert_points(pts))

    def search(self, vector: np.ndarray, top_k: int = 10, threshold: float = 0.0) -> list[tuple[str, float]]:
        return self.search_many(as_matrix(vector, self.dim)[:1], top_k, threshold)[0]

    def search_many(
        self, vectors: np.ndarray, top_k: int = 10, threshold: float = 0.0
    ) -> list[list[tuple[str, float]]]:
        qe = self._qe
        self._check_open()
        m = as_matrix(vectors, self.dim)
        if m.shape[0] == 0 or top_k <= 0:
            return [[] for _ in range(m.shape[0])]
        params = qe.SearchParams(exact=True) if self.exact else qe.SearchParams(hnsw_ef=self.hnsw_ef)
        reqs = [
            qe.QueryRequest(
                limit=int(top_k),
                query=qe.Query.Nearest(row.tolist()),
                with_payload=["node_id"],
                score_threshold=float(threshold) - 1e-6,
                params=params,
            )
            for row in m
        ]
        with self._lock:
            results = self._shard.query_batch(qe.QueryBatchRequest(reqs))
        return [finish_hits(points, threshold) for points in results]

    def delete(self, ids: Iterable[str]) -> None:
        qe = self._qe
        self._check_open()
        pids = [point_id(str(i)) for i in ids]
        with self._lock:
            self._mark_unflushed()
            for start in range(0, len(pids), _BATCH):
                self._shard.update(qe.UpdateOperation.delete_points(pids[start : start + _BATCH]))

    def ids(self) -> set[str]:
        qe = self._qe
        self._check_open()

        def page(offset: Any) -> tuple[list[Any], Any]:
            return self._shard.scroll(
                qe.ScrollRequest(offset=offset, limit=SCROLL_PAGE, with_payload=["node_id"], with_vector=False))

        with self._lock:
            return scroll_ids(page)

    def get_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        self._check_open()
        with self._lock:
            return vectors_by_node(self._shard.retrieve([point_id(i) for i in ids], with_payload=["node_id"],
                                                        with_vector=True))

    def count(self) -> int:
        self._check_open()
        with self._lock:
            return int(self._shard.count(self._qe.CountRequest(exact=True)))

    def optimize(self) -> None:
        """Merge segments and build the HNSW index (blocking); call after bulk loads. The first
        time the shard holds an HNSW segment it becomes large (the module doc): it is reopened
        with the large config, recorded in the shard, and optimized again, which indexes its tail."""
        qe = self._qe
        self._check_open()
        with self._lock:
            self._shard.optimize()
            if self._large or not self._shard.info().indexed_vectors_count:
                return
            self._shard.flush()
            self._shard.close()
            try:
                self._shard = qe.EdgeShard.load(str(self.shard_path),
                                                self._config(large=True, threads=self._threads, wal=None))
            except BaseException:
                self._shard = qe.EdgeShard.load(str(self.shard_path))  # as it was: the handle stays usable
                raise
            self._large = True
            self._shard.optimize()

    def flush(self) -> None:
        """Make every write so far durable; then the pending-writes marker goes, unless a
        crashed writer's losses are still to be re-embedded (:meth:`recovered` says they were)."""
        self._check_open()
        with self._lock:
            try:
                self._shard.flush()
                if self._unflushed and not self.lost_writes:
                    self.unflushed_path.unlink(missing_ok=True)
                    self._unflushed = False
            except Exception as exc:
                if not isinstance(exc, OSError) and "os error" not in str(exc):
                    raise
                raise file_failure(self.shard_path, exc, "cannot flush the vector store") from exc

    def recovered(self) -> None:
        """The caller has written again every vector a crashed writer lost: flush, and forget
        the loss."""
        self.lost_writes = False
        self.flush()

    def close(self) -> None:
        if getattr(self, "_closed", True):
            return
        with self._lock:
            try:
                self.flush()
            finally:
                self._closed = True
                try:
                    self._shard.close()
                finally:
                    os.close(self._owner)  # releases the lock

    def __enter__(self) -> EdgeVectorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return f"EdgeVectorStore({str(self.shard_path)!r}, model={self.model_name!r}, dim={self.dim})"

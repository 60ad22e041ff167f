"""A large qdrant-edge shard indexes its tail; a small one stays exact (edge_store's module doc).

The thresholds are the module's, set small here (KB of vector data: a dim-8 float32 vector is
32 bytes, so 64 KB is 2,048 vectors), so real qdrant-edge builds real HNSW indexes in a
fraction of a second. How many vectors a shard has indexed is read from qdrant-edge itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kgservice.vectors import EdgeVectorStore, edge_available
from kgservice.vectors import edge_store

pytestmark = pytest.mark.skipif(not edge_available(), reason="no qdrant-edge-py")
DIM = 8


@pytest.fixture(autouse=True)
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(edge_store, "INDEX_KB", 64)
    # raising=False: before the tail policy the module had no such name (and this test must fail there)
    monkeypatch.setattr(edge_store, "TAIL_INDEX_KB", 8, raising=False)


def _vectors(n: int, seed: int) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _write(path: Path, start: int, m: np.ndarray) -> None:
    """One writer session, as the knowledge base's: open, upsert, optimize, flush, close."""
    with EdgeVectorStore(dim=DIM, model_name="m", path=path) as s:
        s.upsert([f"n{start + i}" for i in range(len(m))], m)
        s.optimize()


def _indexed(path: Path) -> tuple[int, int]:
    """(points, of them in HNSW-indexed segments)."""
    with EdgeVectorStore(dim=DIM, model_name="m", path=path) as s:
        info = s._shard.info()
        return info.points_count, info.indexed_vectors_count


def test_a_shard_past_the_threshold_gets_its_tail_indexed_on_the_next_optimize(tmp_path: Path) -> None:
    first, tail = _vectors(2_100, 0), _vectors(600, 1)
    _write(tmp_path, 0, first)  # 2,100 x 32 B > 64 KB: one indexed segment, as before
    assert _indexed(tmp_path) == (2_100, 2_100)
    _write(tmp_path, 2_100, tail)  # 600 x 32 B = 18.75 KB: below INDEX_KB, past TAIL_INDEX_KB
    assert _indexed(tmp_path) == (2_700, 2_700)  # before the policy: (2700, 2100), the tail scanned exactly
    cfg = json.loads((tmp_path / "kg_nodes" / "edge_config.json").read_text())
    assert cfg["optimizers"]["indexing_threshold"] == 8 and cfg["hnsw_config"]["full_scan_threshold"] == 8
    with EdgeVectorStore(dim=DIM, model_name="m", path=tmp_path) as s:  # the tail's points are found through its index
        found = [s.search(v, top_k=1)[0][0] for v in tail[:50]]
    assert sum(f == f"n{2_100 + i}" for i, f in enumerate(found)) >= 48


@pytest.mark.parametrize("wal", [False, True])
def test_a_large_shard_made_before_gets_its_tail_index_on_its_next_write(tmp_path: Path, wal: bool) -> None:
    """A shard made before the tail policy (the small config only: one indexed segment and a tail
    below INDEX_KB, scanned exactly) gets its tail indexed by the next writer's optimize, and
    keeps the write-ahead log setting it was made with (older shards have one)."""
    import qdrant_edge as qe

    shard = qe.EdgeShard.create(str(tmp_path / "kg_nodes"), qe.EdgeConfig(
        vectors=qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine), wal_enabled=wal,
        hnsw_config=qe.HnswIndexConfig(m=16, ef_construct=100, full_scan_threshold=32),
        optimizers=qe.EdgeOptimizersConfig(indexing_threshold=64, max_segment_size=128), max_search_threads=1))
    for start, m in ((0, _vectors(2_100, 0)), (2_100, _vectors(600, 1))):
        shard.update(qe.UpdateOperation.upsert_points(
            [qe.Point(start + i, v.tolist(), {"node_id": f"n{start + i}"}) for i, v in enumerate(m)]))
        shard.optimize()
    assert shard.info().indexed_vectors_count == 2_100
    shard.flush()
    shard.close()
    (tmp_path / "kg_nodes.kg.json").write_text(json.dumps({"kg_model_name": "m", "kg_dim": DIM, "kg_vectors_schema": 1}))
    assert _indexed(tmp_path) == (2_700, 2_100)  # opening alone changes nothing
    _write(tmp_path, 5_000, _vectors(1, 2))  # the next write
    assert _indexed(tmp_path) == (2_701, 2_701)
    assert json.loads((tmp_path / "kg_nodes" / "edge_config.json").read_text())["wal_enabled"] is wal


def test_a_small_shard_stays_exact_and_keeps_its_config(tmp_path: Path) -> None:
    _write(tmp_path, 0, _vectors(1_500, 0))  # 47 KB < INDEX_KB: never indexed, however many writes
    _write(tmp_path, 1_500, _vectors(400, 1))
    assert _indexed(tmp_path) == (1_900, 0)
    cfg = json.loads((tmp_path / "kg_nodes" / "edge_config.json").read_text())
    assert cfg["optimizers"]["indexing_threshold"] == 64 and cfg["hnsw_config"]["full_scan_threshold"] == 32

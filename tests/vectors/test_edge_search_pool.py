"""Each qdrant-edge shard's search pool is one thread, on new shards and on shards made before.

qdrant-edge gives every shard a search pool of its own, 8 threads by default whatever the
cores; a process serving 20 workspaces held 160, and searching a shard whose pool had gone idle
cost the wake-up of all of it (the 20-workspace ask p95 in scripts/bench/RESULTS.md). The
threads are counted from the OS (``/proc/self/task/*/comm``, named ``edge-search-N`` by
qdrant-edge) in a fresh process, so no other test's shards are among them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from kgservice.vectors import EdgeVectorStore, edge_available

pytestmark = [pytest.mark.skipif(not edge_available(), reason="no qdrant-edge-py"),
              pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")]
ROOT = Path(__file__).resolve().parents[2]


def _search_threads_with_open(path: Path, shards: int, dim: int = 4,
                              expect: int | None = None) -> tuple[int, list[list[str]]]:
    """In a new process: open ``shards`` stores under ``path`` (collections s0, s1, ...), search
    each, and return the number of qdrant-edge search threads alive then, and each search's ids.

    A pool thread is named ``edge-search-N`` by itself, once it runs: read straight after the
    pool is made, a thread just spawned can still carry the process's name (CI read 1 of 2 on a
    loaded machine). So the names are read again until at least one thread a shard is named, for
    up to a minute: what is counted is how many threads the pools have, not how soon they run
    (with the old default of 8 a shard the count is past ``shards`` at once). ``expect``: the
    count waited for, when it is not one a shard; each search is for the first axis."""
    code = textwrap.dedent(f"""
        import json, os, time
        from pathlib import Path
        from kgservice.vectors import EdgeVectorStore

        stores = [EdgeVectorStore(dim={dim}, model_name="m", path=Path({str(path)!r}), collection=f"s{{i}}")
                  for i in range({shards})]
        hits = [[h for h, _ in s.search([1.0] + [0.0] * {dim - 1}, top_k=3)] for s in stores]

        def named():
            count = 0
            for t in os.listdir("/proc/self/task"):
                try:
                    count += open(f"/proc/self/task/{{t}}/comm").read().startswith("edge-search")
                except FileNotFoundError:  # a thread that ended between the listing and the read
                    pass
            return count

        deadline = time.monotonic() + 60
        while (count := named()) < {expect or shards} and time.monotonic() < deadline:
            time.sleep(0.05)
        print(json.dumps([count, hits]))
        for s in stores:
            s.close()
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0, p.stderr[-2000:]
    count, hits = json.loads(p.stdout.strip().splitlines()[-1])
    return count, hits


def test_three_open_stores_hold_three_search_threads(tmp_path: Path) -> None:
    for i in range(3):  # made and written here, then closed: the child opens existing shards
        with EdgeVectorStore(dim=4, model_name="m", path=tmp_path, collection=f"s{i}") as s:
            s.upsert([f"n{i}"], np.array([[1.0, 0.0, 0.0, 0.0]], dtype=np.float32))
    count, hits = _search_threads_with_open(tmp_path, 3)
    assert count == 3  # one a shard (qdrant-edge's default made 8 each: 24)
    assert hits == [["n0"], ["n1"], ["n2"]]


@pytest.mark.parametrize("wal", [False, True])
def test_a_shard_made_with_the_default_pool_gets_one_thread_and_keeps_its_log(tmp_path: Path, wal: bool) -> None:
    """A shard made before (qdrant-edge's default pool; with or without a write-ahead log, which
    qdrant-edge fixes at creation) opens with one search thread, keeps its log setting and
    its points."""
    import qdrant_edge as qe

    for i in range(2):
        shard = qe.EdgeShard.create(str(tmp_path / f"s{i}"), qe.EdgeConfig(
            vectors=qe.EdgeVectorParams(size=4, distance=qe.Distance.Cosine), wal_enabled=wal))
        shard.update(qe.UpdateOperation.upsert_points([qe.Point(7, [0.0, 1.0, 0.0, 0.0], {"node_id": "old"}),
                                                       qe.Point(8, [1.0, 0.0, 0.0, 0.0], {"node_id": f"x{i}"})]))
        shard.flush()
        shard.close()
        (tmp_path / f"s{i}.kg.json").write_text(json.dumps({"kg_model_name": "m", "kg_dim": 4, "kg_vectors_schema": 1}))
    count, hits = _search_threads_with_open(tmp_path, 2)
    assert count == 2  # 16 before
    assert hits == [["x0", "old"], ["x1", "old"]]
    cfg = json.loads((tmp_path / "s0" / "edge_config.json").read_text())
    assert cfg["wal_enabled"] is wal
    count, _ = _search_threads_with_open(tmp_path, 2)  # and so on every later open
    assert count == 2


def _many_segments(path: Path, name: str) -> None:
    """A shard of 17 segments, made cheaply: qdrant-edge's optimizer with thresholds of 1 and 8
    KB starts a new segment for every few hundred 16-d vectors (8 batches of 1,000, each
    optimized, leave 17: counted when this was written)."""
    import qdrant_edge as qe

    shard = qe.EdgeShard.create(str(path / name), qe.EdgeConfig(
        vectors=qe.EdgeVectorParams(size=16, distance=qe.Distance.Cosine), wal_enabled=False,
        optimizers=qe.EdgeOptimizersConfig(indexing_threshold=1, max_segment_size=8)))
    rng = np.random.default_rng(0)
    for b in range(8):
        shard.update(qe.UpdateOperation.upsert_points(
            [qe.Point(b * 1000 + i, rng.standard_normal(16).astype(np.float32).tolist(), {"node_id": f"n{b * 1000 + i}"})
             for i in range(1000)]))
        shard.optimize()
    shard.update(qe.UpdateOperation.upsert_points([qe.Point(99_999, [1.0] + [0.0] * 15, {"node_id": "one"})]))
    shard.flush()
    shard.close()
    (path / f"{name}.kg.json").write_text(json.dumps({"kg_model_name": "m", "kg_dim": 16, "kg_vectors_schema": 1}))


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: a pool of one thread a core is one thread")
def test_a_shard_of_many_segments_searches_on_one_thread_a_core(tmp_path: Path) -> None:
    """Past 2 segments a shard's search costs enough that a pool pays: one thread a core (at
    most 8), so a search of a large shard uses every core. A small shard beside it keeps one."""
    _many_segments(tmp_path, "s0")
    assert len([p for p in (tmp_path / "s0" / "segments").iterdir() if p.is_dir()]) > 2
    with EdgeVectorStore(dim=16, model_name="m", path=tmp_path, collection="s1") as s:
        s.upsert(["small"], np.array([[1.0] + [0.0] * 15], dtype=np.float32))
    pool = min(os.cpu_count() or 1, 8)
    count, hits = _search_threads_with_open(tmp_path, 2, dim=16, expect=pool + 1)
    assert count == pool + 1  # the large shard's pool and the small shard's one thread (2 before)
    assert hits[0][0] == "one" and hits[1] == ["small"]
    assert json.loads((tmp_path / "s0" / "edge_config.json").read_text())["max_search_threads"] == pool

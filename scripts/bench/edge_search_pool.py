#!/usr/bin/env python
"""qdrant-edge's search pool on a large shard: one search thread a shard (``SEARCH_THREADS``)
against wider pools, side by side in one run.

One search thread a shard was chosen on shards of 100 to 60k vectors (one or two segments),
where it won (the 20-workspace ask p95, scripts/bench/RESULTS.md). A large shard has many
segments (segments hold at most ``2 x INDEX_KB`` of vectors: 40k of dim 512), and the pool
searches them one a thread, so there a wider pool may answer sooner. This measures it:

    python scripts/bench/edge_search_pool.py [--vectors 300000] [--dim 512] [--dir DIR]
                                             [--search-threads 1,2,0] [--askers 1,4]
                                             [--queries 300] [--rounds 3]

The shard is built once in ``--dir`` (kept, and reused by later runs of the same size) the way
the knowledge base writes: batches of 20k upserted through ``EdgeVectorStore``, ``optimize()``
after each, so its segments are what a store grown by ingests holds. Vectors: seeded, clustered
(2,000 random centres, each vector a centre plus noise, cosine), so HNSW has structure to find
as with label embeddings; queries are drawn the same way. Each round opens the shard once per
``--search-threads`` value (0: qdrant-edge's own default, 8 a shard; forced whatever the
shard's size, past ``search_threads``' choice), in alternating order,
and for each ``--askers`` count runs ``--queries`` top-10 searches (threshold 0.3, as
``vector_entry`` asks) through ``EdgeVectorStore.search`` after 20 warm-up ones: one asker
in turn, or several threads asking at once (each search holds the store's lock, as in a
server). Figures: each search's wall time (p50, p95), the process's CPU per search (all
threads, the pool's included) and searches per second; the ratios are each value's median
over rounds divided by one thread's. Results are appended to ``results/edge_search_pool.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402,F401  (puts the repository first on sys.path)

from kgservice.vectors import EdgeVectorStore, edge_store  # noqa: E402

CENTRES = 2000
BATCH = 20_000


def _vectors(rng: np.random.Generator, centres: np.ndarray, k: int) -> np.ndarray:
    return centres[rng.integers(0, len(centres), k)] + 0.5 * rng.standard_normal((k, centres.shape[1])).astype(np.float32)


def build(path: Path, n: int, dim: int) -> dict:
    """The shard of ``n`` vectors under ``path`` (made unless a finished one is there)."""
    done = path / "built.json"
    if done.exists():
        return json.loads(done.read_text())
    rng = np.random.default_rng(common.SEED)
    centres = rng.standard_normal((CENTRES, dim)).astype(np.float32)
    t0, c0 = time.time(), time.process_time()
    with EdgeVectorStore(dim=dim, model_name="bench", path=path, collection="c", recreate=True) as store:
        for start in range(0, n, BATCH):
            k = min(BATCH, n - start)
            store.upsert([f"n{start + i}" for i in range(k)], _vectors(rng, centres, k))
            store.optimize()
            print(f"  built {start + k:,} vectors, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    info = {"vectors": n, "dim": dim, "build_s": round(time.time() - t0, 1),
            "build_cpu_s": round(time.process_time() - c0, 1)}
    done.write_text(json.dumps(info))
    return info


def _search_threads() -> int:
    count = 0
    for t in os.listdir("/proc/self/task"):
        try:
            count += Path(f"/proc/self/task/{t}/comm").read_text().startswith("edge-search")
        except OSError:
            pass
    return count


def measure(store: EdgeVectorStore, queries: np.ndarray, askers: int) -> dict:
    lat: list[float] = []
    lock = threading.Lock()

    def ask(rows: np.ndarray) -> None:
        mine = []
        for q in rows:
            t = time.perf_counter()
            store.search(q, top_k=10, threshold=0.3)
            mine.append(time.perf_counter() - t)
        with lock:
            lat.extend(mine)

    parts = np.array_split(queries, askers)
    threads = [threading.Thread(target=ask, args=(p,)) for p in parts]
    w0, c0 = time.perf_counter(), time.process_time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    lat.sort()
    return {"p50_ms": 1000 * lat[len(lat) // 2], "p95_ms": 1000 * lat[int(0.95 * (len(lat) - 1))],
            "cpu_ms": 1000 * cpu / len(lat), "qps": len(lat) / wall}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vectors", type=int, default=300_000)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--dir", type=Path, default=None, help="where the shard is built and kept")
    ap.add_argument("--search-threads", default="1,2,0")
    ap.add_argument("--askers", default="1,4")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--build-only", action="store_true")
    args = ap.parse_args()
    path = args.dir or common.WORK / f"edge_pool-{args.vectors}-{args.dim}"
    info = build(path, args.vectors, args.dim)
    segments = len(os.listdir(path / "c" / "segments"))
    print(f"shard: {args.vectors:,} x {args.dim}, {segments} segments (built in {info['build_s']} s)", flush=True)
    if args.build_only:
        return
    pools = [int(x) for x in args.search_threads.split(",")]
    askers = [int(x) for x in args.askers.split(",")]
    rng = np.random.default_rng(common.SEED + 1)
    centres = np.random.default_rng(common.SEED).standard_normal((CENTRES, args.dim)).astype(np.float32)
    rows = []
    loads = []
    for r in range(args.rounds):
        for t in (pools if r % 2 == 0 else pools[::-1]):
            edge_store.SEARCH_THREADS = t or None
            edge_store.POOL_SEGMENTS = 1 << 30  # the value measured, whatever the shard's size
            with EdgeVectorStore(dim=args.dim, model_name="bench", path=path, collection="c") as store:
                for q in _vectors(rng, centres, 20):
                    store.search(q, top_k=10, threshold=0.3)
                named = _search_threads()
                for a in askers:
                    m = measure(store, _vectors(rng, centres, args.queries), a)
                    loads.append(os.getloadavg()[0])
                    rows.append({"round": r, "search_threads": t, "askers": a, "pool_threads": named, **m})
                    print(f"round {r} threads {t or 'default'} ({named} named) askers {a}: p50 {m['p50_ms']:.1f} "
                          f"p95 {m['p95_ms']:.1f} ms, CPU {m['cpu_ms']:.2f} ms/search, {m['qps']:.0f}/s, "
                          f"load {loads[-1]:.1f}", flush=True)
    summary = {}
    print(f"\nmedians over {args.rounds} rounds; ratio = value / one thread's (load {min(loads):.0f}-{max(loads):.0f})")
    for a in askers:
        base = {k: statistics.median(x[k] for x in rows if x["askers"] == a and x["search_threads"] == pools[0])
                for k in ("p50_ms", "p95_ms", "cpu_ms", "qps")}
        for t in pools:
            med = {k: statistics.median(x[k] for x in rows if x["askers"] == a and x["search_threads"] == t)
                   for k in ("p50_ms", "p95_ms", "cpu_ms", "qps")}
            ratio = {k: med[k] / base[k] for k in med}
            summary[f"{t}/{a}"] = {"median": med, "ratio": ratio}
            print(f"  askers {a} threads {t or 'default (8)'}: p50 {med['p50_ms']:.1f} ms ({ratio['p50_ms']:.2f}x), "
                  f"p95 {med['p95_ms']:.1f} ms ({ratio['p95_ms']:.2f}x), CPU {med['cpu_ms']:.2f} ms "
                  f"({ratio['cpu_ms']:.2f}x), {med['qps']:.0f}/s ({ratio['qps']:.2f}x)")
    common.RESULTS.mkdir(parents=True, exist_ok=True)
    out = common.RESULTS / "edge_search_pool.json"
    prev = json.loads(out.read_text()) if out.exists() else []
    prev.append({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "vectors": args.vectors, "dim": args.dim,
                 "segments": segments, "build": info, "queries": args.queries, "rounds": args.rounds,
                 "load": [min(loads), max(loads)], "rows": rows, "summary": summary})
    out.write_text(json.dumps(prev, indent=1))


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Where a warm ingest's time goes with the default embedder (issue 17 part 1), per phase.

    python scripts/bench/embed_phases.py [--units 10000] [--rounds 3] [--code old=/tmp/kg-old,new=.]
    python scripts/bench/embed_phases.py --embed-only [--units 3000]

Each round runs one child per code tree (alternated, so machine noise hits all of them): a
process with the store and query caches open and the default embedder loaded and warm, which times ``KnowledgeBase.ingest_units``
of the first N units of the 1M corpus (``embed_ingest.py`` builds them) into an empty store
on the embedded default (qdrant-edge), and inside it the embedder's own calls, the graph
write, the vector upsert, the vector store's open/close, its index build and the cyclic GC. The ratio the
target speaks of ("ingest >= 80 % of the embedder's own labels/s") is then embedding time /
ingest wall time of the *same* ingest, so a load change between two processes cannot bend it.
Set ``OPENBLAS_NUM_THREADS`` (before start) to compare thread counts. ``--embed-only``: the
default embedder alone on those labels (batches of 256), labels/s and cores.
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import common  # noqa: E402
from common import WORK  # noqa: E402


def child(code: Path, units: int) -> dict:
    sys.path.insert(0, str(code))
    import kgservice
    import kgservice.vectors.edge_store as es
    from kgservice.config import Settings
    from kgservice.service import KnowledgeBase

    assert Path(kgservice.__file__).resolve().is_relative_to(code), kgservice.__file__
    data = WORK / "embed-phases-data" / f"{units}-{os.getpid()}"
    shutil.rmtree(data, ignore_errors=True)
    kb = KnowledgeBase(Settings(data_dir=data, embedder="default", vector_backend="edge"))
    units_ = kb.parse_unit_files(sorted((WORK / f"embed-ingest-{units}").glob("*.units")))
    # process set-up, paid once per process and not per batch: the store, the query caches'
    # database (opened by the first ingest's cache invalidation, 0.05 s) and the model
    kb.store.counts()
    kb.caches
    kb.embedder.load()
    kb.embedder.embed(["warm up"])
    t: collections.Counter = collections.Counter()
    g = {"t": 0.0, "start": 0.0}

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            g["start"] = time.perf_counter()
        else:
            g["t"] += time.perf_counter() - g["start"]

    def wrap(obj: object, name: str, key: str) -> None:
        f = getattr(obj, name)

        def timed(*a, **k):
            t0 = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                t[key] += time.perf_counter() - t0

        setattr(obj, name, timed)

    wrap(kb.store, "ingest", "graph_write_s")
    wrap(kb.embedder, "embed", "embed_s")
    wrap(kb, "embed_nodes", "embed_nodes_s")
    wrap(es.EdgeVectorStore, "upsert", "upsert_s")
    wrap(es.EdgeVectorStore, "__init__", "vector_open_s")
    wrap(es.EdgeVectorStore, "close", "vector_close_s")  # includes its own flush (a no-op after embed_nodes')
    wrap(es.EdgeVectorStore, "optimize", "vector_optimize_s")  # the HNSW build, once a segment passes INDEX_KB
    if hasattr(es.EdgeVectorStore, "flush"):  # trees from before the store ran without a write-ahead log have none
        wrap(es.EdgeVectorStore, "flush", "vector_flush_s")
    gc.callbacks.append(on_gc)
    c0, t0 = time.process_time(), time.perf_counter()
    report = kb.ingest_units(units_)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    gc.callbacks.remove(on_gc)
    kb.close()
    shutil.rmtree(data, ignore_errors=True)
    out = {k: round(v, 4) for k, v in t.items()}
    out.update(wall_s=round(wall, 4), cpu_s=round(cpu, 4), gc_s=round(g["t"], 4), labels=len(report.new_embeddable_nodes),
               load=os.getloadavg()[0])
    out["ratio"] = round(out["embed_s"] / wall, 3)
    out["overhead_s"] = round(wall - out["embed_s"], 4)
    return out


def embed_only(units: int) -> dict:
    r = common.time_default_embedder(json.loads((WORK / f"embed-ingest-{units}" / "labels.json").read_text("utf-8")))
    labels, dt = r["labels"], r["embed_s"]
    return {"labels": labels, "labels_per_s": round(labels / dt), "cores": round(r["cpu_s"] / dt, 2),
            "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"), "load": os.getloadavg()[0]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--units", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--code", default="", help="code trees to alternate: LABEL=DIR,... (default: this tree)")
    ap.add_argument("--embed-only", action="store_true")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.embed_only:
        print(json.dumps(embed_only(a.units)))
        return 0
    if a.child:
        print(json.dumps(child(Path(a.child).resolve(), a.units)))
        return 0
    if not (WORK / f"embed-ingest-{a.units}" / "complete").exists():
        sys.exit(f"no corpus {WORK / f'embed-ingest-{a.units}'}: run embed_ingest.py --units {a.units} once first")
    codes = [(c.split("=", 1)[0], Path(c.split("=", 1)[1]).resolve()) for c in a.code.split(",") if "=" in c]
    codes = codes or [("this", HERE.parents[1])]
    for r in range(a.rounds):
        for label, code in codes:
            p = subprocess.run([sys.executable, __file__, "--units", str(a.units), "--child", str(code)],
                               capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(code)}, check=False)
            if p.returncode:
                sys.exit(p.stderr[-2000:])
            x = json.loads(p.stdout.strip().splitlines()[-1])
            print(f"round {r + 1} {label:5s} wall {x['wall_s']:.2f} s cpu {x['cpu_s']:.2f} s | embed {x['embed_s']:.2f} s "
                  f"-> {x['ratio']:.0%} | overhead {x['overhead_s']:.2f}: graph write {x['graph_write_s']:.2f}, "
                  f"upsert {x['upsert_s']:.2f}, flush {x.get('vector_flush_s', 0):.2f}, "
                  f"vector open/close {x['vector_open_s'] + x['vector_close_s']:.2f}, "
                  f"index build {x.get('vector_optimize_s', 0):.2f}, "
                  f"GC {x['gc_s']:.2f} | {x['labels']} labels, load {x['load']:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""Cost of the per-request cache version check (docs/SERVICE.md §5.6), side by side.

For each backend (embedded; Neo4j when ``KG_BENCH_NEO4J_URI`` or ``KG_TEST_NEO4J_URI`` and
``NEO4J_PASSWORD`` are set), on the test corpus with the offline rule-based LLM:

* the bare version read (``changes_version``: one small Cypher read / one SQLite read);
* a fully cached ``ask`` with the check (the shipped behaviour) vs the same caches with no
  change feed (no check at all: what serving from stale caches would cost), interleaved.

Prints ms per call (median, p95) and the ratio; appends JSON to scripts/bench/results/.

    PYTHONPATH=$PWD python scripts/bench/cache_sync.py [--n 300]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def row(name: str, xs: list[float]) -> dict:
    return {"what": name, "n": len(xs), "median_ms": round(statistics.median(xs) * 1e3, 3),
            "p95_ms": round(pct(xs, 95) * 1e3, 3)}


def bench(backend: str, n: int) -> list[dict]:
    from kgservice.config import Settings
    from kgservice.notation import parse_units
    from kgservice.pipeline import ask
    from kgservice.service import KnowledgeBase
    from tests.pipeline.conftest import CORPUS, ask_params

    over = {}
    if backend == "neo4j":
        over = dict(backend="neo4j", neo4j_uri=os.environ.get("KG_BENCH_NEO4J_URI") or os.environ["KG_TEST_NEO4J_URI"],
                    neo4j_password=os.environ["NEO4J_PASSWORD"])
    tmp = Path(tempfile.mkdtemp(prefix="kg-sync-bench-"))
    kb = KnowledgeBase(Settings(data_dir=tmp, embedder="hash:256", llm_model="kgoffline/rules", **over))
    if backend == "neo4j":
        kb.store.wipe()
    kb.ingest_units(parse_units(CORPUS, kb.lexicon, doc="corpus.units"))
    q, params = "What does smoking cause?", ask_params()
    ask(kb, q, params=params)  # warm every cache
    feed = kb.caches.changes
    version, with_check, without = [], [], []
    for _ in range(20):  # warm the driver / sqlite
        feed.version()
    for _ in range(n):
        t = time.perf_counter()
        feed.version()
        version.append(time.perf_counter() - t)
    for i in range(n):  # interleaved, so load changes hit both sides alike
        for on in ((True, False) if i % 2 else (False, True)):
            kb.caches.changes = feed if on else None
            t = time.perf_counter()
            res = ask(kb, q, params=params)
            (with_check if on else without).append(time.perf_counter() - t)
            assert res.llm["calls"] == 0
    kb.caches.changes = feed
    kb.close()
    rows = [row(f"{backend}: version read", version), row(f"{backend}: cached ask, with check", with_check),
            row(f"{backend}: cached ask, no check", without)]
    rows.append({"what": f"{backend}: check cost / cached ask (median)",
                 "ratio": round(statistics.median(with_check) / statistics.median(without), 3)})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    args = ap.parse_args()
    backends = ["embedded"] + (["neo4j"] if (os.environ.get("KG_BENCH_NEO4J_URI") or os.environ.get("KG_TEST_NEO4J_URI"))
                               and os.environ.get("NEO4J_PASSWORD") else [])
    load = os.getloadavg()
    rows = [r for b in backends for r in bench(b, args.n)]
    for r in rows:
        print(json.dumps(r, ensure_ascii=False))
    print(f"load average at start: {load}")
    out = ROOT / "scripts" / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    (out / f"cache_sync-{stamp}.json").write_text(json.dumps({"machine": {"load_avg_at_start": load}, "rows": rows},
                                                             indent=2) + "\n")


if __name__ == "__main__":
    main()

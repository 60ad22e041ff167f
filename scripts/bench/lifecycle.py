#!/usr/bin/env python3
"""The knowledge lifecycle's costs, side by side on both backends (offline rule-based LLM, so the
LLM calls are counted, not timed against a provider):

* **re-ingest with one changed line**: a text document extracting ``--units`` units (one fact a
  sentence, ten sentences a paragraph), ingested once, then again with one sentence edited:
  wall time and LLM calls of each, and their ratio (target: ≤ 10 % of the time, LLM calls only
  for the changed chunk);
* **forget of a big document**: a notation document of ``--forget-units`` units is forgotten
  (one atomic change) while ``--askers`` threads ask cached, unrelated questions in a loop: the
  forget's wall time, and the p95 of those asks before (idle) and during the forget.

Each backend runs in a child process of its own. Neo4j runs when ``KG_BENCH_NEO4J_URI`` (or
``KG_TEST_NEO4J_URI``) and ``NEO4J_PASSWORD`` are set; its database is wiped.
Results are appended to ``scripts/bench/results/lifecycle.json``.

    PYTHONPATH=$PWD python scripts/bench/lifecycle.py [--units 1000] [--forget-units 10000] [--askers 4]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from common import ROOT, emit, pct, run_child, save, table  # noqa: E402

QUESTIONS = ["What does smoking cause?", "Who created Python?"]


def neo4j_params() -> dict[str, str] | None:
    uri = os.environ.get("KG_BENCH_NEO4J_URI") or os.environ.get("KG_TEST_NEO4J_URI")
    pw = os.environ.get("NEO4J_PASSWORD")
    if not (uri and pw):
        return None
    return {"backend": "neo4j", "neo4j_uri": uri, "neo4j_password": pw,
            "neo4j_user": os.environ.get("KG_NEO4J_USER", "neo4j")}


def text_document(units: int, changed: int | None = None) -> str:
    """``units`` sentences the rule-based extractor turns into one unit each, ten a paragraph;
    ``changed``: that sentence says something else."""
    rows = []
    for i in range(units):
        obj = f"compound {i}" if i != changed else f"element {i}"
        rows.append(f"Sample {i} contains {obj}.")
    paras = [" ".join(rows[i:i + 10]) for i in range(0, len(rows), 10)]
    return "\n\n".join(paras) + "\n"


def notation_document(units: int) -> str:
    return "".join(f"{{item {i}}} [belongs to] {{group {i % 100}}}\n" for i in range(units))


def open_kb(backend: str, data: Path):
    from kgservice.config import Settings
    from kgservice.service import KnowledgeBase

    over = neo4j_params() if backend == "neo4j" else {}
    return KnowledgeBase(Settings(data_dir=data, embedder="hash:64", vector_backend="edge",
                                  llm_model="kgoffline/rules", llm_retry_wait=0.0, **(over or {})))


def child(backend: str, units: int, forget_units: int, askers: int, seconds: float) -> dict:
    from kgservice.notation import parse_units
    from kgservice.pipeline import ask
    from tests.pipeline.conftest import CORPUS, ask_params

    data = Path(tempfile.mkdtemp(prefix=f"kg-life-bench-{backend}-"))
    kb = open_kb(backend, data)
    if backend == "neo4j":
        from tests.neo4j_helpers import wipe_all

        wipe_all(kb.store)
    out: dict = {"backend": backend}
    # -- re-ingest with one changed line
    v1, v2 = text_document(units), text_document(units, changed=units // 2)
    kb.ingest_document("warm.md", "Warmup contains nothing.\n")  # imports, first LLM call, first write
    calls = kb.llm.usage.calls
    t = time.perf_counter()
    first = kb.ingest_document("notes/big.md", v1)
    out["first_s"] = time.perf_counter() - t
    out["first_calls"] = kb.llm.usage.calls - calls
    out["first_units"] = first.added
    calls = kb.llm.usage.calls
    t = time.perf_counter()
    second = kb.ingest_document("notes/big.md", v2)
    out["again_s"] = time.perf_counter() - t
    out["again_calls"] = kb.llm.usage.calls - calls
    out["again_added"], out["again_retracted"] = second.added, second.retracted
    out["again_chunks"] = [second.chunks_extracted, second.chunks_reused]
    # -- forget of a big document while cached asks run
    kb.ingest_units(parse_units(CORPUS, kb.lexicon, doc="corpus.units"))
    t = time.perf_counter()
    big = kb.ingest_document("big.units", notation_document(forget_units))
    out["big_ingest_s"] = time.perf_counter() - t
    out["big_units"] = big.added
    params = ask_params()
    for q in QUESTIONS:
        ask(kb, q, params=params)
        assert ask(kb, q, params=params).llm["calls"] == 0

    def run_askers(stop: threading.Event, lat: list[float], misses: list[int]) -> list[threading.Thread]:
        def loop(k: int) -> None:
            q = QUESTIONS[k % len(QUESTIONS)]
            while not stop.is_set():
                t0 = time.perf_counter()
                res = ask(kb, q, params=params)
                lat.append(time.perf_counter() - t0)
                if res.llm["calls"]:
                    misses.append(1)

        ts = [threading.Thread(target=loop, args=(k,), daemon=True) for k in range(askers)]
        for th in ts:
            th.start()
        return ts

    idle: list[float] = []
    stop = threading.Event()
    ts = run_askers(stop, idle, [])
    time.sleep(seconds)
    stop.set()
    for th in ts:
        th.join()
    during: list[float] = []
    misses: list[int] = []
    stop = threading.Event()
    ts = run_askers(stop, during, misses)
    t = time.perf_counter()
    gone = kb.forget(["big.units"])
    out["forget_s"] = time.perf_counter() - t
    stop.set()
    for th in ts:
        th.join()
    out["forget_retracted"], out["forget_orphans"] = gone.retracted, gone.orphaned_nodes
    out["idle_n"], out["idle_p95_ms"] = len(idle), pct(idle, 95) * 1e3
    out["during_n"], out["during_p95_ms"] = len(during), pct(during, 95) * 1e3
    out["during_misses"] = len(misses)
    kb.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--units", type=int, default=1000)
    ap.add_argument("--forget-units", type=int, default=10_000)
    ap.add_argument("--askers", type=int, default=4)
    ap.add_argument("--idle-seconds", type=float, default=3.0)
    ap.add_argument("--backends", default="embedded,neo4j")
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--backend")
    args = ap.parse_args()
    if args.child:
        emit(child(args.backend, args.units, args.forget_units, args.askers, args.idle_seconds))
        return
    backends = [b for b in args.backends.split(",") if b and (b != "neo4j" or neo4j_params())]
    load = os.getloadavg()
    rows = []
    for b in backends:
        r = run_child(Path(__file__), ["--backend", b, "--units", str(args.units), "--forget-units",
                                       str(args.forget_units), "--askers", str(args.askers),
                                       "--idle-seconds", str(args.idle_seconds)],
                      env={"PYTHONPATH": str(ROOT)})
        r["again_time_ratio"] = r["again_s"] / r["first_s"]
        r["during_vs_idle_p95"] = r["during_p95_ms"] / r["idle_p95_ms"] if r["idle_p95_ms"] else None
        rows.append(r)
    print(table(["backend", "first ingest s / calls", "re-ingest s / calls", "time ratio", "chunks extracted/reused"],
                [[r["backend"], f"{r['first_s']:.2f} / {r['first_calls']}", f"{r['again_s']:.2f} / {r['again_calls']}",
                  f"{r['again_time_ratio']:.3f}", f"{r['again_chunks'][0]} / {r['again_chunks'][1]}"] for r in rows],
                f"re-ingest of a {args.units}-unit document with one changed line"))
    print(table(["backend", "forget s", "retracted", "orphans", "cached ask p95 idle ms", "p95 during forget ms",
                 "ratio", "asks during"],
                [[r["backend"], f"{r['forget_s']:.2f}", r["forget_retracted"], r["forget_orphans"],
                  f"{r['idle_p95_ms']:.1f}", f"{r['during_p95_ms']:.1f}",
                  f"{r['during_vs_idle_p95']:.2f}" if r["during_vs_idle_p95"] else "-", r["during_n"]] for r in rows],
                f"forget of a {args.forget_units}-unit document, {args.askers} threads asking cached questions"))
    print(f"load average at start: {load}")
    save("lifecycle", rows, {"args": vars(args)})


if __name__ == "__main__":
    main()

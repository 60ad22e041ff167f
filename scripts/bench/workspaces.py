#!/usr/bin/env python
"""Workspaces: the same knowledge in 1 workspace or split over 20 (docs/workspaces.md), side by
side in one run. Two figures, each a ratio of 20 workspaces to 1 (target <= 1.2x):

* ingest units/s: every group's units ingested (one ``ingest_notation`` call per group), into
  one workspace, or each group into its own. ``--made``: the workspaces already made, open and
  written once, as on a server whose teams hold knowledge (both sides first make the same 20
  untimed one-unit ingests, routed the same way, so the timed calls find every store they write
  in the same state); else making each workspace and its first write are part of the ingest;
* ask p95: the no-model ``KnowledgeBase.ask`` over the same questions, each asked of the
  knowledge base that holds its group (all 20 kept open, as a process serving 20 workspaces).
  Beside the wall time, each ask's process CPU time (every thread's, qdrant-edge's search pool
  included), which the machine's load sways less.

    python scripts/bench/workspaces.py [--groups 20] [--units 300] [--questions 100] [--rounds 2] [--made]
                                       [--neo4j] [--search-threads 1,0]

``--search-threads``: the threads of each qdrant-edge shard's search pool
(``kgservice.vectors.edge_store.SEARCH_THREADS``, the shipped value by default; 0 is
qdrant-edge's own default, 8 a shard); several values, comma-separated, are each measured 1 vs
20 in every round, in alternating order.

The data is synthetic: group g has ``--units`` units ``{g-e<i>} [causes] {g-e<j>}`` over 100
entities of its own (groups share nothing, so splitting them changes no answer). The embedder is
``hash:64`` and the vectors qdrant-edge in the data directory: this measures the store and its
partitioning, not a model. ``--neo4j``: the store and the vectors are the Neo4j at
``KG_NEO4J_URI`` (``NEO4J_PASSWORD``), one database for every workspace (the ``ws`` property),
emptied before each run. Rounds alternate the order (1 then 20, 20 then 1); the ratios shown
are the median over rounds. Results go to ``results/workspaces.json``.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402,F401  (puts the repository first on sys.path)

from kgservice.config import Settings  # noqa: E402
from kgservice.service import KnowledgeBase  # noqa: E402
from kgservice.vectors import edge_store  # noqa: E402


def group_text(g: int, units: int, rng: random.Random) -> str:
    lines = []
    for i in range(units):
        a, b = rng.sample(range(100), 2)
        lines.append(f"#g{g}-u{i} {{g{g}-e{a}}} [causes] {{g{g}-e{b}}}")
    return "\n".join(lines) + "\n"


def warm_text(g: int) -> str:
    """Group g's untimed first document (``--made``): one unit over entities no question names."""
    return f"#g{g}-w0 {{g{g}-w0}} [causes] {{g{g}-w1}}\n"


NEO4J: dict[str, str] = {}  # backend, URI and password when --neo4j


def settings(root: Path, ws: str) -> Settings:
    if NEO4J:
        return Settings(data_dir=root, embedder="hash:64", vector_backend="neo4j", workspace=ws, backend="neo4j",
                        neo4j_uri=NEO4J["uri"], neo4j_password=NEO4J["password"])
    return Settings(data_dir=root, embedder="hash:64", vector_backend="edge", workspace=ws)


def empty_neo4j() -> None:
    """Every node of the database deleted (a benchmark's own throwaway server)."""
    import neo4j

    with neo4j.GraphDatabase.driver(NEO4J["uri"], auth=("neo4j", NEO4J["password"])) as d, d.session() as s:
        s.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()


def run(split: bool, texts: list[str], questions: list[tuple[int, str]], root: Path,
        made: bool) -> dict[str, float]:
    groups = len(texts)
    kbs = [KnowledgeBase(settings(root, f"g{g}" if split else "default")) for g in (range(groups) if split else [0])]
    try:
        if made:  # the workspaces exist, are open and hold knowledge (a serving process's steady state): not timed
            for kb in kbs:
                kb.init()
                kb.stats()
                kb.vectors  # noqa: B018  (opened now, as after a server's warm-up)
            # one small document per group, routed like the timed ones: both sides make the same
            # 20 ingest calls before the clock starts, so each store the timed ingest writes has
            # been written before (its change log, caches file and vector segment exist)
            for g in range(groups):
                kbs[g if split else 0].ingest_notation(warm_text(g), doc=f"warm-{g}.units")
        start, cpu = time.perf_counter(), time.process_time()
        for g, text in enumerate(texts):
            kbs[g if split else 0].ingest_notation(text, doc=f"group-{g}.units")
        ingest_s = time.perf_counter() - start
        ingest_cpu_s = time.process_time() - cpu  # this process's CPU: less swayed by the load than the wall
        units = sum(t.count("\n") for t in texts)
        # one uncounted ask each, about a group it holds: opening the vectors and building the
        # indexes an answer reads is not an ask's latency. (A question about g0 asked of g5's
        # knowledge base is not in its graph and built less, so each split workspace's first
        # counted ask paid the rest: 20 of 100 asks against 1, all in the p95.)
        for i, kb in enumerate(kbs):
            kb.ask(f"What does g{i}-e0 cause?")
        times, cpus = [], []
        for g, q in questions:
            t0, c0 = time.perf_counter(), time.process_time()
            kbs[g if split else 0].ask(q)
            times.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        return {"ingest_units_per_s": units / ingest_s, "ingest_cpu_s": ingest_cpu_s, "ask_p95_s": common.pct(times, 95),
                "ask_p50_s": common.pct(times, 50), "ask_cpu_p95_s": common.pct(cpus, 95),
                "ask_cpu_mean_s": statistics.fmean(cpus)}
    finally:
        for kb in kbs:
            kb.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--groups", type=int, default=20)
    ap.add_argument("--units", type=int, default=300, help="units per group")
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--made", action="store_true", help="make, open and write once to every workspace before the "
                                                       "timed ingest (else the ingest's time includes creating them)")
    ap.add_argument("--neo4j", action="store_true", help="on the Neo4j at KG_NEO4J_URI (NEO4J_PASSWORD); its "
                                                         "database is emptied before each run")
    ap.add_argument("--search-threads", default=str(edge_store.SEARCH_THREADS),
                    help="threads of each qdrant-edge shard's search pool, comma-separated to compare (0: "
                         "qdrant-edge's default)")
    args = ap.parse_args()
    if args.neo4j:
        NEO4J.update(uri=os.environ["KG_NEO4J_URI"], password=os.environ["NEO4J_PASSWORD"])
    pools = [int(x) for x in args.search_threads.split(",")]
    rng = random.Random(common.SEED)
    texts = [group_text(g, args.units, rng) for g in range(args.groups)]
    questions = [(g, f"What does g{g}-e{rng.randrange(100)} cause?")
                 for g in (rng.randrange(args.groups) for _ in range(args.questions))]
    ratios: dict[int, dict[str, list[float]]] = {t: {"ingest": [], "ingest_cpu": [], "ask_p95": [], "ask_cpu_p95": []}
                                                 for t in pools}
    rows = []
    for r in range(args.rounds):
        got: dict[tuple[int, bool], dict[str, float]] = {}
        runs = [(t, split) for t in pools for split in (False, True)]
        for t, split in (runs if r % 2 == 0 else runs[::-1]):
            edge_store.SEARCH_THREADS = t or None
            root = Path(tempfile.mkdtemp(prefix="kg-ws-bench-"))
            if NEO4J:
                empty_neo4j()
            try:
                got[t, split] = run(split, texts, questions, root, args.made)
            finally:
                shutil.rmtree(root, ignore_errors=True)
        load = os.getloadavg()[0]
        for t in pools:
            one, many = got[t, False], got[t, True]
            ratios[t]["ingest"].append(one["ingest_units_per_s"] / many["ingest_units_per_s"])
            ratios[t]["ingest_cpu"].append(many["ingest_cpu_s"] / one["ingest_cpu_s"])
            ratios[t]["ask_p95"].append(many["ask_p95_s"] / one["ask_p95_s"])
            ratios[t]["ask_cpu_p95"].append(many["ask_cpu_p95_s"] / one["ask_cpu_p95_s"])
            rows.append({"round": r, "search_threads": t, "one": one, "split": many, "load": load})
            print(f"round {r} (load {load:.1f}), search threads {t or 'default'}: 1 workspace "
                  f"{one['ingest_units_per_s']:.0f} units/s, ingest CPU {one['ingest_cpu_s']:.2f} s, ask p95 "
                  f"{one['ask_p95_s'] * 1000:.1f} ms (CPU {one['ask_cpu_p95_s'] * 1000:.2f}) | {args.groups} workspaces "
                  f"{many['ingest_units_per_s']:.0f} units/s, ingest CPU {many['ingest_cpu_s']:.2f} s, ask p95 "
                  f"{many['ask_p95_s'] * 1000:.1f} ms (CPU {many['ask_cpu_p95_s'] * 1000:.2f})", flush=True)
    summary = {}
    for t in pools:
        m = {k: statistics.median(v) for k, v in ratios[t].items()}
        higher = sum(x > 1 for x in ratios[t]["ask_p95"])
        summary[str(t)] = {**m, "ask_p95_rounds": ratios[t]["ask_p95"], "rounds_20_higher": higher}
        print(f"search threads {t or 'default'}: {args.groups} workspaces vs 1 ({args.groups * args.units} units in "
              f"all): ingest {m['ingest']:.2f}x slower (its CPU {m['ingest_cpu']:.2f}x), ask p95 {m['ask_p95']:.2f}x "
              f"(its CPU {m['ask_cpu_p95']:.2f}x; higher in {higher} of {args.rounds} rounds) (target <= 1.2x each; "
              f"medians of {args.rounds} rounds)")
    first = summary[str(pools[0])]
    common.save("workspaces-neo4j" if NEO4J else "workspaces", rows, {
        "made": args.made, "neo4j": bool(NEO4J), "groups": args.groups, "units_per_group": args.units,
        "questions": args.questions, "search_threads": pools, "ingest_slowdown": first["ingest"],
        "ingest_cpu_ratio": first["ingest_cpu"], "ask_p95_ratio": first["ask_p95"], "by_search_threads": summary})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Run the retrieval eval: ``python scripts/eval/run.py [--musique [--limit N] [--slice]] [--data FILE]``.

Prints Recall@2 / @5 per method side by side (overall and per hop count), the entry step's
coverage of gold passages, and the per-question latency of the project's own retrieval.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripts.eval import methods as M  # noqa: E402
from scripts.eval.dataset import MUSIQUE_DIR, load, load_musique  # noqa: E402
from scripts.eval.harness import Context, build, evaluate, format_table, ordered  # noqa: E402

from kgservice.entry import EntryParams  # noqa: E402


def seeds_for(ctx: Context, names_only: bool = False) -> dict[str, dict[str, float]]:
    p = EntryParams(use_vectors=not names_only)
    return {q.id: ctx.finder.find(q.question, ctx.qvecs[q.id], p).seeds for q in ctx.ds.questions}


def coverage(ctx: Context, seeds: dict[str, dict[str, float]]) -> float:
    """% of gold passages that mention at least one entry node of their question."""
    hit = tot = 0
    for q in ctx.ds.questions:
        for g in q.gold:
            tot += 1
            hit += bool(ctx.passage_nodes.get(g, set()) & set(seeds[q.id]))
    return 100.0 * hit / max(1, tot)




def run(ctx: Context, methods: dict[str, object], seeds: dict[str, dict[str, float]]) -> tuple[dict, dict]:
    runs: dict[str, dict[str, list[str]]] = {}
    lat: dict[str, list[float]] = {}
    for name, fn in methods.items():
        runs[name], lat[name] = {}, []
        for q in ctx.ds.questions:
            t0 = time.perf_counter()
            scores = fn(ctx, q.id, seeds[q.id])  # type: ignore[operator]
            lat[name].append(1000 * (time.perf_counter() - t0))
            runs[name][q.id] = ordered(scores)[:10]
    return runs, lat


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, help="a dataset in the generic shape (scripts/eval/dataset.py)")
    ap.add_argument("--musique", type=Path, nargs="?", const=MUSIQUE_DIR, help="the HippoRAG MuSiQue files")
    ap.add_argument("--limit", type=int, help="first N questions only")
    ap.add_argument("--slice", action="store_true", help="only the passages the chosen questions list")
    ap.add_argument("--embedder", default="default")
    ap.add_argument("--json", type=Path, help="write the table as JSON here")
    ap.add_argument("--grid", action="store_true", help="also print the spreading-parameter grid")
    ap.add_argument("--only", help="comma-separated substrings of method names to run")
    a = ap.parse_args(argv)
    ds = load(a.data) if a.data else load_musique(a.musique or MUSIQUE_DIR, a.limit, a.slice)
    ctx = build(ds, a.embedder)
    seeds = seeds_for(ctx)
    names = seeds_for(ctx, names_only=True)
    print(f"{ds.name}: {len(ds.questions)} questions, {len(ds.passages)} passages, {ctx.build_info}")
    print(f"entry coverage of gold passages: names {coverage(ctx, names):.1f} %, names + vectors {coverage(ctx, seeds):.1f} %")
    methods: dict[str, object] = {
        "dense passages": M.dense,
        "HippoRAG-style PPR (networkx)": M.ppr,
        "directed expansion": M.directed,
        "spreading (library defaults)": M.spread,
        "spreading, damped 1.0, no backflow": lambda c, q, s: M.spread(c, q, s, degree_damping=1.0, seed_backflow=False),
        "dense + spreading fused": lambda c, q, s: M.fused(c, q, s, 0.5, degree_damping=1.0, seed_backflow=False),
    }
    if a.grid:
        for d in (0.0, 0.5, 0.75, 1.0):
            for bf in (True, False):
                methods[f"grid spread d={d} backflow={bf}"] = (
                    lambda c, q, s, d=d, bf=bf: M.spread(c, q, s, degree_damping=d, seed_backflow=bf))
    if a.only:
        methods = {k: v for k, v in methods.items() if any(o in k for o in a.only.split(","))}
    runs, lat = run(ctx, methods, seeds)
    table = evaluate(ctx, runs)
    print(format_table(table, lat))
    if a.json:
        a.json.write_text(json.dumps({"table": table, "build": ctx.build_info}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

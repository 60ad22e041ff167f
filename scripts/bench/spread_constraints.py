#!/usr/bin/env python
"""Spreading activation as DESIGN §4.3 writes it vs two classic constraints, side by side:
what each buys in latency and costs in ranking.

    python scripts/bench/spread_constraints.py --size 1m [--backend embedded|neo4j] [--seeds 100]
        [--fanout 200,1000] [--fire 200,1000]

At 1M units a popular seed activates ~60k nodes with K=3, ε=0.05 (energy × τ, nothing divides
it by fan-out), which no store answers in 100 ms. The literature bounds this in two ways
(both optional in ``SpreadParams``, both off by default):

* ``max_fanout`` F — the fan-out constraint (Crestani 1997): a node with more than F relation
  edges receives energy but does not pass it on (the seeds' own hop is never limited). Hubs are where the
  activation explodes, and energy through a hub says little about any one neighbour.
* ``max_fire`` M — a beam: from each hop only the M most energetic nodes spread on.

For every variant: p50/p95 latency of ``spread_activation(store, [seed], K=3)`` on the same
seeds as expand.py (``mention`` and ``uniform``), the median number of activated nodes, and
how much of the exact ranking survives: overlap of the top-20 and top-100 with the exact
run's (1.0 = same set), and the exact top-20 nodes that still appear anywhere in the result.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from expand import WARMUP, open_store, seed_sets  # noqa: E402


def variants(fanouts: list[int], fires: list[int]) -> list[tuple[str, dict]]:
    out: list[tuple[str, dict]] = [("exact (DESIGN)", {})]
    out += [(f"fan-out <= {f}", {"max_fanout": f}) for f in fanouts]
    out += [(f"beam {m}", {"max_fire": m}) for m in fires]
    out += [(f"fan-out <= {f} + beam {m}", {"max_fanout": f, "max_fire": m}) for f in fanouts[:1] for m in fires[-1:]]
    return out


def child(a: argparse.Namespace) -> dict:
    from kgservice.expansion import SpreadParams, spread_activation

    seeds = seed_sets(a.size, a.seeds)
    store = open_store(a.backend, a.size)
    rows = []
    exact: dict[tuple[str, str], list[str]] = {}
    for label, extra in variants(a.fanout, a.fire):
        params = SpreadParams(max_hops=3, epsilon=0.05, **extra)
        for name, ss in seeds.items():
            for s in ss[:WARMUP]:
                spread_activation(store, [s], params)
            lat, sizes, o20, o100, kept = [], [], [], [], []
            for s in ss:
                t0 = time.perf_counter()
                res = spread_activation(store, [s], params)
                lat.append(time.perf_counter() - t0)
                ranked = [k for k, _ in res.ranked(100)]
                if not extra:
                    exact[(name, s)] = ranked
                ref = exact[(name, s)]
                sizes.append(len(res.energy))
                if len(ref) >= 20:
                    o20.append(len(set(ranked[:20]) & set(ref[:20])) / 20)
                    kept.append(sum(1 for k in ref[:20] if k in res.energy) / 20)
                if len(ref) >= 100:
                    o100.append(len(set(ranked) & set(ref)) / 100)
            rows.append({"variant": label, **extra, "seeds": name, **common.summary_ms(lat),
                         "nodes_median": statistics.median(sizes),
                         "top20_overlap": statistics.fmean(o20) if o20 else None,
                         "top100_overlap": statistics.fmean(o100) if o100 else None,
                         "exact_top20_present": statistics.fmean(kept) if kept else None,
                         "queries_ranked": len(o20)})
    store.close()
    return {"backend": a.backend, "size": a.size, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="1m")
    ap.add_argument("--backend", default="embedded", choices=["embedded", "neo4j"])
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--fanout", default="200,1000", help="comma list of max_fanout values")
    ap.add_argument("--fire", default="200,1000", help="comma list of max_fire values")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    a.fanout = [int(x) for x in str(a.fanout).split(",") if x]
    a.fire = [int(x) for x in str(a.fire).split(",") if x]
    if a.child:
        a.size = int(a.size)
        common.emit(child(a))
        return 0
    n = common.parse_sizes(a.size)[0]
    print(f"... {a.backend} {common.size_label(n)}: {len(variants(a.fanout, a.fire))} variants x 2 seed sets",
          file=sys.stderr, flush=True)
    r = common.run_child(Path(__file__), ["--size", str(n), "--backend", a.backend, "--seeds", str(a.seeds),
                                          "--fanout", ",".join(map(str, a.fanout)),
                                          "--fire", ",".join(map(str, a.fire))], timeout=7200)
    headers = ["variant", "seeds", "p50 ms", "p95 ms", "nodes (med)", "top-20 overlap", "top-100 overlap",
               "exact top-20 present"]
    body = [[x["variant"], x["seeds"], x["p50"], x["p95"], x["nodes_median"], x["top20_overlap"],
             x["top100_overlap"], x["exact_top20_present"]] for x in r["rows"]]
    print(common.table(headers, body, title=f"Spreading activation constraints, {a.backend} {common.size_label(n)}, "
                                            "K=3, eps=0.05"))
    exact = {x["seeds"]: x for x in r["rows"] if x["variant"].startswith("exact")}
    print()
    for x in r["rows"]:
        if not x["variant"].startswith("exact"):
            e = exact[x["seeds"]]
            print(f"ratio {x['variant']} ({x['seeds']}): exact / constrained p95 = {e['p95'] / x['p95']:.1f}x")
    path = common.save("spread_constraints", [r])
    print(f"\nresults appended to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""The name holders' patch alone, per ingest of ``--batch`` units, two code trees side by side
(``--before``, default /work/main, and this tree), each in its own child process: the CPU of
``Holders.patched`` (``time.thread_time``), the young collections it runs into (count and CPU)
and, apart, the CPU of the step that finds which labels use every word of a changed label (the
intersection of the words' node sets, read through each tree's own ``bytoken``), over the labels
scripts/bench/index_patches.py's store makes (``--units`` units, 0.3 nodes a unit; a third of
each batch's units on new nodes). No store, no model: only the holders.

    PYTHONPATH=$PWD python scripts/bench/holders_patch.py --units 1000000 --rounds 10
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "bench"))


def child(a: argparse.Namespace) -> None:
    from index_patches import Pauses, Store

    from kgservice.entry.match import LabelIndex, tokens
    from kgservice.expansion.holders import Holders

    store = Store(a.units, a.seed)
    gc.collect()
    gc.freeze()  # the store out of the collector's sight (a server on Neo4j holds no store)
    labels = {n.id: n.label for n in store.nodes.values()}
    index = LabelIndex.build(labels.items())
    held = Holders.build(index, labels)
    collecting = Pauses()
    pauses = collecting.pauses

    def sets_of(table, toks):  # noqa: ANN001, ANN202
        return [table.get(t) for t in toks]

    rounds = []
    for _ in range(a.rounds):
        n0 = len(store.clock.feed.log)
        store.ingest(a.batch)
        touched = store.clock.feed.log[n0].touched
        after = dict(labels)
        after.update((n, store.nodes[n].label) for n in touched)
        changed = [n for n in touched if labels.get(n) != after.get(n)]
        index2 = index.patched(labels, {n: after[n] for n in touched})
        pauses.clear()
        gc.callbacks.append(collecting)
        c = time.thread_time()
        held2 = held.patched(index2, labels, after, touched)
        cpu = time.thread_time() - c
        gc.callbacks.remove(collecting)
        # the intersection step alone, as each tree does it, over the new table
        toks = [set(tokens(after[n])) for n in changed]
        c = time.thread_time()
        if hasattr(held2.bytoken.get(next(iter(toks[0]))), "flat"):
            from kgservice.caches.layered import common
            hits = sum(len(common(sets_of(held2.bytoken, t))) for t in toks)
        else:
            hits = 0
            for t in toks:
                sets = sorted((held2.bytoken.get(w, frozenset()) for w in t), key=len)
                hits += len(sets[0].intersection(*sets[1:]))
        inter = time.thread_time() - c
        rounds.append({"cpu_s": cpu, "gc_n": len(pauses), "gc_s": sum(p for _, p in pauses),
                       "gc_max_s": max((p for _, p in pauses), default=0.0), "inter_s": inter,
                       "labels": len(changed), "hits": hits})
        labels, index, held = after, index2, held2
    print(json.dumps({"rounds": rounds, "held": len(held.held), "words": len(held.bytoken)}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--units", type=int, default=200_000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--before", default="/work/main", help="a checkout of the code to compare with")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a)
        return 0
    args = ["--units", str(a.units), "--batch", str(a.batch), "--rounds", str(a.rounds), "--seed", str(a.seed)]
    from index_patches import side_by_side

    res = side_by_side(Path(__file__), args, a.before)
    if res is None:
        return 1
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print(f"units {a.units}, batch {a.batch}, rounds {a.rounds}, load {load}; median (max) per patch")
    print(f"{'tree':7} {'patch cpu ms':>16} {'young gcs':>10} {'gc cpu ms':>14} {'intersections ms':>17} labels hits")

    def cell(rs: list[dict], key: str, scale: float = 1e3) -> str:
        xs = [x[key] * scale for x in rs]
        return f"{statistics.median(xs):.1f} ({max(xs):.1f})"

    for name, r in res.items():
        rs = r["rounds"]
        print(f"{name:7} {cell(rs, 'cpu_s'):>16} {cell(rs, 'gc_n', 1):>10} {cell(rs, 'gc_s'):>14} {cell(rs, 'inter_s'):>17} "
              f"{statistics.median(x['labels'] for x in rs):.0f} {statistics.median(x['hits'] for x in rs):.0f}")
    b, t = res["before"]["rounds"], res["this"]["rounds"]

    def ratio(key: str) -> float:
        return statistics.median(x[key] for x in b) / max(statistics.median(x[key] for x in t), 1e-9)

    print(f"before/this (medians): patch cpu {ratio('cpu_s'):.1f}x, gc cpu {ratio('gc_s'):.1f}x, intersections {ratio('inter_s'):.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

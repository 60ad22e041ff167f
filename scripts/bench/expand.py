#!/usr/bin/env python
"""Expansion latency p50/p95: directed traversal and spreading activation (K=3), embedded vs
Neo4j, and spreading activation vs a plain networkx personalized PageRank on the same seeds.

    python scripts/bench/expand.py --sizes 10k,100k [--backends embedded,neo4j] [--seeds 200]

Run ingest.py for the same sizes first: this reads the embedded store it left under
``$KG_BENCH_DIR/stores/embedded-<size>`` and the benchmark Neo4j (which must hold that size:
the script checks the unit count and, with ``--ingest``, (re)loads it).

Seeds: ``--seeds`` query nodes drawn with a fixed seed in two ways, both reported:
``mention`` — the subject of a uniformly drawn unit (popular concepts are asked about more
often: the headline number), and ``uniform`` — uniform over entry nodes. The same seeds are
used on every backend and by the PageRank baseline. Each query runs once after a warm-up
of 20 queries; latency is the wall time of ``expand_directed(store, [seed])`` /
``spread_activation(store, [seed], K=3, eps=0.05, default tau)`` in one warm process.

Baseline: what a user would pick instead of our spreading activation — load the same
relation graph into networkx (undirected, live relation edges between non-literal nodes,
built once and not timed) and call ``nx.pagerank(G, personalization={seed: 1})`` per query
(alpha 0.85, networkx's defaults, scipy backend). Also reported: top-20 overlap between the
two rankings, so "faster" is not "computes something trivial".
"""

from __future__ import annotations

import argparse
import gc
import random
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import WORK  # noqa: E402

WARMUP = 20
_SUBJ = re.compile(r"^(?:#\S+\s+)?\{((?:\\.|[^}\\])*)\}")


def seed_sets(n: int, count: int) -> dict[str, list[str]]:
    """Backend-independent seeds from the corpus text: node ids as ingest computes them."""
    import corpus
    from kgservice.ids import node_id

    cdir = corpus.ensure(n, common.SEED, WORK)
    subjects: list[str] = []
    labels: set[str] = set()
    brace = re.compile(r"\{((?:\\.|[^}\\])*)\}")
    for f in sorted(cdir.glob("part-*.units")):
        for line in f.read_text("utf-8").splitlines():
            if not line or line[0] in " \t%":
                if line.strip().startswith("()") and "{" in line:
                    labels.update(brace.findall(line))
                continue
            m = _SUBJ.match(line)
            if m:
                subjects.append(m.group(1))
            labels.update(brace.findall(line))
    unesc = lambda s: re.sub(r"\\(.)", r"\1", s)  # noqa: E731
    rng = random.Random(1234)
    mention = [node_id(unesc(rng.choice(subjects))) for _ in range(count)]
    entries = sorted({node_id(unesc(x)) for x in labels})
    uniform = [rng.choice(entries) for _ in range(count)]
    return {"mention": mention, "uniform": uniform}


def open_store(backend: str, n: int):
    if backend == "embedded":
        from ingest import store_dir

        from kgservice.stores.embedded import EmbeddedStore

        d = store_dir(n)
        if not d.exists():
            raise SystemExit(f"no embedded store for {n} units at {d}: run ingest.py --sizes {common.size_label(n)} first")
        return EmbeddedStore(d)
    from kgservice.stores.neo4j import Neo4jStore

    env = common.neo4j_env()
    return Neo4jStore.connect(env["uri"], user=env["user"], password=env["password"])


def time_queries(fn, seeds: list[str]) -> tuple[list[float], list[int]]:
    for s in seeds[:WARMUP]:
        fn(s)
    lat, sizes = [], []
    for s in seeds:
        t0 = time.perf_counter()
        out = fn(s)
        lat.append(time.perf_counter() - t0)
        sizes.append(out)
    return lat, sizes


def child(a: argparse.Namespace) -> dict:
    from kgservice.expansion import SpreadParams, expand_directed, spread_activation

    n = a.size
    seeds = seed_sets(n, a.seeds)
    t0 = time.perf_counter()
    common.reset_peak()
    store = open_store(a.backend, n)
    open_s = time.perf_counter() - t0
    rss_open = common.rss_mb()
    units = store.counts()["units"]
    if units != n:
        raise SystemExit(f"{a.backend} holds {units} units, expected {n}: run ingest.py --sizes {common.size_label(n)} "
                         f"--backends {a.backend} first")
    params = SpreadParams(max_hops=3, epsilon=0.05)
    out: dict = {"backend": a.backend, "size": n, "open_s": open_s, "rss_after_open_mb": rss_open}
    for name, ss in seeds.items():
        lat, sz = time_queries(lambda s: len(expand_directed(store, [s]).units), ss)
        out[f"directed_{name}"] = {**common.summary_ms(lat), "units_median": statistics.median(sz)}
        lat, sz = time_queries(lambda s: len(spread_activation(store, [s], params).energy), ss)
        out[f"spread_{name}"] = {**common.summary_ms(lat), "nodes_median": statistics.median(sz)}
    out["peak_rss_mb"] = common.peak_rss_mb()
    store.close()
    return out


def ppr_child(a: argparse.Namespace) -> dict:
    """networkx personalized PageRank on the embedded store's relation graph, same seeds."""
    import networkx as nx

    from kgservice.expansion import SpreadParams, spread_activation
    from kgservice.ids import is_literal_id

    n = a.size
    seeds = seed_sets(n, a.seeds)
    store = open_store("embedded", n)
    s = store.s
    t0 = time.perf_counter()
    g = nx.Graph()
    g.add_nodes_from(nid for nid, k in s.kinds.items() if k != "literal")
    for kind in ("synonym", "belongs_to", "of", "related_to", "content"):
        for edges in s.out[kind].values():
            for src, dst, uid in edges:
                if not s.superseded_by.get(uid) and not is_literal_id(src) and not is_literal_id(dst):
                    g.add_edge(src, dst)
    build_s = time.perf_counter() - t0
    gc.collect()
    params = SpreadParams(max_hops=3, epsilon=0.05)
    out: dict = {"size": n, "graph_nodes": g.number_of_nodes(), "graph_edges": g.number_of_edges(),
                 "build_s": build_s}
    for name, ss in seeds.items():
        ss = ss[: a.ppr_seeds]
        ours, theirs, overlap = [], [], []
        for i, seed in enumerate(ss):
            t1 = time.perf_counter()
            pr = nx.pagerank(g, alpha=0.85, personalization={seed: 1.0})
            t2 = time.perf_counter()
            sp = spread_activation(store, [seed], params)
            t3 = time.perf_counter()
            if i >= 2:  # first calls warm scipy / caches
                theirs.append(t2 - t1)
                ours.append(t3 - t2)
            top_pr = {k for k, _ in sorted(pr.items(), key=lambda kv: -kv[1])[:20]}
            top_sp = {k for k, _ in sp.ranked(20)}
            overlap.append(len(top_pr & top_sp) / 20)
        out[f"ppr_{name}"] = common.summary_ms(theirs)
        out[f"spread_{name}"] = common.summary_ms(ours)
        out[f"top20_overlap_{name}"] = statistics.fmean(overlap)
    store.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10k,100k")
    ap.add_argument("--backends", default="embedded,neo4j")
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--ppr-seeds", type=int, default=32, help="queries for the PageRank baseline (it is slow)")
    ap.add_argument("--no-ppr", action="store_true")
    ap.add_argument("--ingest", action="store_true", help="(re)load Neo4j with each size first (ingest.py child)")
    ap.add_argument("--child", choices=["expand", "ppr"], help=argparse.SUPPRESS)
    ap.add_argument("--backend", help=argparse.SUPPRESS)
    ap.add_argument("--size", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child == "expand":
        common.emit(child(a))
        return 0
    if a.child == "ppr":
        common.emit(ppr_child(a))
        return 0
    rows, ppr_rows, ingest_rows = [], [], []
    for n in common.parse_sizes(a.sizes):
        for backend in [b.strip() for b in a.backends.split(",") if b.strip()]:
            if backend == "neo4j" and a.ingest:
                print(f"... loading {common.size_label(n)} into Neo4j", file=sys.stderr, flush=True)
                ingest_rows.append(common.run_child(
                    Path(__file__).with_name("ingest.py"),
                    ["--backend", "neo4j", "--size", str(n), "--embed", "none", "--vectors", "qdrant"], timeout=7200))
                print(f"    {ingest_rows[-1]['units_per_s']:,.0f} units/s", file=sys.stderr, flush=True)
            print(f"... {backend} {common.size_label(n)}", file=sys.stderr, flush=True)
            rows.append(common.run_child(Path(__file__), ["--child", "expand", "--backend", backend, "--size", str(n),
                                                          "--seeds", str(a.seeds)][1:], timeout=3600))
        if not a.no_ppr:
            print(f"... PageRank baseline {common.size_label(n)}", file=sys.stderr, flush=True)
            ppr_rows.append(common.run_child(Path(__file__), ["--child", "ppr", "--size", str(n), "--seeds",
                                                              str(a.seeds), "--ppr-seeds", str(a.ppr_seeds)][1:],
                                             timeout=3600))
    headers = ["backend", "size", "seeds", "directed p50", "directed p95", "spread p50", "spread p95",
               "units (med)", "spread nodes (med)", "open s", "RSS after open MB"]
    body = []
    for r in rows:
        for name in ("mention", "uniform"):
            d, s = r[f"directed_{name}"], r[f"spread_{name}"]
            body.append([r["backend"], common.size_label(r["size"]), name, d["p50"], d["p95"], s["p50"], s["p95"],
                         d["units_median"], s["nodes_median"], r["open_s"], r["rss_after_open_mb"]])
    print(common.table(headers, body, title="Expansion latency, ms (K=3, eps=0.05)"))
    print()
    by = {(r["backend"], r["size"]): r for r in rows}
    for n in common.parse_sizes(a.sizes):
        e, k = by.get(("embedded", n)), by.get(("neo4j", n))
        if e and k:
            for what in ("directed", "spread"):
                print(f"ratio {common.size_label(n)} {what} p95 (mention seeds): Neo4j / embedded = "
                      f"{k[f'{what}_mention']['p95'] / e[f'{what}_mention']['p95']:.1f}x")
    if ppr_rows:
        print()
        headers = ["size", "seeds", "PPR p50", "PPR p95", "spread p50", "spread p95", "PPR/spread (p50)", "top-20 overlap",
                   "graph nodes", "graph edges"]
        body = []
        for r in ppr_rows:
            for name in ("mention", "uniform"):
                p, s = r[f"ppr_{name}"], r[f"spread_{name}"]
                body.append([common.size_label(r["size"]), name, p["p50"], p["p95"], s["p50"], s["p95"],
                             f"{p['p50'] / s['p50']:.0f}x", r[f"top20_overlap_{name}"], r["graph_nodes"],
                             r["graph_edges"]])
        print(common.table(headers, body, title="Spreading activation (embedded) vs networkx personalized PageRank, ms"))
    if ingest_rows:
        common.save("ingest", ingest_rows)
    path = common.save("expand", rows, {"ppr": ppr_rows})
    print(f"\nresults appended to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

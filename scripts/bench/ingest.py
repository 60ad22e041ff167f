#!/usr/bin/env python
"""Ingest throughput (units/s) and peak RSS, embedded store vs Neo4j, side by side.

    python scripts/bench/ingest.py --sizes 10k,100k [--backends embedded,neo4j] [--embed none,default]

For each size the synthetic corpus (scripts/bench/corpus.py, seed 7) is ingested file by
file — 10 000 units per ``ingest`` call, i.e. one transaction per batch on Neo4j (batched
UNWIND inside it) and one journal append per batch on the embedded store — into an empty
store, each (backend, size, embed) in its own fresh process:

* units/s counts the store call only (``KnowledgeBase.ingest_units``: validation, graph
  writes, persistence, and with ``--embed default`` the packaged use-m3 embedder + vector
  upsert of the new entry/derived nodes). Parsing the notation is timed separately
  (``parse/s``); it is the same code for both backends.
* peak RSS is the Python process's VmHWM over the whole run (one parsed batch at a time
  is held, as ``kg ingest`` of one file does); on Neo4j the server's RSS is listed too.
* the embedded store directory is kept (``$KG_BENCH_DIR/stores/embedded-<size>``), and the
  Neo4j database keeps the last size ingested, so expand.py can measure on them.

Neo4j: start the benchmark server first (README). ``--embed default`` also needs the
vector backend: ``--vectors qdrant`` (qdrant-client local mode, the configured default)
or ``edge`` (qdrant-edge-py, the embedded fast path).
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import WORK  # noqa: E402


def store_dir(n: int) -> Path:
    return WORK / "stores" / f"embedded-{n}"


def child(args: argparse.Namespace) -> dict:
    import corpus
    from kgservice.config import Settings
    from kgservice.families import Lexicon
    from kgservice.notation import parse_file
    from kgservice.service import KnowledgeBase

    n = args.size
    cdir = corpus.ensure(n, common.SEED, WORK)
    files = sorted(cdir.glob("part-*.units"))
    data = WORK / "kb" / f"{args.backend}-{n}-{args.embed}-{args.vectors}"
    shutil.rmtree(data, ignore_errors=True)
    over: dict = {"data_dir": data, "embedder": "default" if args.embed == "default" else "hash:384",
                  "vector_backend": args.vectors}
    if args.backend == "neo4j":
        env = common.neo4j_env()
        over.update(backend="neo4j", neo4j_uri=env["uri"], neo4j_password=env["password"], neo4j_user=env["user"])
    kb = KnowledgeBase(Settings(**over))
    if args.backend == "embedded":
        # the store lives where expand.py finds it
        target = store_dir(n) if args.embed == "none" else data / "graph"
        shutil.rmtree(target, ignore_errors=True)
        from kgservice.stores.embedded import EmbeddedStore

        kb.__dict__["store"] = EmbeddedStore(target)
    else:
        kb.store.wipe()
        if args.warm:
            # a team server is long-running: its JIT has compiled the ingest path long before
            # anyone measures. One 10k batch into the same database, then wiped, warms it.
            warm = corpus.ensure(10_000, common.SEED, WORK)
            kb.store.ingest(parse_file(sorted(warm.glob("part-*.units"))[0], Lexicon.load()))
            kb.store.wipe()
    if args.embed == "default":
        kb.embedder.embed(["warm up"])  # model load is a once-per-process cost, not ingest throughput
        kb.vectors  # noqa: B018 - open the collection before timing
    lex = Lexicon.load()
    gc.collect()
    common.reset_peak()
    t_parse = t_ingest = 0.0
    batches = []
    nodes = embedded_nodes = 0
    for f in files:
        t0 = time.perf_counter()
        units = parse_file(f, lex)
        t1 = time.perf_counter()
        report = kb.ingest_units(units, embed=args.embed == "default")
        t2 = time.perf_counter()
        t_parse += t1 - t0
        t_ingest += t2 - t1
        batches.append(t2 - t1)
        nodes += report.nodes_added
        embedded_nodes += len(report.new_embeddable_nodes) if args.embed == "default" else 0
        del units, report
    peak = common.peak_rss_mb()
    counts = kb.store.counts()
    server_rss = None
    if args.backend == "neo4j":
        pid = common.neo4j_server_pid()
        server_rss = common.rss_mb(pid) if pid else None
    disk = None
    if args.backend == "embedded":
        root = kb.store.dir
        disk = sum(p.stat().st_size for p in Path(root).glob("graph.*")) / 1e6
    kb.close()
    return {
        "backend": args.backend, "warm": args.warm if args.backend == "neo4j" else None, "size": n, "embed": args.embed, "vectors": args.vectors if args.embed != "none" else None,
        "units": counts["units"], "nodes": counts["nodes"], "relations": counts["relations"],
        "ingest_s": t_ingest, "units_per_s": n / t_ingest, "parse_per_s": n / t_parse,
        "batch_s_max": max(batches), "batch_s_first": batches[0], "batch_s_last": batches[-1],
        "peak_rss_mb": peak, "server_rss_mb": server_rss, "disk_mb": disk, "embedded_nodes": embedded_nodes,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10k,100k")
    ap.add_argument("--backends", default="embedded,neo4j")
    ap.add_argument("--embed", default="none", help="comma list of none | default (the packaged use-m3 embedder)")
    ap.add_argument("--vectors", default="qdrant", help="vector backend for --embed default: qdrant | edge")
    ap.add_argument("--cold", action="store_true",
                    help="Neo4j: measure right after server start (default: one warm-up batch, then wipe)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--backend", help=argparse.SUPPRESS)
    ap.add_argument("--size", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        a.embed = a.embed.split(",")[0]
        a.warm = not a.cold
        common.emit(child(a))
        return 0
    rows = []
    for n in common.parse_sizes(a.sizes):
        import corpus

        corpus.ensure(n, common.SEED, WORK)
        for backend in [b.strip() for b in a.backends.split(",") if b.strip()]:
            for embed in [e.strip() for e in a.embed.split(",") if e.strip()]:
                args = ["--backend", backend, "--size", str(n), "--embed", embed, "--vectors", a.vectors]
                args += ["--cold"] if a.cold else []
                print(f"... {backend} {common.size_label(n)} embed={embed}", file=sys.stderr, flush=True)
                r = common.run_child(Path(__file__), args, timeout=3600)
                rows.append(r)
                print(f"    {r['units_per_s']:,.0f} units/s, peak RSS {r['peak_rss_mb']:,.0f} MB", file=sys.stderr)
    headers = ["backend", "size", "embedding", "units/s", "ingest s", "parse/s", "peak RSS MB", "server RSS MB",
               "nodes"]
    body = [[r["backend"], common.size_label(r["size"]), r["embed"] + (f" ({r['vectors']})" if r["vectors"] else ""),
             r["units_per_s"], r["ingest_s"], r["parse_per_s"], r["peak_rss_mb"], r["server_rss_mb"], r["nodes"]]
            for r in rows]
    print(common.table(headers, body, title="Ingest throughput (store call only; parse timed apart)"))
    by = {(r["backend"], r["size"], r["embed"]): r for r in rows}
    print()
    for n in common.parse_sizes(a.sizes):
        e, k = by.get(("embedded", n, "none")), by.get(("neo4j", n, "none"))
        if e and k:
            print(f"ratio {common.size_label(n)}: embedded / Neo4j = {e['units_per_s'] / k['units_per_s']:.1f}x "
                  f"({e['units_per_s']:,.0f} vs {k['units_per_s']:,.0f} units/s)")
        for b in ("embedded", "neo4j"):
            x, y = by.get((b, n, "none")), by.get((b, n, "default"))
            if x and y:
                print(f"ratio {common.size_label(n)} {b}: embedding excluded / included = "
                      f"{x['units_per_s'] / y['units_per_s']:.1f}x")
    path = common.save("ingest", rows)
    print(f"\nresults appended to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

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
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import WORK  # noqa: E402


def cpu_s(pid: int | str = "self") -> float | None:
    """utime + stime of a process so far (/proc/<pid>/stat), seconds."""
    import os

    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def tx_log_bytes() -> int | None:
    """Bytes of the benchmark server's transaction log files now (what the commits wrote,
    before and after each changed record; pruned only past the retention, 2 GB)."""
    import os

    d = Path(os.environ.get("KG_BENCH_NEO4J_DATA", "/tmp/bench-neo4j")) / "data" / "transactions" / "neo4j"
    files = list(d.glob("neostore.transaction.db.*"))
    return sum(f.stat().st_size for f in files) if files else None


def store_dir(n: int) -> Path:
    return WORK / "stores" / f"embedded-{n}"


def repoint(units: list, merged: dict[str, str]) -> list:
    """Point ``supersedes`` references at the unit a duplicate was merged into.

    The seeded corpus states some facts twice by chance; ingest merges such a duplicate
    into the live unit stating the same fact (IngestReport.duplicates). kgservice now keeps
    the merged id as an alias and resolves a later ``supersedes`` of it itself; code trees
    from before that fix (``--code old=DIR``) rejected such a batch ("neither in this batch
    nor stored"), so the benchmark re-points those references for every tree, outside the
    timing, and all trees ingest the same units."""
    if not merged:
        return units
    return [u.model_copy(update={"supersedes": tuple(merged.get(s, s) for s in u.supersedes)})
            if any(s in merged for s in u.supersedes) else u for u in units]


def reset_neo4j() -> None:
    """Empty the benchmark database, its constraints and indexes included (Neo4j's own token
    lookup indexes stay): each code tree under comparison then pays for its own schema only.
    Trees differ in it (workspaces made every identity constraint (ws, id)); a tree's
    ``wipe`` deletes nodes but keeps whatever schema the previous tree left."""
    import neo4j

    env = common.neo4j_env()
    with neo4j.GraphDatabase.driver(env["uri"], auth=(env["user"], env["password"])) as d:
        with d.session() as s:  # CALL ... IN TRANSACTIONS needs an implicit (auto-commit) transaction
            s.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()
        for name, typ, owner in d.execute_query("SHOW INDEXES YIELD name, type, owningConstraint").records:
            if owner is None and typ != "LOOKUP":
                d.execute_query(f"DROP INDEX `{name}` IF EXISTS")
        for (name,) in d.execute_query("SHOW CONSTRAINTS YIELD name").records:
            d.execute_query(f"DROP CONSTRAINT `{name}` IF EXISTS")


def schema_cost() -> dict:
    """What the last ingest left for the commit to have written: records and the indexes
    each write updates (the figures per unit are in the parent's summary)."""
    import neo4j

    env = common.neo4j_env()
    with neo4j.GraphDatabase.driver(env["uri"], auth=(env["user"], env["password"])) as d:
        q = d.execute_query
        nodes = q("MATCH (n) RETURN count(n) AS c").records[0]["c"]
        rels = q("MATCH ()-[r]->() RETURN count(r) AS c").records[0]["c"]
        props = q("MATCH (n) RETURN sum(size(keys(n))) AS c").records[0]["c"] or 0
        rprops = q("MATCH ()-[r]->() RETURN sum(size(keys(r))) AS c").records[0]["c"] or 0
        idx = [f"{r['name']}:{r['type']}:{','.join(r['labelsOrTypes'] or [])}({','.join(r['properties'] or [])})"
               for r in q("SHOW INDEXES YIELD name, type, labelsOrTypes, properties").records]
    return {"db_nodes": nodes, "db_rels": rels, "db_node_props": props, "db_rel_props": rprops, "indexes": sorted(idx)}


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
        if args.neo4j_write != "default":
            kb.store.write_engine = args.neo4j_write  # this tree's write statements: auto | plugin | cypher
        if args.batch_rows:  # rows per UNWIND / procedure call (the tree's BATCH_ROWS; units go in halves)
            import kgservice.stores.neo4j.writes as writes

            writes.BATCH_ROWS = int(args.batch_rows)
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
    server_pid = common.neo4j_server_pid() if args.backend == "neo4j" else None
    server_cpu0 = cpu_s(server_pid) if server_pid else None
    txlog0 = tx_log_bytes() if server_pid else None
    client_cpu = 0.0
    load_start = [round(x, 2) for x in __import__("os").getloadavg()]
    t_parse = t_ingest = 0.0
    batches = []
    nodes = embedded_nodes = 0
    merged: dict[str, str] = {}  # duplicate id -> the unit it was merged into (see repoint)
    progress_file = __import__("os").environ.get("KG_BENCH_PROGRESS")  # one line per batch: label, batches, ingest s, server CPU s, client CPU s
    for f in files:
        t0 = time.perf_counter()
        units = parse_file(f, lex)
        t1 = time.perf_counter()
        units = repoint(units, merged)  # bench bookkeeping, not timed
        t1b, c1 = time.perf_counter(), time.process_time()
        report = kb.ingest_units(units, embed=args.embed == "default")
        t2 = time.perf_counter()
        client_cpu += time.process_time() - c1
        merged.update(report.duplicates)
        t_parse += t1 - t0
        t_ingest += t2 - t1b
        batches.append(t2 - t1b)
        if progress_file:  # a run stopped part-way still compares with another on the same first batches
            with open(progress_file, "a") as fh:
                fh.write(f"{args.code_label} {len(batches)} {sum(batches):.2f} "
                         f"{(cpu_s(server_pid) or 0) - (server_cpu0 or 0):.2f} {client_cpu:.2f}\n")
        nodes += report.nodes_added
        embedded_nodes += len(report.new_embeddable_nodes) if args.embed == "default" else 0
        del units, report
    server_cpu1 = cpu_s(server_pid) if server_pid else None
    txlog1 = tx_log_bytes() if server_pid else None
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
    cost = schema_cost() if args.backend == "neo4j" else {}
    kb.close()
    return cost | {
        "backend": args.backend, "warm": args.warm if args.backend == "neo4j" else None, "size": n, "embed": args.embed, "vectors": args.vectors if args.embed != "none" else None,
        "units": counts["units"], "nodes": counts["nodes"], "relations": counts["relations"],
        "ingest_s": t_ingest, "units_per_s": n / t_ingest, "parse_per_s": n / t_parse,
        "batch_s_max": max(batches), "batch_s_first": batches[0], "batch_s_last": batches[-1],
        "code": args.code_label + ("" if args.neo4j_write == "default" else f"/{args.neo4j_write}")
        + (f"/rows={args.batch_rows}" if args.batch_rows else ""),
        "load_avg_start": load_start, "load_avg_end": [round(x, 2) for x in __import__("os").getloadavg()],
        # CPU seconds per 10k units over the ingest calls (client: this process, parsing
        # excluded; server: the whole Neo4j JVM, background threads included)
        "client_cpu_per_10k": client_cpu / n * 10_000,
        "server_cpu_per_10k": (server_cpu1 - server_cpu0) / n * 10_000 if server_cpu1 is not None else None,
        "tx_log_bytes_per_unit": (txlog1 - txlog0) / n if txlog0 is not None and txlog1 is not None else None,
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
    ap.add_argument("--code", default="",
                    help="compare code trees side by side: LABEL=DIR,... (each DIR a kgservice checkout, e.g. "
                         "`git archive` of an older commit); default: this checkout only")
    ap.add_argument("--repeat", type=int, default=1, help="rounds; each round runs every --code variant in turn")
    ap.add_argument("--batch-rows", default="",
                    help="Neo4j: rows per statement (writes.BATCH_ROWS), one variant each in turn, e.g. 1000,5000")
    ap.add_argument("--neo4j-write", default="default",
                    help="Neo4j ingest statements, one variant each in turn: plugin (kg.create* procedures), "
                         "cypher (the Cypher files), auto; default: whatever the tree does")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--code-dir", default="", help=argparse.SUPPRESS)
    ap.add_argument("--code-label", default="this", help=argparse.SUPPRESS)
    ap.add_argument("--backend", help=argparse.SUPPRESS)
    ap.add_argument("--size", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        a.embed = a.embed.split(",")[0]
        a.warm = not a.cold
        if a.code_dir:  # import kgservice from the tree under comparison, not this checkout
            sys.path.insert(0, str(Path(a.code_dir).resolve()))
            import kgservice

            assert Path(kgservice.__file__).resolve().is_relative_to(Path(a.code_dir).resolve()), kgservice.__file__
        common.emit(child(a))
        return 0
    rows = []
    codes = [(c.split("=", 1)[0].strip(), c.split("=", 1)[1].strip()) for c in a.code.split(",") if "=" in c]
    for label, d in codes:
        if not (Path(d) / "kgservice" / "__init__.py").is_file():
            print(f"--code {label}={d}: no kgservice package there", file=sys.stderr)
            return 2
    for n in common.parse_sizes(a.sizes):
        import corpus

        corpus.ensure(n, common.SEED, WORK)
        for backend in [b.strip() for b in a.backends.split(",") if b.strip()]:
            for embed in [e.strip() for e in a.embed.split(",") if e.strip()]:
                for rnd in range(max(1, a.repeat)):
                    for (label, d), write, per in [(c, w, b) for c in codes or [("this", "")]
                                                    for w in a.neo4j_write.split(",")
                                                    for b in (a.batch_rows.split(",") if a.batch_rows else [""])]:
                        args = ["--backend", backend, "--size", str(n), "--embed", embed, "--vectors", a.vectors,
                                "--neo4j-write", write] + (["--batch-rows", per] if per else [])
                        args += ["--cold"] if a.cold else []
                        args += ["--code-dir", d, "--code-label", label] if d else []
                        print(f"... {backend} {common.size_label(n)} embed={embed} code={label} write={write} "
                              f"round {rnd + 1}",
                              file=sys.stderr, flush=True)
                        if backend == "neo4j" and not a.cold:
                            reset_neo4j()  # a --cold run starts on a fresh server of its own
                        r = common.run_child(Path(__file__), args, timeout=7200)
                        rows.append(r)
                        print(f"    {r['units_per_s']:,.0f} units/s, peak RSS {r['peak_rss_mb']:,.0f} MB, CPU/10k "
                              f"client {r['client_cpu_per_10k']:.2f} s server {common.fmt(r['server_cpu_per_10k'], 2)} s",
                              file=sys.stderr)
                        if r.get("tx_log_bytes_per_unit") is not None:
                            print(f"    transaction log written: {r['tx_log_bytes_per_unit']:,.0f} bytes per unit",
                                  file=sys.stderr)
                        if r.get("db_nodes") is not None:
                            print(f"    per unit: {r['db_nodes'] / r['units']:.2f} nodes, {r['db_rels'] / r['units']:.2f} "
                                  f"relationships, {(r['db_node_props'] + r['db_rel_props']) / r['units']:.1f} properties; "
                                  f"{len(r['indexes'])} indexes: {' '.join(r['indexes'])}", file=sys.stderr)
    headers = ["backend", "size", "embedding", "code", "units/s", "ingest s", "client CPU s/10k",
               "server CPU s/10k", "parse/s", "peak RSS MB", "server RSS MB", "nodes", "load start/end"]
    load0 = [round(x, 1) for x in __import__("os").getloadavg()][0]
    body = [[r["backend"], common.size_label(r["size"]), r["embed"] + (f" ({r['vectors']})" if r["vectors"] else ""),
             r.get("code", "this"), r["units_per_s"], r["ingest_s"], r.get("client_cpu_per_10k"),
             r.get("server_cpu_per_10k"), r["parse_per_s"], r["peak_rss_mb"], r["server_rss_mb"], r["nodes"],
             f"{r.get('load_avg_start', [load0])[0]:.1f}/{r.get('load_avg_end', [0])[0]:.1f}"]
            for r in rows]
    print(common.table(headers, body, title="Ingest throughput (store call only; parse timed apart)"))
    labels = list(dict.fromkeys(r.get("code", "this") for r in rows))
    if len(labels) > 1:
        print()
        base = labels[0]
        for n in common.parse_sizes(a.sizes):
            for label in labels[1:]:
                def med(lbl: str, key: str) -> float | None:
                    xs = [r[key] for r in rows if r.get("code") == lbl and r["size"] == n and r.get(key) is not None]
                    return statistics.median(xs) if xs else None
                for key, what in (("units_per_s", "units/s"), ("server_cpu_per_10k", "server CPU/10k"),
                                  ("client_cpu_per_10k", "client CPU/10k")):
                    x, y = med(base, key), med(label, key)
                    if x and y:
                        print(f"ratio {common.size_label(n)} {what}: {label} / {base} = {y / x:.2f}x "
                              f"(median {common.fmt(y, 2)} vs {common.fmt(x, 2)})")
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

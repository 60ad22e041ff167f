#!/usr/bin/env python
"""Neo4j's vector index options as a grid, qdrant-edge and the Bolt floor side by side in one run.

    KG_BENCH_NEO4J_DATA=DIR python scripts/bench/vector_index_grid.py --neo4j-uri bolt://127.0.0.1:PORT \\
        --configs "m=16,ef=100,q=0;m=16,ef=100,q=1;m=32,ef=200,q=0" --neo4j-candidates 10,20,50,100 \\
        [--vectors 100000] [--dim 512] [--data labels] [--queries 300] [--rounds 3] [--variants index,rescored] \\
        [--server-label default]

For each index configuration (``m`` = ``vector.hnsw.m``, ``ef`` = ``vector.hnsw.ef_construction``,
``q`` = ``vector.quantization.enabled``: the options Neo4j 5.26's vector-2.0 index accepts)
the index is dropped and created again over the same stored vectors (one population), and
then search rounds alternate between:

* ``floor``: ``RETURN size($v)`` with the query vector as parameter, on the same kind of read
  session the store searches on: what any Neo4j query costs (Bolt round trip, transaction,
  Cypher, the vector's packing) before the index does anything;
* ``edge``: qdrant-edge over the same vectors, in this process (the default vector backend);
* ``neo4j c/variant`` for each ``--neo4j-candidates`` value: ``index`` is the store's search
  as it runs today (the index's own scores), ``rescored`` re-scores the candidates with the
  stored float32 vectors and keeps the best 10 on the server (``vector_index_grid_rescored.cypher``
  beside this script, what a quantized index needs for exact cosines; run for quantized
  configurations only).

Per row: p50 / p95 wall (median over rounds of each round's p50), client CPU (median), the Neo4j JVM's
CPU per query (``/proc/<pid>/stat`` over a round, so GC and background work are in it), and
recall@10 against an exact scan on two disjoint query sets: settings are chosen on ``tune`` and
reported on ``report``. After each population: its wall and server CPU time, and the live
Lucene HNSW segment readers in the JVM (``jcmd``). The server's own settings (population RAM
buffer, merge factors) need a restart: run the script once per server configuration with
``--server-label`` naming it; the vectors stay in the database between runs (loaded once, with
no index) and the qdrant-edge collection is kept under ``$KG_BENCH_DIR/vectors`` (built once).
Each configuration's rows are also appended to ``$KG_BENCH_DIR/vector_index_grid.partial.jsonl``
as soon as it is measured (a grid stopped half-way keeps what it measured).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import WORK  # noqa: E402
from vectors import _hnsw_segments, _search_round, _server_cpu, query_sets, summarize_rounds  # noqa: E402


def parse_config(text: str) -> dict:
    """``m=16,ef=100,q=0`` -> the index's indexConfig entries."""
    keys = {"m": "vector.hnsw.m", "ef": "vector.hnsw.ef_construction", "q": "vector.quantization.enabled"}
    out: dict = {}
    for part in text.split(","):
        k, _, v = part.strip().partition("=")
        if k not in keys:
            raise SystemExit(f"--configs: unknown key {k!r} in {text!r} (m, ef, q)")
        out[keys[k]] = bool(int(v)) if k == "q" else int(v)
    return out


class _Search:
    """A search function in the shape ``vectors._search_round`` times (``.search(row, top_k, threshold)``)."""

    def __init__(self, run) -> None:
        self.run = run

    def search(self, row, top_k: int = 10, threshold: float = 0.0):
        return self.run(row)


def _round(search, queries, exact, server: str | None, recall: bool = True) -> dict:
    r = _search_round(_Search(search), queries, exact, 10, server)
    return {**r, "recall10": r["recall10"] if recall else None}


def child(a: argparse.Namespace) -> dict:
    import numpy as np

    import kgservice.stores.neo4j.vectors as nv
    from kgservice.stores.neo4j import Neo4jStore
    from kgservice.vectors import open_vector_store
    from kgservice.vectors.base import VectorStoreMismatch

    m, q, ids, sets, exact = query_sets(a)
    kw: dict = {"dim": a.dim, "model_name": f"bench-{a.data}", "collection": "bench"}

    path = WORK / "vectors" / f"edge-grid-{a.data}-{a.vectors}-{a.dim}"
    edge = open_vector_store(backend="edge", path=str(path), **kw)
    edge_load = None
    if edge.count() != a.vectors:
        edge.close()
        edge = open_vector_store(backend="edge", path=str(path), recreate=True, **kw)
        t0 = time.perf_counter()
        for i in range(0, a.vectors, 4096):
            edge.upsert(ids[i:i + 4096], m[i:i + 4096])
        edge.optimize()
        edge_load = time.perf_counter() - t0
        print(f"    qdrant-edge: built {a.vectors} in {edge_load:.0f} s", file=sys.stderr, flush=True)

    conn = Neo4jStore.connect(uri=a.neo4j_uri, password=os.environ.get("NEO4J_PASSWORD"))
    try:
        neo = nv.Neo4jVectorStore(conn, **kw)
    except VectorStoreMismatch:  # another collection in this database (a test's, another size)
        neo = None
    if neo is None or neo.count() != a.vectors:  # load once, without an index (bulk_load drops it), then keep them
        if neo is not None:
            neo.close()
        neo = nv.Neo4jVectorStore(conn, recreate=True, **kw)
        neo.bulk_min = 1
        t0 = time.perf_counter()
        with neo.bulk_load(a.vectors):
            for i in range(0, a.vectors, 4096):
                neo.upsert(ids[i:i + 4096], m[i:i + 4096])
            conn.write("vectors_index_drop", index=nv.INDEX_NAME)
        print(f"    neo4j: loaded {a.vectors} in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)

    session = conn._open(write=False)  # the kind of session Neo4jStore.read runs its queries on

    def floor(row):
        list(session.run("RETURN size($v) AS n", v=row.astype(np.float64).tolist()))
        return []

    cands = [int(c) for c in a.neo4j_candidates.split(",")]
    variants = [v.strip() for v in a.variants.split(",") if v.strip()]
    out = {"edge_load_s": edge_load, "server_label": a.server_label, "states": []}
    rescored = Path(__file__).with_name("vector_index_grid_rescored.cypher").read_text("utf-8")
    for text in [c for c in a.configs.split(";") if c.strip()]:
        config = parse_config(text)
        options = {"indexConfig": {"vector.dimensions": a.dim, "vector.similarity_function": "cosine",
                                   "vector.quantization.enabled": False, **config}}
        conn.write("vectors_index_drop", index=nv.INDEX_NAME)
        c0, t0 = _server_cpu(a.neo4j_data), time.perf_counter()
        conn.write("vectors_index", index=nv.INDEX_NAME, options=options)
        while (conn.read("vectors_index_info", index=nv.INDEX_NAME) or [{"state": ""}])[0]["state"] != "ONLINE":
            time.sleep(1)
        pop_s, pop_cpu = time.perf_counter() - t0, _server_cpu(a.neo4j_data)
        segments = _hnsw_segments(a.neo4j_data)
        print(f"    {text}: population {pop_s:.0f} s, {segments} segments", file=sys.stderr, flush=True)

        def searcher(c: int, variant: str):
            def run(row):
                if variant == "rescored":
                    recs = session.run(rescored, index=nv.INDEX_NAME, candidates=c, top=10,
                                       queries=[row.astype(np.float64).tolist()])
                    return [(str(r["node_id"]), 2.0 * float(r["score"]) - 1.0) for r in recs]
                neo.candidates = c  # the store's own search, as kgservice runs it
                return neo.search(row, top_k=10, threshold=0.0)
            return run

        rows_of = {"floor": floor, "edge": lambda row: edge.search(row, top_k=10, threshold=0.0)}
        for c in cands:
            for v in variants:
                if v == "rescored" and not config.get("vector.quantization.enabled"):
                    continue  # the index's own scores are exact cosines: nothing to re-score
                rows_of[f"neo4j {c}/{v}"] = searcher(c, v)
        for row in q[:10]:  # warm-up
            for run in rows_of.values():
                run(row)
        rounds: dict[str, list[dict]] = {}
        loads = []
        for r in range(a.rounds):
            for name, qs in sets.items():
                loads.append(os.getloadavg()[0])
                for key, run in rows_of.items():
                    rounds.setdefault(f"{key}|{name}", []).append(
                        _round(run, qs, exact[name], a.neo4j_data if key != "edge" else None, recall=key != "floor"))
        rows = summarize_rounds(rounds, "|")
        out["states"].append({"config": text, "index_config": config, "population_s": pop_s,
                              "population_server_cpu_s": (pop_cpu - c0) if c0 is not None else None,
                              "hnsw_segments": segments, "load_avg": [min(loads), max(loads)], "rows": rows})
        # each configuration's rows as soon as they exist: a long grid stopped half-way keeps them
        with open(WORK / "vector_index_grid.partial.jsonl", "a", encoding="utf-8") as f:
            f.write(json.dumps({"server_label": a.server_label, "vectors": a.vectors, **out["states"][-1]}) + "\n")
    session.close()
    neo.close()
    conn.close()
    edge.close()
    return out


def report(res: dict) -> None:
    for st in res["states"]:
        print(f"\n[{res['server_label']}] index {st['config']}: population {st['population_s']:.0f} s "
              f"(server CPU {common.fmt(st['population_server_cpu_s'])} s), live HNSW segments "
              f"{common.fmt(st['hnsw_segments'])}; load average {st['load_avg'][0]:.1f}-{st['load_avg'][1]:.1f}")
        headers = ["row", "queries", "p50 ms", "p50 of each round", "p95 ms", "client CPU ms", "server CPU ms",
                   "recall@10"]
        print(common.table(headers, [[r["backend"], r["queries"], r["p50"], " ".join(f"{x:.1f}" for x in r["p50_rounds"]),
                                      r["p95"], r["client_cpu_p50"], r["server_cpu_per_query"], r["recall10"]]
                                     for r in st["rows"]]))
        for qset in ("tune", "report"):
            e = next(r for r in st["rows"] if r["backend"] == "edge" and r["queries"] == qset)
            f = next(r for r in st["rows"] if r["backend"] == "floor" and r["queries"] == qset)
            ok = [r for r in st["rows"] if r["backend"].startswith("neo4j") and r["queries"] == qset
                  and r["recall10"] >= e["recall10"]]
            line = (f"  {qset}: edge p50 {e['p50']:.2f} ms (recall {e['recall10']:.3f}); floor p50 {f['p50']:.2f} ms "
                    f"= {f['p50'] / e['p50']:.1f}x edge, server CPU {common.fmt(f['server_cpu_per_query'])} ms")
            if ok:
                best = min(ok, key=lambda r: r["p50"])
                line += (f"; cheapest Neo4j at edge's recall: {best['backend']} (recall {best['recall10']:.3f}) "
                         f"p50 {best['p50']:.1f} ms = {best['p50'] / e['p50']:.1f}x edge, server CPU "
                         f"{common.fmt(best['server_cpu_per_query'])} ms")
            else:
                line += "; no Neo4j row reaches edge's recall"
            print(line)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vectors", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--data", choices=["random", "labels"], default="labels")
    ap.add_argument("--neo4j-uri", default=os.environ.get("KG_BENCH_NEO4J_URI"))
    ap.add_argument("--neo4j-data", default=os.environ.get("KG_BENCH_NEO4J_DATA"),
                    help="the Neo4j server's data dir (its pid file): server CPU per query, segment count")
    ap.add_argument("--configs", default="m=16,ef=100,q=0",
                    help="index configurations, ';'-separated, each 'm=..,ef=..,q=0|1'")
    ap.add_argument("--neo4j-candidates", default="10,20,50,100")
    ap.add_argument("--variants", default="index", help="index,rescored")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--server-label", default="default", help="names the server's configuration in the output")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        common.emit(child(a))
        return 0
    if not a.neo4j_uri:
        print("needs --neo4j-uri (or KG_BENCH_NEO4J_URI) and NEO4J_PASSWORD", file=sys.stderr)
        return 2
    args = ["--vectors", str(a.vectors), "--dim", str(a.dim), "--queries", str(a.queries), "--data", a.data,
            "--neo4j-uri", a.neo4j_uri, "--configs", a.configs, "--neo4j-candidates", a.neo4j_candidates,
            "--variants", a.variants, "--rounds", str(a.rounds), "--server-label", a.server_label]
    if a.neo4j_data:
        args += ["--neo4j-data", a.neo4j_data]
    res = common.run_child(Path(__file__), args, timeout=6 * 3600)
    report(res)
    path = common.save("vector_index_grid", res["states"], {"edge_load_s": res["edge_load_s"], "vectors": a.vectors,
                                                             "data": a.data, "server_label": a.server_label})
    print(f"\nresults appended to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

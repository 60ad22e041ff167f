#!/usr/bin/env python
"""Vector entry: top-k latency at 100k vectors, qdrant-client local mode vs qdrant-edge vs
Neo4j's vector index (the ``neo4j`` vector backend), and a Qdrant server when one is given.

    python scripts/bench/vectors.py [--vectors 100000] [--dim 512] [--queries 200]
                                    [--qdrant-url http://127.0.0.1:6333]   # server path
                                    [--neo4j-uri bolt://127.0.0.1:7687]    # + NEO4J_PASSWORD
                                    [--neo4j-candidates 10,100,200]

Vectors: seeded random unit vectors of the default embedder's dimension (use-m3: 512); an
exact or HNSW scan does the same work whatever the vectors mean. Each backend runs in its
own process through kgservice's own adapters (``open_vector_store``), the way ``kg`` opens
them: upsert all (batches of 256), ``optimize()``, then ``--queries`` single top-10
searches (threshold 0.3, as ``vector_entry`` uses) after 10 warm-up queries; recall@10 is
measured against an exact numpy scan. CPU per query (this process, all threads) is
reported beside the wall time: on a shared machine the wall time measures the queue for a
core. The default embedder's one-label embed time is reported too (a query pays it once per
query node before the search).
The server row is measured only with ``--qdrant-url`` (or ``KG_QDRANT_URL``); this machine
has no Qdrant server (none in the package registries; no container runtime).
The neo4j rows need a running Neo4j (``--neo4j-uri`` or ``KG_NEO4J_URI``, password in
``NEO4J_PASSWORD``; use a server of its own, e.g. ``scripts/neo4j start --data-dir DIR``: the
benchmark replaces the database's vector collection). The vectors are loaded once and searched
with each ``--neo4j-candidates`` value (the neighbours asked of the HNSW index: the recall /
latency trade-off of ``Neo4jVectorStore.candidates``, default 50); its "optimize" column is the
wait for the index to have taken every vector (Neo4j indexes at commit).

``--paired`` (needs ``--neo4j-uri``; ``--neo4j-data DIR`` adds the server's CPU per query from
its pid file): one process opens qdrant-edge and Neo4j's index side by side and alternates
search rounds between them (edge, then Neo4j at each ``--neo4j-candidates``, ``--rounds``
times; medians of the rounds' p50s), for each ``--neo4j-load`` way of filling Neo4j's index in
turn: ``incremental`` (the old writer: the index kept up to date, one 1,000-vector transaction
after another, as many small ingests leave it) and ``bulk`` (``Neo4jVectorStore.bulk_load``:
index dropped, vectors written, one population). Recall@10 is against an exact numpy scan, on
two disjoint query sets: ``tune`` (the candidates are chosen on it) and ``report``. After each
load it counts the live Lucene HNSW segment readers in the server's JVM (``jcmd``), the number
of graphs a search walks.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import WORK  # noqa: E402

BACKENDS = ("qdrant-local", "edge", "neo4j", "server")


def child(a: argparse.Namespace) -> dict:
    import numpy as np

    from kgservice.vectors import open_vector_store

    rng = np.random.default_rng(11)
    if a.data == "labels":
        m, q = label_vectors(a)
    else:
        m = rng.standard_normal((a.vectors, a.dim), dtype=np.float32)
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        q = rng.standard_normal((a.queries + 10, a.dim), dtype=np.float32)
        q /= np.linalg.norm(q, axis=1, keepdims=True)
    ids = [f"node {i}" for i in range(a.vectors)]
    path = WORK / "vectors" / a.backend
    shutil.rmtree(path, ignore_errors=True)
    kw: dict = {"dim": a.dim, "model_name": "bench-random", "collection": "bench", "recreate": True}
    if a.backend == "server":
        vs = open_vector_store(backend="qdrant", url=a.qdrant_url, **kw)
    elif a.backend == "neo4j":
        from kgservice.stores.neo4j import Neo4jStore
        from kgservice.stores.neo4j.vectors import Neo4jVectorStore

        conn = Neo4jStore.connect(uri=a.neo4j_uri, password=os.environ.get("NEO4J_PASSWORD"))
        vs = Neo4jVectorStore(conn, owns_connection=True, **kw)
    else:
        vs = open_vector_store(backend="edge" if a.backend == "edge" else "qdrant", path=str(path), **kw)
    common.reset_peak()
    t0 = time.perf_counter()
    for i in range(0, a.vectors, 4096):
        vs.upsert(ids[i:i + 4096], m[i:i + 4096], [{"label": x, "kind": "entry"} for x in ids[i:i + 4096]])
    upsert_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    vs.optimize()
    optimize_s = time.perf_counter() - t0
    if a.backend == "neo4j":  # the index takes each vector at commit; wait until it answers for the last one
        t0 = time.perf_counter()
        while not vs.search(m[-1], top_k=1, threshold=0.0) or vs.search(m[-1], top_k=1)[0][0] != ids[-1]:
            time.sleep(0.2)
        optimize_s += time.perf_counter() - t0
    exact = [{ids[j] for j in np.argsort(-(m @ row))[:10]} for row in q[10:]]
    variants = [int(c) for c in a.neo4j_candidates.split(",")] if a.backend == "neo4j" else [None]
    rows = []
    for cand in variants:
        if cand is not None:
            vs.candidates = cand
        for row in q[:10]:
            vs.search(row, top_k=10, threshold=0.0)
        lat, cpu, recall = [], [], []
        for row, want in zip(q[10:], exact):
            c0, t0 = time.process_time(), time.perf_counter()
            hits = vs.search(row, top_k=10, threshold=0.0)
            lat.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            recall.append(len(want & {h[0] for h in hits}) / 10)
        rows.append({"backend": a.backend if cand is None else f"neo4j (candidates {cand})", "data": a.data,
                     "vectors": a.vectors, "dim": a.dim, "upsert_s": upsert_s, "optimize_s": optimize_s,
                     "search": common.summary_ms(lat), "search_cpu": common.summary_ms(cpu),
                     "recall10": sum(recall) / len(recall), "peak_rss_mb": common.peak_rss_mb()})
    vs.close()
    return {"rows": rows}


def _server_cpu(data_dir: str | None) -> float | None:
    """The Neo4j JVM's CPU seconds so far (pid file in its data dir), or None."""
    if not data_dir:
        return None
    try:
        pid = int((Path(data_dir) / "neo4j.pid").read_text().strip())
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _hnsw_segments(data_dir: str | None) -> int | None:
    """Live Lucene HNSW segment readers in the Neo4j JVM (``jcmd GC.class_histogram``, which
    collects first): how many segments a vector search walks. None without jcmd or the pid."""
    if not data_dir or not shutil.which("jcmd"):
        return None
    try:
        pid = (Path(data_dir) / "neo4j.pid").read_text().strip()
        import subprocess

        out = subprocess.run(["jcmd", pid, "GC.class_histogram"], capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return sum(int(line.split()[1]) for line in out.splitlines() if line.endswith(".Lucene99HnswVectorsReader"))


def _search_round(vs, queries, exact, top_k: int = 10, server: str | None = None) -> dict:
    """One pass over ``queries``: per-query wall and client CPU, the server's CPU per query
    (Neo4j), recall@10 against ``exact``."""
    import numpy as np

    lat, cpu, recall = [], [], []
    s0 = _server_cpu(server)
    for row, want in zip(queries, exact):
        c0, t0 = time.process_time(), time.perf_counter()
        hits = vs.search(row, top_k=top_k, threshold=0.0)
        lat.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        recall.append(len(want & {h[0] for h in hits}) / top_k)
    s1 = _server_cpu(server)
    return {"p50": float(np.median(lat)) * 1000, "p95": common.pct([x * 1000 for x in lat], 95),
            "client_cpu_p50": float(np.median(cpu)) * 1000, "recall10": float(np.mean(recall)),
            "server_cpu_per_query": (s1 - s0) / len(lat) * 1000 if s0 is not None and s1 is not None else None}


def summarize_rounds(rounds: dict[str, list[dict]], sep: str) -> list[dict]:
    """One row per ``backend<sep>queries`` key from its rounds (``_search_round`` results):
    medians over the rounds, each round's p50 and server CPU kept."""
    import statistics

    rows = []
    for key, rs in rounds.items():
        backend, qset = key.split(sep)
        srv = [x["server_cpu_per_query"] for x in rs if x["server_cpu_per_query"] is not None]
        rows.append({"backend": backend, "queries": qset, "p50": statistics.median(x["p50"] for x in rs),
                     "p50_rounds": [round(x["p50"], 2) for x in rs],
                     "p95": statistics.median(x["p95"] for x in rs),
                     "client_cpu_p50": statistics.median(x["client_cpu_p50"] for x in rs),
                     "server_cpu_per_query": statistics.median(srv) if srv else None,
                     "server_cpu_rounds": [round(x, 2) for x in srv],
                     "recall10": rs[0]["recall10"]})
    return rows


def query_sets(a: argparse.Namespace):
    """The stored vectors and the queries (the first 10 for warm-up), the vectors' ids, the
    other queries split into ``tune`` (settings are chosen on it) and ``report`` halves, and
    each query's exact top 10 ids."""
    import numpy as np

    m, q = label_vectors(a) if a.data == "labels" else _random(a)
    ids = [f"node {i}" for i in range(a.vectors)]
    half = (len(q) - 10) // 2
    sets = {"tune": q[10:10 + half], "report": q[10 + half:]}
    exact = {name: [{ids[j] for j in np.argsort(-(m @ row))[:10]} for row in qs] for name, qs in sets.items()}
    return m, q, ids, sets, exact


def paired_child(a: argparse.Namespace) -> dict:
    """qdrant-edge and Neo4j's index in one process, search rounds alternated (see the module doc)."""
    import kgservice.stores.neo4j.vectors as nv
    from kgservice.stores.neo4j import Neo4jStore
    from kgservice.vectors import open_vector_store

    m, q, ids, sets, exact = query_sets(a)
    kw: dict = {"dim": a.dim, "model_name": "bench-labels", "collection": "bench", "recreate": True}
    path = WORK / "vectors" / "edge-paired"
    shutil.rmtree(path, ignore_errors=True)
    edge = open_vector_store(backend="edge", path=str(path), **kw)
    t0 = time.perf_counter()
    for i in range(0, a.vectors, 4096):
        edge.upsert(ids[i:i + 4096], m[i:i + 4096])
    edge.optimize()
    edge_load = time.perf_counter() - t0
    conn = Neo4jStore.connect(uri=a.neo4j_uri, password=os.environ.get("NEO4J_PASSWORD"))
    cands = [int(c) for c in a.neo4j_candidates.split(",")]
    out = {"edge_load_s": edge_load, "states": []}
    for load in [x.strip() for x in a.neo4j_load.split(",") if x.strip()]:
        neo = nv.Neo4jVectorStore(conn, **kw)
        c0, t0 = _server_cpu(a.neo4j_data), time.perf_counter()
        if load == "bulk":
            with neo.bulk_load(a.vectors) as rebuilt:
                assert rebuilt, "bulk_load kept the index"
                for i in range(0, a.vectors, 4096):
                    neo.upsert(ids[i:i + 4096], m[i:i + 4096])
        else:  # the writer as it was: index kept up to date, 1,000 vectors per transaction
            for i in range(0, a.vectors, 4096):
                neo.upsert(ids[i:i + 4096], m[i:i + 4096])
            while not neo.search(m[-1], top_k=1) or neo.search(m[-1], top_k=1)[0][0] != ids[-1]:
                time.sleep(0.2)
        while conn.read("vectors_index_info", index=nv.INDEX_NAME)[0]["state"] != "ONLINE":
            time.sleep(1)  # a population that outlasted the store's own wait (a busy machine)
        load_s = time.perf_counter() - t0
        c1 = _server_cpu(a.neo4j_data)
        segments = _hnsw_segments(a.neo4j_data)
        print(f"    neo4j {load}: loaded {a.vectors} in {load_s:.1f} s", file=sys.stderr, flush=True)
        for row in q[:10]:  # warm-up
            edge.search(row, top_k=10, threshold=0.0)
            for c in cands:
                neo.candidates = c
                neo.search(row, top_k=10, threshold=0.0)
        rounds: dict[str, list[dict]] = {}
        loads = []
        for r in range(a.rounds):
            for name, qs in sets.items():
                loads.append(os.getloadavg()[0])
                rounds.setdefault(f"edge/{name}", []).append(_search_round(edge, qs, exact[name]))
                for c in cands:
                    neo.candidates = c
                    rounds.setdefault(f"neo4j {c}/{name}", []).append(
                        _search_round(neo, qs, exact[name], server=a.neo4j_data))
        rows = summarize_rounds(rounds, "/")
        out["states"].append({"load": load, "load_s": load_s, "hnsw_segments": segments, "load_server_cpu_s": (c1 - c0) if c0 is not None else None,
                              "load_avg": [min(loads), max(loads)], "rows": rows})
        neo.close()
    edge.close()
    conn.close()
    return out


def _random(a: argparse.Namespace):
    import numpy as np

    rng = np.random.default_rng(11)
    m = rng.standard_normal((a.vectors, a.dim), dtype=np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    q = rng.standard_normal((a.queries + 10, a.dim), dtype=np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return m, q


def paired(a: argparse.Namespace) -> int:
    args = ["paired", "--vectors", str(a.vectors), "--dim", str(a.dim), "--queries", str(a.queries),
            "--data", a.data, "--neo4j-candidates", a.neo4j_candidates, "--neo4j-uri", a.neo4j_uri,
            "--neo4j-load", a.neo4j_load, "--rounds", str(a.rounds)]
    if a.neo4j_data:
        args += ["--neo4j-data", a.neo4j_data]
    res = common.run_child(Path(__file__), args, timeout=7200)
    for st in res["states"]:
        print(f"\nNeo4j index filled {st['load']}: load {st['load_s']:.1f} s (server CPU "
              f"{common.fmt(st['load_server_cpu_s'])} s), live HNSW segment readers {common.fmt(st.get('hnsw_segments'))}; "
              f"load average {st['load_avg'][0]:.1f}-{st['load_avg'][1]:.1f}")
        headers = ["backend", "queries", "p50 ms (median of rounds)", "p50 of each round", "p95 ms",
                   "server CPU ms/query", "recall@10"]
        print(common.table(headers, [[r["backend"], r["queries"], r["p50"], " ".join(f"{x:.1f}" for x in r["p50_rounds"]),
                                      r["p95"], r["server_cpu_per_query"], r["recall10"]] for r in st["rows"]]))
        for qset in ("tune", "report"):
            e = next(r for r in st["rows"] if r["backend"] == "edge" and r["queries"] == qset)
            ok = [r for r in st["rows"] if r["backend"] != "edge" and r["queries"] == qset and r["recall10"] >= e["recall10"]]
            if ok:
                best = min(ok, key=lambda r: r["p50"])
                print(f"{qset}: Neo4j at qdrant-edge's recall ({e['recall10']:.3f}): {best['backend']} "
                      f"(recall {best['recall10']:.3f}) p50 {best['p50']:.1f} ms vs edge {e['p50']:.1f} ms = "
                      f"{best['p50'] / e['p50']:.1f}x")
            else:
                print(f"{qset}: no candidates value reaches qdrant-edge's recall {e['recall10']:.3f}")
    path = common.save("vectors_paired", res["states"], {"edge_load_s": res["edge_load_s"], "vectors": a.vectors,
                                                          "data": a.data})
    print(f"\nresults appended to {path}")
    return 0


def label_vectors(a: argparse.Namespace):
    """``--data labels``: the benchmark corpus's concept labels embedded with ``hash:<dim>``
    (character n-grams: structured like real label embeddings, unlike Gaussian noise, which
    is the worst case for any approximate index); queries are held-out labels."""
    import re

    from kgservice.vectors import make_embedder

    src = WORK / "corpus-1000000-s7" / "part-00000.units"
    if not src.exists():
        import subprocess

        subprocess.run([sys.executable, str(Path(__file__).with_name("corpus.py")), "--units", "1000000",
                        "--out", str(src.parent)], check=True)
    want = a.vectors + a.queries + 10
    labels: dict[str, None] = {}
    for path in sorted(src.parent.glob("part-*.units")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                for lab in re.findall(r"\{([^{}]+)\}", line):
                    labels.setdefault(lab, None)
                if len(labels) >= want:
                    break
        if len(labels) >= want:
            break
    names = list(labels)[:want]
    if len(names) < want:
        raise SystemExit(f"only {len(names)} distinct labels in the corpus")
    e = make_embedder(f"hash:{a.dim}")
    vecs = e.embed(names)
    return vecs[:a.vectors], vecs[a.vectors:]


def embed_child(a: argparse.Namespace) -> dict:
    from kgservice.vectors import make_embedder

    e = make_embedder("default")
    t0 = time.perf_counter()
    e.embed(["warm up"])
    load_s = time.perf_counter() - t0
    lat = []
    for i in range(100):
        t0 = time.perf_counter()
        e.embed([f"adaptive lattice {i}"])
        lat.append(time.perf_counter() - t0)
    return {"embedder": e.name, "load_s": load_s, "one_label": common.summary_ms(lat)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vectors", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--qdrant-url", default=os.environ.get("KG_QDRANT_URL"))
    ap.add_argument("--data", choices=["random", "labels"], default="random",
                    help="random unit vectors, or the corpus's labels embedded with hash:<dim>")
    ap.add_argument("--neo4j-uri", default=os.environ.get("KG_NEO4J_URI"))
    ap.add_argument("--neo4j-candidates", default="10,100,200",
                    help="neighbours asked of Neo4j's index per search, one row each (the store's default: 50)")
    ap.add_argument("--backends", default="qdrant-local,edge,neo4j,server")
    ap.add_argument("--paired", action="store_true",
                    help="qdrant-edge and Neo4j in one process, search rounds alternated (needs --neo4j-uri)")
    ap.add_argument("--neo4j-load", default="incremental,bulk",
                    help="--paired: how Neo4j's index is filled, in turn: incremental (old writer) | bulk")
    ap.add_argument("--neo4j-data", default=os.environ.get("KG_BENCH_NEO4J_DATA"),
                    help="the Neo4j server's data dir (its pid file): server CPU per query")
    ap.add_argument("--rounds", type=int, default=3, help="--paired: alternated search rounds")
    ap.add_argument("--child", choices=["vectors", "embed", "paired"], help=argparse.SUPPRESS)
    ap.add_argument("--backend", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child == "vectors":
        common.emit(child(a))
        return 0
    if a.child == "embed":
        common.emit(embed_child(a))
        return 0
    if a.child == "paired":
        common.emit(paired_child(a))
        return 0
    if a.paired:
        if not a.neo4j_uri:
            print("--paired needs --neo4j-uri (and NEO4J_PASSWORD)", file=sys.stderr)
            return 2
        return paired(a)
    rows = []
    for b in [x.strip() for x in a.backends.split(",") if x.strip()]:
        if b == "server" and not a.qdrant_url:
            rows.append({"backend": "server", "skipped": "no Qdrant server (give --qdrant-url)"})
            continue
        if b == "neo4j" and not a.neo4j_uri:
            rows.append({"backend": "neo4j", "skipped": "no Neo4j (give --neo4j-uri and NEO4J_PASSWORD)"})
            continue
        print(f"... {b}", file=sys.stderr, flush=True)
        args = ["vectors", "--backend", b, "--vectors", str(a.vectors), "--dim", str(a.dim), "--queries", str(a.queries),
                "--data", a.data, "--neo4j-candidates", a.neo4j_candidates]
        if a.qdrant_url:
            args += ["--qdrant-url", a.qdrant_url]
        if a.neo4j_uri:
            args += ["--neo4j-uri", a.neo4j_uri]
        rows.extend(common.run_child(Path(__file__), args, timeout=3600)["rows"])
    emb = common.run_child(Path(__file__), ["embed"], timeout=600)
    headers = ["backend", "vectors", "dim", "upsert s", "optimize s", "top-10 p50 ms", "top-10 p95 ms",
               "CPU p50 ms", "CPU p95 ms", "recall@10", "peak RSS MB"]
    body = []
    for r in rows:
        if "skipped" in r:
            body.append([r["backend"], "—", "—", "—", "—", "—", "—", "—", "—", "—", r["skipped"]])
        else:
            body.append([r["backend"], r["vectors"], r["dim"], r["upsert_s"], r["optimize_s"], r["search"]["p50"],
                         r["search"]["p95"], r["search_cpu"]["p50"], r["search_cpu"]["p95"], r["recall10"], r["peak_rss_mb"]])
    print(common.table(headers, body, title="Vector entry: top-10 search latency"))
    by = {r["backend"]: r for r in rows if "skipped" not in r}
    if "qdrant-local" in by and "edge" in by:
        print(f"\nratio p50: qdrant-client local / qdrant-edge = "
              f"{by['qdrant-local']['search']['p50'] / by['edge']['search']['p50']:.0f}x")
    for name, r in by.items():
        if name.startswith("neo4j") and "edge" in by:
            print(f"ratio p50: {name} / qdrant-edge = {r['search']['p50'] / by['edge']['search']['p50']:.1f}x, "
                  f"recall@10 {r['recall10']:.3f} vs {by['edge']['recall10']:.3f}")
    print(f"query embedding ({emb['embedder']}): one label p50 {emb['one_label']['p50']:.1f} ms, "
          f"p95 {emb['one_label']['p95']:.1f} ms; model load {emb['load_s']:.1f} s once per process")
    path = common.save("vectors", rows, {"embedder": emb})
    print(f"\nresults appended to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

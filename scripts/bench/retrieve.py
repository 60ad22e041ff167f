#!/usr/bin/env python
"""``kb.retrieve`` latency on Neo4j at a corpus size, code trees side by side (issue 17).

    python scripts/bench/retrieve.py --size 100k --ingest                       # load the store once
    python scripts/bench/retrieve.py --size 100k --code old=/tmp/kg-old,new=. --rounds 3

Why: retrieval consults two indexes built from the whole store (the entry step's label index,
the BM25 unit index: ``kgservice/stores/versioned.py``). Each must know whether the store changed
since it was built; that check runs on every question, so its cost is paid on every retrieve.

``--ingest`` wipes the benchmark Neo4j and ingests the seeded corpus (``corpus.py``) with the
hash embedder (``hash:64``: vectors without a model) into a data dir under
``$KG_BENCH_DIR/retrieve-<size>`` (the vectors live there). Then each round runs every
``--code`` tree in turn, each in a fresh child process on the same server and the same data
dir: one retrieve to build the indexes (its time reported apart, "build s"), a warm-up of 20
questions, then ``--questions`` questions, each timed once. Questions are made from corpus
units drawn with a fixed seed ("What does <subject> <predicate>?"), the same for every tree.

Per tree: p50 / p95 wall ms, client CPU ms per retrieve (this process, ``time.process_time``),
Neo4j server CPU ms per retrieve (the JVM's utime + stime from ``/proc/<pid>/stat`` across the
timed loop; needs ``KG_BENCH_NEO4J_DATA`` for the pid file), and the store calls one retrieve
made that check for changes: ``counts()`` calls and change-log version reads. Load average at
start and end. The machine is shared: compare trees within one run (the ratios at the end).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import WORK  # noqa: E402

WARMUP = 20
_LINE = re.compile(r"^#\S+\s+\{((?:\\.|[^}\\])*)\}\s+\[((?:\\.|[^\]\\])*)\]")


def questions(n_units: int, count: int) -> list[str]:
    import corpus

    cdir = corpus.ensure(n_units, common.SEED, WORK)
    pairs = []
    for f in sorted(cdir.glob("part-*.units")):
        for line in f.read_text("utf-8").splitlines():
            m = _LINE.match(line)
            if m:
                pairs.append((m.group(1), m.group(2)))
    rng = random.Random(common.SEED)
    return [f"What does {s} {p}?" for s, p in rng.sample(pairs, count + WARMUP)]


def settings(size: str):
    from kgservice.config import Settings

    env = common.neo4j_env()
    return Settings(data_dir=WORK / f"retrieve-{size}", embedder="hash:64", vector_backend="edge", backend="neo4j",
                    neo4j_uri=env["uri"], neo4j_user=env["user"], neo4j_password=env["password"])


def server_cpu_s() -> float | None:
    pid = common.neo4j_server_pid()
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child_ingest(size: str) -> dict:
    import corpus
    from kgservice.notation import parse_units
    from kgservice.service import KnowledgeBase

    n = common.SIZES[size]
    shutil.rmtree(WORK / f"retrieve-{size}", ignore_errors=True)  # the vectors of an earlier load
    kb = KnowledgeBase(settings(size))
    kb.store.write_statements("wipe_all")  # keys and jobs too
    kb.store.apply_schema()
    t0 = time.perf_counter()
    added = 0
    for f in sorted(corpus.ensure(n, common.SEED, WORK).glob("part-*.units")):
        added += kb.ingest_units(parse_units(f.read_text("utf-8"), kb.lexicon, doc=f.name), embed=True).units_added
    kb.close()
    return {"units_added": added, "seconds": round(time.perf_counter() - t0, 1)}


def child_measure(size: str, qfile: str, label: str) -> dict:
    from kgservice.service import KnowledgeBase

    qs = json.loads(Path(qfile).read_text("utf-8"))
    kb = KnowledgeBase(settings(size))
    store = kb.store
    calls = {"counts": 0, "version": 0}
    real_counts = store.counts

    def counting_counts():
        calls["counts"] += 1
        return real_counts()

    store.counts = counting_counts
    clock = store.version_clock() if hasattr(store, "version_clock") else None
    if clock is not None:
        real_version = clock.feed.version

        def counting_version():
            calls["version"] += 1
            return real_version()

        clock.feed.version = counting_version
    units = int(real_counts()["units"])
    t0 = time.perf_counter()
    kb.retrieve(qs[0])  # builds the label index and the BM25 index
    build_s = time.perf_counter() - t0
    for q in qs[1:WARMUP]:
        kb.retrieve(q)
    timed = qs[WARMUP:]
    calls = {k: 0 for k in calls}
    walls: list[float] = []
    cpu0, srv0 = time.process_time(), server_cpu_s()
    for q in timed:
        t = time.perf_counter()
        kb.retrieve(q)
        walls.append(time.perf_counter() - t)
    cpu1, srv1 = time.process_time(), server_cpu_s()
    kb.close()
    n = len(timed)
    return {"code": label, "units": units, "questions": n, "build_s": round(build_s, 2),
            "p50_ms": round(common.pct(walls, 50) * 1000, 2), "p95_ms": round(common.pct(walls, 95) * 1000, 2),
            "mean_ms": round(statistics.mean(walls) * 1000, 2),
            "client_cpu_ms": round((cpu1 - cpu0) / n * 1000, 2),
            "server_cpu_ms": round((srv1 - srv0) / n * 1000, 2) if srv0 is not None and srv1 is not None else None,
            "counts_per_retrieve": round(calls["counts"] / n, 2), "version_reads_per_retrieve": round(calls["version"] / n, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="100k", choices=sorted(common.SIZES))
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3, help="each round runs every --code tree in turn")
    ap.add_argument("--code", default="", help="LABEL=DIR,... kgservice trees to compare (default: this one)")
    ap.add_argument("--ingest", action="store_true", help="wipe the benchmark Neo4j and load the corpus first")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--code-dir", default="", help=argparse.SUPPRESS)
    ap.add_argument("--code-label", default="this", help=argparse.SUPPRESS)
    ap.add_argument("--qfile", default="", help=argparse.SUPPRESS)
    ap.add_argument("--do", default="measure", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        if a.code_dir:
            sys.path.insert(0, str(Path(a.code_dir).resolve()))
        common.emit(child_ingest(a.size) if a.do == "ingest" else child_measure(a.size, a.qfile, a.code_label))
        return
    script = Path(__file__).resolve()
    if a.ingest:
        print(f"... ingesting the {a.size} corpus into {common.neo4j_env()['uri']}", flush=True)
        print(json.dumps(common.run_child(script, ["--size", a.size, "--do", "ingest"], timeout=7200)), flush=True)
    codes = [(c.split("=", 1)[0].strip(), c.split("=", 1)[1].strip()) for c in a.code.split(",") if "=" in c]
    codes = codes or [("this", "")]
    qfile = WORK / f"retrieve-{a.size}-questions.json"
    qfile.write_text(json.dumps(questions(common.SIZES[a.size], a.questions)), "utf-8")
    load_start = [round(x, 2) for x in os.getloadavg()]
    rows = []
    for rnd in range(a.rounds):
        for label, d in codes:
            print(f"... {a.size} code={label} round {rnd + 1}", flush=True)
            args = ["--size", a.size, "--qfile", str(qfile), "--code-label", label] + (["--code-dir", d] if d else [])
            rows.append({**common.run_child(script, args), "round": rnd + 1})
    load_end = [round(x, 2) for x in os.getloadavg()]
    headers = ["code", "round", "units", "build s", "p50 ms", "p95 ms", "client CPU ms", "server CPU ms",
               "counts()/retrieve", "version reads/retrieve"]
    print(common.table(headers, [[r["code"], r["round"], r["units"], r["build_s"], r["p50_ms"], r["p95_ms"],
                                  r["client_cpu_ms"], r["server_cpu_ms"], r["counts_per_retrieve"],
                                  r["version_reads_per_retrieve"]] for r in rows]))
    print(f"load average: start {load_start}, end {load_end}")
    if len(codes) == 2:
        (a_lbl, _), (b_lbl, _) = codes
        for key in ("p50_ms", "p95_ms", "client_cpu_ms", "server_cpu_ms"):
            ratios = [x[key] / y[key] for x, y in zip([r for r in rows if r["code"] == a_lbl],
                                                        [r for r in rows if r["code"] == b_lbl])
                      if x.get(key) and y.get(key)]
            if ratios:
                print(f"{key}: {a_lbl}/{b_lbl} median of same-round ratios {statistics.median(ratios):.2f}")
    path = common.save("retrieve", rows, {"size": a.size, "load_avg_start": load_start, "load_avg_end": load_end})
    print(f"results: {path}")


if __name__ == "__main__":
    main()

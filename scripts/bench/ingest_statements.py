#!/usr/bin/env python
"""Where a Neo4j ingest batch's time goes: server time per statement and the client's phases.

    python scripts/bench/ingest_statements.py --size 100k [--last 10] [--code DIR]

Ingests the seeded corpus (scripts/bench/corpus.py) file by file into the benchmark Neo4j
(wiped first), as scripts/bench/ingest.py does, and reports for the last ``--last`` files
(the store then holds what the files before them wrote: ``--size 1m --last 10`` measures
batches 91-100 of 1M):

* per statement of the write transaction, the server's time (Bolt summary
  ``result_available_after + result_consumed_after``) and the commit's wall time;
* the client's phases of ``Neo4jStore._ingest_once``: up to the first statement sent in the
  write transaction (which opens before validation, so validation runs in the second phase),
  from there to the commit, and the commit.

It wraps the driver's transaction methods in this process only (a measuring aid, not an API);
numbers are per 10k units. Needs the benchmark server (KG_BENCH_NEO4J_URI, NEO4J_PASSWORD).
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import WORK  # noqa: E402

SIZES = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="100k", choices=sorted(SIZES))
    ap.add_argument("--last", type=int, default=10, help="files measured at the end (default 10)")
    ap.add_argument("--code", default=str(Path(__file__).resolve().parents[2]), help="kgservice tree to measure")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(Path(a.code).resolve()))
    import corpus
    from neo4j._sync.work.transaction import TransactionBase

    from kgservice.config import Settings
    from kgservice.service import KnowledgeBase
    try:
        from kgservice.stores.neo4j import Neo4jStore
    except ImportError:  # a tree from before the store became a package (--code)
        from kgservice.stores.neo4j import Neo4jStore

    server: collections.Counter = collections.Counter()
    runs: collections.Counter = collections.Counter()
    phase: collections.Counter = collections.Counter()
    pending: list = []
    run, commit = TransactionBase.run, TransactionBase._commit

    def timed_run(self, query, parameters=None, **kw):
        r = run(self, query, parameters, **kw)
        pending.append((query.split("\n", 1)[0].lstrip("/ ").split(":")[0] if query.startswith("//") else query[:30], r))
        if "_first" not in phase:
            phase["_first"] = time.perf_counter()
        return r

    def timed_commit(self):
        for name, r in pending:
            s = r.consume()
            server[name] += (s.result_available_after or 0) + (s.result_consumed_after or 0)
            runs[name] += 1
        pending.clear()
        t = time.perf_counter()
        out = commit(self)
        server["COMMIT (wall)"] += (time.perf_counter() - t) * 1000
        runs["COMMIT (wall)"] += 1
        phase["_commit"] = time.perf_counter() - t
        return out

    once = Neo4jStore._ingest_once

    def timed_once(self, *args, **kw):
        phase.pop("_first", None)
        phase["_commit"] = 0.0
        t = time.perf_counter()
        try:
            return once(self, *args, **kw)
        finally:
            end = time.perf_counter()
            first = phase.pop("_first", end)
            phase["start to the first statement sent"] += first - t
            phase["first statement to commit (validation too)"] += end - first - phase["_commit"]
            phase["commit"] += phase.pop("_commit")

    TransactionBase.run, TransactionBase._commit = timed_run, timed_commit
    Neo4jStore._ingest_once = timed_once
    n = SIZES[a.size]
    files = sorted(corpus.ensure(n, common.SEED, WORK).glob("part-*.units"))
    nb = common.neo4j_env()
    kb = KnowledgeBase(Settings(data_dir=WORK / "kb" / "ingest-statements", backend="neo4j",
                                neo4j_uri=nb["uri"], neo4j_user=nb["user"], neo4j_password=nb["password"]))
    kb.store.write_statements("wipe_all")  # keys and jobs too
    kb.store.apply_schema()
    units_measured, wall = 0, 0.0
    for k, f in enumerate(files):
        units = kb.parse_unit_files([f])
        if k == len(files) - a.last:
            server.clear(), runs.clear(), phase.clear()
        t = time.perf_counter()
        kb.ingest_units(units, embed=False)
        if k >= len(files) - a.last:
            wall += time.perf_counter() - t
            units_measured += len(units)
    kb.close()
    per = units_measured / 10_000
    print(f"last {a.last} of {len(files)} files: {units_measured} units in {wall:.1f} s, "
          f"{units_measured / wall:,.0f} units/s")
    print("server time per statement (s per 10k units):")
    for name, ms in sorted(server.items(), key=lambda kv: -kv[1]):
        print(f"  {name:32s} {ms / 1000 / per:6.3f}   ({runs[name]} runs)")
    print("client phases (s per 10k units):")
    for name, s in phase.items():
        if not name.startswith("_"):
            print(f"  {name:48s} {s / per:6.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

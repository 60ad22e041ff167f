#!/usr/bin/env python
"""Spreading activation on Neo4j: the resident procedure (kg.spreadLists, neo4j-plugin/) vs
the Python hop loop (one spread_step.cypher round trip per hop), side by side in one run.

    python scripts/bench/spread_resident.py --sizes 1m [--seeds 100] [--ingest]

The benchmark Neo4j must hold the size (``expand.py --ingest`` / ``ingest.py`` load it) and
have the plugin loaded (``scripts/neo4j start`` builds and copies it). Seeds are expand.py's
(``mention``: the subject of a uniformly drawn unit; ``uniform``: uniform over entry nodes).
Each query runs, in alternating order, through ``spread_activation(store, [seed], K=3,
eps=0.05, default tau)`` with the store's resident path on and off, and once more as the bare
procedure call without shipping the energies back (``CALL ... YIELD hops``: the server's own
time plus one round trip; ``server`` is the part the server reports, available-after +
consumed-after). Both paths must give the same energies (checked per query,
relative 1e-9: the hop loop adds in another order). Latency is wall time in one warm process,
after 20 warm-up queries per path (``--warmup``).

CPU time per query is reported beside it (the benchmark server's JVM, from /proc, plus this
client process): on a shared machine the wall time mostly measures the queue for a core,
while the CPU a query burns is what an idle machine would spend on it (the benchmark server
serves nothing else; its background threads add a little; /proc ticks are 10 ms).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

WARMUP = 20  # per path; --warmup overrides
BARE = ("CALL kg.spreadLists($seeds, $tau, $epsilon, $max_hops, 0, 0, 0.0, true) "
        "YIELD hops RETURN hops")


def child(a: argparse.Namespace) -> dict:
    from expand import open_store, seed_sets

    from kgservice.expansion import SpreadParams, spread_activation

    n = a.size
    seeds = seed_sets(n, a.seeds)
    store = open_store("neo4j", n)
    units = store.counts()["units"]
    if units != n:
        raise SystemExit(f"Neo4j holds {units} units, expected {n}: load it with expand.py --sizes "
                         f"{common.size_label(n)} --backends neo4j --ingest")
    if "kg.spreadLists" not in store.plugin_procedures():
        raise SystemExit("the benchmark Neo4j has no kg.* plugin: restart it with scripts/neo4j (it loads neo4j-plugin/)")
    params = SpreadParams(max_hops=3, epsilon=0.05)
    bare_params = {"tau": dict(params.tau), "epsilon": params.epsilon, "max_hops": params.max_hops}

    pid = common.neo4j_server_pid()
    if not pid:
        raise SystemExit("no pid file for the benchmark Neo4j: set KG_BENCH_NEO4J_DATA to its data dir")
    tick = os.sysconf("SC_CLK_TCK")

    def server_cpu() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick  # utime + stime of the whole JVM

    def run(resident: bool, seed: str) -> tuple[float, dict[str, float], float, float]:
        store.use_resident = resident
        s0, c0 = server_cpu(), time.process_time()
        t0 = time.perf_counter()
        energy = spread_activation(store, [seed], params).energy
        wall = time.perf_counter() - t0
        return wall, energy, server_cpu() - s0, time.process_time() - c0

    session = store.driver.session(database=store.database)

    def bare(seed: str) -> tuple[float, float]:
        """(wall time of the bare call, the server's own: available-after + consumed-after)."""
        t0 = time.perf_counter()
        summary = session.run(BARE, {"seeds": {seed: params.e0}, **bare_params}).consume()
        wall = time.perf_counter() - t0
        return wall, ((summary.result_available_after or 0) + (summary.result_consumed_after or 0)) / 1000

    out: dict = {"size": n, "seeds": a.seeds}
    for name, ss in seeds.items():
        for s in ss[:a.warmup]:
            run(True, s)
            run(False, s)
            bare(s)
        print(f"    {name}: warm", file=sys.stderr, flush=True)
        res, loop, bare_t, server_t, nodes, worst = [], [], [], [], [], 0.0
        cpu = {True: ([], []), False: ([], [])}  # path -> (server CPU s, client CPU s)
        for i, s in enumerate(ss):
            order = (True, False) if i % 2 == 0 else (False, True)
            got = {}
            for resident in order:
                t, energy, scpu, ccpu = run(resident, s)
                (res if resident else loop).append(t)
                cpu[resident][0].append(scpu)
                cpu[resident][1].append(ccpu)
                got[resident] = energy
            wall, server = bare(s)
            bare_t.append(wall)
            server_t.append(server)
            if set(got[True]) != set(got[False]):
                raise SystemExit(f"seed {s!r}: resident and hop loop activate different nodes")
            for k, v in got[True].items():
                worst = max(worst, abs(v - got[False][k]) / max(abs(v), 1e-300))
            nodes.append(len(got[True]))
        out[name] = {"resident": common.summary_ms(res), "hop_loop": common.summary_ms(loop),
                     "bare_call": common.summary_ms(bare_t), "server": common.summary_ms(server_t),
                     "resident_cpu": {"server": common.summary_ms(cpu[True][0]), "client": common.summary_ms(cpu[True][1]),
                                      "total": common.summary_ms([a + b for a, b in zip(*cpu[True])])},
                     "hop_loop_cpu": {"server": common.summary_ms(cpu[False][0]), "client": common.summary_ms(cpu[False][1]),
                                      "total": common.summary_ms([a + b for a, b in zip(*cpu[False])])},
                     "nodes_median": statistics.median(nodes),
                     "nodes_max": max(nodes), "max_rel_diff": worst}
        print(f"    {name}: resident p95 {out[name]['resident']['p95']:.1f} ms, hop loop "
              f"{out[name]['hop_loop']['p95']:.1f} ms", file=sys.stderr, flush=True)
    session.close()
    store.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1m")
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=WARMUP, help="warm-up queries per path (default 20)")
    ap.add_argument("--ingest", action="store_true", help="(re)load Neo4j with each size first (ingest.py child)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--size", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        common.emit(child(a))
        return 0
    rows = []
    for n in common.parse_sizes(a.sizes):
        if a.ingest:
            print(f"... loading {common.size_label(n)} into Neo4j", file=sys.stderr, flush=True)
            common.run_child(Path(__file__).with_name("ingest.py"),
                             ["--backend", "neo4j", "--size", str(n), "--embed", "none", "--vectors", "qdrant"],
                             timeout=7200)
        print(f"... spreading on Neo4j {common.size_label(n)}", file=sys.stderr, flush=True)
        load = [round(x, 2) for x in __import__("os").getloadavg()]
        r = common.run_child(Path(__file__), ["--size", str(n), "--seeds", str(a.seeds), "--warmup", str(a.warmup)],
                             timeout=7200)
        r["load_avg_before"] = load
        r["load_avg_after"] = [round(x, 2) for x in __import__("os").getloadavg()]
        rows.append(r)
    headers = ["size", "seeds", "resident p50", "resident p95", "hop loop p50", "hop loop p95", "loop/resident p50",
               "loop/resident p95", "bare call p50", "bare call p95", "server p50", "server p95", "nodes (med)", "nodes (max)", "max rel diff"]
    body = []
    for r in rows:
        for name in ("mention", "uniform"):
            x = r[name]
            body.append([common.size_label(r["size"]), name, x["resident"]["p50"], x["resident"]["p95"],
                         x["hop_loop"]["p50"], x["hop_loop"]["p95"],
                         f"{x['hop_loop']['p50'] / x['resident']['p50']:.1f}x",
                         f"{x['hop_loop']['p95'] / x['resident']['p95']:.1f}x",
                         x["bare_call"]["p50"], x["bare_call"]["p95"], x.get("server", {}).get("p50"),
                         x.get("server", {}).get("p95"), x["nodes_median"], x["nodes_max"],
                         f"{x['max_rel_diff']:.1e}"])
    print(common.table(headers, body, title="Spreading activation on Neo4j, wall ms (K=3, eps=0.05, default tau)"))
    headers = ["size", "seeds", "path", "server CPU p50", "server CPU p95", "client CPU p50", "client CPU p95",
               "total CPU p50", "total CPU p95"]
    body = []
    for r in rows:
        for name in ("mention", "uniform"):
            for path in ("resident", "hop_loop"):
                c = r[name][f"{path}_cpu"]
                body.append([common.size_label(r["size"]), name, path.replace("_", " "), c["server"]["p50"],
                             c["server"]["p95"], c["client"]["p50"], c["client"]["p95"], c["total"]["p50"],
                             c["total"]["p95"]])
    print()
    print(common.table(headers, body, title="CPU time per query, ms (server JVM + client process)"))
    print("load average before / after: " + "; ".join(f"{common.size_label(r['size'])} {r['load_avg_before']} / "
                                                      f"{r['load_avg_after']}" for r in rows))
    path = common.save("spread_resident", rows)
    print(f"\nresults appended to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

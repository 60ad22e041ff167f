#!/usr/bin/env python
"""Spreading activation on Neo4j through the kg.* plugin: the resident in-memory graph vs the
per-call store walk (and, with ``--hop-loop``, the Python hop loop), side by side in one run.

    python scripts/bench/spread_resident.py --sizes 1m [--seeds 100] [--limit 20] [--hop-loop] [--params service|design] [--ingest]

The benchmark Neo4j must hold the size (``expand.py --ingest`` / ``ingest.py`` load it) and
have the plugin loaded (``scripts/neo4j start`` builds and copies it). Seeds are expand.py's
(``mention``: the subject of a uniformly drawn unit; ``uniform``: uniform over entry nodes).
Parameters are the service's defaults (``--params service``): K=3, ε=0.05, τ and degree
damping 0.5 / no seed backflow from the packaged lexicon (what ``KnowledgeBase.spread_params()``
gives); ``--params design`` is DESIGN §4.3 as written (the library's SpreadParams(): no damping,
seed backflow on), which activates far more nodes (the issue-17 baseline was measured so).

First the cold start: the resident graph is dropped (``kg.spreadGraphDrop``) and rebuilt
(``kg.spreadGraph``): build time (the plugin's own clock and the call's wall time), its size
(primitive arrays, bytes) and the server's RSS before / after. Then, per query, in rotating
order, ``spread_activation(store, [seed], params)`` through:

* ``walk``: kg.spreadLists reading the store per call (the plugin before the resident graph),
  every activated node shipped back;
* ``resident``: the resident graph, every activated node shipped back;
* ``resident top``: the resident graph, ``limit`` most energetic nodes (``--limit``, default
  20 = ``kg expand``'s and the REST API's default), ``activated`` counting the rest;
* ``hop loop`` (``--hop-loop``): spread_step.cypher per hop, from Python.

and once more as the bare resident calls without the client's unpacking (``server``: the
part the server reports, available-after + consumed-after). The resident energies must equal
the walk's bit for bit and the top-N must be the walk's ranking cut at N (checked per query).
Latency is wall time in one warm process after ``--warmup`` warm-up queries per path; CPU
time per query (benchmark JVM from /proc + this client process) beside it: on a shared
machine the wall time mostly measures the queue for a core (/proc ticks are 10 ms).
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
BARE = ("CALL kg.spreadLists($seeds, $tau, $epsilon, $max_hops, 0, 0, $degree_damping, $seed_backflow, $limit, "
        "'resident') YIELD hops RETURN hops")
PATHS = ("walk", "resident", "resident_top", "hop_loop")


def design_params():
    """DESIGN §4.3 as written: the library's SpreadParams() defaults (no damping, backflow on)."""
    from kgservice.expansion import SpreadParams

    return SpreadParams(max_hops=3, epsilon=0.05)


def service_params():
    """The service's spreading defaults (lexicon τ, damping, backflow; settings K and ε)."""
    from kgservice.expansion import SpreadParams
    from kgservice.families import SPREAD_KINDS
    from kgservice.families.lexicon import Lexicon

    lex = Lexicon.load()
    return SpreadParams(tau={k: lex.tau_of(k) for k in SPREAD_KINDS}, epsilon=0.05, max_hops=3,
                        degree_damping=float(lex.spread.get("degree_damping", 0.0)),
                        seed_backflow=bool(lex.spread.get("seed_backflow", True)))


def child(a: argparse.Namespace) -> dict:
    from expand import open_store, seed_sets

    from kgservice.expansion import spread_activation

    n = a.size
    seeds = seed_sets(n, a.seeds)
    store = open_store("neo4j", n)
    units = store.counts()["units"]
    if units < n * 0.98:  # duplicate facts merge at ingest: a few hundred fewer than the corpus lines
        raise SystemExit(f"Neo4j holds {units} units, expected ~{n}: load it with expand.py --sizes "
                         f"{common.size_label(n)} --backends neo4j --ingest")
    if "kg.spreadGraph" not in store.plugin_procedures():
        raise SystemExit("the benchmark Neo4j has no resident kg.* plugin: restart it with scripts/neo4j (it loads neo4j-plugin/)")
    params = service_params() if a.params == "service" else design_params()
    bare_params = {"tau": dict(params.tau), "epsilon": params.epsilon, "max_hops": params.max_hops,
                   "degree_damping": params.degree_damping, "seed_backflow": params.seed_backflow}

    pid = common.neo4j_server_pid()
    if not pid:
        raise SystemExit("no pid file for the benchmark Neo4j: set KG_BENCH_NEO4J_DATA to its data dir")
    tick = os.sysconf("SC_CLK_TCK")

    def server_cpu() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick  # utime + stime of the whole JVM

    session = store.driver.session(database=store.database)

    # -- cold start: drop and rebuild the resident graph ---------------------------------------
    session.run("CALL kg.spreadGraphDrop()").consume()
    rss0 = common.rss_mb(pid)
    s0, t0 = server_cpu(), time.perf_counter()
    stats = session.run("CALL kg.spreadGraph()").single().data()
    cold = {"wall_s": round(time.perf_counter() - t0, 2), "server_cpu_s": round(server_cpu() - s0, 2),
            "build_s": stats["buildMillis"] / 1000, "nodes": stats["nodes"], "rows": stats["rows"],
            "graph_mb": round(stats["bytes"] / 2**20, 1), "server_rss_mb_before": rss0,
            "server_rss_mb_after": common.rss_mb(pid), "engine": stats["engine"]}
    print(f"    cold start: {cold}", file=sys.stderr, flush=True)

    def run(path: str, seed: str):
        store.use_resident = path != "hop_loop"
        store.spread_engine = "walk" if path == "walk" else "resident"
        limit = a.limit if path == "resident_top" else None
        s0, c0 = server_cpu(), time.process_time()
        t0 = time.perf_counter()
        res = spread_activation(store, [seed], params, limit=limit)
        wall = time.perf_counter() - t0
        return wall, res, server_cpu() - s0, time.process_time() - c0

    def bare(seed: str, limit: int) -> tuple[float, float]:
        """(wall time of the bare resident call, the server's own: available-after + consumed-after)."""
        t0 = time.perf_counter()
        summary = session.run(BARE, {"seeds": {seed: params.e0}, "limit": limit, **bare_params}).consume()
        wall = time.perf_counter() - t0
        return wall, ((summary.result_available_after or 0) + (summary.result_consumed_after or 0)) / 1000

    paths = [p for p in PATHS if p != "hop_loop" or a.hop_loop]
    out: dict = {"size": n, "seeds": a.seeds, "limit": a.limit, "cold": cold, "units": units, "param_set": a.params,
                 "params": {"K": params.max_hops, "epsilon": params.epsilon, "degree_damping": params.degree_damping,
                            "seed_backflow": params.seed_backflow, "tau": dict(params.tau)}}
    for name, ss in seeds.items():
        for s in ss[:a.warmup]:
            for p in paths:
                run(p, s)
            bare(s, 0)
            bare(s, a.limit)
        print(f"    {name}: warm", file=sys.stderr, flush=True)
        wall = {p: [] for p in paths}
        cpu = {p: ([], []) for p in paths}  # path -> (server CPU s, client CPU s)
        bare_full, bare_top, nodes, worst_loop = ([], []), ([], []), [], 0.0
        for i, s in enumerate(ss):
            order = paths[i % len(paths):] + paths[:i % len(paths)]
            got = {}
            for p in order:
                t, res, scpu, ccpu = run(p, s)
                wall[p].append(t)
                cpu[p][0].append(scpu)
                cpu[p][1].append(ccpu)
                got[p] = res
            for lim, into in ((0, bare_full), (a.limit, bare_top)):
                w, server = bare(s, lim)
                into[0].append(w)
                into[1].append(server)
            want = got["walk"]
            if got["resident"].energy != want.energy or got["resident"].hops != want.hops:
                raise SystemExit(f"seed {s!r}: the resident graph and the store walk disagree")
            top = got["resident_top"]
            if list(top.energy.items()) != want.ranked(a.limit) or top.activated != len(want.energy):
                raise SystemExit(f"seed {s!r}: the resident top-{a.limit} is not the walk's ranking")
            if "hop_loop" in got:
                loop = got["hop_loop"].energy
                if set(loop) != set(want.energy):
                    raise SystemExit(f"seed {s!r}: the hop loop activates other nodes")
                for k, v in want.energy.items():
                    worst_loop = max(worst_loop, abs(v - loop[k]) / max(abs(v), 1e-300))
            nodes.append(len(want.energy))
        row = {p: common.summary_ms(wall[p]) for p in paths}
        row.update({f"{p}_cpu": {"server": common.summary_ms(cpu[p][0]), "client": common.summary_ms(cpu[p][1]),
                                 "total": common.summary_ms([x + y for x, y in zip(*cpu[p])])} for p in paths})
        row.update({"bare_full": common.summary_ms(bare_full[0]), "server_full": common.summary_ms(bare_full[1]),
                    "bare_top": common.summary_ms(bare_top[0]), "server_top": common.summary_ms(bare_top[1]),
                    "nodes_median": statistics.median(nodes), "nodes_max": max(nodes),
                    "hop_loop_max_rel_diff": worst_loop if a.hop_loop else None})
        out[name] = row
        print(f"    {name}: resident top p95 {row['resident_top']['p95']:.1f} ms, resident {row['resident']['p95']:.1f}"
              f" ms, walk {row['walk']['p95']:.1f} ms", file=sys.stderr, flush=True)
    if a.patch_batches:
        out["patch"] = patch_phase(a, store, session, seeds["mention"], params, run)
    final = session.run("CALL kg.spreadGraph()").single().data()
    out["rebuilds_during_run"] = final["rebuilds"] - stats["rebuilds"]
    session.close()
    store.close()
    return out


def patch_phase(a: argparse.Namespace, store, session, seeds: list[str], params, run) -> dict:
    """Coherence under writes, timed: ``--patch-batches`` small ingests (``--patch-units`` new
    units each, about popular seeds, so their rows change), each followed by one spread from
    a seed the batch touched: that call reads the change log and patches the touched nodes
    before spreading. Its energies must equal the store walk's; the next call (no change) is
    the steady state. Adds units to the benchmark store (ids ``zbench<run>-…``)."""
    from kgservice.families.lexicon import Lexicon
    from kgservice.notation import parse_units

    lex = Lexicon.load()
    tag = f"zbench{int(time.time())}"
    after, steady = [], []
    for b in range(a.patch_batches):
        seed = seeds[b % len(seeds)]
        lines = [f"#{tag}-{b}-{i} {{{seed}}} [is a] {{{tag} concept {b} {i}}}" for i in range(a.patch_units)]
        units = parse_units("\n".join(lines) + "\n", lex, doc=f"{tag}.units")
        store.ingest(units)
        t, res, _, _ = run("resident", seed)
        after.append(t)
        walk = run("walk", seed)[1]
        if res.energy != walk.energy:
            raise SystemExit(f"after ingest {b}: the patched resident graph and the store walk disagree")
        if not any(k.startswith(f"{tag} concept {b} ") for k in res.energy):
            raise SystemExit(f"after ingest {b}: the new nodes were not reached")
        steady.append(run("resident", seed)[0])
    stats = session.run("CALL kg.spreadGraph()").single().data()
    return {"batches": a.patch_batches, "units_per_batch": a.patch_units, "first_spread_after_ingest": common.summary_ms(after),
            "next_spread": common.summary_ms(steady), "patches": stats["patches"], "patched_nodes": stats["patchedNodes"],
            "rebuilds": stats["rebuilds"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1m")
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--limit", type=int, default=20, help="top-N of the 'resident top' path (default 20)")
    ap.add_argument("--warmup", type=int, default=WARMUP, help="warm-up queries per path (default 20)")
    ap.add_argument("--hop-loop", action="store_true", help="also time the Python hop loop (slow at 1M)")
    ap.add_argument("--patch-batches", type=int, default=0,
                    help="then N small ingests, each followed by a spread that patches the resident graph (default 0)")
    ap.add_argument("--patch-units", type=int, default=50, help="new units per --patch-batches ingest (default 50)")
    ap.add_argument("--params", choices=("service", "design"), default="service",
                    help="service: the lexicon's damping 0.5 / no backflow (default); design: DESIGN §4.3 as written")
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
        load = [round(x, 2) for x in os.getloadavg()]
        args = ["--size", str(n), "--seeds", str(a.seeds), "--warmup", str(a.warmup), "--limit", str(a.limit),
                "--params", a.params, "--patch-batches", str(a.patch_batches), "--patch-units", str(a.patch_units)]
        r = common.run_child(Path(__file__), args + (["--hop-loop"] if a.hop_loop else []), timeout=7200)
        r["load_avg_before"] = load
        r["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
        rows.append(r)
    paths = [p for p in PATHS if p != "hop_loop" or a.hop_loop]
    label = {"walk": "walk", "resident": "resident", "resident_top": f"resident top-{a.limit}", "hop_loop": "hop loop"}
    headers = ["size", "seeds"] + [f"{label[p]} p50 / p95" for p in paths] + [
        "walk / resident p95", f"walk / top-{a.limit} p95", "server full p50 / p95", f"server top-{a.limit} p50 / p95",
        "nodes (med / max)"]
    body = []
    for r in rows:
        for name in ("mention", "uniform"):
            x = r[name]
            body.append([common.size_label(r["size"]), name]
                        + [f"{x[p]['p50']:.1f} / {x[p]['p95']:.1f}" for p in paths]
                        + [f"{x['walk']['p95'] / x['resident']['p95']:.1f}x",
                           f"{x['walk']['p95'] / x['resident_top']['p95']:.1f}x",
                           f"{x['server_full']['p50']:.0f} / {x['server_full']['p95']:.0f}",
                           f"{x['server_top']['p50']:.0f} / {x['server_top']['p95']:.0f}",
                           f"{x['nodes_median']:.0f} / {x['nodes_max']}"])
    knobs = "damping 0.5, no seed backflow" if a.params == "service" else "no damping, seed backflow (DESIGN as written)"
    print(common.table(headers, body, title=f"Spreading activation on Neo4j, wall ms (K=3, eps=0.05, lexicon tau, {knobs})"))
    headers = ["size", "seeds", "path", "server CPU p50", "server CPU p95", "client CPU p50", "client CPU p95",
               "total CPU p50", "total CPU p95"]
    body = []
    for r in rows:
        for name in ("mention", "uniform"):
            for p in paths:
                c = r[name][f"{p}_cpu"]
                body.append([common.size_label(r["size"]), name, label[p], c["server"]["p50"], c["server"]["p95"],
                             c["client"]["p50"], c["client"]["p95"], c["total"]["p50"], c["total"]["p95"]])
    print()
    print(common.table(headers, body, title="CPU time per query, ms (server JVM + client process)"))
    for r in rows:
        print(f"cold start {common.size_label(r['size'])}: {r['cold']}; rebuilds during the run: {r['rebuilds_during_run']}")
        if "patch" in r:
            p = r["patch"]
            print(f"after an ingest of {p['units_per_batch']} units ({p['batches']} times): first spread p50 / p95 "
                  f"{p['first_spread_after_ingest']['p50']:.1f} / {p['first_spread_after_ingest']['p95']:.1f} ms, "
                  f"next {p['next_spread']['p50']:.1f} / {p['next_spread']['p95']:.1f} ms; patches {p['patches']}, "
                  f"patched nodes {p['patched_nodes']}, rebuilds {p['rebuilds']}")
    print("load average before / after: " + "; ".join(f"{common.size_label(r['size'])} {r['load_avg_before']} / "
                                                      f"{r['load_avg_after']}" for r in rows))
    path = common.save("spread_resident", rows)
    print(f"\nresults appended to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

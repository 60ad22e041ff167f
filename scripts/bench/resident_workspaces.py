#!/usr/bin/env python
"""The Neo4j plugin's resident spreading graph with several workspaces in one database: what
building a workspace's graph costs, and what the per-workspace check costs (``kept``: the
database's relationship counts moved, nothing was logged in the graph's workspace, so the
plugin reads that workspace's own counts to tell another workspace's edit from an unlogged one
here). Is either paid over the whole database or over the one workspace?

    python scripts/bench/resident_workspaces.py [--big 200000] [--small 2000] [--others 1]
                                                [--rounds 3] [--checks 5] [--keep]

Needs a throwaway Neo4j with the plugin (``scripts/neo4j start``; ``KG_NEO4J_URI``,
``NEO4J_PASSWORD``): **the database is emptied first** (``--keep``: reuse what a previous run
loaded). Data: workspace ``big`` (``--big`` :Node nodes) and ``--others`` more workspaces of
the same size (``other0`` ...), and ``small`` (``--small``), each node with a RELATED_TO and an
OF edge to two others of its workspace (live, as kgservice writes them), written with Cypher
(no change log, no vectors: this measures the plugin, not an ingest). Per round:

* build: ``kg.spreadGraphDrop(ws)`` then ``kg.spreadGraph(ws)`` for ``big`` and for ``small``
  (the plugin's ``buildMillis`` and the call's wall time);
* check: ``--checks`` times, a hand edge in ``other0`` (moves the database's counts, logs
  nothing), then ``kg.spreadGraph(ws)`` for ``small`` and for ``big``: each call takes the kept
  path (its ``kept`` counter must grow by one), whose cost is the workspace's count query;
* ``idle``: ``kg.spreadGraph(small)`` with nothing changed (the graph is current: no check);
* the count query itself, run alone (median of ``--checks``) and PROFILEd (the plan's leaf
  operator and its database hits), as the plugin asks it now (``seek``) and as it asked it
  before (``scan``: ``n.ws`` alone), side by side.

Medians over rounds are printed; results go to ``results/resident_workspaces.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

BATCH = 10_000
KINDS = ("BELONGS_TO", "CONTENT", "OF", "RELATED_TO", "SYNONYM")


def count_queries() -> dict[str, str]:
    """The plugin's count query (ResidentGraph.WS_COUNTS) as it is now (``seek``: ``n.id IS
    NOT NULL`` lets the planner seek the (ws, id) constraint's index) and as it was (``scan``:
    ``n.ws`` alone, which the planner answers with a scan of every :Node)."""
    ret = ", ".join(f"sum(COUNT {{ (n)-[:`{k}`]->() }}) AS c{i}" for i, k in enumerate(KINDS))
    return {"scan": "MATCH (n:Node) WHERE n.ws = $ws RETURN " + ret,
            "seek": "MATCH (n:Node) WHERE n.ws = $ws AND n.id IS NOT NULL RETURN " + ret}


def load(session, ws: str, n: int) -> None:
    for start in range(0, n, BATCH):
        session.run("UNWIND range($a, $b) AS i CREATE (:Node {ws: $ws, id: $ws + '-n' + toString(i)})",
                    a=start, b=min(n, start + BATCH) - 1, ws=ws).consume()
    for rel, mul, add in (("RELATED_TO", 7, 1), ("OF", 13, 5)):
        for start in range(0, n, BATCH):
            session.run(
                f"UNWIND range($a, $b) AS i MATCH (x:Node {{ws: $ws, id: $ws + '-n' + toString(i)}}) "
                f"MATCH (y:Node {{ws: $ws, id: $ws + '-n' + toString((i * {mul} + {add}) % $n)}}) "
                f"CREATE (x)-[:{rel} {{kind: '{rel.lower()}', family: '{rel.lower()}', unit: 'u' + toString(i), live: true}}]->(y)",
                a=start, b=min(n, start + BATCH) - 1, ws=ws, n=n).consume()


def graph(session, ws: str) -> tuple[dict, float]:
    t = time.perf_counter()
    row = session.run("CALL kg.spreadGraph($ws)", ws=ws).single().data()
    return row, 1000 * (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--big", type=int, default=200_000)
    ap.add_argument("--small", type=int, default=2_000)
    ap.add_argument("--others", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--checks", type=int, default=5)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    import neo4j

    from kgservice.stores.neo4j import Neo4jStore

    uri, password = os.environ["KG_NEO4J_URI"], os.environ.get("NEO4J_PASSWORD", "")
    store = Neo4jStore.connect(uri=uri, password=password)  # applies the schema (the (ws, id) constraint)
    store.close()
    driver = neo4j.GraphDatabase.driver(uri, auth=("neo4j", password), notifications_min_severity="OFF")
    sizes = {"big": args.big, **{f"other{i}": args.big for i in range(args.others)}, "small": args.small}
    with driver.session() as s:
        if not args.keep:
            s.run("MATCH (n) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()
            for ws, n in sizes.items():
                t = time.time()
                load(s, ws, n)
                print(f"loaded {ws}: {n:,} nodes, {2 * n:,} edges in {time.time() - t:.0f} s", flush=True)
        total = s.run("MATCH (n:Node) RETURN count(n) AS c").single()["c"]
        queries = count_queries()
        plans = {}
        for name, query in queries.items():
            for ws in ("small", "big"):
                summary = s.run("PROFILE " + query, ws=ws).consume()
                plan, hits = summary.profile, 0

                def walk(p: dict) -> None:
                    nonlocal hits
                    hits += int(p.get("dbHits", 0))
                    for c in p.get("children", []):
                        walk(c)

                walk(plan)
                leaf = plan
                while leaf.get("children"):
                    leaf = leaf["children"][0]
                plans[f"{name}_{ws}"] = {"leaf": leaf["operatorType"].split("@")[0], "db_hits": hits}
        print(f"{total:,} :Node nodes in {len(sizes)} workspaces; count query plans: {plans}", flush=True)
        rows = []
        for r in range(args.rounds):
            row: dict = {"round": r}
            for ws in ("big", "small"):
                s.run("CALL kg.spreadGraphDrop($ws)", ws=ws).consume()
                g, wall = graph(s, ws)
                assert g["engine"] == "resident" and g["nodes"] == sizes[ws], g
                row[f"build_{ws}_ms"], row[f"build_{ws}_wall_ms"] = g["buildMillis"], wall
            kept = {ws: graph(s, ws)[0]["kept"] for ws in ("big", "small")}
            row["idle_ms"] = statistics.median(graph(s, "small")[1] for _ in range(args.checks))
            checks: dict[str, list[float]] = {"small": [], "big": []}
            for c in range(args.checks):
                s.run("MATCH (x:Node {ws: 'other0', id: 'other0-n' + toString($a)}), "
                      "(y:Node {ws: 'other0', id: 'other0-n' + toString($b)}) "
                      "CREATE (x)-[:RELATED_TO {kind: 'related_to', family: 'related_to', unit: 'hand', live: true}]->(y)",
                      a=c + 10 * r, b=c + 10 * r + 3).consume()
                for ws in ("small", "big"):
                    g, wall = graph(s, ws)
                    assert g["kept"] == kept[ws] + 1, (ws, g, kept)  # the kept path ran, no rebuild
                    kept[ws] = g["kept"]
                    checks[ws].append(wall)
            row.update({f"check_{ws}_ms": statistics.median(v) for ws, v in checks.items()})
            for name, query in queries.items():  # the count query alone, both forms, side by side
                for ws in ("small", "big"):
                    times = []
                    for _ in range(args.checks):
                        t = time.perf_counter()
                        s.run(query, ws=ws).consume()
                        times.append(1000 * (time.perf_counter() - t))
                    row[f"query_{name}_{ws}_ms"] = statistics.median(times)
            rows.append(row)
            print(f"round {r}: " + ", ".join(f"{k} {v:.0f}" for k, v in row.items() if k != "round"), flush=True)
    driver.close()
    med = {k: statistics.median(x[k] for x in rows) for k in rows[0] if k != "round"}
    print("medians: " + ", ".join(f"{k} {v:.0f} ms" for k, v in med.items()))
    out = common.RESULTS / "resident_workspaces.json"
    prev = json.loads(out.read_text()) if out.exists() else []
    prev.append({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "sizes": sizes, "nodes": total,
                 "plans": plans, "rounds": rows, "medians": med})
    out.write_text(json.dumps(prev, indent=1))


if __name__ == "__main__":
    main()

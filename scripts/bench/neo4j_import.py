#!/usr/bin/env python
"""The offline first-load ceiling: how fast ``neo4j-admin database import full`` builds the graph
an online ingest wrote, against that ingest's own time.

    python scripts/bench/neo4j_import.py --source-uri bolt://127.0.0.1:7688 --ingest-s 45.2 \\
        [--work /tmp/kgbench/import] [--bolt-port 7697 --http-port 7498]

The source is a Neo4j that holds what an online ingest wrote (scripts/bench/ingest.py leaves the
last size it ingested in the benchmark server; pass that run's ingest seconds as ``--ingest-s``).
Every node and relationship is exported to the import tool's CSV format (one file per label set
and per relationship type, every property with its type; not timed: an offline first-load path
would write these files from the parsed units instead of from a database), then a fresh server
directory is made with ``scripts/neo4j``, stopped, and filled by the import tool (timed); the
server is started on it and the project's schema (constraints and indexes, what every
connection applies) is created and brought online (timed: an imported store has no index
yet). The two stores are compared: node counts per label set and relationship counts per type
must be equal. Prints import s, index s, their sum, and the ratio to the online ingest.

Not a path kgservice offers (see scripts/bench/RESULTS.md, Neo4j ingest): it needs the server
stopped and an empty database, and it skips everything an ingest checks (validation,
duplicates, supersessions of stored units, the change log). It measures what that would buy.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import ROOT, WORK  # noqa: E402

SCRIPT = ROOT / "scripts" / "neo4j"


def _type(v) -> str | None:
    """The import tool's column type of a property value (None: not representable, skipped)."""
    import neo4j.time

    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "long"
    if isinstance(v, float):
        return "double"
    if isinstance(v, str):
        return "string"
    if isinstance(v, neo4j.time.DateTime):
        return "datetime"
    if isinstance(v, list):
        inner = {_type(x) for x in v} or {"string"}
        return f"{inner.pop()}[]" if len(inner) == 1 and None not in inner else None
    return None


def _cell(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return ";".join(_cell(x) for x in v)
    if hasattr(v, "iso_format"):
        return v.iso_format()
    return str(v)


def export(driver, out: Path) -> dict:
    """Every node and relationship as import CSVs under ``out``; returns the counts written."""
    out.mkdir(parents=True, exist_ok=True)
    groups: dict[tuple, list] = {}
    with driver.session() as s:
        for r in s.run("MATCH (n) RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props"):
            groups.setdefault(tuple(sorted(r["labels"])), []).append((r["id"], r["props"]))
    files = {"nodes": [], "relationships": []}
    counts = {"nodes": {}, "relationships": {}}
    for i, (labels, rows) in enumerate(sorted(groups.items())):
        keys = sorted({k for _, p in rows for k in p})
        types = {}
        for k in keys:
            ts = {_type(p[k]) for _, p in rows if k in p}
            if len(ts) == 1 and None not in ts:
                types[k] = ts.pop()
        path = out / f"nodes-{i}.csv"
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow([":ID", ":LABEL"] + [f"{k}:{types[k]}" for k in keys if k in types])
            for nid, p in rows:
                w.writerow([nid, ";".join(labels)] + [_cell(p[k]) if k in p else "" for k in keys if k in types])
        files["nodes"].append(path)
        counts["nodes"][";".join(labels)] = len(rows)
    rels: dict[str, list] = {}
    with driver.session() as s:
        for r in s.run("MATCH (a)-[r]->(b) RETURN elementId(a) AS a, elementId(b) AS b, type(r) AS t, properties(r) AS p"):
            rels.setdefault(r["t"], []).append((r["a"], r["b"], r["p"]))
    for i, (t, rows) in enumerate(sorted(rels.items())):
        keys = sorted({k for *_, p in rows for k in p})
        types = {}
        for k in keys:
            ts = {_type(p[k]) for *_, p in rows if k in p}
            if len(ts) == 1 and None not in ts:
                types[k] = ts.pop()
        path = out / f"rels-{i}.csv"
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow([":START_ID", ":END_ID", ":TYPE"] + [f"{k}:{types[k]}" for k in keys if k in types])
            for a, b, p in rows:
                w.writerow([a, b, t] + [_cell(p[k]) if k in p else "" for k in keys if k in types])
        files["relationships"].append(path)
        counts["relationships"][t] = len(rows)
    return {"files": files, "counts": counts}


def counts(driver) -> dict:
    with driver.session() as s:
        nodes = {";".join(sorted(r["l"])): r["n"] for r in s.run("MATCH (n) RETURN labels(n) AS l, count(*) AS n")}
        rels = {r["t"]: r["n"] for r in s.run("MATCH ()-[r]->() RETURN type(r) AS t, count(*) AS n")}
    return {"nodes": nodes, "relationships": rels}


def main(argv: list[str] | None = None) -> int:
    import neo4j

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source-uri", default=os.environ.get("KG_BENCH_NEO4J_URI", "bolt://127.0.0.1:7688"))
    ap.add_argument("--ingest-s", type=float, required=True, help="the online ingest's seconds for this graph")
    ap.add_argument("--work", default=str(WORK / "import"))
    ap.add_argument("--bolt-port", type=int, default=7697)
    ap.add_argument("--http-port", type=int, default=7498)
    a = ap.parse_args(argv)
    pw = os.environ.get("NEO4J_PASSWORD")
    if not pw:
        raise SystemExit("NEO4J_PASSWORD is not set")
    work = Path(a.work)
    shutil.rmtree(work, ignore_errors=True)
    src = neo4j.GraphDatabase.driver(a.source_uri, auth=(os.environ.get("KG_NEO4J_USER", "neo4j"), pw))
    t0 = time.perf_counter()
    ex = export(src, work / "csv")
    export_s = time.perf_counter() - t0
    want = counts(src)
    src.close()
    print(f"exported {sum(ex['counts']['nodes'].values()):,} nodes, {sum(ex['counts']['relationships'].values()):,} "
          f"relationships in {export_s:.1f} s", file=sys.stderr, flush=True)
    home = work / "server"
    run = [sys.executable, str(SCRIPT)]
    ports = ["--bolt-port", str(a.bolt_port), "--http-port", str(a.http_port)]
    subprocess.run(run + ["start", "--data-dir", str(home)] + ports, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(run + ["stop", "--data-dir", str(home)], check=True, stdout=subprocess.DEVNULL)
    version = (Path(os.environ.get("KG_NEO4J_HOME") or Path.home() / ".cache/kgservice/neo4j") / "version")
    ver = version.read_text().strip() if version.is_file() else "5.26.30"
    lib = Path(os.environ.get("KG_NEO4J_HOME") or Path.home() / ".cache/kgservice/neo4j") / ver / "lib"
    java = os.environ.get("KG_NEO4J_JAVA") or shutil.which("java")
    cmd = [java, f"-Xmx{os.environ.get('KG_NEO4J_HEAP', '2g')}", "-cp", f"{lib}/*", "org.neo4j.cli.AdminTool",
           "database", "import", "full", "neo4j", "--overwrite-destination=true", "--array-delimiter=;",
           "--multiline-fields=true", "--id-type=string", f"--report-file={work / 'import.report'}"]
    cmd += [f"--nodes={p}" for p in ex["files"]["nodes"]] + [f"--relationships={p}" for p in ex["files"]["relationships"]]
    env = {**os.environ, "NEO4J_HOME": str(home), "NEO4J_CONF": str(home / "conf")}
    env.pop("NEO4J_PASSWORD", None)
    t0 = time.perf_counter()
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    import_s = time.perf_counter() - t0
    if res.returncode:
        raise SystemExit(f"import failed ({res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
    subprocess.run(run + ["start", "--data-dir", str(home)] + ports, check=True, stdout=subprocess.DEVNULL)
    from kgservice.stores.neo4j import Neo4jStore

    t0 = time.perf_counter()
    store = Neo4jStore.connect(uri=f"bolt://127.0.0.1:{a.bolt_port}", password=pw)  # applies the schema
    with store.driver.session() as s:
        s.run("CALL db.awaitIndexes(3600)").consume()
    index_s = time.perf_counter() - t0
    got = counts(store.driver)
    store.close()
    subprocess.run(run + ["stop", "--data-dir", str(home)], check=True, stdout=subprocess.DEVNULL)
    same = got == want
    total = import_s + index_s
    row = {"nodes": sum(want["nodes"].values()), "relationships": sum(want["relationships"].values()),
           "export_s": export_s, "import_s": import_s, "index_s": index_s, "offline_s": total,
           "online_ingest_s": a.ingest_s, "ratio_online_over_offline": a.ingest_s / total, "same_counts": same,
           "load_avg": os.getloadavg()[0]}
    print(json.dumps(row, indent=1))
    if not same:
        print(f"counts differ:\n source {want}\n import {got}", file=sys.stderr)
    print(f"offline import {import_s:.1f} s + indexes {index_s:.1f} s = {total:.1f} s vs the online ingest "
          f"{a.ingest_s:.1f} s: {a.ingest_s / total:.1f}x")
    print(f"results appended to {common.save('neo4j_import', [row])}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Neo4j ingest with vectors, code trees side by side (issue 17): the whole
``KnowledgeBase.ingest_units`` of the first N units of the 1M corpus (``embed_ingest.py``
builds them) with ``hash:384`` into qdrant-edge, and the part of it spent reading the new nodes
back from Neo4j to learn their labels (what ``IngestReport.new_labels`` saves).

    python scripts/bench/neo4j_embed_ingest.py --scratch-uri bolt://127.0.0.1:7699 \\
        [--units 10000] [--rounds 3] [--code old=/tmp/kg-old,new=.]

``--scratch-uri`` names a Neo4j this script may WIPE before every run (never the benchmark
server holding the 1M store): start one with ``scripts/neo4j start --data-dir /tmp/scratch-neo4j
--bolt-port 7699 --http-port 7499``; ``NEO4J_PASSWORD`` as for it. Each run is a fresh child
process, alternated over the trees; round 1 includes the server's warm-up.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import common  # noqa: E402
from common import WORK  # noqa: E402


def child(code: Path, units: int, uri: str) -> dict:
    sys.path.insert(0, str(code))
    import kgservice
    from kgservice.config import Settings
    from kgservice.service import KnowledgeBase

    assert Path(kgservice.__file__).resolve().is_relative_to(code), kgservice.__file__
    data = WORK / "neo4j-embed-ingest-data" / str(os.getpid())
    shutil.rmtree(data, ignore_errors=True)
    kb = KnowledgeBase(Settings(data_dir=data, embedder="hash:384", vector_backend="edge", backend="neo4j",
                                neo4j_uri=uri, neo4j_user=os.environ.get("KG_NEO4J_USER", "neo4j"),
                                neo4j_password=os.environ["NEO4J_PASSWORD"]))
    kb.store.write_statements("wipe_all")  # keys and jobs too
    batch = kb.parse_unit_files(sorted((WORK / f"embed-ingest-{units}").glob("*.units")))
    kb.store.counts()
    kb.caches  # process set-up, as in embed_phases.py
    read = {"s": 0.0}
    real = kb.store.get_nodes

    def timed(ids):  # embed_nodes' read-back, when the store did not hand over the labels
        t0 = time.perf_counter()
        try:
            return real(ids)
        finally:
            read["s"] += time.perf_counter() - t0

    kb.store.get_nodes = timed
    t0 = time.perf_counter()
    report = kb.ingest_units(batch)
    wall = time.perf_counter() - t0
    kb.close()
    shutil.rmtree(data, ignore_errors=True)
    return {"wall_s": round(wall, 4), "read_back_s": round(read["s"], 4), "nodes": len(report.new_embeddable_nodes),
            "load": os.getloadavg()[0]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scratch-uri", required=True, help="a Neo4j this script may wipe (not the 1M benchmark server)")
    ap.add_argument("--units", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--code", default="", help="code trees to alternate: LABEL=DIR,... (default: this tree)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if not os.environ.get("NEO4J_PASSWORD"):
        sys.exit("NEO4J_PASSWORD is not set (the scratch server's password)")
    if a.child:
        print(json.dumps(child(Path(a.child).resolve(), a.units, a.scratch_uri)))
        return 0
    if not (WORK / f"embed-ingest-{a.units}" / "complete").exists():
        sys.exit(f"no corpus {WORK / f'embed-ingest-{a.units}'}: run embed_ingest.py --units {a.units} once first")
    codes = [(c.split("=", 1)[0], Path(c.split("=", 1)[1]).resolve()) for c in a.code.split(",") if "=" in c]
    codes = codes or [("this", HERE.parents[1])]
    rows = []
    for r in range(a.rounds):
        for label, code in codes:
            p = subprocess.run([sys.executable, __file__, "--scratch-uri", a.scratch_uri, "--units", str(a.units),
                                "--child", str(code)], capture_output=True, text=True,
                               env={**os.environ, "PYTHONPATH": str(code)}, check=False)
            if p.returncode:
                sys.exit(p.stderr[-2000:])
            x = json.loads(p.stdout.strip().splitlines()[-1])
            rows.append({"round": r + 1, "code": label, **x})
            print(f"round {r + 1} {label:5s} ingest {x['wall_s']:.2f} s, of which reading {x['nodes']} new nodes back "
                  f"{x['read_back_s']:.3f} s | load {x['load']:.1f}", flush=True)
    print(f"saved {common.save('neo4j_embed_ingest', rows, {'units': a.units})}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

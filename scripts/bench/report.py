#!/usr/bin/env python
"""Print Markdown tables from the latest rows in scripts/bench/results/*.json (for RESULTS.md).

    python scripts/bench/report.py > /tmp/tables.md

For each (benchmark, configuration) the most recent measurement wins, so a later run of one
size or backend replaces just that row.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import RESULTS, markdown_table, size_label  # noqa: E402


def latest(bench: str, key) -> tuple[list[dict], list[dict]]:
    path = RESULTS / f"{bench}.json"
    if not path.exists():
        return [], []
    runs = json.loads(path.read_text("utf-8"))
    rows: dict = {}
    for run in runs:
        for r in run["rows"]:
            rows[key(r)] = {**r, "_load": run["machine"]["load_avg_at_start"], "_when": run["machine"]["when"]}
    return list(rows.values()), runs


def main() -> int:
    ingest, runs = latest("ingest", lambda r: (r["backend"], r["size"], r["embed"], r.get("vectors")))
    if runs:
        m = runs[-1]["machine"]
        print(f"Machine: {m['cpu']}, {m['cores']} cores, {m['mem_gb']} GB, kernel {m['kernel']} ({m['virt']}), "
              f"Python {m['python']}; packages {m['packages']}\n")
    if ingest:
        ingest.sort(key=lambda r: (r["size"], r["backend"], r["embed"]))
        print("### Ingest\n")
        print(markdown_table(
            ["backend", "size", "embedding", "units/s", "ingest s", "parse/s", "peak RSS MB (python)",
             "server RSS MB", "load avg at start"],
            [[r["backend"], size_label(r["size"]), r["embed"] + (f" ({r['vectors']})" if r.get("vectors") else ""),
              r["units_per_s"], r["ingest_s"], r["parse_per_s"], r["peak_rss_mb"], r["server_rss_mb"],
              r["_load"][0]] for r in ingest]))
        print()
    expand, _ = latest("expand", lambda r: (r["backend"], r["size"]))
    if expand:
        expand.sort(key=lambda r: (r["size"], r["backend"]))
        print("### Expansion latency (ms)\n")
        body = []
        for r in expand:
            for name in ("mention", "uniform"):
                d, s = r[f"directed_{name}"], r[f"spread_{name}"]
                body.append([r["backend"], size_label(r["size"]), name, d["p50"], d["p95"], s["p50"], s["p95"],
                             d["units_median"], s["nodes_median"], r["open_s"], r["rss_after_open_mb"], r["_load"][0]])
        print(markdown_table(["backend", "size", "seeds", "directed p50", "directed p95", "spread p50", "spread p95",
                              "units (median)", "activated nodes (median)", "open s", "RSS after open MB",
                              "load avg"], body))
        print()
    path = RESULTS / "expand.json"
    if path.exists():
        ppr: dict = {}
        for run in json.loads(path.read_text("utf-8")):
            for r in run.get("ppr", []):
                ppr[r["size"]] = r
        if ppr:
            print("### Spreading activation vs networkx personalized PageRank (embedded graph, ms)\n")
            body = []
            for n in sorted(ppr):
                r = ppr[n]
                for name in ("mention", "uniform"):
                    p, s = r[f"ppr_{name}"], r[f"spread_{name}"]
                    body.append([size_label(n), name, p["n"], p["p50"], p["p95"], s["p50"], s["p95"],
                                 f"{p['p50'] / s['p50']:.0f}x", r[f"top20_overlap_{name}"], r["graph_nodes"],
                                 r["graph_edges"]])
            print(markdown_table(["size", "seeds", "queries", "PageRank p50", "PageRank p95", "spread p50",
                                  "spread p95", "PageRank / spread (p50)", "top-20 overlap", "nodes", "edges"], body))
            print()
    constraints, _ = latest("spread_constraints", lambda r: (r["backend"], r["size"]))
    for run in sorted(constraints, key=lambda r: (r["size"], r["backend"])):
        print(f"### Spreading activation: exact vs fan-out constraint / beam ({run['backend']}, "
              f"{size_label(run['size'])}, K=3, ε=0.05, ms)\n")
        print(markdown_table(
            ["variant", "seeds", "p50", "p95", "activated nodes (median)", "top-20 overlap with exact",
             "top-100 overlap", "exact top-20 still present"],
            [[x["variant"], x["seeds"], x["p50"], x["p95"], x["nodes_median"], x["top20_overlap"],
              x["top100_overlap"], x["exact_top20_present"]] for x in run["rows"]]))
        print()
    graphify, gruns = latest("graphify", lambda r: r["command"])
    if graphify:
        g = gruns[-1]["graph"]
        print(f"### graphify-compatible commands ({g['nodes']:,} nodes, {g['links']:,} links, "
              f"{g['bytes'] / 1e6:.0f} MB graph.json; whole process, median)\n")
        print(markdown_table(["command", "arguments", "ours s", "graphify s", "graphify / ours"],
                             [[r["command"], " ".join(repr(x) for x in r["args"]), r["ours_s"], r["theirs_s"],
                               f"{r['ratio']:.1f}x"] for r in graphify]))
        print()
    vectors, vruns = latest("vectors", lambda r: r["backend"])
    if vectors:
        print("### Vector entry (top-10)\n")
        body = []
        for r in vectors:
            if "skipped" in r:
                body.append([r["backend"], "—", "—", "—", "—", "—", "—", r["skipped"]])
            else:
                body.append([r["backend"], r["vectors"], r["dim"], r["upsert_s"], r["optimize_s"], r["search"]["p50"],
                             r["search"]["p95"], r["recall10"]])
        print(markdown_table(["backend", "vectors", "dim", "upsert s", "optimize s", "p50 ms", "p95 ms", "recall@10"],
                             body))
        emb = vruns[-1].get("embedder")
        if emb:
            print(f"\nQuery embedding ({emb['embedder']}): one label p50 {emb['one_label']['p50']:.1f} ms, "
                  f"p95 {emb['one_label']['p95']:.1f} ms; model load {emb['load_s']:.1f} s once per process.")
    return 0


if __name__ == "__main__":
    sys.exit(main())

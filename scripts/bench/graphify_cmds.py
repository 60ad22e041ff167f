#!/usr/bin/env python
"""graphify-compatible ``query`` / ``path`` / ``explain``: ours vs the real graphify CLI on the
same large graph.json, whole-process wall time (interpreter start-up and graph load included).

    python scripts/bench/graphify_cmds.py [--nodes 100000] [--runs 5]

The graph.json is built the real way: a synthetic corpus (corpus.py, seed 7) sized so the
graph has about ``--nodes`` nodes, ingested into the embedded store and exported with
``write_graph_json`` (the file ``kg export`` writes; graphify's own CLI reads it). It is
cached under ``$KG_BENCH_DIR/graphify/``.

Commands (same arguments for both tools, run from an empty scratch directory):
  ours   : python -m kgservice.graphify <cmd> ... --graph G   (the ``graphify`` drop-in script)
  theirs : python -m graphify <cmd> ... --graph G             (PyPI graphifyy)
Each command runs ``--runs`` times per tool, alternating; the table shows the median and
the ratio theirs / ours. Exit codes and the first output line are kept as a sanity check.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import ROOT, WORK  # noqa: E402

UNITS_PER_NODE = 2.35  # corpus.py gives ~0.43 nodes per unit


def build_graph(nodes: int) -> tuple[Path, dict]:
    import corpus
    from kgservice.export.graphjson import write_graph_json
    from kgservice.families import Lexicon
    from kgservice.notation import parse_file
    from kgservice.stores.embedded import EmbeddedStore

    units = int(round(nodes * UNITS_PER_NODE, -4))
    out = WORK / "graphify" / f"graph-{units}.json"
    meta = out.with_suffix(".meta.json")
    if out.exists() and meta.exists():
        return out, json.loads(meta.read_text())
    cdir = corpus.ensure(units, common.SEED, WORK)
    store_dir = WORK / "graphify" / f"store-{units}"
    import shutil

    shutil.rmtree(store_dir, ignore_errors=True)
    store = EmbeddedStore(store_dir)
    lex = Lexicon.load()
    for f in sorted(cdir.glob("part-*.units")):
        store.ingest(parse_file(f, lex, doc=f.name))
    counts = write_graph_json(store, out)
    counts["units_ingested"] = units
    counts["bytes"] = out.stat().st_size
    meta.write_text(json.dumps(counts))
    return out, counts


def pick_arguments(graph: Path) -> dict[str, list[str]]:
    """Question, path endpoints and explain targets that exist in this graph (fixed seed)."""
    import random

    data = json.loads(graph.read_text("utf-8"))
    deg: dict[str, int] = {}
    out: dict[str, list[str]] = {}
    for link in data["links"]:
        if link.get("modifier"):
            continue
        s, t = link["source"], link["target"]
        deg[s] = deg.get(s, 0) + 1
        deg[t] = deg.get(t, 0) + 1
        out.setdefault(s, []).append(t)
    label = {n["id"]: n["label"] for n in data["nodes"]}
    rng = random.Random(99)
    concepts = sorted(n for n in deg if not n.startswith("lit:") and 3 <= deg[n] <= 30)
    # path: A -> X -> Y following link direction, A and Y distinct, no direct A -> Y link
    for _ in range(10000):
        a = rng.choice(concepts)
        x = rng.choice(out.get(a) or [a])
        y = rng.choice(out.get(x) or [x])
        if len({a, x, y}) == 3 and y not in out.get(a, []) and not y.startswith("lit:"):
            break
    mid = rng.choice(concepts)
    hub = max(deg, key=deg.get)
    q_label = label[rng.choice(concepts)]
    return {
        "query": ["query", f"what does {q_label} cause and what is it part of"],
        "path": ["path", label[a], label[y]],
        "explain": ["explain", label[mid]],
        "explain-hub": ["explain", label[hub]],
    }


def run_once(tool: str, argv: list[str], graph: Path, cwd: Path) -> tuple[float, int, str]:
    mod = "kgservice.graphify" if tool == "ours" else "graphify"
    cmd = [sys.executable, "-m", mod, *argv, "--graph", str(graph)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, timeout=600)
    dt = time.perf_counter() - t0
    first = next((line for line in (p.stdout or p.stderr).splitlines() if line.strip()), "")
    return dt, p.returncode, first[:100]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args(argv)
    print("... building graph.json", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    graph, counts = build_graph(a.nodes)
    print(f"    {graph} ({counts['nodes']:,} nodes, {counts['links']:,} links, {counts['bytes'] / 1e6:.0f} MB) "
          f"in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    cmds = pick_arguments(graph)
    rows = []
    with tempfile.TemporaryDirectory(prefix="kgbench-graphify-") as tmp:
        for name, args in cmds.items():
            times: dict[str, list[float]] = {"ours": [], "theirs": []}
            codes: dict[str, set[int]] = {"ours": set(), "theirs": set()}
            first: dict[str, str] = {}
            for _ in range(a.runs):
                for tool in ("ours", "theirs"):
                    scratch = Path(tmp) / tool
                    scratch.mkdir(exist_ok=True)
                    dt, code, line = run_once(tool, args, graph, scratch)
                    times[tool].append(dt)
                    codes[tool].add(code)
                    first[tool] = line
            ours, theirs = statistics.median(times["ours"]), statistics.median(times["theirs"])
            rows.append({"command": name, "args": args[1:], "ours_s": ours, "theirs_s": theirs,
                         "ratio": theirs / ours, "ours_min": min(times["ours"]), "theirs_min": min(times["theirs"]),
                         "exit_ours": sorted(codes["ours"]), "exit_theirs": sorted(codes["theirs"]),
                         "first_ours": first["ours"], "first_theirs": first["theirs"]})
            print(f"    {name}: ours {ours:.2f}s theirs {theirs:.2f}s", file=sys.stderr, flush=True)
    headers = ["command", "ours s (median)", "graphify s (median)", "graphify / ours", "exit ours/theirs"]
    body = [[r["command"], r["ours_s"], r["theirs_s"], f"{r['ratio']:.1f}x",
             f"{r['exit_ours']}/{r['exit_theirs']}"] for r in rows]
    print(common.table(headers, body, title=f"graphify-compatible commands on {graph.name} "
                                            f"({counts['nodes']:,} nodes, {counts['links']:,} links, "
                                            f"{counts['bytes'] / 1e6:.0f} MB), whole process, {a.runs} runs each"))
    for r in rows:
        print(f"  {r['command']} {r['args']!r}\n    ours:   {r['first_ours']}\n    theirs: {r['first_theirs']}")
    path = common.save("graphify", rows, {"graph": {**counts, "file": graph.name}})
    print(f"\nresults appended to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

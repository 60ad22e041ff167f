#!/usr/bin/env python
"""The ``graphify`` drop-in vs graphify 0.9.96's own CLI: ``query`` / ``path`` / ``explain``,
whole-process wall time (interpreter start-up and graph load included), side by side.

    python scripts/bench/graphify_cmds.py [--sizes 5k,100k] [--runs 5]

The graph.json is graphify-shaped and seeded (tests/graphify/synth.py: files, classes,
``.method()`` homonyms, calls with ``context``, flipped ``_src``/``_tgt`` links, hubs,
communities): about 5k nodes at ``5k``, 100k at ``100k``, cached under
``$KG_BENCH_DIR/graphify/``. The reference is graphifyy 0.9.96 in its own venv
(tests/graphify/reference.py builds it once per machine).

  ours   : python -m graphify <cmd> ...   (this checkout on PYTHONPATH)
  theirs : <reference venv>/bin/graphify <cmd> ...

Each iteration runs both tools back to back, alternating which goes first; the ratio is
graphify / ours per iteration and the table shows its median (min-max) beside the median
times. Both answers are compared (BFS EDGE lines as a multiset, see docs/graphify.md), so a
row also says whether the output was identical. The 1-minute load average is printed with
every size: the machine is shared, read the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import ROOT, WORK  # noqa: E402

sys.path.insert(0, str(ROOT))
FILES_FOR = {"5k": 287, "100k": 5750}


def build_graph(size: str) -> tuple[Path, dict]:
    from tests.graphify.synth import write_synth

    files = FILES_FOR[size]
    out = WORK / "graphify" / f"synth-{files}" / "graphify-out" / "graph.json"
    meta = out.with_suffix(".meta.json")
    if out.exists() and meta.exists():
        return out, json.loads(meta.read_text())
    data = write_synth(out, files=files)
    counts = {"nodes": len(data["nodes"]), "links": len(data["links"]), "bytes": out.stat().st_size}
    meta.write_text(json.dumps(counts))
    return out, counts


def pick_arguments(graph: Path) -> dict[str, list[str]]:
    """Commands whose names exist in this graph: a 4-hop directed path between unique labels, a hub, ..."""
    data = json.loads(graph.read_text("utf-8"))
    count: dict[str, int] = {}
    for n in data["nodes"]:
        count[n["label"]] = count.get(n["label"], 0) + 1
    label = {n["id"]: n["label"] for n in data["nodes"]}
    unique = sorted(n for n in label if count[label[n]] == 1 and label[n].endswith("()"))
    succ: dict[str, list[str]] = {}
    for lk in data["links"]:
        s, t = lk.get("_src", lk["source"]), lk.get("_tgt", lk["target"])
        succ.setdefault(s, []).append(t)
    rng = random.Random(99)
    src = dst = None
    for _ in range(5000):
        a = rng.choice(unique)
        dist, todo = {a: 0}, deque([a])
        while todo:
            x = todo.popleft()
            for y in succ.get(x, []):
                if y not in dist:
                    dist[y] = dist[x] + 1
                    todo.append(y)
        far = [n for n, d in dist.items() if d == 4 and n in unique]
        if far:
            src, dst = label[a], label[sorted(far)[0]]
            break
    plain = label[rng.choice(unique)]
    return {
        "query": ["query", "how does login refresh the session token"],
        "query-dfs": ["query", "refresh_session", "--dfs"],
        "path": ["path", src or "island_alpha()", dst or "island_beta()"],
        "explain-hub": ["explain", "Logger"],
        "explain": ["explain", plain],
    }


def run_once(tool: str, argv: list[str], cwd: Path, ref: Path) -> tuple[float, int, str]:
    if tool == "ours":
        cmd = [sys.executable, "-m", "graphify", *argv]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    else:
        from tests.graphify.reference import reference_env

        cmd = [str(ref), *argv]
        env = reference_env()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, timeout=900)
    return time.perf_counter() - t0, p.returncode, p.stdout + "\x00" + p.stderr


def _canon(out: str) -> str:
    if "Traversal: BFS" not in out:
        return out
    lines = out.split("\n")
    edges = iter(sorted(line for line in lines if line.startswith("EDGE ")))
    return "\n".join(next(edges) if line.startswith("EDGE ") else line for line in lines)


def bench_size(size: str, runs: int, ref: Path) -> tuple[list[dict], dict]:
    print(f"... building the {size} graph.json", file=sys.stderr, flush=True)
    graph, counts = build_graph(size)
    cmds = pick_arguments(graph)
    project = graph.parent.parent
    load_before = os.getloadavg()[0]
    rows = []
    for name, args in cmds.items():
        times: dict[str, list[float]] = {"ours": [], "theirs": []}
        ratios: list[float] = []
        codes: dict[str, set[int]] = {"ours": set(), "theirs": set()}
        outs: dict[str, str] = {}
        for i in range(runs):
            order = ("ours", "theirs") if i % 2 == 0 else ("theirs", "ours")
            got = {}
            for tool in order:
                dt, code, out = run_once(tool, args, project, ref)
                times[tool].append(dt)
                codes[tool].add(code)
                outs[tool] = out
                got[tool] = dt
            ratios.append(got["theirs"] / got["ours"])
        same = _canon(outs["ours"]) == _canon(outs["theirs"])
        rows.append({"size": size, "command": name, "args": args[1:], "ours_s": statistics.median(times["ours"]),
                     "theirs_s": statistics.median(times["theirs"]), "ratio": statistics.median(ratios),
                     "ratio_min": min(ratios), "ratio_max": max(ratios), "exit_ours": sorted(codes["ours"]),
                     "exit_theirs": sorted(codes["theirs"]), "same_output": same,
                     "first_line": outs["ours"].split("\n", 1)[0][:100]})
        print(f"    {size} {name}: ours {rows[-1]['ours_s']:.2f}s theirs {rows[-1]['theirs_s']:.2f}s "
              f"ratio {rows[-1]['ratio']:.1f}x same={same}", file=sys.stderr, flush=True)
    meta = {**counts, "file": str(graph), "load_1min_before": load_before, "load_1min_after": os.getloadavg()[0]}
    return rows, meta


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="5k,100k")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args(argv)
    from tests.graphify.reference import reference_graphify

    ref = reference_graphify()
    if ref is None:
        print("the reference graphify venv could not be built (no registry access?)", file=sys.stderr)
        return 1
    all_rows, metas = [], {}
    with tempfile.TemporaryDirectory(prefix="kgbench-graphify-"):
        for size in a.sizes.split(","):
            rows, meta = bench_size(size, a.runs, ref)
            all_rows += rows
            metas[size] = meta
            headers = ["command", "arguments", "ours s", "graphify s", "graphify / ours (min-max)", "exit",
                       "same output"]
            body = [[r["command"], " ".join(r["args"]), r["ours_s"], r["theirs_s"],
                     f"{r['ratio']:.1f}x ({r['ratio_min']:.1f}-{r['ratio_max']:.1f})",
                     f"{r['exit_ours']}/{r['exit_theirs']}", "yes" if r["same_output"] else "NO"] for r in rows]
            print(common.table(headers, body, title=(
                f"graphify drop-in vs graphify 0.9.96, {size}: {meta['nodes']:,} nodes, {meta['links']:,} links, "
                f"{meta['bytes'] / 1e6:.0f} MB; whole process, median of {a.runs}; load "
                f"{meta['load_1min_before']:.1f} -> {meta['load_1min_after']:.1f}")))
    path = common.save("graphify", all_rows, {"graphs": metas})
    print(f"\nresults appended to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""`kg ingest` end to end with and without vectors, side by side (issue 17, part 1).

    python scripts/bench/embed_ingest.py [--units 3000,10000,100000] [--rounds 3] [--configs ...]
                                         [--code old=/tmp/kg-old,new=.]

The same fresh units each time: the first N units of the seeded 1M corpus (read across its
10k-unit part files; its vocabulary is large, so almost every unit brings new entry nodes:
3,000 units -> 4,880 new embeddable nodes, 10,000 -> 14,782). Each configuration is a whole
`kg ingest` process into an empty data dir (process start, imports, model load, graph and
vectors included), alternated over ``--rounds`` rounds and over the ``--code`` trees (e.g.
the previous commit, unpacked with ``git archive``), so machine noise hits all of them; the
median is reported, wall time and CPU time (the process and its children, from rusage, so an
embedding worker process counts). Also the default embedder on its own: labels/s embedding
exactly those nodes' labels (batches of 256, model loaded and warm), the number "ingest
throughput >= 80 % of the embedder's own labels/s" compares against; and, for the whole
``default-edge`` process, the embedder end to end in a process of its own (start, imports,
model load, embedding), the like-for-like reference for a cold `kg ingest`.

Configurations: ``no-embed`` (graph only), ``hash-edge`` / ``hash-qdrant`` (``--embedder
hash:384`` with qdrant-edge, the default vector store, or qdrant-client local mode, the
old default), ``default-edge`` (the packaged default embedder + qdrant-edge), and
``warm-default``: a long-running process (a `kg worker` or server) that already has its
model loaded - ``KnowledgeBase.ingest_units`` of the same units (parsed beforehand, not
timed) with the default embedder warm (the new tree: its embedding worker started and
ready; older trees: the model loaded in-process).

Note: before 2026-12-03 13:40 this script read only the first part file, so "30,000 units"
in older rows was 10,000 units (14,782 labels).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import WORK  # noqa: E402

CONFIGS = {
    "no-embed": (["--embedder", "hash:384"], ["--no-embed"], "auto"),
    "hash-edge": (["--embedder", "hash:384"], [], "edge"),
    "hash-qdrant": (["--embedder", "hash:384"], [], "qdrant"),
    "default-edge": ([], [], "edge"),
    "warm-default": None,  # in-process, see warm_child
}


def corpus(units: int) -> Path:
    """The first ``units`` units of the 1M corpus (across its part files), one file."""
    out = WORK / f"embed-ingest-{units}" / "units.units"
    if out.exists() and (out.parent / "complete").exists():
        return out.parent
    big = WORK / "corpus-1000000-s7"
    if not (big / "part-00000.units").exists():
        subprocess.run([sys.executable, str(Path(__file__).with_name("corpus.py")), "--units", "1000000",
                        "--out", str(big)], check=True, cwd=str(common.ROOT))
    out.parent.mkdir(parents=True, exist_ok=True)
    lines, n = [], 0
    for part in sorted(big.glob("part-*.units")):
        with open(part, encoding="utf-8") as f:
            for line in f:
                if line.startswith("#"):
                    n += 1
                    if n > units:
                        break
                lines.append(line)
        if n > units:
            break
    out.write_text("".join(lines), "utf-8")
    (out.parent / "complete").write_text(str(units))
    return out.parent


def run_cold_embed(labels: Path) -> dict:
    """The default embedder end to end in a process of its own - start, imports, model load,
    embedding the labels (batches of 256) - timed from outside like the `kg ingest` runs: the
    like-for-like reference for a whole (cold) `kg ingest` with the default embedder."""
    code = ("import json, sys; from kgservice.vectors import make_embedder; e = make_embedder('default'); "
            "xs = json.load(open(sys.argv[1], encoding='utf-8')); "
            "[e.embed(xs[i:i + 256]) for i in range(0, len(xs), 256)]")
    n = len(json.loads(labels.read_text("utf-8")))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, str(labels)], check=True, cwd=str(common.ROOT),
                   env={**os.environ, "PYTHONPATH": str(common.ROOT)})
    dt = time.perf_counter() - t0
    return {"labels": n, "wall_s": dt, "labels_per_s": n / dt}


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_kg(name: str, src: Path, units: int, code: str, code_dir: Path) -> dict:
    pre, post, backend = CONFIGS[name]
    data = WORK / "embed-ingest-data" / f"{units}-{code}-{name}"
    shutil.rmtree(data, ignore_errors=True)
    env = {**os.environ, "KG_VECTOR_BACKEND": backend, "PYTHONPATH": str(code_dir)}
    cmd = [sys.executable, "-c", "from kgservice.cli.app import main; main()", "--data-dir", str(data), *pre,
           "ingest", "--json", *post, str(src)]
    c0 = _children_cpu()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(code_dir))
    dt = time.perf_counter() - t0
    cpu = _children_cpu() - c0
    if p.returncode != 0:
        raise RuntimeError(f"{name} ({code}): {p.stderr[-2000:]}")
    rep = json.loads(p.stdout[p.stdout.index("{"):])
    nodes = rep.get("embedded_nodes") or 0
    if name == "no-embed":
        nodes = rep["nodes_added"]
    return {"wall_s": dt, "cpu_s": cpu, "nodes": nodes}


def warm_child(a: argparse.Namespace) -> dict:
    """A long-running process with its model warm: time ``kb.ingest_units`` alone."""
    sys.path.insert(0, str(Path(a.code_dir).resolve()))
    import kgservice
    from kgservice.config import Settings
    from kgservice.service import KnowledgeBase

    assert Path(kgservice.__file__).resolve().is_relative_to(Path(a.code_dir).resolve()), kgservice.__file__
    data = Path(a.data)
    shutil.rmtree(data, ignore_errors=True)
    kb = KnowledgeBase(Settings(data_dir=data, embedder="default", vector_backend="edge"))
    units = kb.parse_unit_files(sorted(Path(a.src).glob("*.units")))
    kb.store.counts()  # opened
    kb.caches  # opened (the first ingest's cache invalidation would open it: once per process, 0.05 s)
    worker_pid = None
    if hasattr(kb, "start_embedding"):
        kb.start_embedding()
        w = kb._embed_worker()
        if w is not None and hasattr(w, "ready"):
            assert w.ready.wait(120), "the embedding worker did not start"
            worker_pid = w.proc.pid
        else:
            kb.embedder.load()
    else:
        kb.embedder.load()
        kb.embedder.embed(["warm up"])

    def worker_cpu() -> float:
        if worker_pid is None:
            return 0.0
        f = Path(f"/proc/{worker_pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

    w0, c0, t0 = worker_cpu(), time.process_time(), time.perf_counter()
    report = kb.ingest_units(units)
    dt = time.perf_counter() - t0
    cpu = time.process_time() - c0 + worker_cpu() - w0
    kb.close()
    return {"wall_s": dt, "cpu_s": cpu, "nodes": len(report.new_embeddable_nodes)}


def run_warm(src: Path, units: int, code: str, code_dir: Path) -> dict:
    data = WORK / "embed-ingest-data" / f"{units}-{code}-warm-default"
    return common.run_child(Path(__file__), ["warm", "--code-dir", str(code_dir), "--src", str(src),
                                             "--data", str(data)], timeout=3600)


def embed_child(a: argparse.Namespace) -> dict:
    """The default embedder alone on exactly these labels, warm, batches of 256."""
    return common.time_default_embedder(json.loads(Path(a.labels).read_text("utf-8")))


def labels_file(units: int, src: Path) -> Path:
    """The labels of the embeddable nodes these units add to an empty store."""
    out = WORK / f"embed-ingest-{units}" / "labels.json"
    if out.exists():
        return out
    from kgservice.config import Settings
    from kgservice.model import NodeKind
    from kgservice.service import KnowledgeBase

    data = WORK / "embed-ingest-data" / f"{units}-labels"
    shutil.rmtree(data, ignore_errors=True)
    with KnowledgeBase(Settings(data_dir=data, embedder="hash:384")) as kb:
        kb.ingest_unit_files(sorted(src.glob("*.units")), embed=False)
        labels = [n.label for n in kb.store.iter_nodes() if n.kind != NodeKind.LITERAL]
    out.write_text(json.dumps(labels, ensure_ascii=False), "utf-8")
    shutil.rmtree(data, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--units", default="3000", help="sizes, comma separated (e.g. 3000,10000,100000)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--configs", default=",".join(c for c in CONFIGS if c != "hash-qdrant"))
    ap.add_argument("--code", default="", help="code trees to alternate: LABEL=DIR,... (default: this tree)")
    ap.add_argument("--child", choices=["embed", "warm"], help=argparse.SUPPRESS)
    ap.add_argument("--labels", help=argparse.SUPPRESS)
    ap.add_argument("--code-dir", help=argparse.SUPPRESS)
    ap.add_argument("--src", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child == "embed":
        common.emit(embed_child(a))
        return 0
    if a.child == "warm":
        common.emit(warm_child(a))
        return 0
    sizes = common.parse_sizes(a.units)
    names = [c.strip() for c in a.configs.split(",") if c.strip()]
    codes = [(c.split("=", 1)[0].strip(), Path(c.split("=", 1)[1].strip()).resolve())
             for c in a.code.split(",") if "=" in c] or [("this", common.ROOT)]
    srcs = {n: corpus(n) for n in sizes}
    labels = {n: labels_file(n, srcs[n]) for n in sizes}
    load0 = os.getloadavg()
    runs: dict[tuple[int, str, str], list[dict]] = {}
    emb: dict[int, list[dict]] = {n: [] for n in sizes}
    cold: dict[int, list[dict]] = {n: [] for n in sizes}
    for r in range(a.rounds):
        for n in sizes:
            for name in names:
                for code, d in codes:
                    print(f"... round {r + 1}: {n} units, {name}, code {code} (load {os.getloadavg()[0]:.1f})",
                          file=sys.stderr, flush=True)
                    res = run_warm(srcs[n], n, code, d) if name == "warm-default" else run_kg(name, srcs[n], n, code, d)
                    res["load"] = os.getloadavg()[0]
                    runs.setdefault((n, name, code), []).append(res)
            if "default-edge" in names or "warm-default" in names:
                emb[n].append(common.run_child(Path(__file__), ["embed", "--labels", str(labels[n])], timeout=3600))
            if "default-edge" in names:
                cold[n].append(run_cold_embed(labels[n]))
    load1 = os.getloadavg()
    lines = [f"embed_ingest: load avg {load0[0]:.1f} at start, {load1[0]:.1f} at end; medians of {a.rounds} round(s)"]
    rows = []
    for n in sizes:
        lps = statistics.median(e["labels_per_s"] for e in emb[n]) if emb[n] else None
        ecores = statistics.median(e["cpu_s"] / e["embed_s"] for e in emb[n]) if emb[n] else None
        cold_lps = statistics.median(e["labels_per_s"] for e in cold[n]) if cold[n] else None
        lines.append(f"{n} units" + (f"; the default embedder alone: {lps:,.0f} labels/s ({emb[n][0]['labels']:,} labels, "
                                     f"{ecores:.2f} cores)" if lps else "")
                     + (f"; in a process of its own, end to end: {cold_lps:,.0f} labels/s" if cold_lps else ""))
        for name in names:
            for code, _ in codes:
                xs = runs[(n, name, code)]
                wall = statistics.median(x["wall_s"] for x in xs)
                cpu = statistics.median(x["cpu_s"] for x in xs)
                nodes = xs[0]["nodes"]
                row = {"units": n, "config": name, "code": code, "median_s": wall, "median_cpu_s": cpu, "nodes": nodes,
                       "runs_s": [x["wall_s"] for x in xs], "runs_cpu_s": [x["cpu_s"] for x in xs],
                       "loads": [x["load"] for x in xs]}
                extra = ""
                if name in ("default-edge", "warm-default") and lps:
                    row["nodes_per_s"] = nodes / wall
                    row["of_embedder"] = nodes / wall / lps
                    extra = f"  {nodes / wall:7,.0f} new nodes/s = {row['of_embedder']:.0%} of the embedder"
                    if name == "default-edge" and cold_lps:
                        row["of_embedder_cold"] = nodes / wall / cold_lps
                        extra += f" ({row['of_embedder_cold']:.0%} of it end to end)"
                if name != "no-embed" and (n, "no-embed", code) in runs and name != "warm-default":
                    base = statistics.median(x["wall_s"] for x in runs[(n, "no-embed", code)])
                    row["vs_no_embed"] = wall / base
                    extra += f"  {wall / base:.2f}x no-embed"
                if len(codes) > 1 and code != codes[0][0]:
                    ref = statistics.median(x["wall_s"] for x in runs[(n, name, codes[0][0])])
                    row[f"vs_{codes[0][0]}"] = wall / ref
                    extra += f"  {wall / ref:.2f}x {codes[0][0]}"
                rows.append(row)
                lines.append(f"  {name:13s} {code:5s} wall {wall:7.2f} s  cpu {cpu:7.2f} s  "
                             f"runs {', '.join(f'{x:.2f}' for x in row['runs_s'])}{extra}")
    print("\n".join(lines))
    path = common.save("embed_ingest", rows, {"embedder": {n: emb[n] for n in sizes},
                                              "embedder_cold": {n: cold[n] for n in sizes}, "load_avg_start": load0,
                                              "load_avg_end": load1, "codes": [c for c, _ in codes]})
    print(f"saved {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

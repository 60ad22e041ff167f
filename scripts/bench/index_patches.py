#!/usr/bin/env python3
"""What a background refresh's index patches cost the serving process, per ingest of ``--batch``
units elsewhere, in figures the machine's load sways little: the refreshing thread's own CPU
time (``time.thread_time``) and how late a probe thread beside it wakes (the longest stretch in
which the refresh kept the interpreter lock from another thread), for two code trees side by
side in one run (``--before``, default /work/main, and this tree), each in its own child process.

Each child holds an in-memory store of ``--units`` generated units (labels from
scripts/bench/corpus.py's vocabulary, 0.3 nodes a unit) behind a change log, with the
derived indexes a serving process keeps warm: the entry step's label index and name holders,
the BM25 unit index and its stem counts (what ``names_not_in_graph`` reads). Per round the
store takes ``--batch`` new units (a third of them on new nodes) as one logged change, and a
thread brings every index to the new version exactly as a request's refresh does (the same
``FedIndex`` catch-up and patch code), inside ``prompt_switching`` (the switch interval the
shipped refresh runs with). A probe thread sleeps ``--tick`` seconds at a time and records how
late each wake-up is; it runs as long again with no refresh (the idle lateness: what the
machine alone costs). No Neo4j, no model: only the patch code is measured.

The cyclic collector's share: how many objects the built indexes hold and how many of them the
collector tracks (walked from the indexes, the store left out), the full collections during the
rounds (``gc.get_stats``, any thread) and the CPU of one full collection of the process after
them. ``--store-out`` freezes the generated store before the indexes are built (``gc.freeze``),
so that the collections see what a server whose store is another process (Neo4j) holds; the
units the rounds ingest stay in sight (~3.3 tracked objects a unit) in both trees.

    PYTHONPATH=$PWD python scripts/bench/index_patches.py --units 200000 --batch 1000 --rounds 5 [--store-out]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "bench"))


@dataclass
class _Node:
    id: str
    label: str
    kind: str = "entry"


@dataclass
class _Value:
    node: str | None = None
    literal: str | None = None


@dataclass
class _Unit:
    id: str
    subject: str
    predicate: str
    args: tuple = ()
    mods: tuple = ()


@dataclass
class _Change:
    seq: int
    touched: list[str]
    units: list[str] | None
    everything: bool = False


@dataclass
class _Feed:
    log: list[_Change] = field(default_factory=list)

    def since(self, after: int, now: int) -> list[_Change]:
        return [c for c in self.log if after < c.seq <= now]


class _Clock:
    def __init__(self) -> None:
        self.feed = _Feed()

    def read(self) -> int:
        return len(self.feed.log)


class Store:
    """Units and nodes in dictionaries, each ingest logged as one change listing its nodes and units."""

    PREDICATES = ["is part of", "belongs to", "causes", "has", "located in", "member of", "founded by"]

    def __init__(self, units: int, seed: int):
        import random

        from corpus import _label

        self._label, self.rng = _label, random.Random(seed)
        self.clock = _Clock()
        self.nodes: dict[str, _Node] = {}
        self.units: dict[str, _Unit] = {}
        self.n_nodes = 0
        self._add(units, logged=False)

    def _node(self, new: bool) -> str:
        if new or not self.n_nodes:
            label = self._label(self.n_nodes)
            self.n_nodes += 1
            nid = label.lower()
            self.nodes[nid] = _Node(nid, label)
            return nid
        return self._label(int(self.n_nodes * self.rng.random() ** 2)).lower()  # a skew towards early (hub) nodes

    def _add(self, k: int, logged: bool = True) -> None:
        touched: set[str] = set()
        ids = []
        for _ in range(k):
            s, o = self._node(self.rng.random() < 0.3), self._node(False)
            uid = f"u{len(self.units)}"
            self.units[uid] = _Unit(uid, self.nodes[s].label, self.rng.choice(self.PREDICATES), (_Value(node=self.nodes[o].label),))
            touched |= {s, o}
            ids.append(uid)
        if logged:
            self.clock.feed.log.append(_Change(len(self.clock.feed.log) + 1, sorted(touched), ids))

    ingest = _add

    def version_clock(self) -> _Clock:
        return self.clock

    def counts(self) -> dict[str, int]:
        return {"units": len(self.units), "nodes": len(self.nodes)}

    def iter_nodes(self):  # noqa: ANN201
        return iter(list(self.nodes.values()))

    def iter_units(self):  # noqa: ANN201
        return iter(list(self.units.values()))

    def get_nodes(self, ids: list[str]) -> list[_Node]:
        return [self.nodes[i] for i in ids if i in self.nodes]

    def get_units(self, ids: list[str]) -> list[_Unit]:
        return [self.units[i] for i in ids if i in self.units]


class Pauses:
    """A ``gc.callbacks`` entry: (generation, CPU seconds of this thread) of each collection."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float]] = []
        self._started = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.thread_time()
        else:
            self.pauses.append((info["generation"], time.thread_time() - self._started))


class Probe:
    """A thread that sleeps ``tick`` seconds at a time and records how late each wake-up is, and,
    given another thread's CPU clock (``watched``), how much CPU that thread used between two of
    its wake-ups: the longest such stretch is the longest the other thread kept the interpreter
    lock from this one (plus one tick), a figure the machine's load does not lengthen (a thread
    the OS has taken off its core uses no CPU)."""

    def __init__(self, tick: float, watched: int | None = None):
        self.tick, self.late, self.stretches, self._stop = tick, [], [], threading.Event()
        self.watched = watched
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        last = time.clock_gettime(self.watched) if self.watched is not None else 0.0
        while not self._stop.is_set():
            t = time.perf_counter()
            time.sleep(self.tick)
            self.late.append(time.perf_counter() - t - self.tick)
            if self.watched is not None:
                try:
                    now = time.clock_gettime(self.watched)
                except OSError:  # the watched thread ended
                    break
                self.stretches.append(now - last)
                last = now

    def __enter__(self) -> Probe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def child(a: argparse.Namespace) -> None:
    from kgservice.answer.graph_words import graph_stems
    from kgservice.caches.switching import prompt_switching
    from kgservice.entry.step import EntryFinder
    from kgservice.expansion.holders import name_holders
    from kgservice.expansion.lexical import LexicalUnits

    t0 = time.perf_counter()
    store = Store(a.units, a.seed)
    if a.store_out:  # the store's objects out of the collector's sight, as with a store in another process (Neo4j)
        gc.collect()
        gc.freeze()
    gc.collect()
    tracked0 = len(gc.get_objects())
    finder, lexical = EntryFinder(store), LexicalUnits(store)

    def refresh() -> None:  # what a cached ask's refresh reads of the indexes (names_not_in_graph, retrieval's holders)
        finder.index()
        name_holders(store, finder).of(["agent", "atlas"], 5)
        graph_stems(lexical.index())

    refresh()
    built = time.perf_counter() - t0
    gc.collect()
    def held() -> tuple[int, int]:  # what the built indexes hold (the finder's and the lexical stage's current values)
        return _tracked_in(finder._derived.get(), lexical.index(), skip=store)

    census = {"tracked_process": len(gc.get_objects()), "tracked_indexes": len(gc.get_objects()) - tracked0,
              "held": held()}
    full0 = gc.get_stats()[2]["collections"]
    rounds = []
    for _ in range(a.rounds):
        store.ingest(a.batch)
        out: dict[str, float] = {}

        go, done, release = threading.Event(), threading.Event(), threading.Event()

        collecting = Pauses()  # each collection in the refresh
        pauses = collecting.pauses

        calls: dict[str, float] = {}  # the longest single C call of each kind in the refresh (--c-calls)

        def profiled(frame: Any, event: str, arg: Any) -> None:
            if event == "c_call":
                started_c.append(time.thread_time())
            elif event in ("c_return", "c_exception") and started_c:
                took = time.thread_time() - started_c.pop()
                name = f"{getattr(arg, '__qualname__', None) or getattr(arg, '__name__', repr(arg))} ({frame.f_code.co_filename.rsplit('/', 2)[-1]}:{frame.f_lineno})"
                if took > calls.get(name, 0.0):
                    calls[name] = took

        started_c: list[float] = []

        def timed() -> None:
            go.wait()
            gc.callbacks.append(collecting)
            if a.c_calls:
                sys.setprofile(profiled)
            with prompt_switching():
                c = time.thread_time()
                refresh()
                out["cpu_s"] = time.thread_time() - c
            sys.setprofile(None)
            gc.callbacks.remove(collecting)
            done.set()
            release.wait()  # alive (its CPU clock readable) until the probe stopped

        th = threading.Thread(target=timed)
        th.start()
        with Probe(a.tick, time.pthread_getcpuclockid(th.ident)) as busy:  # type: ignore[arg-type]
            w = time.perf_counter()
            go.set()
            done.wait()
            wall = time.perf_counter() - w
        release.set()
        th.join()
        with Probe(a.tick) as idle:
            time.sleep(max(wall, 0.05))
        rounds.append({"cpu_s": out["cpu_s"], "wall_s": wall, "late_max_s": max(busy.late, default=0.0),
                       "hold_max_s": max(busy.stretches, default=0.0),
                       "gc_max_s": max((p for _, p in pauses), default=0.0), "gc_s": sum(p for _, p in pauses),
                       "gc_full": sum(g == 2 for g, _ in pauses),
                       "late_p99_s": _pct(busy.late, 99), "idle_late_max_s": max(idle.late, default=0.0),
                       "wakeups": len(busy.late),
                       "c_calls": sorted(calls.items(), key=lambda kv: -kv[1])[:4]})
    census["full_process"] = gc.get_stats()[2]["collections"] - full0  # every full collection in the rounds, any thread
    gc.collect()
    census["tracked_indexes_after"] = len(gc.get_objects()) - tracked0
    census["held_after"] = held()
    c = time.thread_time()
    gc.collect()
    census["full_cpu_s"] = time.thread_time() - c  # one full collection of the process as it now is
    print(json.dumps({"built_s": built, "rounds": rounds, "census": census,
                      "patches": {"labels": finder._derived.patches, "units": lexical._derived.patches},
                      "builds": {"labels": finder._derived.builds, "units": lexical._derived.builds}}))


def _tracked_in(*roots: Any, skip: Any = None) -> tuple[int, int]:
    """(objects reachable from ``roots`` through containers, how many the collector tracks), not
    entering ``skip`` (the store), modules, classes or functions: what the indexes themselves hold."""
    import types

    seen: set[int] = {id(skip)}
    stack, total, tracked = list(roots), 0, 0
    opaque = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, str, int, float, bytes)
    while stack:
        o = stack.pop()
        if id(o) in seen or isinstance(o, opaque):
            continue
        seen.add(id(o))
        total += 1
        tracked += gc.is_tracked(o)
        stack.extend(gc.get_referents(o))
    return total, tracked


def _pct(xs: list[float], p: float) -> float:
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * p / 100))]


def side_by_side(script: Path, args: list[str], before: str) -> dict[str, Any] | None:
    """``script --child args`` run on the tree ``before`` and on this tree at once, each in its own
    process (both under the same load); each child's JSON line, by tree ("before", "this"), or
    None if one failed (said on stderr)."""
    procs = {name: subprocess.Popen([sys.executable, str(script.resolve()), "--child", *args],
                                    env={**os.environ, "PYTHONPATH": str(tree)}, stdout=subprocess.PIPE, text=True)
             for name, tree in {"before": Path(before).resolve(), "this": ROOT}.items()}
    res = {}
    for name, p in procs.items():
        out, _ = p.communicate()
        if p.returncode:
            print(f"{name}: child failed ({p.returncode})", file=sys.stderr)
            return None
        res[name] = json.loads(out)
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--units", type=int, default=200_000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--tick", type=float, default=0.0005, help="the probe's sleep, seconds")
    ap.add_argument("--before", default="/work/main", help="a checkout of the code to compare with")
    ap.add_argument("--store-out", action="store_true",
                    help="freeze the generated store's objects (gc.freeze) before the indexes are built, so the "
                         "collector sees what a server whose store is in another process (Neo4j) holds")
    ap.add_argument("--json", action="store_true", help="print every round's figures too")
    ap.add_argument("--c-calls", action="store_true",
                    help="time every C call of the refresh (sys.setprofile; slows the Python around them) and print "
                         "the longest ones: a hold longer than the switch interval is one C call or a collection")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a)
        return 0
    args = ["--units", str(a.units), "--batch", str(a.batch), "--rounds", str(a.rounds), "--seed", str(a.seed),
            "--tick", str(a.tick)] + (["--store-out"] if a.store_out else []) + (["--c-calls"] if a.c_calls else [])
    res = side_by_side(Path(__file__), args, a.before)
    if res is None:
        return 1
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"units {a.units}, batch {a.batch}, rounds {a.rounds}, load {' '.join(load)}")
    print("per patch, median (max) over rounds: the refresh thread's CPU; the longest stretch of it between two of the\n"
          "probe's wake-ups (the longest hold of the interpreter lock, plus one tick); the probe's longest lateness,\n"
          "with and without a refresh beside it (the machine's share)")
    print(f"{'tree':7} {'build s':>8} {'cpu ms':>16} {'longest hold ms':>16} {'late max ms':>16} {'idle late ms':>13} "
          f"{'longest gc ms':>14} {'gc ms':>12} full gc")

    def cell(rs: list[dict], key: str) -> str:
        xs = [x[key] * 1e3 for x in rs]
        return f"{statistics.median(xs):.1f} ({max(xs):.1f})"

    for name, r in res.items():
        rs = r["rounds"]
        print(f"{name:7} {r['built_s']:8.1f} {cell(rs, 'cpu_s'):>16} {cell(rs, 'hold_max_s'):>16} {cell(rs, 'late_max_s'):>16} "
              f"{cell(rs, 'idle_late_max_s'):>13} {cell(rs, 'gc_max_s'):>14} {cell(rs, 'gc_s'):>12} "
              f"{sum(x['gc_full'] for x in rs):3}   patches {r['patches']} builds {r['builds']}")
    print("the collector: tracked objects the indexes add (after the build / after the rounds), full collections in\n"
          "the rounds (any thread), and the CPU of one full collection of the process after them")
    for name, r in res.items():
        c = r["census"]
        print(f"{name:7} the indexes hold {c['held'][0]:,} objects, {c['held'][1]:,} tracked;"
              f" after the rounds {c['held_after'][0]:,}, {c['held_after'][1]:,} tracked;"
              f" process objects tracked since the store {c['tracked_indexes']:,} / {c['tracked_indexes_after']:,}"
              f" (process {c['tracked_process']:,}); full collections {c['full_process']} in {a.rounds} patches;"
              f" one full collection {c['full_cpu_s'] * 1e3:.1f} ms CPU")
    b, t = res["before"]["rounds"], res["this"]["rounds"]

    def ratio(key: str) -> float:
        return statistics.median([x[key] for x in b]) / statistics.median([x[key] for x in t])

    print(f"before/this (medians): cpu {ratio('cpu_s'):.1f}x, longest hold {ratio('hold_max_s'):.1f}x, "
          f"longest lateness {ratio('late_max_s'):.1f}x")
    if a.c_calls:
        print("the longest single C calls of the refresh (CPU ms, the longest over the rounds; a collection run\n"
              "inside one counts in it)")
        for name, r in res.items():
            longest: dict[str, float] = {}
            for x in r["rounds"]:
                for call, took in x["c_calls"]:
                    longest[call] = max(longest.get(call, 0.0), took)
            top = sorted(longest.items(), key=lambda kv: -kv[1])[:6]
            print(f"{name:7} " + "; ".join(f"{call} {took * 1e3:.1f}" for call, took in top))
    if a.json:
        print(json.dumps(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

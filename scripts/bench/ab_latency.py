"""Retrieval (and no-model ``ask``) latency of two checkouts, interleaved question by question.

``python scripts/bench/ab_latency.py --a TREE_A --a-cache DIR_A --b TREE_B --b-cache DIR_B
--data SET.json [--embedder default] [--repeat 5] [--ask] [--json OUT]``

Why: a latency figure measured at one time and compared with another measured hours later on
this shared 2-core machine compares the load as much as the code. Here each side runs in its
own worker process (``--worker``: the checkout's ``kgservice`` and ``scripts/eval/harness.py``
on ``sys.path``, the eval cache ``KG_EVAL_DIR`` of that side), and the driver asks both to time
the same question one after the other, alternating which goes first (A B, then B A), for
``--repeat`` rounds over the set: the load at any moment hits both sides alike.

What is timed is what ``run.py --latency-only`` calls "retrieval": ``retrieve(kb, question,
qvec=…)`` with the shipped defaults and the question's vector computed beforehand (the
embedding is not in the figure), in this process's CPU time (``time.process_time``, every
thread's: run.py's figure), in the calling thread's CPU time alone (``time.thread_time``: what
the retrieval itself costs, without the model runtime's own threads still busy after an
embedding) and in wall time; the fastest of the rounds per question is kept (as timeit does: the slower runs
measure the other processes), and p50 / p95 are over the set's questions. With ``--ask`` the
worker also times ``kb.ask(question)`` with no model configured (the retrieval-only answer,
answer ranking and the relevance floor included, the question's embedding too: what a user
waits for), and separately the CPU spent inside the embedder's ``embed`` during that call
(the embedder classes are wrapped before the knowledge base is built), so the ask less its
embeddings can be read: on process CPU (``cpu_less_embed``, which also counts OpenBLAS's
threads spinning on after the embedding returned, as the rest of the ask runs) and on the
calling thread's CPU (``thread_less_embed``: the ask's own thread, less its time inside
``embed``; the retrieval runs on the caller, scripts/eval/RESULTS.md "The latency column's
CPU"). The "retrieve" op of a run with ``--ask`` follows the previous question's asks, so its
process CPU may hold that spinning too: read its thread column. Each side also reports a digest of its retrieval per question (unit
ids in order), so the driver can say on how many questions the two checkouts rank differently.

Nothing here asserts a time; the figures go to RESULTS.md with the load the run printed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, TextIO


# ---------------------------------------------------------------- worker (one checkout)

def worker(tree: Path, data: Path, embedder: str, limit: int | None) -> int:
    proto: TextIO = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # everything the library or harness prints goes to stderr, the protocol keeps stdout
    sys.path.insert(0, str(tree))
    from kgservice.vectors import embedder as emb_mod

    spent = {"cpu": 0.0, "thread": 0.0, "calls": 0}
    for cls in (emb_mod.HashEmbedder, emb_mod.PackagedEmbedder):
        orig = cls.embed

        def wrapped(self: Any, texts: list[str], _orig: Any = orig) -> Any:
            c0, t0 = time.process_time(), time.thread_time()
            try:
                return _orig(self, texts)
            finally:
                spent["cpu"] += time.process_time() - c0
                spent["thread"] += time.thread_time() - t0
                spent["calls"] += 1
        cls.embed = wrapped  # type: ignore[method-assign]

    from kgservice.expansion.retrieve import retrieve
    from scripts.eval.dataset import load, subset
    from scripts.eval.harness import build

    ds = load(data)
    if limit:
        ds = subset(ds, limit, False)
    ctx = build(ds, embedder, log=lambda s: print(s, file=sys.stderr))
    qs = ctx.ds.questions
    ctx.kb.retrieve(qs[0].question)  # warm-up: label index, unit index, model
    ctx.kb.ask(qs[0].question)
    proto.write(json.dumps({"ready": True, "questions": len(qs), "build": {k: v for k, v in ctx.build_info.items()
                                                                          if k != "unit_passages"}}) + "\n")
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["op"] == "quit":
            break
        q = qs[cmd["i"]]
        out: dict[str, Any] = {}
        if cmd["op"] == "retrieve":
            w0, c0, t0 = time.perf_counter(), time.process_time(), time.thread_time()
            res = retrieve(ctx.kb, q.question, None, qvec=ctx.qvecs[q.id])
            out = {"cpu": 1000 * (time.process_time() - c0), "wall": 1000 * (time.perf_counter() - w0),
                   "thread": 1000 * (time.thread_time() - t0),
                   "digest": hashlib.sha1(" ".join(u.id for u in res.units).encode()).hexdigest()[:10]}
        elif cmd["op"] == "ask":
            e0, et0, n0 = spent["cpu"], spent["thread"], spent["calls"]
            w0, c0, t0 = time.perf_counter(), time.process_time(), time.thread_time()
            r = ctx.kb.ask(q.question)
            out = {"cpu": 1000 * (time.process_time() - c0), "wall": 1000 * (time.perf_counter() - w0),
                   "thread": 1000 * (time.thread_time() - t0),
                   "embed_cpu": 1000 * (spent["cpu"] - e0), "embed_thread": 1000 * (spent["thread"] - et0),
                   "embed_calls": spent["calls"] - n0,
                   "digest": hashlib.sha1((r.answer + "|" + " ".join(r.cited)).encode()).hexdigest()[:10]}
        proto.write(json.dumps(out) + "\n")
    return 0


# ---------------------------------------------------------------- driver

class Side:
    def __init__(self, name: str, tree: Path, cache: Path, args: argparse.Namespace) -> None:
        env = {**os.environ, "PYTHONPATH": str(tree), "KG_EVAL_DIR": str(cache)}
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--tree", str(tree), "--data", str(args.data),
               "--embedder", args.embedder] + (["--limit", str(args.limit)] if args.limit else [])
        self.name = name
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True, bufsize=1)

    def ready(self) -> dict[str, Any]:
        line = self.p.stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise SystemExit(f"side {self.name}: the worker exited before it was ready (its stderr says why)")
        return json.loads(line)

    def ask(self, cmd: dict[str, Any]) -> dict[str, Any]:
        self.p.stdin.write(json.dumps(cmd) + "\n")  # type: ignore[union-attr]
        self.p.stdin.flush()  # type: ignore[union-attr]
        return json.loads(self.p.stdout.readline())  # type: ignore[union-attr]

    def close(self) -> None:
        self.p.stdin.write('{"op": "quit"}\n')  # type: ignore[union-attr]
        self.p.stdin.close()  # type: ignore[union-attr]
        self.p.wait()


def drive(args: argparse.Namespace) -> int:
    # run.py's nearest-rank percentile, from this checkout (the driver imports neither side's
    # code; each worker puts its own tree first)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from scripts.eval.metrics import percentile

    sides = [Side("A", args.a, args.a_cache, args), Side("B", args.b, args.b_cache, args)]
    info = {s.name: s.ready() for s in sides}
    n = info["A"]["questions"]
    if info["B"]["questions"] != n:
        raise SystemExit(f"the two sides read {n} and {info['B']['questions']} questions")
    ops = ["retrieve"] + (["ask"] if args.ask else [])
    best: dict[str, dict[str, dict[str, list[float]]]] = {
        op: {s.name: {c: [float("inf")] * n for c in ("cpu", "wall", "thread")} for s in sides} for op in ops}
    extra: dict[str, dict[str, list[Any]]] = {op: {s.name: [None] * n for s in sides} for op in ops}
    loads = [os.getloadavg()[0]]
    t0 = time.time()
    for r in range(args.repeat):
        for i in range(n):
            order = sides if (i + r) % 2 == 0 else sides[::-1]
            for op in ops:
                for s in order:
                    out = s.ask({"op": op, "i": i})
                    if out["cpu"] < best[op][s.name]["cpu"][i]:
                        extra[op][s.name][i] = out  # the ask's own embeddings of its fastest run
                    for c in ("cpu", "wall", "thread"):
                        best[op][s.name][c][i] = min(best[op][s.name][c][i], out[c])
        loads.append(os.getloadavg()[0])
    for s in sides:
        s.close()
    doc: dict[str, Any] = {"data": str(args.data), "embedder": args.embedder, "repeat": args.repeat, "questions": n,
                           "a": str(args.a), "b": str(args.b), "build": info["B"]["build"],
                           "load": loads, "seconds": round(time.time() - t0, 1), "ops": {}}
    for op in ops:
        row: dict[str, Any] = {}
        for s in ("A", "B"):
            row[s] = {c: (percentile(best[op][s][c], 50), percentile(best[op][s][c], 95)) for c in ("cpu", "wall", "thread")}
            if op == "ask":
                e = [x["embed_cpu"] for x in extra[op][s]]  # of the fastest run, as its CPU
                less = [a - x["embed_cpu"] for a, x in zip(best[op][s]["cpu"], extra[op][s])]
                row[s]["embed_cpu"] = (percentile(e, 50), percentile(e, 95))
                row[s]["cpu_less_embed"] = (percentile(less, 50), percentile(less, 95))
                tless = [x["thread"] - x["embed_thread"] for x in extra[op][s]]  # of the fastest run
                row[s]["thread_less_embed"] = (percentile(tless, 50), percentile(tless, 95))
                row[s]["embed_calls"] = sum(x["embed_calls"] for x in extra[op][s]) / n
        row["differ"] = sum(extra[op]["A"][i]["digest"] != extra[op]["B"][i]["digest"] for i in range(n))
        row["per_question_cpu"] = {s: best[op][s]["cpu"] for s in ("A", "B")}
        row["digests"] = {s: [x["digest"] for x in extra[op][s]] for s in ("A", "B")}
        doc["ops"][op] = row
    print(f"{args.data.name}: {n} questions, fastest of {args.repeat}, load {loads[0]:.1f} -> {loads[-1]:.1f} "
          f"(max {max(loads):.1f}), {doc['seconds']} s")
    for op in ops:
        row = doc["ops"][op]
        a, b = row["A"]["cpu"], row["B"]["cpu"]
        print(f"  {op}: process CPU p50 / p95  A {a[0]:.2f} / {a[1]:.2f}  B {b[0]:.2f} / {b[1]:.2f}  B/A p95 {b[1] / a[1]:.2f}"
              f"  (this thread's CPU p95 A {row['A']['thread'][1]:.2f} B {row['B']['thread'][1]:.2f};"
              f" wall p95 A {row['A']['wall'][1]:.1f} B {row['B']['wall'][1]:.1f}); differ on {row['differ']} questions")
        if op == "ask":
            for s in ("A", "B"):
                print(f"    {s}: embed calls / question {row[s]['embed_calls']:.2f}, ask less its embeddings p50 / p95: "
                      f"process CPU {row[s]['cpu_less_embed'][0]:.2f} / {row[s]['cpu_less_embed'][1]:.2f}, "
                      f"this thread's CPU {row[s]['thread_less_embed'][0]:.2f} / {row[s]['thread_less_embed'][1]:.2f}")
    if args.json:
        args.json.write_text(json.dumps(doc, indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--tree", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--a", type=Path, help="checkout A (its root)")
    ap.add_argument("--a-cache", type=Path, help="A's KG_EVAL_DIR")
    ap.add_argument("--b", type=Path, help="checkout B (its root)")
    ap.add_argument("--b-cache", type=Path, help="B's KG_EVAL_DIR")
    ap.add_argument("--data", type=Path, required=True, help="a set in the generic shape (scripts/eval/dataset.py)")
    ap.add_argument("--embedder", default="default")
    ap.add_argument("--limit", type=int, help="first N questions only")
    ap.add_argument("--repeat", type=int, default=5, help="rounds over the set; the fastest per question is kept")
    ap.add_argument("--ask", action="store_true", help="also time kb.ask with no model configured")
    ap.add_argument("--json", type=Path, help="write the figures (and per-question CPU) here")
    a = ap.parse_args(argv)
    if a.worker:
        return worker(a.tree, a.data, a.embedder, a.limit)
    missing = [f"--{k.replace('_', '-')}" for k in ("a", "a_cache", "b", "b_cache") if getattr(a, k) is None]
    if missing:
        print(f"missing {', '.join(missing)}", file=sys.stderr)
        return 2
    if not a.data.exists():
        print(f"no such file: {a.data}", file=sys.stderr)
        return 2
    if a.repeat < 1:
        print(f"--repeat must be 1 or more, got {a.repeat}", file=sys.stderr)
        return 2
    return drive(a)


if __name__ == "__main__":
    raise SystemExit(main())

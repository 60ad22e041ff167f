"""The model-backed ask's floor before its first call (:func:`kgservice.pipeline.asking.not_in_graph_before_call`),
measured: which questions it refuses with no call, how many calls that saves, and whether it refuses
a question the graph answers. Two ways:

* ``--verdicts RUN.json --data-dir DIR``: a replayed recording of a capable model (``answers.py
  --set real-model|musique --model kgoffline/scripted --recordings ... --data-dir DIR --json RUN.json``):
  for each of its questions, the no-model verdict over the replay's graph and which floor rule
  gave it (:attr:`kgservice.answer.floor.Relevance.rule`), beside what the real model did. A rule
  that says "not in the graph" for a question the model answered would have been a false
  refusal had it gated the model path: the data a rule is kept or left out on.
* ``--offline demo|notes|musique``: the demo and notes questions (``answer_sets/demo.json``) and
  the off-topic set (``answer_sets/offtopic.json``) over the demo graph, the notes questions over
  the notes graph, MuSiQue's 100 questions and their first hops plus the off-topic set over its
  GPT-3.5 graph, each asked through the model path (:func:`kgservice.pipeline.asking.ask_with_llm`)
  with the offline stand-in ``kgoffline/rules``: once with only the name rule before the call
  (the path before this gate) and once with the gate, the caches cleared before each pass.
  Counts per set: questions refused before any call, calls made, and every answerable question
  the gate refused (listed).
* ``--probes``: :data:`PROBES` over the demo graph (the floor's verdict alone as a gate, the
  shipped gate, the model path without a gate); ``--wider demo|musique``: what a wider gate would
  refuse (verdicts only).

    python scripts/eval/gate_eval.py --offline demo --offline notes --offline musique --probes \
        --wider demo --wider musique [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from kgservice.pipeline import asking  # noqa: E402

SETS = Path(__file__).resolve().parent / "answer_sets"
# written after the first version of the gate (the floor's stranger-word verdict alone) was
# measured, to find what it would refuse that a model answers: the demo graph's facts asked in
# words it never uses (a relation: provoke, engender, bring about, fathered; a thing: cigarettes)
# and two off-topic questions (OFF_PROBES). In-sample for the two conditions they led to; not a
# calibration set
PROBES = ("What does smoking provoke?", "what does smoking engender?", "What ailments does smoking bring about?",
          "who fathered python?", "Who fathered the python language?", "What do cigarettes lead to?",
          "What do cigarettes cause?", "Who invented the snake language?", "How long does it take to boil an egg?",
          "Who created the zorblatt?")
OFF_PROBES = {"How long does it take to boil an egg?", "Who created the zorblatt?"}


def verdict(kb: Any, question: str) -> tuple[str, str, str]:
    """(strength, rule, reason) of the no-model answer's verdict."""
    from kgservice.answer.retrieval_only import answer_units

    r = answer_units(kb.parts, question).relevance
    return r.strength, r.rule, r.reason


def replayed(run: Path, data_dir: Path) -> dict[str, Any]:
    """Each question of a replayed run: what the model did, the no-model verdict, the gate."""
    from kgservice.config import Settings
    from kgservice.service import KnowledgeBase

    doc = json.loads(run.read_text("utf-8"))
    kb = KnowledgeBase(Settings(data_dir=data_dir, embedder="default", vector_backend="edge"))
    rows = []
    try:
        for r in doc["rows"]:
            strength, rule, reason = verdict(kb, r["question"])
            gate = asking.not_in_graph_before_call(kb.parts, r["question"])
            rows.append({"id": r["id"], "question": r["question"], "answerable": r["answerable"], "found": r["found"],
                         "calls": r["calls"], "verdict": strength, "rule": rule, "reason": reason, "gated": gate})
    finally:
        kb.close()
    return {"set": doc["set"], "rows": rows}


def questions(name: str) -> list[tuple[str, str, bool]]:
    """(set, question, answerable) asked of the graph ``name``."""
    spec = json.loads((SETS / "demo.json").read_text("utf-8"))
    off = json.loads((SETS / "offtopic.json").read_text("utf-8"))["questions"]
    if name == "demo":
        return [("demo", x["q"], True) for x in spec["demo"]] + \
            [("off-topic", x["q"], False) for x in off if x["kind"] != "near-musique"]
    if name == "notes":
        return [("notes", x["q"], True) for x in spec["notes"]]
    return []


def graph(name: str) -> tuple[Any, list[tuple[str, str, bool]]]:
    """The graph the floor eval builds (cached under ``KG_EVAL_DIR``) and its questions."""
    from scripts.eval.floor_eval import musique_questions, text_graph

    if name == "demo":
        d = ROOT / "kgservice" / "demo"
        return text_graph("demo", [d / "units"], [d / "texts"]), questions("demo")
    if name == "notes":
        return text_graph("notes", [], [SETS / "notes"]), questions("notes")
    from scripts.eval.dataset import load_musique
    from scripts.eval.harness import build

    ctx = build(load_musique())
    off = json.loads((SETS / "offtopic.json").read_text("utf-8"))["questions"]
    qs = [(f"musique {kind}", q, True) for q, _, kind in musique_questions(ctx)]
    return ctx.kb, qs + [("off-topic", x["q"], False) for x in off if x["kind"] != "near-demo"]


def one_pass(kb: Any, qs: list[tuple[str, str, bool]], gated: bool) -> list[dict[str, Any]]:
    """Every question through the model path with ``kgoffline/rules``, caches cleared first; with
    ``gated`` False only the name rule stands before the call (the path before the gate)."""
    from kgservice.llm import LLM

    kb.caches.clear()
    real = asking.not_in_graph_before_call
    if not gated:
        asking.not_in_graph_before_call = lambda parts, q, threshold=0.0: asking.names_not_in_graph(parts, q)  # type: ignore[assignment]
    out = []
    try:
        for set_name, q, answerable in qs:
            llm = LLM("kgoffline/rules", max_retries=0, retry_wait=0.0)
            t0 = time.perf_counter()
            res = asking.ask_with_llm(kb.parts, q, llm=llm)
            out.append({"set": set_name, "q": q, "answerable": answerable, "found": res.found,
                        "calls": res.llm.get("calls", 0), "stop": res.stop_reason,
                        "seconds": round(time.perf_counter() - t0, 3)})
    finally:
        asking.not_in_graph_before_call = real  # type: ignore[assignment]
    return out


def offline(name: str) -> dict[str, Any]:
    kb, qs = graph(name)
    try:
        # the gate's own verdict per question, and how long it took (no model, no call)
        gate, took = [], []
        for _, q, _ in qs:
            t0 = time.perf_counter()
            gate.append(asking.not_in_graph_before_call(kb.parts, q))
            took.append(time.perf_counter() - t0)
        rules = [verdict(kb, q)[1] for _, q, _ in qs]
        before = one_pass(kb, qs, gated=False)
        after = one_pass(kb, qs, gated=True)
    finally:
        kb.close()
    rows = [{**b, "calls_after": a["calls"], "found_after": a["found"], "stop_after": a["stop"], "gate": g,
             "no_model_rule": rule}
            for b, a, g, rule in zip(before, after, gate, rules)]
    took.sort()
    return {"graph": name, "rows": rows, "gate_seconds_p50": round(took[len(took) // 2], 4),
            "gate_seconds_max": round(took[-1], 4)}


def probes() -> list[str]:
    """:data:`PROBES` over the demo graph: the no-model verdict's rule, the floor's stranger-word
    verdict alone as a gate, the shipped gate, and the model path (``kgoffline/rules``, no gate)."""
    kb, _ = graph("demo")
    out = ["\n## probes over the demo graph",
           "| question | no-model rule | stranger-word verdict alone | shipped gate | model path, no gate: found, calls |",
           "|---|---|---|---|---|"]
    try:
        rows = one_pass(kb, [("probe", q, q not in OFF_PROBES) for q in PROBES], gated=False)
        for q, r in zip(PROBES, rows):
            rule = verdict(kb, q)[1]
            gate = asking.not_in_graph_before_call(kb.parts, q)
            out.append(f"| {q} | {rule or '(found)'} | {'refused' if rule == 'stranger word' else '-'} | "
                       f"{'refused' if gate else '-'} | {r['found']}, {r['calls']} |")
    finally:
        kb.close()
    return out


def wider(name: str) -> list[str]:
    """A wider gate, measured and not shipped: the question holds a word the graph never uses
    (:func:`kgservice.answer.floor.stranger_word`) and the no-model verdict is "not in the graph"
    by any rule. Per set of the graph: questions it refuses, beside the shipped gate's; the
    demo's probes are asked too."""
    from kgservice.answer.floor import stranger_word
    from kgservice.answer.graph_words import known_in
    from kgservice.answer.shape import asked

    kb, qs = graph(name)
    if name == "demo":
        qs = qs + [("probe", q, q not in OFF_PROBES) for q in PROBES]
    out = [f"\n## a wider gate over the {name} graph (stranger word + any 'not in the graph' verdict)",
           "| set | questions | refused: shipped gate / wider gate | answerable refused by the wider gate |",
           "|---|---|---|---|"]
    by: dict[str, list[tuple[bool, bool, bool]]] = {}
    try:
        known = known_in(kb.parts.lexical_units.index())
        wrong = []
        for set_name, q, answerable in qs:
            shipped = asking.not_in_graph_before_call(kb.parts, q) is not None
            wide = bool(stranger_word(asked(q), known)) and verdict(kb, q)[0] == "none"
            by.setdefault(set_name, []).append((answerable, shipped, shipped or wide))
            if answerable and wide and not shipped:
                wrong.append(f"- {set_name}: {q}")
    finally:
        kb.close()
    for set_name, rows in by.items():
        out.append(f"| {set_name} | {len(rows)} | {sum(r[1] for r in rows)} / {sum(r[2] for r in rows)} | "
                   f"{sum(r[0] and r[2] and not r[1] for r in rows)} |")
    return out + wrong


def report_offline(doc: dict[str, Any]) -> list[str]:
    out = [f"\n## {doc['graph']} graph (kgoffline/rules through the model path); gate p50 "
           f"{doc['gate_seconds_p50'] * 1000:.1f} ms, max {doc['gate_seconds_max'] * 1000:.1f} ms",
           "| set | questions | refused before a call: before / after | calls before / after | "
           "found before / after | answerable refused by the gate |", "|---|---|---|---|---|---|"]
    by: dict[str, list[dict[str, Any]]] = {}
    for r in doc["rows"]:
        by.setdefault(r["set"], []).append(r)
    for s, rows in by.items():
        pre_b = sum(r["calls"] == 0 and r["stop"].startswith("the graph has nothing about") for r in rows)
        pre_a = sum(r["calls_after"] == 0 and r["gate"] is not None for r in rows)
        wrong = [r["q"] for r in rows if r["answerable"] and r["gate"] is not None]
        out.append(f"| {s} | {len(rows)} | {pre_b} / {pre_a} | {sum(r['calls'] for r in rows)} / "
                   f"{sum(r['calls_after'] for r in rows)} | {sum(r['found'] for r in rows)} / "
                   f"{sum(r['found_after'] for r in rows)} | {len(wrong)} |")
    for r in doc["rows"]:
        if r["gate"] is not None and not r["stop"].startswith("the graph has nothing about"):
            out.append(f"- newly refused ({r['set']}, {r['calls']} calls saved, found before: {r['found']}): "
                       f"{r['q']} -- {r['gate']}")
    changed = [r for r in doc["rows"] if r["gate"] is None and (r["calls"], r["found"]) != (r["calls_after"], r["found_after"])]
    for r in changed:
        out.append(f"- not gated but changed: {r['q']} ({r['calls']} -> {r['calls_after']} calls)")
    return out


def report_verdicts(doc: dict[str, Any]) -> list[str]:
    out = [f"\n## {doc['set']} (replayed capable model): no-model verdicts by rule",
           "| rule | questions | of them answered by the model (would be false refusals) |", "|---|---|---|"]
    by: dict[str, list[dict[str, Any]]] = {}
    for r in doc["rows"]:
        by.setdefault(r["rule"] or "(found)", []).append(r)
    for rule, rows in sorted(by.items()):
        answered = [r["id"] for r in rows if r["found"]]
        out.append(f"| {rule} | {len(rows)} | {len(answered)} {' '.join(answered)} |")
    gated = [r for r in doc["rows"] if r["gated"]]
    out.append(f"gate (name + stranger word): {len(gated)} refused: "
               + (", ".join(f"{r['id']} (answerable {r['answerable']}, model found {r['found']}, {r['calls']} calls)"
                            for r in gated) or "none"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--verdicts", type=Path, action="append", default=[],
                    help="a replayed run's --json (with --data-dir: the knowledge base it kept)")
    ap.add_argument("--data-dir", type=Path, action="append", default=[],
                    help="the replay's --data-dir/kg, one per --verdicts, in order")
    ap.add_argument("--offline", action="append", choices=("demo", "notes", "musique"), default=[])
    ap.add_argument("--probes", action="store_true", help="the written probes over the demo graph (PROBES)")
    ap.add_argument("--wider", action="append", choices=("demo", "notes", "musique"), default=[],
                    help="a wider gate's refusals on a graph (verdicts only, no model)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    if len(args.verdicts) != len(args.data_dir):
        print("gate_eval.py: give one --data-dir per --verdicts", file=sys.stderr)
        return 2
    docs: dict[str, Any] = {}
    for run, d in zip(args.verdicts, args.data_dir):
        doc = replayed(run, d)
        docs[f"verdicts {doc['set']}"] = doc
        print("\n".join(report_verdicts(doc)))
    for name in args.offline:
        doc = offline(name)
        docs[f"offline {name}"] = doc
        print("\n".join(report_offline(doc)), flush=True)
    if args.probes:
        print("\n".join(probes()), flush=True)
    for name in args.wider:
        print("\n".join(wider(name)), flush=True)
    if args.json:
        args.json.write_text(json.dumps(docs, indent=1, ensure_ascii=False, default=str), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Measure LLM calls and tokens per query, cold and warm cache.

    python scripts/bench/llm_calls.py --data-dir /tmp/kg-measure --units demo/units \\
        --questions demo/questions.txt --llm kgoffline/rules

Ingests the unit files (no LLM) into a fresh data directory, asks every question once with
empty caches (cold) and once more (warm), and prints calls and tokens per query and per
step. Tokens are counted by litellm's tokenizer for the offline provider (what a hosted
model reports itself); with the rule-based stand-in they measure the prompts kgservice
builds, which is what a hosted model would be sent.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
from pathlib import Path


def measure(data_dir: Path, units: Path, questions: list[str], llm_model: str, embedder: str,
            threshold: float) -> dict:
    from kgservice.config import load_settings
    from kgservice.pipeline.asking import AskParams
    from kgservice.service import KnowledgeBase

    if data_dir.exists():
        shutil.rmtree(data_dir)
    settings = load_settings().with_overrides(data_dir=data_dir, llm_model=llm_model, embedder=embedder)
    kb = KnowledgeBase(settings)
    try:
        files = sorted(units.glob("*.units")) if units.is_dir() else [units]
        batch = kb.parse_unit_files(files)
        kb.ingest_units(batch)
        params = AskParams(threshold=threshold)
        rows = []
        for q in questions:
            kb.clear_caches()  # cold: nothing cached, not even by an earlier question
            cold = kb.ask(q, params)
            warm = kb.ask(q, params)
            rows.append({
                "question": q, "found": cold.found, "rounds": len(cold.rounds),
                "cold_calls": cold.llm["calls"], "cold_tokens": cold.llm["total_tokens"],
                "cold_by_step": {k: (v["calls"], v["total_tokens"]) for k, v in cold.llm["by_purpose"].items()},
                "warm_calls": warm.llm["calls"], "warm_tokens": warm.llm["total_tokens"],
                "cold_s": cold.seconds, "warm_s": warm.seconds,
            })
        steps: dict[str, list[tuple[int, int]]] = {}
        for r in rows:
            for k, v in r["cold_by_step"].items():
                steps.setdefault(k, []).append(v)
        return {"units": len(batch),
                "cold_mean_by_step": {k: {"calls": round(sum(c for c, _ in v) / len(rows), 2),
                                          "tokens": round(sum(t for _, t in v) / len(rows))} for k, v in steps.items()}, "llm": llm_model, "embedder": embedder, "rows": rows,
                "mean_cold_calls": statistics.mean(r["cold_calls"] for r in rows),
                "mean_cold_tokens": statistics.mean(r["cold_tokens"] for r in rows),
                "max_cold_tokens": max(r["cold_tokens"] for r in rows),
                "mean_warm_calls": statistics.mean(r["warm_calls"] for r in rows),
                "mean_warm_tokens": statistics.mean(r["warm_tokens"] for r in rows)}
    finally:
        kb.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=Path("/tmp/kg-measure"))
    ap.add_argument("--units", type=Path, default=Path("demo/units"))
    ap.add_argument("--questions", type=Path, default=Path("demo/questions.txt"))
    ap.add_argument("--llm", default="kgoffline/rules")
    ap.add_argument("--embedder", default="default")
    ap.add_argument("--threshold", type=float, default=0.6)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    qs = [q.strip() for q in a.questions.read_text("utf-8").splitlines() if q.strip()]
    res = measure(a.data_dir, a.units, qs, a.llm, a.embedder, a.threshold)
    if a.json:
        print(json.dumps(res, ensure_ascii=False, indent=2))
        return
    print(f"{res['units']} units, LLM {res['llm']}, embedder {res['embedder']}")
    print(f"{'cold calls':>10} {'tokens':>7} {'warm calls':>10} {'tokens':>7} {'rounds':>6}  question")
    for r in res["rows"]:
        print(f"{r['cold_calls']:>10} {r['cold_tokens']:>7} {r['warm_calls']:>10} {r['warm_tokens']:>7} "
              f"{r['rounds']:>6}  {r['question']}")
    print(f"mean cold: {res['mean_cold_calls']:.2f} calls, {res['mean_cold_tokens']:.0f} tokens "
          f"(max {res['max_cold_tokens']}); mean warm: {res['mean_warm_calls']:.2f} calls, "
          f"{res['mean_warm_tokens']:.0f} tokens")
    print("cold, mean per query by step: " + ", ".join(
        f"{k} {v['calls']} calls / {v['tokens']} tokens" for k, v in res["cold_mean_by_step"].items()))


if __name__ == "__main__":
    main()

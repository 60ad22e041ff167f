"""Two methods compared question by question, per set and question type, from ``run.py --json``
files: how many questions method A puts more gold passages into the top k than B, as many, or
fewer, and the exact two-sided sign test over the questions where they differ.

Why: the results table compares means, and with 5 to 27 questions in a type one passage moves a
cell by 1 to 5 points. Two equal means can hide a dozen questions that go each way; a
difference of a point can be one question. The sign test says how likely a split as lopsided
as the one seen is if neither method were better (it ignores ties and how much each question
differs, so it is conservative).

``python scripts/eval/paired.py musique.json musique-spacy.json … [--a NAME] [--b NAME]``;
A defaults to the full retrieval, B to the HippoRAG-style PPR baseline.

>>> q = {"type": "bridge", "gold": ["p1", "p2"], "rankings": {"A": ["p1", "p2", "x"], "B": ["x", "p1", "p2"]}}
>>> hits(q, "A", 2), hits(q, "B", 2), hits(q, "B", 5)
(2, 1, 2)
>>> split([q, q], "A", "B", 2), split([q], "A", "B", 5)
((2, 0, 0), (0, 1, 0))
"""

from __future__ import annotations

import argparse
import sys
from math import comb
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripts.eval.defaults_rule import FULL, read_result  # noqa: E402

PPR = "HippoRAG-style PPR (networkx)"


def hits(question: dict[str, Any], method: str, k: int) -> int:
    """Gold passages of one ``per_question`` entry among the method's top ``k``."""
    return len(set(question["gold"]) & set(question["rankings"][method][:k]))


def split(questions: list[dict[str, Any]], a: str, b: str, k: int) -> tuple[int, int, int]:
    """(questions A ranks more gold into the top k than B, as many, fewer)."""
    d = [hits(q, a, k) - hits(q, b, k) for q in questions]
    return sum(x > 0 for x in d), sum(x == 0 for x in d), sum(x < 0 for x in d)


def sign_test(wins: int, losses: int) -> float:
    """Exact two-sided sign test: the chance of a split at least this lopsided between
    ``wins + losses`` fair coin flips.

    >>> sign_test(8, 2), sign_test(5, 5), sign_test(0, 0), round(sign_test(0, 6), 4)
    (0.109375, 1.0, 1.0, 0.0312)
    """
    n = wins + losses
    if n == 0:
        return 1.0
    return min(1.0, 2 * sum(comb(n, i) for i in range(min(wins, losses) + 1)) / 2 ** n)


def table(sets: list[dict[str, Any]], a: str, b: str) -> list[str]:
    """Markdown rows: per set and question type (and the set overall), for R@2 and R@5, A
    better / same / worse than B and the sign test's p.

    >>> q = {"type": "bridge", "gold": ["p1"], "rankings": {"A": ["p1"], "B": ["x", "y", "p1"]}}
    >>> table([{"set": "s", "per_question": [q]}], "A", "B")[2]
    '| s | bridge | 1 | 1 / 0 / 0 (p 1.00) | 0 / 1 / 0 (p 1.00) |'
    """
    out = ["| set | questions | n | top 2: A better / same / worse | top 5: A better / same / worse |",
           "|---|---|---|---|---|"]
    for s in sets:
        qs = s["per_question"]
        groups = {ty: [q for q in qs if q["type"] == ty] for ty in dict.fromkeys(q["type"] for q in qs)}
        if len(groups) > 1:
            groups["all"] = qs
        for ty, group in groups.items():
            cells = []
            for k in (2, 5):
                w, t, l = split(group, a, b, k)
                cells.append(f"{w} / {t} / {l} (p {sign_test(w, l):.2f})")
            out.append(f"| {s.get('set', '?')} | {ty} | {len(group)} | " + " | ".join(cells) + " |")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sets", nargs="+", help="run.py --json files")
    ap.add_argument("--a", default=FULL, help="method A (a row name of the results table)")
    ap.add_argument("--b", default=PPR, help="method B")
    args = ap.parse_args(argv)
    sets = []
    for p in args.sets:
        s = read_result(p)
        if s is None:
            return 2
        missing = [m for m in (args.a, args.b) if not s.get("per_question") or m not in s["per_question"][0]["rankings"]]
        if missing:
            print(f"{p}: no per-question rankings for {', '.join(map(repr, missing))}; was it written by run.py --json?",
                  file=sys.stderr)
            return 2
        s.setdefault("set", p)
        sets.append(s)
    print(f"A = {args.a}\nB = {args.b}\n")
    print("\n".join(table(sets, args.a, args.b)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Leave-one-set-out verdicts for the retrieval's components, from ``run.py --json`` files.

``python scripts/eval/loso.py SET1.json SET2.json [...] [--component "NAME=ROW WITHOUT IT"] ...``

A component's **help** on a set is R@2 + R@5 (points) of the full retrieval less that of the
row without the component. Each set is held out in turn: the component is *chosen* when its
mean help over the other sets, on their even-numbered questions, is above zero, and it is
*confirmed* when it also helps on the held-out set's odd-numbered questions — a set it was
not chosen on, and questions it was not chosen on (the sets here share MuSiQue's questions
under different graphs, so the halves keep question and graph apart). The verdict:

* ``keep``: chosen and confirmed in every fold;
* ``drop``: not chosen in any fold (it does not earn its place);
* ``simpler``: the folds disagree, or a choice is not confirmed: the simpler setting (without
  it) is preferred.

>>> q = lambda g, a, b: {"type": "bridge", "gold": g, "rankings": {"A": a, "B": b}}
>>> s = {"per_question": [q(["p"], ["p"], ["x"]), q(["p"], ["p"], ["x"])]}
>>> help_of(s, "A", "B", 0), help_of(s, "A", "B", 1)
(200.0, 200.0)
>>> verdict([(True, True), (True, True)]), verdict([(False, False), (False, True)]), verdict([(True, False), (True, True)])
('keep', 'drop', 'simpler')
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripts.eval.defaults_rule import FULL, read_result  # noqa: E402
from scripts.eval.paired import sign_test, split  # noqa: E402

# component -> the row of the full retrieval without it (run.py's names)
COMPONENTS = {
    "lexical seeds": "kgservice retrieval, no lexical seeds (entry + spread + node-vector fusion)",
    "lexical hop": "kgservice retrieval, no lexical hop (entry + lexical seeds + spread + node-vector fusion)",
    "bridge hop": "kgservice retrieval, no bridge hop (entry + lexical seeds + spread + node-vector fusion + lexical hop)",
    "node-vector fusion": "ablation: node-vector fusion weight 0.0",
}


def _recall(q: dict[str, Any], method: str, k: int) -> float:
    gold = set(q["gold"])
    return 100.0 * len(gold & set(q["rankings"][method][:k])) / len(gold)


def help_of(s: dict[str, Any], full: str, without: str, half: int | None) -> float:
    """(R@2 + R@5) of ``full`` less that of ``without`` over the set's questions of one half
    (0: even-numbered, 1: odd-numbered; None: all)."""
    qs = [q for i, q in enumerate(s["per_question"]) if half is None or i % 2 == half]
    if not qs:
        return 0.0
    return sum(_recall(q, full, k) - _recall(q, without, k) for q in qs for k in (2, 5)) / len(qs)


def verdict(folds: list[tuple[bool, bool]]) -> str:
    """From (chosen, confirmed) per fold (module doc)."""
    if all(c and ok for c, ok in folds):
        return "keep"
    if not any(c for c, _ in folds):
        return "drop"
    return "simpler"


def table(sets: list[dict[str, Any]], names: list[str], components: dict[str, str]) -> list[str]:
    head = ("| component | " + " | ".join(f"{n}: help all / even / odd" for n in names)
            + " | folds (held out: chosen on the others' even half → help on its odd half) | verdict |")
    out = [head, "|---" * (len(names) + 3) + "|"]
    for comp, row in components.items():
        if not all(row in s["per_question"][0]["rankings"] for s in sets):
            continue
        cells = [f"{help_of(s, FULL, row, None):+.1f} / {help_of(s, FULL, row, 0):+.1f} / {help_of(s, FULL, row, 1):+.1f}"
                 for s in sets]
        folds, notes = [], []
        for i, held in enumerate(sets):
            others = [help_of(s, FULL, row, 0) for j, s in enumerate(sets) if j != i]
            chosen = sum(others) / len(others) > 0
            confirmed = help_of(held, FULL, row, 1) > 0
            folds.append((chosen, confirmed))
            notes.append(f"{names[i]}: {'kept' if chosen else 'dropped'} → {help_of(held, FULL, row, 1):+.1f}")
        out.append(f"| {comp} | " + " | ".join(cells) + f" | {'; '.join(notes)} | {verdict(folds)} |")
    return out


def paired_rows(sets: list[dict[str, Any]], names: list[str], rows: list[str]) -> list[str]:
    """Full retrieval against each row, question by question (better / same / worse, sign test)."""
    out = ["| set | full against | top 2: full better / same / worse | top 5: full better / same / worse |",
           "|---|---|---|---|"]
    for s, n in zip(sets, names):
        for row in rows:
            if row not in s["per_question"][0]["rankings"]:
                continue
            cells = []
            for k in (2, 5):
                w, t, l = split(s["per_question"], FULL, row, k)
                cells.append(f"{w} / {t} / {l} (p {sign_test(w, l):.2f})")
            out.append(f"| {n} | {row.split(' (')[0]} | " + " | ".join(cells) + " |")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sets", nargs="+")
    ap.add_argument("--component", action="append", default=[], help="NAME=ROW: the full retrieval without NAME")
    ap.add_argument("--paired", action="append", default=[], help="a row to compare the full retrieval with")
    a = ap.parse_args(argv)
    if len(a.sets) < 2:
        print("leave-one-set-out needs two sets or more", file=sys.stderr)
        return 2
    sets = []
    for p in a.sets:
        s = read_result(p)
        if s is None or not s.get("per_question"):
            print(f"{p}: no per-question rankings (run.py --json)", file=sys.stderr)
            return 2
        sets.append(s)
    comps = dict(COMPONENTS)
    for c in a.component:
        name, _, row = c.partition("=")
        comps[name] = row
    names = [s.get("set", p) for s, p in zip(sets, a.sets)]
    print("\n".join(table(sets, names, comps)))
    if a.paired:
        print()
        print("\n".join(paired_rows(sets, names, a.paired)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Leave-one-set-out verdicts for the retrieval's components, from ``run.py --json`` files.

``python scripts/eval/loso.py SET1.json SET2.json [...] [--component "NAME=ROW WITHOUT IT"]
[--variant "NAME=ROW WITH IT"] [--pair "NAME=ROW WITH IT || ROW WITHOUT IT"] [--only-given]
...`` (a variant is a setting the shipped retrieval lacks; a pair measures a component between
any two rows, e.g. added alone to a bare retrieval; ``--only-given`` leaves the built-in
components out) (files of one set, run with different rows, are merged). Below the table, each
component's question-by-question split per set (:func:`paired_cells`).

A component's **help** on a set is R@2 + R@5 (points), averaged over questions, of the
retrieval with the component less that without it. Each set is held out in turn: the
component is *chosen* when its mean help over the other sets, on their even-numbered
questions, is above zero, and it is *confirmed* when it also helps on the held-out set's
odd-numbered questions — a set it was not chosen on, and questions it was not chosen on (the
sets here share MuSiQue's questions under different graphs, so the halves keep question and
graph apart). The same verdict is also given on whole sets (chosen on the other sets' every
question, confirmed on the held-out set's every question: more questions, but shared). The
verdict:

* ``keep``: chosen and confirmed in every fold;
* ``drop``: not chosen in any fold (it does not earn its place);
* ``simpler``: the folds disagree, or a choice is not confirmed: the simpler setting (without
  it) is preferred.

With ``--group A,B,C --group D,E`` (sets named as their files' ``set``: the sets of one group
share their questions, e.g. three graphs of MuSiQue's 100 and two of HotpotQA's 100), a third
verdict holds out a whole **question set**: a group is held out in turn, the component is
chosen when its mean help over the other groups' sets (every question) is above zero, and
confirmed on each set of the held-out group (every question): the only folds where neither
the questions nor the graph were seen when choosing. Sets named in no group are a group each.

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

# component -> (row with it, row without it) in run.py's names; FULL is the shipped retrieval.
# Several pairs: runs before the lexical hop was switched off named the rows by it.
COMPONENTS: dict[str, list[tuple[str, str]]] = {
    "lexical seeds": [(FULL, "kgservice retrieval, no lexical seeds (entry + spread + node-vector fusion)")],
    "lexical hop": [("kgservice retrieval, with the lexical hop (hop_weight 0.5, off by default)", FULL),
                    (FULL, "kgservice retrieval, no lexical hop (entry + lexical seeds + spread + node-vector fusion)")],
    "bridge hop": [(FULL, "kgservice retrieval, no bridge hop (entry + lexical seeds + spread + node-vector fusion)"),
                   (FULL, "kgservice retrieval, no bridge hop (entry + lexical seeds + spread + node-vector fusion + lexical hop)")],
    "node-vector fusion": [(FULL, "ablation: node-vector fusion weight 0.0")],
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


def named_rows(option: str, arg: str, rows: set[str], pair: bool = False) -> tuple[str, list[str]]:
    """``arg`` of ``option`` read as NAME=ROW (``pair``: NAME=ROW WITH IT || ROW WITHOUT IT): the
    name and its rows. A name or a row may hold "=" ("damping=0.5=kg full (δ 0.5)"), so the
    split is the one "=" after which every row is one of the files' ``rows``; none, or more
    than one, is an error naming the argument (split at the first "=", a name holding one
    read the rest of the name as a row the files lack, and the component was silently left out).

    >>> rows = {"kg full", "kg full (δ=0.5)", "bare"}
    >>> named_rows("--variant", "δ=0.5=kg full (δ=0.5)", rows)
    ('δ=0.5', ['kg full (δ=0.5)'])
    >>> named_rows("--pair", "a=b=kg full || bare", rows, pair=True)
    ('a=b', ['kg full', 'bare'])
    >>> named_rows("--variant", "v=no such row", rows)
    Traceback (most recent call last):
    ...
    ValueError: --variant 'v=no such row': no NAME=ROW split names a row of the files (their rows: bare; kg full; kg full (δ=0.5))
    """
    found: list[tuple[str, list[str]]] = []
    for i, ch in enumerate(arg):
        if ch != "=" or not arg[:i].strip():
            continue
        rest = arg[i + 1:]
        if pair:
            with_it, sep, without = rest.partition("||")
            if not sep:
                continue
            parts = [with_it.strip(), without.strip()]
        else:
            parts = [rest.strip()]
        if all(r in rows for r in parts):
            found.append((arg[:i].strip(), parts))
    shape = "NAME=ROW WITH IT || ROW WITHOUT IT" if pair else "NAME=ROW"
    if not found:
        raise ValueError(f"{option} {arg!r}: no {shape} split names a row of the files "
                         f"(their rows: {'; '.join(sorted(rows))})")
    if len(found) > 1:
        raise ValueError(f"{option} {arg!r}: {shape} splits more than one way into rows of the files "
                         f"({'; '.join(repr(n) for n, _ in found)}); rename the rows")
    return found[0]


def _pair(s: dict[str, Any], pairs: list[tuple[str, str]]) -> tuple[str, str] | None:
    rankings = s["per_question"][0]["rankings"]
    return next(((a, b) for a, b in pairs if a in rankings and b in rankings), None)


def group_folds(whole: list[float], groups: list[list[int]]) -> list[tuple[bool, bool]]:
    """(chosen, confirmed) per held-out set, a whole group of sets held out at a time:
    chosen on the mean help over the other groups' sets, confirmed on the held-out set.

    >>> group_folds([2.0, 1.0, -1.0, 0.5], [[0, 1], [2, 3]])
    [(False, True), (False, True), (True, False), (True, True)]
    """
    out: list[tuple[bool, bool]] = []
    for i in range(len(whole)):
        g = next(g for g in groups if i in g)
        others = [whole[j] for j in range(len(whole)) if j not in g]
        out.append((bool(others) and sum(others) / len(others) > 0, whole[i] > 0))
    return out


def table(sets: list[dict[str, Any]], names: list[str], components: dict[str, list[tuple[str, str]]],
          groups: list[list[int]] | None = None) -> list[str]:
    head = ("| component | " + " | ".join(f"{n}: help all / even / odd" for n in names)
            + " | folds (held out: chosen on the others' even half → help on its odd half) | verdict |")
    out = [head, "|---" * (len(names) + 3) + "|"]
    for comp, pairs in components.items():
        found = [_pair(s, pairs) for s in sets]
        if not all(found):
            continue
        helps = [{h: help_of(s, a, b, h) for h in (None, 0, 1)} for s, (a, b) in zip(sets, found)]  # type: ignore[misc]
        cells = [f"{h[None]:+.1f} / {h[0]:+.1f} / {h[1]:+.1f}" for h in helps]
        folds, notes = [], []
        for i in range(len(sets)):
            others = [helps[j][0] for j in range(len(sets)) if j != i]
            chosen = sum(others) / len(others) > 0
            confirmed = helps[i][1] > 0
            folds.append((chosen, confirmed))
            notes.append(f"{names[i]}: {'kept' if chosen else 'dropped'} → {helps[i][1]:+.1f}")
        whole = [(sum(helps[j][None] for j in range(len(sets)) if j != i) > 0, helps[i][None] > 0)
                 for i in range(len(sets))]
        by_group = f"; question sets: {verdict(group_folds([h[None] for h in helps], groups))}" if groups else ""
        out.append(f"| {comp} | " + " | ".join(cells) + f" | {'; '.join(notes)} | halves: {verdict(folds)}; "
                   f"whole sets: {verdict(whole)}{by_group} |")
    return out


def paired_cells(sets: list[dict[str, Any]], names: list[str], components: dict[str, list[tuple[str, str]]]) -> list[str]:
    """Markdown rows: per component and set, how many questions the row with it puts more gold
    passages into the top 2 (top 5) than the row without it, as many, fewer, and the sign test.

    >>> q = lambda a, b: {"type": "bridge", "gold": ["p"], "rankings": {"A": a, "B": b}}
    >>> s = {"per_question": [q(["p"], ["x"]), q(["x", "y", "p"], ["p"]), q(["p"], ["p"])]}
    >>> paired_cells([s], ["s"], {"c": [("A", "B")]})[2]
    '| c | 1 / 1 / 1 (p 1.00); 1 / 2 / 0 (p 1.00) |'
    """
    out = ["| component (with it against without) | " + " | ".join(f"{n}: top 2 better / same / worse; top 5" for n in names) + " |",
           "|---" * (len(names) + 1) + "|"]
    for comp, pairs in components.items():
        found = [_pair(s, pairs) for s in sets]
        if not all(found):
            continue
        cells = []
        for s, (a, b) in zip(sets, found):  # type: ignore[misc]
            parts = []
            for k in (2, 5):
                w, t, l = split(s["per_question"], a, b, k)
                parts.append(f"{w} / {t} / {l} (p {sign_test(w, l):.2f})")
            cells.append("; ".join(parts))
        out.append(f"| {comp} | " + " | ".join(cells) + " |")
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
    ap.add_argument("--variant", action="append", default=[],
                    help="NAME=ROW: a setting the full retrieval does not have; its help is ROW less the full retrieval")
    ap.add_argument("--pair", action="append", default=[],
                    help="NAME=ROW WITH IT || ROW WITHOUT IT: a component measured between two rows")
    ap.add_argument("--only-given", action="store_true", help="only the components named by --component/--variant/--pair")
    ap.add_argument("--paired", action="append", default=[], help="a row to compare the full retrieval with")
    ap.add_argument("--group", action="append", default=[],
                    help="SET,SET,...: sets sharing their questions; adds the verdict holding out a whole group")
    a = ap.parse_args(argv)
    if len(a.sets) < 2:
        print("leave-one-set-out needs two sets or more", file=sys.stderr)
        return 2
    sets: list[dict[str, Any]] = []
    for p in a.sets:
        s = read_result(p)
        if s is None or not s.get("per_question"):
            print(f"{p}: no per-question rankings (run.py --json)", file=sys.stderr)
            return 2
        s.setdefault("set", p)
        same = next((x for x in sets if x["set"] == s["set"]), None)
        if same is None:
            sets.append(s)
        else:  # a second run of the same set (more rows): its rankings join the first's
            for q, r in zip(same["per_question"], s["per_question"]):
                q["rankings"].update(r["rankings"])
    comps = {} if a.only_given else dict(COMPONENTS)
    rows = {r for s in sets for r in s["per_question"][0]["rankings"]}
    try:
        for c in a.component:
            name, (row,) = named_rows("--component", c, rows)
            comps[name] = [(FULL, row)]
        for c in a.variant:
            name, (row,) = named_rows("--variant", c, rows)
            comps[name] = [(row, FULL)]
        for c in a.pair:
            name, (with_it, without) = named_rows("--pair", c, rows, pair=True)
            comps[name] = [(with_it, without)]
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    names = [s["set"] for s in sets]
    groups: list[list[int]] = []
    for g in a.group:
        members = [x.strip() for x in g.split(",") if x.strip()]
        unknown = [m for m in members if m not in names]
        if unknown or any(names.index(m) in h for m in members for h in groups):
            print(f"--group {g!r}: {', '.join(unknown) or 'a set named twice'} "
                  f"(the sets: {', '.join(names)})", file=sys.stderr)
            return 2
        groups.append([names.index(m) for m in members])
    groups += [[i] for i in range(len(names)) if groups and not any(i in h for h in groups)]
    print("\n".join(table(sets, names, comps, groups or None)))
    print()
    print("\n".join(paired_cells(sets, names, comps)))
    if a.paired:
        print()
        print("\n".join(paired_rows(sets, names, a.paired)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

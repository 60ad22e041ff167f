"""The issue's rule for defaults, checked on two ``run.py --ablations --json`` files at once.

``python scripts/eval/defaults_rule.py musique.json rules.json [more.json …]`` prints, per ablation row (and
per "kgservice retrieval, no …" row: the full retrieval less one step), its difference from
the full retrieval on each set (R@2 / R@5, alternative − shipped), and a verdict:

* ``yes``: the shipped default loses to the alternative by at most 1 point everywhere;
* ``trade``: it loses by more somewhere, but the alternative loses by more than a point
  elsewhere (R@2 against R@5, or one set against the other): neither passes the rule against
  the other, and the simpler setting is the tie-break, a judgement the table leaves to
  RESULTS.md;
* ``no``: the alternative is more than a point better somewhere and never more than a point
  worse: by the rule it should replace the default.

``--types`` prints instead every row's R@2 / R@5 per set and question type.

>>> full = {"R@2": 50.0, "R@5": 60.0}
>>> def sets(a, b):
...     return [{"table": {FULL: full, "ablation: K=2": a}}, {"table": {FULL: full, "ablation: K=2": b}}]
>>> rows(sets({"R@2": 50.5, "R@5": 58.0}, {"R@2": 51.5, "R@5": 60.0}))
[('K=2', [(0.5, -2.0), (1.5, 0.0)], 'trade')]
>>> rows(sets({"R@2": 50.5, "R@5": 59.5}, {"R@2": 51.5, "R@5": 60.0}))[0][2]
'no'
>>> rows(sets({"R@2": 49.0, "R@5": 61.0}, {"R@2": 50.0, "R@5": 60.0}))[0][2]
'yes'
"""

from __future__ import annotations

import json
import sys
from typing import Any

FULL = "kgservice retrieval (shipped defaults: entry + lexical seeds + spread + node-vector fusion + bridge hop)"
# the full row's name in runs before the lexical hop was switched off (2026-12-06): files
# written then are read with it
FULL_BEFORE = "kgservice retrieval (entry + lexical seeds + spread + node-vector fusion + lexical hop + bridge hop)"


def verdict(deltas: list[tuple[float, float]]) -> str:
    """``yes`` / ``trade`` / ``no`` for one alternative's differences (module doc)."""
    flat = [d for pair in deltas for d in pair]
    if all(d <= 1.0 for d in flat):
        return "yes"
    return "trade" if any(d < -1.0 for d in flat) else "no"


def rows(sets: list[dict[str, Any]]) -> list[tuple[str, list[tuple[float, float]], str]]:
    """(alternative, [(ΔR@2, ΔR@5) per set], verdict) for every alternative all sets ran."""
    out = []
    for name in _alternatives(sets):
        deltas = [(round(s["table"][name]["R@2"] - s["table"][FULL]["R@2"], 2),
                   round(s["table"][name]["R@5"] - s["table"][FULL]["R@5"], 2)) for s in sets]
        out.append((_label(name), deltas, verdict(deltas)))
    return out


def _alternatives(sets: list[dict[str, Any]]) -> list[str]:
    """The ablation and "kgservice retrieval, no …" rows every set ran, in the first set's order."""
    return [name for name in sets[0]["table"] if name.startswith(("ablation: ", "kgservice retrieval, no ",
                                                                  "kgservice retrieval, with "))
            and all(name in s["table"] for s in sets)]


def _label(name: str) -> str:
    return name.removeprefix("ablation: ").removeprefix("kgservice retrieval, ").split(" (")[0]


def by_type(sets: list[dict[str, Any]], names: list[str]) -> list[str]:
    """Markdown rows: the full retrieval and every alternative all sets ran, R@2 / R@5 per set
    and question type (``--types``): the per-type view of the rule table.

    >>> t = {"n": 2, "R@2": 50.0, "R@5": 75.0}
    >>> s = {"table": {FULL: {"types": {"bridge": t}}, "ablation: K=2": {"types": {"bridge": t}}}}
    >>> by_type([s], ["a"])[2]
    '| full | 50.0 / 75.0 |'
    """
    cols = [(i, ty) for i, s in enumerate(sets) for ty in s["table"][FULL].get("types", {})]
    out = ["| method | " + " | ".join(f"{names[i]} {ty} (n={sets[i]['table'][FULL]['types'][ty]['n']})"
                                      for i, ty in cols) + " |",
           "|---" * (len(cols) + 1) + "|"]
    for name in [FULL] + _alternatives(sets):
        label = "full" if name == FULL else _label(name)
        cells = []
        for i, ty in cols:
            v = sets[i]["table"][name].get("types", {}).get(ty)
            cells.append(f"{v['R@2']:.1f} / {v['R@5']:.1f}" if v else "–")
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    return out


def read_result(path: str) -> dict[str, Any] | None:
    """One ``run.py --json`` file, or None after saying on stderr, with the file's name, why
    it cannot be read (the callers exit 2). A file written before the lexical hop was switched
    off names its full row :data:`FULL_BEFORE`: it is read as :data:`FULL`."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        if FULL_BEFORE in doc.get("table", {}) and FULL not in doc["table"]:
            doc["table"][FULL] = doc["table"].pop(FULL_BEFORE)
            for q in doc.get("per_question", []):
                q["rankings"][FULL] = q["rankings"].pop(FULL_BEFORE)
        return doc
    except (OSError, ValueError) as exc:
        print(f"{path}: cannot read an eval result ({exc})", file=sys.stderr)
        return None


def main(paths: list[str]) -> int:
    types = "--types" in paths
    paths = [p for p in paths if p != "--types"]
    if len(paths) < 2:
        print("usage: defaults_rule.py [--types] SET1.json SET2.json [...]  (run.py --ablations --json)", file=sys.stderr)
        return 2
    sets = []
    for p in paths:
        s = read_result(p)
        if s is None:
            return 2
        sets.append(s)
        if FULL not in s.get("table", {}):
            print(f"{p}: no full-retrieval row; was it written by run.py --json?", file=sys.stderr)
            return 2
    names = [s.get("set", p) for s, p in zip(sets, paths)]
    if types:
        print("\n".join(by_type(sets, names)))
        return 0
    print("| alternative | " + " | ".join(f"{n} Δ R@2 / R@5" for n in names) + " | default passes |")
    print("|---" * (len(sets) + 2) + "|")
    found = rows(sets)
    for name, deltas, ok in found:
        cells = " | ".join(f"{a:+.2f} / {b:+.2f}" for a, b in deltas)
        print(f"| {name} | {cells} | {ok if ok != 'no' else '**no**'} |")
    print(f"\n{sum(v == 'no' for _, _, v in found)} default(s) lose to an alternative by the rule; "
          f"{sum(v == 'trade' for _, _, v in found)} trade(s) the rule cannot decide")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

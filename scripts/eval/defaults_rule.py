"""The issue's rule for defaults, checked on two ``run.py --ablations --json`` files at once.

``python scripts/eval/defaults_rule.py musique.json rules.json`` prints, per ablation row, its
difference from the full retrieval (R@2 / R@5, ablation − shipped) on each set, and whether
the shipped default keeps its place: it must not lose to the alternative by more than
1 point of R@2 or R@5 on any set. An alternative within a point everywhere does not displace
the default; where the sets disagree within that point, the simpler setting is the tie-break,
which is a judgement the table leaves to the reader (RESULTS.md says which and why).

>>> full = {"R@2": 50.0, "R@5": 60.0}
>>> sets = [{"table": {FULL: full, "ablation: K=2": {"R@2": 50.5, "R@5": 58.0}}},
...         {"table": {FULL: full, "ablation: K=2": {"R@2": 51.5, "R@5": 60.0}}}]
>>> rows(sets)
[('K=2', [(0.5, -2.0), (1.5, 0.0)], False)]
"""

from __future__ import annotations

import json
import sys
from typing import Any

FULL = "kgservice retrieval (entry + lexical seeds + spread + node-vector fusion + lexical hop + bridge hop)"


def rows(sets: list[dict[str, Any]]) -> list[tuple[str, list[tuple[float, float]], bool]]:
    """(ablation, [(ΔR@2, ΔR@5) per set], does the shipped default pass against it)."""
    out = []
    for name in sets[0]["table"]:
        if not name.startswith("ablation: ") or any(name not in s["table"] for s in sets):
            continue
        deltas = [(round(s["table"][name]["R@2"] - s["table"][FULL]["R@2"], 2),
                   round(s["table"][name]["R@5"] - s["table"][FULL]["R@5"], 2)) for s in sets]
        out.append((name.removeprefix("ablation: "), deltas, not any(d > 1.0 for pair in deltas for d in pair)))
    return out


def main(paths: list[str]) -> int:
    if len(paths) < 2:
        print("usage: defaults_rule.py SET1.json SET2.json [...]  (run.py --ablations --json)", file=sys.stderr)
        return 2
    sets = []
    for p in paths:
        try:
            with open(p, encoding="utf-8") as f:
                sets.append(json.load(f))
        except (OSError, ValueError) as exc:
            print(f"{p}: cannot read an eval result ({exc})", file=sys.stderr)
            return 2
        if FULL not in sets[-1].get("table", {}):
            print(f"{p}: no full-retrieval row; was it written by run.py --json?", file=sys.stderr)
            return 2
    names = [s.get("set", p) for s, p in zip(sets, paths)]
    print("| ablation | " + " | ".join(f"{n} Δ R@2 / R@5" for n in names) + " | default passes |")
    print("|---" * (len(sets) + 2) + "|")
    bad = 0
    for name, deltas, ok in rows(sets):
        bad += not ok
        cells = " | ".join(f"{a:+.2f} / {b:+.2f}" for a, b in deltas)
        print(f"| {name} | {cells} | {'yes' if ok else '**no**'} |")
    print(f"\n{bad} default(s) lose to an alternative by more than 1 point")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

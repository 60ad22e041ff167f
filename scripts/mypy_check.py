#!/usr/bin/env python3
"""Run mypy over kgservice and hold its error count per file to a committed baseline that only shrinks.

The package had errors before a type checker ran, so mypy cannot simply pass or fail: each file may
keep at most the errors the baseline (scripts/mypy_baseline.json) allows it, and a file not in the
baseline may have none. The modules pyproject.toml checks strictly (the front door, the store
providers) may have no entry at all. When a file has fewer errors than its baseline, the run passes
and says so: `--update` then writes the lower counts, so the gain cannot be lost again.

    python3 scripts/mypy_check.py             # CI (.ci/run): exit 1 if a file has more errors
    python3 scripts/mypy_check.py --update    # lower the baseline to today's counts (never raises one)
    python3 scripts/mypy_check.py --update --force   # rewrite it as today's counts, raises included

mypy's findings depend on the installed packages' types as well as on our code, so the baseline is
taken with the dev install (`pip install -e ".[dev]"`, as .ci/run does).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "scripts" / "mypy_baseline.json"
ERROR = re.compile(r"^(?P<file>[^:\s]+\.py):\d+(?::\d+)?: error: ")


def error_counts(output: str) -> Counter[str]:
    """Errors per file in mypy's output (notes and the summary line are not errors).

    >>> sorted(error_counts('''a.py:3: error: x  [misc]
    ... a.py:3: note: see
    ... b/c.py:10:4: error: y  [arg-type]
    ... a.py:9: error: z  [misc]
    ... Found 3 errors in 2 files''').items())
    [('a.py', 2), ('b/c.py', 1)]
    """
    return Counter(m["file"] for m in map(ERROR.match, output.splitlines()) if m)


def strict_files(pyproject: Path = ROOT / "pyproject.toml") -> set[str]:
    """The files of the modules pyproject.toml's mypy overrides check strictly (they disallow
    untyped definitions); these must have no errors, so no baseline entry."""
    config = tomllib.loads(pyproject.read_text("utf-8")).get("tool", {}).get("mypy", {})
    files = set()
    for override in config.get("overrides", []):
        if override.get("disallow_untyped_defs"):
            modules = override["module"] if isinstance(override["module"], list) else [override["module"]]
            files |= {m.replace(".", "/") + ".py" for m in modules}
    return files


def compare(counts: Counter[str], baseline: dict[str, int]) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
    """(files over their baseline, files under it), each file -> (now, allowed).

    >>> compare(Counter({"a.py": 3, "b.py": 1}), {"a.py": 2, "c.py": 4})
    ({'a.py': (3, 2), 'b.py': (1, 0)}, {'c.py': (0, 4)})
    """
    over = {f: (n, baseline.get(f, 0)) for f, n in sorted(counts.items()) if n > baseline.get(f, 0)}
    under = {f: (counts.get(f, 0), n) for f, n in sorted(baseline.items()) if counts.get(f, 0) < n}
    return over, under


def updated(counts: Counter[str], baseline: dict[str, int], force: bool) -> dict[str, int]:
    """The new baseline: each file at min(now, before) (a file newly in error stays out of it), or
    today's counts as they are with ``force``.

    >>> updated(Counter({"a.py": 3, "b.py": 1, "d.py": 2}), {"a.py": 2, "c.py": 4, "d.py": 5}, force=False)
    {'a.py': 2, 'd.py': 2}
    >>> updated(Counter({"a.py": 3, "b.py": 1}), {"a.py": 2}, force=True)
    {'a.py': 3, 'b.py': 1}
    """
    if force:
        return dict(sorted(counts.items()))
    return {f: min(n, counts[f]) for f, n in sorted(baseline.items()) if counts.get(f, 0) > 0}


def run_mypy() -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-color-output", "--no-error-summary"],
                          cwd=ROOT, capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true", help="write today's lower counts into the baseline")
    ap.add_argument("--force", action="store_true", help="with --update: also raise counts and add files")
    args = ap.parse_args(argv)
    code, output = run_mypy()
    counts = error_counts(output)
    if code not in (0, 1) or (code == 1 and not counts):  # 2: mypy itself failed (bad config, crash)
        print(output, end="")
        print(f"mypy_check: mypy failed (exit {code}) before reporting errors", file=sys.stderr)
        return 2
    baseline = json.loads(BASELINE.read_text("utf-8")) if BASELINE.exists() else {}
    strict = strict_files()
    total = sum(counts.values())

    if args.update:
        new = updated(counts, baseline, args.force)
        kept_strict = sorted(set(new) & strict)
        if kept_strict:
            print(output, end="")
            print("mypy_check: strictly checked modules may have no baseline entry; fix their errors: "
                  + ", ".join(kept_strict), file=sys.stderr)
            return 1
        BASELINE.write_text(json.dumps(new, indent=1, sort_keys=True) + "\n", "utf-8")
        print(f"mypy_check: baseline {sum(baseline.values())} -> {sum(new.values())} errors "
              f"in {len(new)} files ({BASELINE.relative_to(ROOT)})")
        over, _ = compare(counts, new)
        if over:
            print("mypy_check: still over the baseline (fix them, or --update --force to accept them): "
                  + ", ".join(over), file=sys.stderr)
            return 1
        return 0

    over, under = compare(counts, baseline)
    for f in sorted(set(baseline) & strict):
        over.setdefault(f, (counts.get(f, 0), 0))
    if over:
        for line in output.splitlines():
            m = ERROR.match(line)
            if m and m["file"] in over:
                print(line)
        for f, (now, allowed) in over.items():
            why = " (strictly checked: none allowed)" if f in strict else ""
            print(f"mypy_check: {f}: {now} errors, the baseline allows {allowed}{why}", file=sys.stderr)
        print("mypy_check: FAILED: fix the new errors above (each file's errors are listed; the new ones are "
              "among them)", file=sys.stderr)
        return 1
    print(f"mypy_check: {total} errors in {len(counts)} files, none over the baseline "
          f"({sum(baseline.values())} allowed)")
    if under:
        print("mypy_check: fewer errors than the baseline in " + ", ".join(f"{f} ({n} < {a})" for f, (n, a) in under.items())
              + ": shrink it with `python3 scripts/mypy_check.py --update` and commit scripts/mypy_baseline.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run graphify's real CLI entry point for many command lines in one process.

stdin: a JSON list of argv lists (without the program name). stdout: a JSON list of
{"code", "stdout", "stderr"}. Each run goes through ``graphify.__main__.main`` exactly as
the ``graphify`` console script does, with sys.argv, stdout and stderr swapped per case.
"""

import contextlib
import io
import json
import sys


def main() -> None:
    cases = json.load(sys.stdin)
    real_stdout = sys.stdout
    from graphify.__main__ import main as graphify_main

    results = []
    for argv in cases:
        out, err = io.StringIO(), io.StringIO()
        sys.argv = ["graphify", *argv]
        code = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                graphify_main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        results.append({"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()})
    real_stdout.write(json.dumps(results))


if __name__ == "__main__":
    main()

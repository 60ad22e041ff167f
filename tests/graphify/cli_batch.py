"""Run many graphify command lines in one process, each in its own directory and environment.

argv: ``ref`` (graphify's ``graphify.__main__.main``, run by the reference venv's python) or
``ours`` (``kgservice.graphify.dropin.run``). stdin: JSON list of
``{"argv": [...], "cwd": dir, "env": {name: value or null}}``. stdout: JSON list of
``{"code", "stdout", "stderr"}``. One process per tool instead of one per case keeps the
differential test affordable (each start-up costs 0.2-1 s); the real console scripts are
exercised separately (test_cli.py). A case with ``"fresh": true`` runs as its own
``python -m graphify`` process instead: what graphify reads once at start-up (``GRAPHIFY_OUT``
and its warning) only shows that way.
"""

import contextlib
import io
import json
import os
import subprocess
import sys


def main() -> None:
    impl = sys.argv[1]
    cases = json.load(sys.stdin)
    real_stdout = sys.stdout
    if impl == "ref":
        from graphify.__main__ import main as entry

        def call(argv):
            sys.argv = ["graphify", *argv]
            entry()
            return 0
    else:
        from kgservice.graphify.dropin import run

        def call(argv):
            return run(["graphify", *argv])

    results = []
    for case in cases:
        if case.get("fresh"):
            env = dict(os.environ)
            for k, v in case.get("env", {}).items():
                if v is None:
                    env.pop(k, None)
                else:
                    env[k] = v
            isolated = ["-I"] if impl == "ref" else []  # the reference: its own site-packages only
            p = subprocess.run([sys.executable, *isolated, "-m", "graphify", *case["argv"]], cwd=case["cwd"], env=env,
                               capture_output=True, text=True, encoding="utf-8", timeout=600)
            results.append({"code": p.returncode, "stdout": p.stdout, "stderr": p.stderr})
            continue
        saved = {k: os.environ.get(k) for k in case.get("env", {})}
        for k, v in case.get("env", {}).items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        here = os.getcwd()
        os.chdir(case["cwd"])
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = call(case["argv"])
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                except Exception as exc:  # a traceback in the tool is a result, not a harness failure
                    import traceback

                    traceback.print_exc()
                    code = f"exception {type(exc).__name__}"
        finally:
            os.chdir(here)
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        results.append({"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()})
    real_stdout.write(json.dumps(results))


if __name__ == "__main__":
    main()

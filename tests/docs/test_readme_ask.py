"""The README's first-run line (`kg ingest demo/units && kg expand CPython && kg ask ...`) runs as written, offline."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_readme_first_run_line_runs_offline(tmp_path):
    line = next((m.group(0) for m in re.finditer(r"^kg ingest demo/units && .*kg ask .*$",
                                                 (ROOT / "README.md").read_text("utf-8"), re.M)), None)
    assert line is not None, "the README lost its first-run line"
    kg = shutil.which("kg", path=str(Path(sys.executable).parent)) or shutil.which("kg")
    if kg is None:
        pytest.skip("no kg entry point installed")
    shutil.copytree(ROOT / "demo", tmp_path / "demo")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_")}
    env.update(KG_EMBEDDER="hash:64", PYTHONPATH=str(ROOT), PATH=f"{Path(kg).parent}{os.pathsep}{env.get('PATH', '')}")
    res = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "no model configured" in " ".join(res.stdout.split()) and re.search(r"\[smk-\d+\]", res.stdout)


@pytest.mark.parametrize("page", ["README.md", "docs/units.md"])
def test_units_example_ingests_as_written(tmp_path, page):
    """The notation example (README's under "## Units", the first block of docs/units.md) is a
    file a reader may paste: it must ingest whole (it once superseded a unit it did not state,
    and the ingest refused it)."""
    from kgservice.config import Settings
    from kgservice.notation.parser import parse_units
    from kgservice.service import KnowledgeBase

    text = (ROOT / page).read_text("utf-8")
    if page == "README.md":
        text = text.split("\n## Units\n", 1)[1]
    block = re.search(r"^```\n(.*?)^```$", text, re.M | re.S)
    assert block is not None, f"{page} lost its Units example"
    with KnowledgeBase(Settings(data_dir=tmp_path / "kg", embedder="hash:64")) as kb:
        kb.ingest_units(parse_units(block.group(1), kb.lexicon, source=page), embed=False)
        assert kb.store.superseded_end(["u6"]) == {"u6": ["u7"]}

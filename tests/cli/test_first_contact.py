"""What a newcomer meets first on the command line: unit text shown as written (rich markup must
not eat `[predicate]`), `kg demo` kept out of the user's own knowledge base, piped output not
padded, help texts whole sentences, and `kg sync --no-delete` saying what it kept."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgservice.cli.app import app

KG = [sys.executable, "-c", "from kgservice.cli.app import main; main()"]
TEA = "#t1 {tea} [contains] {caffeine}\n#t2 {[tea]} [is a] {drink [hot]}\n"


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_") and k != "COLUMNS"}
    return {**env, "KG_EMBEDDER": "hash:64", **extra}


def run(tmp_path: Path, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
        code: int = 0) -> subprocess.CompletedProcess:
    done = subprocess.run([*KG, *args], cwd=cwd or tmp_path, env=env or env_for(tmp_path), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == code, (done.stdout, done.stderr)
    return done


def test_unit_text_in_tables_and_lines_is_printed_as_written(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "tea.units").write_text(TEA, "utf-8")
    data = str(tmp_path / "kg")
    run(tmp_path, "--data-dir", data, "ingest", "notes")
    listing = run(tmp_path, "--data-dir", data, "docs", "list").stdout
    # the title is the document's first line, exactly as in the file
    assert "#t1 {tea} [contains] {caffeine}" in listing
    shown = run(tmp_path, "--data-dir", data, "expand", "tea").stdout
    assert "{tea} [contains] {caffeine}" in shown
    spread = run(tmp_path, "--data-dir", data, "expand", "[tea]", "--mode", "spread").stdout
    assert "[tea]" in spread and "drink [hot]" in spread and "\\[" not in spread


def test_kg_demo_writes_into_its_own_folder_and_never_into_yours(tmp_path: Path) -> None:
    """A folder holding the user's knowledge base (./.kg, also named by KG_DATA_DIR): kg demo
    writes its own, ./kg-demo, says so, and puts graph.json there; the user's store is as before."""
    corpus = tmp_path / "corpus"
    (corpus / "units").mkdir(parents=True)
    (corpus / "units" / "s.units").write_text("{smoking} [causes] {lung cancer}\n{CPython} [is a] {interpreter}\n"
                                              "{吸烟} [同义] {smoking}\n{tobacco} [contains] {nicotine}\n", "utf-8")
    mine = tmp_path / "work"
    (mine / "notes").mkdir(parents=True)
    (mine / "notes" / "tea.units").write_text(TEA, "utf-8")
    env = env_for(tmp_path, KG_DATA_DIR=str(mine / ".kg"))
    run(tmp_path, "ingest", "notes", cwd=mine, env=env)
    before = json.loads(run(tmp_path, "stats", "--json", cwd=mine, env=env).stdout)
    done = run(tmp_path, "demo", "--corpus", str(corpus), cwd=mine, env=env)
    assert done.stdout.splitlines()[0].startswith("kg demo writes into kg-demo/")
    assert json.loads(run(tmp_path, "stats", "--json", cwd=mine, env=env).stdout) == before
    demo = json.loads(run(tmp_path, "--data-dir", "kg-demo", "stats", "--json", cwd=mine, env=env).stdout)
    assert demo["units"] == 4
    assert (mine / "kg-demo" / "graphify-out" / "graph.json").is_file()
    assert not (mine / "graphify-out").exists() and not (mine / ".kg" / "graphify-out").exists()
    # piped, the step headings are 80 columns wide, not padded to the 400-column pipe layout
    headings = [ln for ln in done.stdout.splitlines() if ln.startswith("─") or "$ kg " in ln]
    assert headings and max(len(ln) for ln in headings) <= 80
    # run again: an earlier demo's folder is fine
    run(tmp_path, "demo", "--corpus", str(corpus), cwd=mine, env=env)
    # pointed at the user's own knowledge base, it refuses before writing anything
    refused = run(tmp_path, "--data-dir", str(mine / ".kg"), "demo", "--corpus", str(corpus), cwd=mine, env=env,
                  code=2)
    assert "is not empty and holds no earlier demo" in refused.stderr
    assert json.loads(run(tmp_path, "stats", "--json", cwd=mine, env=env).stdout) == before


def test_help_texts_are_whole_sentences() -> None:
    """`kg --help` lists each command's first paragraph; a docstring's line breaks must not
    break it (it broke `search` after "the nearest node")."""
    res = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "250"}, terminal_width=250)
    assert res.exit_code == 0, res.output
    rows = [ln for ln in res.output.splitlines() if re.match(r"^│ (search|doctor) ", ln)]
    assert len(rows) == 2, res.output
    assert "nearest node vectors, weighted by specificity" in rows[0] + rows[1]
    assert "relation edges, supersessions) and that every" in rows[0] + rows[1]

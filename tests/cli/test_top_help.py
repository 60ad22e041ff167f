"""`kg --help` and a bare `kg` print the top-level help without building every command through
typer and without typer's rich help (kgservice/cli/top_help.py): the rows must say what typer's
own rendering of the same app says, and the boxes must hold together at any width."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import click
import typer.main
from typer.testing import CliRunner

from kgservice.cli.app import app

PROBE = ("import atexit, sys\n"
         "atexit.register(lambda: print('loaded:', *[m for m in ('typer.rich_utils', 'markdown_it', 'pygments')"
         " if m in sys.modules], file=sys.stderr))\n"
         "from kgservice.cli.app import main\n"
         "main()\n")


def kg(tmp_path: Path, *args: str, columns: int | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_") and k not in ("COLUMNS", "NO_COLOR")}
    if columns:
        env["COLUMNS"] = str(columns)
    return subprocess.run([sys.executable, "-c", PROBE, *args], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)


def panel_rows(text: str, title: str) -> list[str]:
    """The rows of one box, each row's cells (and wrapped lines) joined by single spaces."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"╭─ {title} "))
    rows = []
    for ln in lines[start + 1:]:
        if ln.startswith("╰"):
            break
        cells = " ".join(ln.strip("│ ").split())
        if ln.startswith("│  ") and rows:  # a wrapped row's next line (its first cell empty)
            rows[-1] += " " + cells
        else:
            rows.append(cells)
    return rows


def test_top_help_says_what_typers_rich_help_says_without_loading_it(tmp_path: Path) -> None:
    fast = kg(tmp_path, "--help", columns=250)
    assert fast.returncode == 0, fast.stderr
    # typer's rich help was what users saw and is still what `kg CMD --help` shows
    assert [ln for ln in fast.stderr.splitlines() if ln.startswith("loaded:")] == ["loaded:"]
    typer_help = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "250"}, terminal_width=250).output
    assert panel_rows(fast.stdout, "Commands") == panel_rows(typer_help, "Commands")
    group = typer.main.get_command(app)  # every command and group, one row each at 250 columns
    assert [r.split()[0] for r in panel_rows(fast.stdout, "Commands")] == group.list_commands(click.Context(group))
    # options: the same names and help texts (typer also prints a metavar for a flag: <bool>)
    strip = [re.sub(r" <bool>", "", r) for r in panel_rows(typer_help, "Options")]
    assert panel_rows(fast.stdout, "Options") == strip
    assert "Usage: kg [OPTIONS] COMMAND [ARGS]..." in fast.stdout


def test_top_help_wraps_inside_its_boxes_and_a_bare_kg_exits_2(tmp_path: Path) -> None:
    bare = kg(tmp_path, columns=None)  # not a terminal: 80 columns, like rich
    assert bare.returncode == 2 and bare.stdout == kg(tmp_path, "--help").stdout
    for width in (80, 61):
        out = kg(tmp_path, "--help", columns=width).stdout
        boxed = [ln for ln in out.splitlines() if ln[:1] and ln[0] in "╭│╰"]
        assert boxed and {len(ln) for ln in boxed} == {width}, out
    # a wrapped row reads as the one-line row of a wide console
    narrow = "\n".join(kg(tmp_path, "--help", columns=61).stdout.splitlines())
    doctor = re.search(r"│ doctor +(.*?)\n│ dump ", narrow, re.S).group(1)
    text = " ".join(part.strip("│ ") for part in doctor.split("\n"))
    wide = next(r for r in panel_rows(kg(tmp_path, "--help", columns=250).stdout, "Commands") if r.startswith("doctor "))
    assert "doctor " + " ".join(text.split()) == wide

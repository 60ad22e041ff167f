"""Both command tables document every `kg` command (README's short one and docs/cli.md's full
one), and every command has help.

The commands are read from the Typer app itself (sub-groups such as `cache` included), so a
new command without a row fails here; the rows are read from each table's first column, so a
row for a command that no longer exists fails too.
"""

from __future__ import annotations

import re
from pathlib import Path

from typing import Any

import pytest
from typer.main import get_command

from kgservice.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["README.md", "docs/cli.md"]  # each has a "## Commands" table


def _is_group(cmd: Any) -> bool:
    return isinstance(getattr(cmd, "commands", None), dict)  # click's Group, whichever click typer uses


def _commands(group: Any, prefix: str = "") -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, cmd in group.commands.items():
        path = f"{prefix}{name}"
        found[path] = cmd
        if _is_group(cmd):
            found.update(_commands(cmd, path + " "))
    return found


COMMANDS = _commands(get_command(app))
GROUPS = {p for p, c in COMMANDS.items() if _is_group(c)}


def _table_first_column(page: str) -> list[str]:
    text = (ROOT / page).read_text("utf-8")
    section = text.split("## Commands", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `kg ")]
    # the first cell ends at the first "|" not escaped as "\|"
    return [re.split(r"(?<!\\)\|", row[1:], maxsplit=1)[0] for row in rows]


def _documented(page: str) -> set[str]:
    """Command paths named in the table: `kg expand NODE ...`, `kg query / path / explain`,
    `kg cache stats\\|clear` (a group followed by its sub-commands)."""
    names: set[str] = set()
    for cell in _table_first_column(page):
        for span in re.findall(r"`kg ([^`]+)`", cell):
            if " / " in span:
                names.update(part.split()[0] for part in span.split(" / "))
                continue
            words = span.split()
            if words[0] in GROUPS and len(words) > 1:
                names.update(f"{words[0]} {sub}" for sub in words[1].split("\\|"))
            names.add(words[0])
    return names


@pytest.mark.parametrize("page", PAGES)
def test_the_table_parser_reads_known_rows(page: str):
    # guard against a parser that finds nothing (and so would let everything pass)
    assert {"ingest", "expand", "query", "path", "cache", "cache stats", "cache clear"} <= _documented(page)


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_command_is_in_the_command_tables(path: str, page: str):
    assert path in _documented(page), f"`kg {path}` has no row in {page}'s command table"


@pytest.mark.parametrize("page", PAGES)
def test_every_row_names_a_real_command(page: str):
    stale = _documented(page) - set(COMMANDS)
    assert not stale, f"{page}'s command table names commands that do not exist: {sorted(stale)}"


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_command_has_help(path: str):
    cmd = COMMANDS[path]
    assert (cmd.help or cmd.short_help or "").strip(), f"`kg {path}` has no help text"

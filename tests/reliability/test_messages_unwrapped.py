"""Error messages are never hard-wrapped when stderr is not a terminal (issue 13, CI flake):
the same message must come out on one line whatever the length of the paths in it."""

from __future__ import annotations

from typer.testing import CliRunner

from kgservice.cli.app import app


def test_long_error_message_is_one_line(tmp_path):
    deep = tmp_path / ("x" * 120) / ("y" * 60)
    missing = deep / "no-such-dump.jsonl"
    r = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "kg"), "restore", str(missing)])
    assert r.exit_code == 2
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    # exactly one line holding the whole sentence, the path unbroken
    assert lines == [f"error: no such dump file: {missing}"], lines

"""compose/'s api and worker services run commands the current CLI accepts, with settings the
current config reads (Docker is not available in CI here: this checks the file, not a run)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _services() -> dict:
    return yaml.safe_load((ROOT / "compose" / "docker-compose.yml").read_text("utf-8"))["services"]


@pytest.mark.parametrize("service", ["api", "worker"])
def test_compose_commands_parse_with_the_current_cli(service):
    from kgservice.cli.app import app

    script = " ".join(_services()[service]["command"][2:])
    (line,) = re.findall(r"exec /venv/bin/kg ([^;]+)", script)
    args = shlex.split(line)
    group = typer.main.get_command(app)
    ctx = group.make_context("kg", list(args), resilient_parsing=False)
    name, cmd, rest = group.resolve_command(ctx, list(args))
    cmd.make_context(name, rest)  # raises on an unknown option or a bad value


def test_compose_environment_names_are_read_by_the_config():
    from kgservice.config import _ENV as ENV

    env = _services()["api"]["environment"]
    assert _services()["worker"]["environment"] == env  # one anchor for both
    kg_names = {k for k in env if k.startswith("KG_")}
    assert kg_names <= set(ENV), f"compose sets KG_ names the config does not read: {kg_names - set(ENV)}"
    assert env["PATH"].startswith("/venv/bin:")  # `docker compose exec api kg ...` finds the CLI

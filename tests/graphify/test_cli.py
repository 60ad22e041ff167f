"""The command line: the standalone script's fast path agrees with Typer; registration; the entry point."""

import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from kgservice.graphify.cli import _fast_parse, register

CASES = [
    ["query", "alpha"],
    ["query", "alpha", "--dfs", "--budget", "50"],
    ["query", "吸烟", "--budget=300", "--no-expand"],
    ["query", "smoking", "--context", "synonym", "--context=content"],
    ["query", "x", "--seed", "north", "--seed", "hub"],
    ["query", "alpha", "--budget", "0"],
    ["path", "alpha", "delta"],
    ["path", "delta", "alpha", "--undirected"],
    ["path", "alpha", "alpha"],
    ["path", "alpha", "delta", "--directed", "--undirected"],
    ["explain", "hub"],
    ["explain", "hub", "--all"],
    ["explain", "spoke"],
]


def run_fast(argv, capsys):
    fn, kwargs = _fast_parse(argv)
    code = 0
    try:
        fn(**kwargs)
    except typer.Exit as exc:
        code = exc.exit_code
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("argv", CASES, ids=[" ".join(c) for c in CASES])
def test_fast_path_matches_typer(argv, ours, mini_project, monkeypatch, capsys):
    monkeypatch.chdir(mini_project)
    fast = run_fast(argv, capsys)
    slow = ours(*argv, cwd=mini_project)
    assert fast == (slow.exit_code, slow.stdout, slow.stderr)


@pytest.mark.parametrize("argv", [
    [], ["--help"], ["query"], ["query", "a", "b"], ["query", "a", "--bogus"], ["query", "a", "--budget"],
    ["path", "a"], ["explain", "x", "-h"], ["reflect", "--half-life-days", "soon"], ["unknown"],
    ["save-result", "--answer", "a"],
])
def test_unusual_command_lines_go_to_typer(argv):
    assert _fast_parse(argv) is None


def test_fast_path_save_result_nodes(tmp_path):
    fn, kwargs = _fast_parse(["save-result", "--question", "q", "--answer", "a", "--nodes", "x", "y z",
                              "--outcome", "useful", "--memory-dir", str(tmp_path)])
    assert kwargs["nodes"] == ["x", "y z"] and kwargs["outcome"] == "useful"


def test_register_adds_the_five_commands():
    app = typer.Typer()

    @app.command()
    def other() -> None:
        pass

    register(app)
    r = CliRunner().invoke(app, ["--help"])
    for name in ("query", "path", "explain", "save-result", "reflect", "other"):
        assert name in r.stdout


def test_kg_app_carries_the_commands():
    try:
        from kgservice.cli.app import app
    except ImportError as exc:  # the kg app is built elsewhere in the repo
        pytest.skip(f"kg app not importable: {exc}")
    r = CliRunner().invoke(app, ["--help"])
    assert "save-result" in r.stdout and "reflect" in r.stdout


def test_console_entry_point_end_to_end(mini_project):
    """`python -m kgservice.graphify` is what the `graphify` console script runs."""
    p = subprocess.run([sys.executable, "-m", "kgservice.graphify", "path", "alpha", "gamma"], cwd=mini_project,
                       capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stderr) == (0, "")
    assert p.stdout == ("Shortest path (2 hops):\n  alpha --precedes [EXTRACTED]--> beta --precedes [EXTRACTED]--> "
                        "gamma\n")
    p = subprocess.run([sys.executable, "-m", "kgservice.graphify", "explain", "spoke"], cwd=mini_project,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 3
    p = subprocess.run([sys.executable, "-m", "kgservice.graphify", "--help"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and "save-result" in p.stdout


def test_closed_pipe_is_not_an_error(mini_project):
    p = subprocess.run(f"{sys.executable} -m kgservice.graphify query hub --budget 100000 | head -1",
                       shell=True, cwd=mini_project, capture_output=True, text=True, timeout=60)
    assert p.stdout.startswith("Query expanded to") and "Traceback" not in p.stderr


def test_no_heavy_imports_on_the_command_path(mini_project):
    code = ("import sys; from kgservice.graphify.cli import main; sys.argv=['graphify','query','alpha'];\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('networkx', 'litellm', 'qdrant_client', 'neo4j', 'numpy') if m in sys.modules]\n"
            "print('HEAVY', heavy)")
    p = subprocess.run([sys.executable, "-c", code], cwd=mini_project, capture_output=True, text=True, timeout=60)
    assert p.stdout.strip().splitlines()[-1] == "HEAVY []"

"""The command lines: ``graphify`` (graphify's own parsing, dropin.py) and the ``kg`` registration."""

import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from kgservice.graphify.cli import register
from kgservice.graphify.dropin import run

ROOT = Path(__file__).resolve().parents[2]


def gfy(argv, capsys, cwd, monkeypatch):
    monkeypatch.chdir(cwd)
    code = run(["graphify", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("argv,code,err", [
    (["query"], 1, 'Usage: graphify query "<question>" [--dfs] [--context C] [--seed X] [--budget N] '
                   '[--graph path]\n'),
    (["query", "hub", "--budget", "abc"], 1, "error: --budget must be an integer\n"),
    (["query", "hub", "--budget=x"], 1, "error: --budget must be an integer\n"),
    (["query", "hub", "--seed"], 1, "error: --seed needs a value (node id, label or file path)\n"),
    (["query", "hub", "--seed="], 1, "error: --seed needs a value (node id, label or file path)\n"),
    (["path", "a"], 1, 'Usage: graphify path "<source>" "<target>" [--graph path] [--directed|--undirected]\n'),
    (["path", "a", "b", "--directed", "--undirected"], 1, "error: --directed and --undirected are mutually "
                                                          "exclusive\n"),
    (["explain"], 1, 'Usage: graphify explain "<node>" [--all] [--graph path]\n'),
    (["bogus"], 1, None),
])
def test_usage_errors_exit_1_with_one_line(argv, code, err, capsys, mini_project, monkeypatch):
    got = gfy(argv, capsys, mini_project, monkeypatch)
    assert got[0] == code and got[1] == ""
    if err is not None:
        assert got[2] == err
    else:
        assert got[2].startswith("error: unknown command 'bogus'")


def test_unknown_flags_are_ignored_like_graphify(capsys, mini_project, monkeypatch):
    plain = gfy(["query", "hub"], capsys, mini_project, monkeypatch)
    extra = gfy(["query", "hub", "--foo", "--no-expand"], capsys, mini_project, monkeypatch)
    assert plain == extra and plain[0] == 0 and "Traversal: BFS depth=2" in plain[1]


def test_missing_graph_and_size_cap(capsys, mini_project, monkeypatch, tmp_path):
    code, out, err = gfy(["explain", "hub", "--graph", "nope/graph.json"], capsys, mini_project, monkeypatch)
    assert (code, out) == (1, "") and err == f"error: graph file not found: {mini_project / 'nope/graph.json'}\n"
    size = (mini_project / "graphify-out" / "graph.json").stat().st_size
    monkeypatch.setenv("GRAPHIFY_MAX_GRAPH_BYTES", "100")
    code, out, err = gfy(["path", "alpha", "beta"], capsys, mini_project, monkeypatch)
    gp = mini_project / "graphify-out" / "graph.json"
    assert (code, out) == (1, "")
    assert err == (f"error: graph file {gp} is {size:_d} bytes, exceeds 100-byte cap\n"
                   "(set GRAPHIFY_MAX_GRAPH_BYTES=<bytes> or GRAPHIFY_MAX_GRAPH_BYTES=<N>GB to raise the limit)\n")


def test_a_graph_that_is_not_json_is_an_error_not_a_traceback(capsys, tmp_path, monkeypatch):
    (tmp_path / "graph.md").write_text("# not json\n", encoding="utf-8")
    code, out, err = gfy(["explain", "x", "--graph", "graph.md"], capsys, tmp_path, monkeypatch)
    assert (code, out) == (1, "") and err.startswith("error: could not load graph: ")


def test_help_and_version(capsys, tmp_path, monkeypatch):
    code, out, _ = gfy(["--version"], capsys, tmp_path, monkeypatch)
    assert (code, out) == (0, "graphify 0.9.96\n")
    code, out, _ = gfy(["--help"], capsys, tmp_path, monkeypatch)
    assert code == 0 and out.startswith("Usage: graphify <command>\n")
    for name in ("query", "path", "explain", "save-result", "reflect"):
        assert f"\n  {name} " in out
    code, out, _ = gfy(["reflect", "--help"], capsys, tmp_path, monkeypatch)
    assert (code, out) == (0, "Run 'graphify --help' for full usage.\n")


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


@pytest.mark.parametrize("module", ["graphify", "kgservice.graphify"])
def test_python_dash_m_entry_points(module, mini_project):
    """`python -m graphify` (what graphify's skills run) and `python -m kgservice.graphify`."""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(mini_project)}
    p = subprocess.run([sys.executable, "-m", module, "path", "alpha", "gamma"], cwd=mini_project,
                       capture_output=True, text=True, timeout=60, env=env)
    assert (p.returncode, p.stderr) == (0, "")
    assert p.stdout == ("Shortest path (2 hops):\n  alpha --precedes [EXTRACTED]--> beta --precedes [EXTRACTED]--> "
                        "gamma\n")
    p = subprocess.run([sys.executable, "-m", module, "explain", "spoke"], cwd=mini_project,
                       capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 3


def test_closed_pipe_keeps_the_exit_code(mini_project):
    """`| head` closing early is not an error, and an ambiguity stays exit 3 (graphify: 0)."""
    script = (f"cd {mini_project} && PYTHONPATH={ROOT} {sys.executable} -m graphify query hub --budget 100000 "
              f"| head -c 5; echo \" rc=${{PIPESTATUS[0]}}\"; PYTHONPATH={ROOT} {sys.executable} -m graphify "
              f"--help | head -c 1 >/dev/null; echo \" rc=${{PIPESTATUS[0]}}\"")
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert p.stdout.endswith(" rc=0\n rc=0\n") and "Traceback" not in p.stderr, (p.stdout, p.stderr)


def test_no_heavy_imports_on_the_command_path(mini_project):
    code = ("import sys; from kgservice.graphify.dropin import run; run(['graphify','query','alpha'])\n"
            "heavy = [m for m in ('networkx', 'litellm', 'qdrant_client', 'neo4j', 'numpy', 'typer') "
            "if m in sys.modules]\nprint('HEAVY', heavy)")
    p = subprocess.run([sys.executable, "-c", code], cwd=mini_project, capture_output=True, text=True, timeout=60,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(mini_project)})
    assert p.stdout.strip().splitlines()[-1] == "HEAVY []", p.stderr

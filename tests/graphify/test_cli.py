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
            "run(['graphify','god-nodes']); run(['graphify','affected','alpha'])\n"
            "heavy = [m for m in ('networkx', 'litellm', 'qdrant_client', 'neo4j', 'numpy', 'typer') "
            "if m in sys.modules]\nprint('HEAVY', heavy)")
    p = subprocess.run([sys.executable, "-c", code], cwd=mini_project, capture_output=True, text=True, timeout=60,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(mini_project)})
    assert p.stdout.strip().splitlines()[-1] == "HEAVY []", p.stderr


def _py_graphify(args, cwd, env_extra):
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(cwd), **env_extra}
    return subprocess.run([sys.executable, "-m", "graphify", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, env=env)


@pytest.mark.parametrize("value,shown", [(".", "."), ("..", ".."), (" ./ ", "./"), ("../..", "../..")])
def test_graphify_out_naming_the_project_warns_and_uses_the_default(value, shown, mini_project):
    """graphify's words (paths._out_from_env): one stderr line before anything else, then graphify-out."""
    warning = (f"warning: GRAPHIFY_OUT='{shown}' points at the project or a parent of it; "
               "using 'graphify-out' instead\n")
    p = _py_graphify(["--version"], mini_project, {"GRAPHIFY_OUT": value})
    assert (p.returncode, p.stdout, p.stderr) == (0, "graphify 0.9.96\n", warning)
    p = _py_graphify(["explain", "alpha"], mini_project, {"GRAPHIFY_OUT": value})
    assert p.returncode == 0 and p.stdout.startswith("Node: alpha\n") and p.stderr == warning
    kg = subprocess.run([sys.executable, "-c", "from kgservice.cli.app import main; main()", "god-nodes", "--top", "1"],
                        cwd=mini_project, capture_output=True, text=True, timeout=120,
                        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(mini_project),
                             "GRAPHIFY_OUT": value})
    assert kg.returncode == 0 and kg.stderr == warning and kg.stdout.startswith("God nodes (most connected):\n  1. ")


def test_graphify_out_elsewhere_is_used_without_a_warning(mini_project, tmp_path):
    p = _py_graphify(["explain", "alpha"], mini_project, {"GRAPHIFY_OUT": "graphify-out"})
    assert p.returncode == 0 and p.stderr == ""
    p = _py_graphify(["god-nodes"], mini_project, {"GRAPHIFY_OUT": "elsewhere"})
    assert (p.returncode, p.stdout) == (1, "")
    assert p.stderr == f"error: graph file not found: {mini_project / 'elsewhere' / 'graph.json'}\n"


def small_graph(tmp_path: Path) -> Path:
    import json

    nodes = [{"id": "auth", "label": "auth.py", "source_file": "app/auth.py", "source_location": "L1"},
             {"id": "login", "label": "login()", "source_file": "app/auth.py", "source_location": "L3"},
             {"id": "web_login", "label": "login_view()", "source_file": "app/web.py", "source_location": "L9"},
             {"id": "api_login", "label": "login_api()", "source_file": "app/api.py", "source_location": "L2"},
             {"id": "cli", "label": "main()", "source_file": "app/cli.py", "source_location": "L5"}]
    links = [{"source": "auth", "target": "login", "relation": "contains"},
             {"source": "web_login", "target": "login", "relation": "calls", "source_file": "app/web.py",
              "source_location": "L11"},
             {"source": "api_login", "target": "login", "relation": "calls"},
             {"source": "cli", "target": "web_login", "relation": "imports_from", "source_file": "app/cli.py",
              "source_location": "L1"}]
    gp = tmp_path / "graphify-out" / "graph.json"
    gp.parent.mkdir(parents=True)
    gp.write_text(json.dumps({"directed": True, "multigraph": False, "nodes": nodes, "links": links}))
    return gp


def test_kg_affected_and_god_nodes(tmp_path, monkeypatch, capsys):
    from kgservice.graphify.cli import build_app

    small_graph(tmp_path)
    monkeypatch.chdir(tmp_path)
    app = build_app()
    r = CliRunner().invoke(app, ["affected", "login()"])
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[3:] == ["- login_view() [calls] app/web.py:L11", "- login_api() [calls] app/api.py:L2",
                                         "- main() [imports_from] app/cli.py:L1"]
    r = CliRunner().invoke(app, ["affected", "login", "--relation", "calls", "--depth", "1"])
    assert r.exit_code == 0 and r.stdout.startswith("Affected nodes for login()\nRelations: calls\nDepth: 1\n")
    r = CliRunner().invoke(app, ["affected", "log"])
    # graphify's rules find no single node for "log" (three labels contain it); kg lists the candidates
    assert r.exit_code == 3 and r.stdout.startswith("Ambiguous: 'log' matches 3 nodes in different files.")
    r = CliRunner().invoke(app, ["affected", "logout"])
    assert r.exit_code == 4 and r.stdout == "No node matching 'logout' found.\n"
    r = CliRunner().invoke(app, ["affected", "login()", "--depth", "0"])
    assert r.exit_code == 2
    # the drop-in answers graphify's way: no unique match is an answer, exit 0
    capsys.readouterr()
    code = run(["graphify", "affected", "log", "--graph", str(tmp_path / "graphify-out" / "graph.json")])
    assert (code, capsys.readouterr().out) == (0, "No unique node match for log\n")
    r = CliRunner().invoke(app, ["god-nodes", "--top", "2"])
    # degrees: login 3 (three callers / containers), web_login 2, ...; auth.py is its file's node
    assert (r.exit_code, r.stdout) == (0, "God nodes (most connected):\n  1. login() - 3 edges\n"
                                          "  2. login_view() - 2 edges\n")
    r = CliRunner().invoke(app, ["god-nodes", "--json", "--top", "1"])
    assert r.stdout == '[\n  {\n    "id": "login",\n    "label": "login()",\n    "degree": 3\n  }\n]\n'


def test_the_drop_in_lists_its_seven_commands(capsys, tmp_path, monkeypatch):
    code, out, _ = gfy(["--help"], capsys, tmp_path, monkeypatch)
    for name in ("affected", "god-nodes"):
        assert f"\n  {name} " in out
    code, out, err = gfy(["update"], capsys, tmp_path, monkeypatch)
    assert code == 1 and err.startswith("error: unknown command 'update' (this graphify is kgservice's: query, path, "
                                         "explain, save-result, reflect, affected, god-nodes)")
    code, out, err = gfy(["affected"], capsys, tmp_path, monkeypatch)
    assert (code, out, err) == (1, "", 'Usage: graphify affected "<node-or-label>" [--relation R] [--depth N] '
                                       '[--graph path]\n')

"""graphify's skills paste inline NetworkX scripts that read graphify-out/graph.json.

They must run unchanged on the graph.json kgservice exports. The scripts are taken from
the installed graphify package (skills/claude/references/query.md), un-shell-quoted,
their placeholders filled in, and run with ``python -c`` in a project holding our export.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.graphify.conftest import graphify_available


def _skill_scripts() -> dict[str, str]:
    if not graphify_available():
        pytest.skip("the reference graphify venv could not be built")
    from tests.graphify.reference import reference_env, reference_python

    where = subprocess.run([str(reference_python()), "-I", "-c", "import graphify; print(graphify.__file__)"],
                           capture_output=True, text=True, timeout=60, env=reference_env(), check=True)
    doc = Path(where.stdout.strip()).parent / "skills" / "claude" / "references" / "query.md"
    if not doc.exists():
        pytest.skip(f"no skill reference in this graphify version: {doc}")
    scripts = {}
    for block in re.findall(r"```bash\n(.*?)```", doc.read_text(encoding="utf-8"), re.S):
        m = re.search(r'-c "\n(.*)"\s*$', block, re.S)
        if not m:
            continue
        code = re.sub(r'\\(["\\$`])', r"\1", m.group(1))  # undo bash double-quote escaping
        if "vocab.add" in code:
            scripts["vocab"] = code
        elif "mode = 'MODE'" in code:
            scripts["query"] = code
        elif "a_term = 'NODE_A'" in code:
            scripts["path"] = code
        elif "term = 'NODE_NAME'" in code:
            scripts["explain"] = code
    assert set(scripts) >= {"vocab", "query", "path", "explain"}, sorted(scripts)
    return scripts


@pytest.fixture(scope="module")
def scripts():
    return _skill_scripts()


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_vocab_script_runs_and_our_vocabulary_covers_it(scripts, demo_project, demo_graph):
    r = _run(scripts["vocab"], demo_project)
    assert r.returncode == 0, r.stderr
    assert re.match(r"vocab: \d+ tokens", r.stdout)
    theirs = set((demo_project / "graphify-out" / ".vocab.txt").read_text(encoding="utf-8").split("\n")) - {""}
    from kgservice.graphify.vocabulary import Vocabulary
    from kgservice.graphify.loader import load_graph

    g = load_graph(demo_graph)
    mine = Vocabulary.of(g).all_tokens()
    ascii_theirs = {t for t in theirs if t.isascii()}
    assert ascii_theirs
    # The script's camelCase regex is ASCII-only, so it cuts "Sebastián" into "sebasti"; we
    # keep the whole word. Apart from such fragments its vocabulary is a subset of ours.
    labels = " ".join(g.label(n) for n in g.order)
    fragments = {t for t in ascii_theirs - mine
                 if re.search(rf"[^\x00-\x7f]{t}|{t}[^\x00-\x7f]", labels, re.I)}
    assert ascii_theirs - fragments <= mine


@pytest.mark.parametrize("mode", ["bfs", "dfs"])
def test_query_script_runs_on_our_export(scripts, mini_project, mode):
    code = scripts["query"].replace("'QUESTION'", "'smoking lung cancer'").replace("'MODE'", f"'{mode}'")
    code = code.replace("BUDGET", "2000")
    r = _run(code, mini_project)
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith(f"Traversal: {mode.upper()} | Start: [")
    assert "smoking" in first and "lung cancer" in first
    assert "  NODE lung cancer [src=mini.units loc=#m01]" in r.stdout
    # the script walks the undirected graph, so it may print either end first
    assert ("  EDGE smoking --causes [EXTRACTED]--> lung cancer" in r.stdout
            or "  EDGE lung cancer --causes [EXTRACTED]--> smoking" in r.stdout)


def test_path_script_runs_on_our_export(scripts, mini_project):
    code = scripts["path"].replace("'NODE_A'", "'alpha'").replace("'NODE_B'", "'delta'")
    r = _run(code, mini_project)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "Shortest path (3 hops):",
        "  alpha --precedes--> [EXTRACTED]",
        "  beta --precedes--> [EXTRACTED]",
        "  gamma --precedes--> [EXTRACTED]",
        "  delta",
    ]


def test_explain_script_runs_on_our_export(scripts, mini_project, ours, mini_graph):
    code = scripts["explain"].replace("'NODE_NAME'", "'lung cancer'")
    r = _run(code, mini_project)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "NODE: lung cancer"
    assert "  source: mini.units" in lines
    script_neighbours = sorted(ln.split("--> ")[1].split(" [")[0] for ln in lines if ln.startswith("  --"))
    mine = ours("explain", "lung cancer", "--all", "--graph", mini_graph)
    our_neighbours = sorted(ln[6:].split(" [")[0] for ln in mine.stdout.splitlines()
                            if ln.startswith(("  --> ", "  <-- ")))
    assert script_neighbours == our_neighbours == ["cancer", "smoking", "肺癌"]

"""Compatibility with the real graphify CLI (PyPI ``graphifyy``) on the same graph.json.

Three graphs: the demo corpus exported by kgservice, the small mini corpus, and a graph.json
written by graphify itself (``graphify update`` on tests/fixtures/graphify/sample_project).
For each, graphify and our commands must agree on query seeds, path hops (whole output and
exit code) and explain neighbours. Graphify runs are batched per graph (see conftest).
"""

from __future__ import annotations

import ast
import re

import pytest

QUERIES = {
    "demo": [
        "what causes lung cancer", "吸烟", "smoking", "How does PyPI work", "handlers for packaging",
        "Python 3.12", "typing protocols", "chronic obstructive pulmonary disease", "who created python",
        "garbage collection in CPython", "what is the GIL", "pip install packages", "wheel", "世界卫生组织",
        "asyncio event loop", "type hints", "Guido van Rossum", "PEP 8", "numpy arrays",
        "second-hand smoke deaths", "nicotine addiction", "cancer", "the", "decorators and generators",
        "zzzz qqqq",
    ],
    "mini": [
        "what causes lung cancer", "吸烟", "smoking", "猫", "request handlers", "alpha", "north south",
        "COPD", "spoke", "hub", "mammal", "http",
    ],
    "gfy": [
        "checkout", "validate", "how does checkout charge the payment gateway", "who calls apply_discount",
        "search index lookup", "cart total", "refund", "PaymentGateway", "tokenize", "catalog.py",
        "bookshop/cart.py", "add", ".add()", "Book", "tax", "receipt", "what imports pricing",
    ],
}

PATHS = {
    "demo": [("smoking", "disease"), ("吸烟", "cancer"), ("Python", "Guido van Rossum"), ("pip", "PyPI"),
             ("CPython", "GIL"), ("wheel", "setuptools"), ("asyncio", "Python"), ("lung cancer", "smoking"),
             ("nicotine", "tobacco"), ("COPD", "stroke"), ("python", "python"), ("zzz", "python")],
    "mini": [("alpha", "iota"), ("iota", "alpha"), ("north", "south"), ("吸烟", "cancer"), ("猫", "mammal"),
             ("spoke a", "spoke y"), ("smoking", "COPD"), ("cancer", "smoking")],
    "gfy": [("checkout", "PaymentGateway"), ("checkout()", ".charge()"), ("Cart", "Book"),
            ("refund_order", "_send"), ("cart.py", "pricing.py"), ("bookshop/checkout.py", "bookshop/pricing.py"),
            ("validate", "Cart"), ("tokenize", "Catalog"), ("add_tax", "checkout"), ("Receipt", "PaymentError"),
            ("catalog.py::validate", "Book"), ("apply discount", "total cents"), ("search", "lookup")],
}

EXPLAINS = {
    "demo": ["smoking", "吸烟", "Python", "pip", "GIL", "cancer", "lung cancer", "high", "PyPI", "WHO", "zzzz",
             "smok", "typing", "disease"],
    "mini": ["hub", "smoking", "lung cancer", "cancer", "spoke", "south", "吸烟", "alpha", "high"],
    "gfy": ["checkout", "validate", "Cart", "PaymentGateway", "catalog.py", "bookshop/cart.py", ".add()", "add",
            "Book", "tokenize", "cart.py::validate", "bookshop.catalog.validate", "__init__", "Exception",
            "pay", "refund"],
}


def start_of(out: str) -> list[str] | None:
    m = re.search(r"Start: (\[.*?\]) \|", out)
    return ast.literal_eval(m.group(1)) if m else None


def connections_of(out: str) -> list[str]:
    return [line.split(" [")[0] for line in out.splitlines() if line.startswith(("  --> ", "  <-- "))]


@pytest.fixture(scope="module")
def projects(demo_project, mini_project, gfy_project):
    return {"demo": demo_project, "mini": mini_project, "gfy": gfy_project}


def direct(graph_path):
    """Our commands on one loaded graph (the CLI only parses and prints; test_cli covers it)."""
    from kgservice.graphify.explain import run_explain
    from kgservice.graphify.loader import load_graph
    from kgservice.graphify.path import run_path
    from kgservice.graphify.query import run_query
    from tests.graphify.conftest import Run

    g = load_graph(graph_path)

    def text(s: str) -> str:
        return s + "\n" if s else ""

    def run(cmd, *args, graph_flag=None, cwd=None):
        args = [a for a in args if a not in ("--graph", graph_flag)]
        if cmd == "query":
            res = run_query(g, args[0], expand="--no-expand" not in args)
            return Run(res.exit_code, text(res.text), text("\n".join(res.notes)))
        if cmd == "path":
            res = run_path(g, args[0], args[1], undirected="--undirected" in args)
            return Run(res.exit_code, text(res.stdout), text(res.stderr))
        res = run_explain(g, args[0], show_all="--all" in args)
        return Run(res.exit_code, text(res.text), "")

    return run


@pytest.fixture(scope="module")
def runs(projects, graphify_cli):
    """Every case through both tools; graphify batched per graph, the graphs in parallel."""
    results = {}
    jobs = []
    for name, project in projects.items():
        graph = str(project / "graphify-out" / "graph.json")
        run_direct = direct(graph)

        def ours(*args, cwd=None, _run=run_direct, _graph=graph):
            return _run(*args, graph_flag=_graph)

        ours_runs: dict[tuple, object] = {}
        cases: list[list[str]] = []
        for q in QUERIES[name]:
            ours_runs[("q", q)] = ours("query", q, "--no-expand", "--graph", graph, cwd=project)
            expanded = ours("query", q, "--graph", graph, cwd=project)
            ours_runs[("e", q)] = expanded
            cases.append(["query", q, "--graph", graph])
            m = re.search(r"Query expanded to \(from graph vocab, \d+ tokens\): \[(.*)\]", expanded.stdout)
            if m and m.group(1):
                cases.append(["query", " ".join(m.group(1).split(", ")), "--graph", graph])
        for a, b in PATHS[name]:
            for extra in ([], ["--undirected"]):
                ours_runs[("p", a, b, *extra)] = ours("path", a, b, *extra, "--graph", graph, cwd=project)
                cases.append(["path", a, b, *extra, "--graph", graph])
        for x in EXPLAINS[name]:
            every = ours_runs[("x", x, "--all")] = ours("explain", x, "--all", "--graph", graph, cwd=project)
            cases.append(["explain", x, "--all", "--graph", graph])
            if len(connections_of(every.stdout)) > 20:  # the default view cuts and groups
                ours_runs[("x", x)] = ours("explain", x, "--graph", graph, cwd=project)
                cases.append(["explain", x, "--graph", graph])
        jobs.append((name, graph, ours_runs, cases, project))
    batches = graphify_cli.many([(cases, project) for _n, _g, _o, cases, project in jobs])
    for (name, graph, ours_runs, cases, _p), theirs in zip(jobs, batches, strict=True):
        results[name] = (graph, ours_runs, dict(zip((tuple(c) for c in cases), theirs, strict=True)))
    return results


@pytest.mark.parametrize("name", ["demo", "mini", "gfy"])
def test_query_seeds_match_graphify(runs, name):
    graph, mine, theirs = runs[name]
    for q in QUERIES[name]:
        a = mine[("q", q)]
        b = theirs[("query", q, "--graph", graph)]
        assert (start_of(a.stdout), a.exit_code) == (start_of(b.stdout), b.exit_code), q


@pytest.mark.parametrize("name", ["demo", "mini", "gfy"])
def test_expanded_query_seeds_match_graphify_on_the_expansion(runs, name):
    """`kg query Q` seeds == `graphify query "<expanded tokens>"` seeds (the skills' pipeline).

    Our one addition: a question that exactly names a node starts there first.
    """
    graph, mine, theirs = runs[name]
    compared = 0
    for q in QUERIES[name]:
        a = mine[("e", q)]
        if a.exit_code == 3:  # the question is itself an ambiguous name: refused before expanding
            assert a.stdout == theirs[("query", q, "--graph", graph)].stdout
            continue
        m = re.search(r"Query expanded to \(from graph vocab, \d+ tokens\): \[(.*)\]", a.stdout)
        assert m, a.stdout
        if not m.group(1):
            assert a.exit_code == 4 and start_of(a.stdout) is None
            continue
        b = theirs[("query", " ".join(m.group(1).split(", ")), "--graph", graph)]
        ours_seeds, their_seeds = start_of(a.stdout), start_of(b.stdout)
        assert ours_seeds == their_seeds or ours_seeds[1:] == their_seeds, q
        compared += 1
    assert compared >= len(QUERIES[name]) // 2


@pytest.mark.parametrize("name", ["demo", "mini", "gfy"])
def test_path_hops_match_graphify(runs, name):
    graph, mine, theirs = runs[name]
    for a, b in PATHS[name]:
        for extra in ([], ["--undirected"]):
            x = mine[("p", a, b, *extra)]
            y = theirs[("path", a, b, *extra, "--graph", graph)]
            assert (x.exit_code, x.stdout, x.stderr) == (y.exit_code, y.stdout, y.stderr), (a, b, extra)


@pytest.mark.parametrize("name", ["demo", "mini", "gfy"])
def test_explain_neighbours_match_graphify(runs, name):
    graph, mine, theirs = runs[name]
    grouped = 0
    for x in EXPLAINS[name]:
        for extra in ([], ["--all"]):
            if ("x", x, *extra) not in mine:
                continue
            grouped += not extra
            a = mine[("x", x, *extra)]
            b = theirs[("explain", x, *extra, "--graph", graph)]
            assert a.exit_code == b.exit_code, (x, a.stdout, b.stdout)
            assert connections_of(a.stdout) == connections_of(b.stdout), x
            assert a.stdout.splitlines()[:2] == b.stdout.splitlines()[:2], x
            if a.exit_code == 3:  # the competitors are listed, not guessed
                assert a.stdout == b.stdout
            if not extra:
                assert "  Grouped by file:" in a.stdout
                assert a.stdout.split("  ... and ", 1)[1] == b.stdout.split("  ... and ", 1)[1]
    assert grouped or name == "gfy"  # demo (Python, pip, ...) and mini (hub) have > 20 connections


def test_cases_exercise_every_outcome(runs):
    """The case lists cover answers, ambiguity (3) and misses (4) for each command."""
    codes = {"query": set(), "path": set(), "explain": set()}
    for _graph, mine, _theirs in runs.values():
        for key, r in mine.items():
            codes[{"q": "query", "e": "query", "p": "path", "x": "explain"}[key[0]]].add(r.exit_code)
    assert {0, 3, 4} <= codes["explain"]
    assert {0, 3, 4} <= codes["path"]
    assert {0, 4} <= codes["query"]


def test_save_result_and_reflect_agree_with_graphify(ours, graphify_cli, gfy_project, tmp_path):
    """Memory saved by either tool; both reflects write the same LESSONS.md (flat and grouped)."""
    import json

    memory = tmp_path / "memory"
    graph = gfy_project / "graphify-out" / "graph.json"
    nodes = json.loads(graph.read_text(encoding="utf-8"))["nodes"]
    analysis = {"communities": {}}
    for n in nodes:
        analysis["communities"].setdefault(str(n["community"]), []).append(n["id"])
    (graph.parent / ".graphify_analysis.json").write_text(json.dumps(analysis), encoding="utf-8")
    try:
        saves = [
            ("how is a cart checked out?", ["checkout()", "Cart", "PaymentGateway"], "useful", None),
            ("who charges the card?", [".charge()", "PaymentGateway"], "useful", None),
            ("where is tax added?", ["apply_discount()"], "corrected", "add_tax() in checkout()"),
            ("is there a stock module?", ["Catalog", "gone_node"], "dead_end", None),
            ("what validates a cart?", ["validate()"], None, None),
        ]
        cases = []
        for i, (q, cited, outcome, correction) in enumerate(saves):
            args = ["save-result", "--question", q, "--answer", f"answer {i}", "--nodes", *cited]
            args += ["--outcome", outcome] if outcome else []
            args += ["--correction", correction] if correction else []
            args += ["--memory-dir", str(memory)]
            if i % 2:
                cases.append(args)
            else:
                assert ours(*args).exit_code == 0
        flat_g, flat_k = tmp_path / "g_flat.md", tmp_path / "k_flat.md"
        grouped_g, grouped_k = tmp_path / "g_grouped.md", tmp_path / "k_grouped.md"
        no_graph = str(tmp_path / "none.json")
        cases += [["reflect", "--memory-dir", str(memory), "--out", str(flat_g), "--graph", no_graph],
                  ["reflect", "--memory-dir", str(memory), "--out", str(grouped_g), "--graph", str(graph)]]
        theirs = graphify_cli(cases, tmp_path)
        assert all(r.exit_code == 0 for r in theirs), theirs
        assert ours("reflect", "--memory-dir", memory, "--out", flat_k, "--graph", tmp_path / "none.json",
                    cwd=tmp_path).exit_code == 0
        assert ours("reflect", "--memory-dir", memory, "--out", grouped_k, "--graph", graph,
                    cwd=tmp_path).exit_code == 0
        assert flat_k.read_text(encoding="utf-8") == flat_g.read_text(encoding="utf-8")
        grouped = grouped_k.read_text(encoding="utf-8")
        assert grouped == grouped_g.read_text(encoding="utf-8")
        assert "## By topic" in grouped and "`gone_node`" not in grouped
        assert "from 5 session memories" in grouped
    finally:
        (graph.parent / ".graphify_analysis.json").unlink()

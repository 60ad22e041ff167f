"""`query` on the mini corpus: expansion line, header, traversal depths, budget, errors."""

import json

import pytest


@pytest.fixture(scope="module")
def community(mini_graph):
    data = json.loads(mini_graph.read_text(encoding="utf-8"))
    return {n["id"]: n["community"] for n in data["nodes"]}


def test_bfs_three_hops_with_header_and_lines(ours, mini_project, community):
    r = ours("query", "alpha", cwd=mini_project)
    assert r.exit_code == 0, r.stderr
    c = community["alpha"]
    assert r.stdout.splitlines() == [
        "Query expanded to (from graph vocab, 1 tokens): [alpha]",
        "Graph: graphify-out/graph.json (52 nodes) | Traversal: BFS depth=3 | Start: ['alpha'] | 4 nodes found",
        "",
        f"NODE alpha [src=mini.units loc=#c1 community={c}]",
        f"NODE beta [src=mini.units loc=#c1 community={community['beta']}]",
        f"NODE gamma [src=mini.units loc=#c2 community={community['gamma']}]",
        f"NODE delta [src=mini.units loc=#c3 community={community['delta']}]",
        "EDGE alpha --precedes [EXTRACTED]--> beta at=mini.units:#c1",
        "EDGE beta --precedes [EXTRACTED]--> gamma at=mini.units:#c2",
        "EDGE gamma --precedes [EXTRACTED]--> delta at=mini.units:#c3",
    ]


def test_dfs_six_hops(ours, mini_project):
    r = ours("query", "alpha", "--dfs", cwd=mini_project)
    header = r.stdout.splitlines()[1]
    assert header.endswith("Traversal: DFS depth=6 | Start: ['alpha'] | 7 nodes found")
    nodes = [ln.split(" [")[0][5:] for ln in r.stdout.splitlines() if ln.startswith("NODE ")]
    assert nodes == ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"]


def test_cross_language_query_seeds_both_labels(ours, mini_project):
    r = ours("query", "吸烟", cwd=mini_project)
    lines = r.stdout.splitlines()
    assert lines[0] == "Query expanded to (from graph vocab, 2 tokens): [吸烟, smoking]"
    assert "| Start: ['吸烟', 'smoking'] |" in lines[1]
    assert "EDGE 吸烟 --同义 [EXTRACTED]--> smoking at=mini.units:#m02" in lines
    assert "EDGE smoking --causes [EXTRACTED]--> lung cancer at=mini.units:#m01" in lines


def test_no_expand_seeds_on_the_question(ours, mini_project):
    r = ours("query", "吸烟", "--no-expand", cwd=mini_project)
    assert r.stdout.splitlines()[0].startswith(
        "Graph: graphify-out/graph.json (52 nodes) | Traversal: BFS depth=3 | Start: ['吸烟'] |")


def test_empty_expansion_is_said_and_nothing_runs(ours, mini_project):
    r = ours("query", "zzzz qqqq", cwd=mini_project)
    assert r.exit_code == 4
    lines = r.stdout.splitlines()
    assert lines[0] == "Query expanded to (from graph vocab, 0 tokens): []"
    assert "no traversal was run" in lines[1]
    assert not any(ln.startswith(("Graph:", "NODE", "EDGE")) for ln in lines)


def test_no_match_without_expansion(ours, mini_project):
    r = ours("query", "zzzz", "--no-expand", cwd=mini_project)
    assert (r.exit_code, r.stdout) == (4, "No matching nodes found.\n")


def test_budget_cuts_at_four_chars_per_token_but_keeps_seeds(ours, mini_project):
    full = ours("query", "hub", cwd=mini_project).stdout
    r = ours("query", "hub", "--budget", "40", cwd=mini_project)
    head, body = r.stdout.split("\n\n", 1)
    kept, marker = body.rstrip("\n").rsplit("\n", 1)
    assert len(kept) <= 40 * 4
    assert kept.startswith("NODE hub [")
    assert marker.startswith("... (truncated at ~40 token budget: ")
    assert marker.endswith("- use --budget N for more)")
    assert full.split("\n\n", 1)[1].startswith(kept)
    tiny = ours("query", "hub", "--budget", "1", cwd=mini_project).stdout
    assert "\n\nNODE hub [" in tiny  # the seed survives any budget


@pytest.mark.parametrize("bad", ["0", "-5", "abc", "1.5"])
def test_invalid_budget_is_a_usage_error(ours, mini_project, bad):
    r = ours("query", "alpha", "--budget", bad, cwd=mini_project)
    assert r.exit_code == 2
    assert "--budget must be a positive integer" in r.stderr


def test_missing_graph_is_an_error(ours, tmp_path):
    r = ours("query", "alpha", cwd=tmp_path)
    assert r.exit_code == 1 and "graph file not found" in r.stderr
    (tmp_path / "g.txt").write_text("{}")
    r = ours("query", "alpha", "--graph", tmp_path / "g.txt")
    assert r.exit_code == 1 and "must be a .json file" in r.stderr
    (tmp_path / "bad.json").write_text("{not json")
    r = ours("query", "alpha", "--graph", tmp_path / "bad.json")
    assert r.exit_code == 1 and "corrupted" in r.stderr


def test_context_filter_on_our_kinds(ours, mini_project):
    r = ours("query", "smoking", "--context", "synonym", cwd=mini_project)
    lines = r.stdout.splitlines()
    assert "| Context: synonym (explicit) |" in lines[1]
    edges = [ln for ln in lines if ln.startswith("EDGE")]
    assert edges == ["EDGE 吸烟 --同义 [EXTRACTED]--> smoking at=mini.units:#m02"]


def test_explicit_seed(ours, mini_project):
    r = ours("query", "anything", "--seed", "north", cwd=mini_project)
    assert "| Start (given): ['north'] | 4 nodes found" in r.stdout
    r = ours("query", "anything", "--seed", "nowhere-at-all", cwd=mini_project)
    assert (r.exit_code, r.stdout) == (4, "No unique node match for --seed: nowhere-at-all\n")


def test_exact_name_is_pinned_first(ours, mini_project):
    # "http server" expands to [http, server]; the question names the node exactly
    r = ours("query", "http server", cwd=mini_project)
    assert "| Start: ['http server'] |" in r.stdout


def test_llm_chooser_in_the_pipeline_and_its_failure(mini_graph):
    from kgservice.graphify.loader import load_graph
    from kgservice.graphify.query import run_query

    g = load_graph(mini_graph)
    res = run_query(g, "烟草", llm_model="fake", llm_complete=lambda m, p: '["smoking", "nicotine"]')
    assert res.text.startswith("Query expanded to (from graph vocab, 1 tokens): [smoking]\n")
    assert res.seeds == ["smoking"]

    def down(model, prompt):
        raise ConnectionError("no route to model")

    res = run_query(g, "吸烟", llm_model="fake", llm_complete=down)
    assert res.notes and "LLM chooser failed (ConnectionError: no route to model)" in res.notes[0]
    assert res.tokens == ["吸烟", "smoking"]

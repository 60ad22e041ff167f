"""`explain` on the mini corpus: layout, ≡ class, grouping past 20, refusals, lessons."""

import json

from kgservice.graphify.loader import graph_from_data
from kgservice.graphify.explain import run_explain


def test_layout_and_synonyms(ours, mini_project, mini_graph):
    community = {n["id"]: n["community"] for n in json.loads(mini_graph.read_text())["nodes"]}
    r = ours("explain", "lung cancer", cwd=mini_project)
    assert r.exit_code == 0
    assert r.stdout.splitlines() == [
        "Node: lung cancer",
        "  ID:        lung cancer",
        "  Source:    mini.units #m01",
        "  Type:      concept",
        f"  Community: {community['lung cancer']}",
        "  Same as:   肺癌",
        "  Degree:    3",
        "",
        "Connections (3):",
        # most connected neighbour first (smoking: 4 links), then file order
        "  <-- smoking [causes] [EXTRACTED] mini.units:#m01",
        "  --> cancer [is a] [EXTRACTED] mini.units:#m03",
        "  <-- 肺癌 [同义] [EXTRACTED] mini.units:#m04",
    ]


def test_several_relations_to_one_neighbour_are_all_shown(ours, mini_project):
    r = ours("explain", "south", cwd=mini_project)
    assert "  <-- east [flows to/drains to] [EXTRACTED] mini.units:#d4" in r.stdout.splitlines()


def test_past_twenty_connections_are_grouped_by_direction_and_file(ours, mini_project):
    r = ours("explain", "hub", cwd=mini_project)
    lines = r.stdout.splitlines()
    assert "Connections (25):" in lines
    shown = [ln for ln in lines if ln.startswith("  --> spoke")]
    assert len(shown) == 20
    tail = lines[lines.index(shown[-1]) + 1:]
    # spokes a..o come from hub_a.units, p..y from hub_b.units; the first 20 shown are a..t
    assert tail == [
        "  ... and 5 more (--all lists all 25)",
        "  Grouped by file:",
        "    --> hub_b.units: 5 connections",
    ]
    every = ours("explain", "hub", "--all", cwd=mini_project).stdout
    assert every.count("  --> spoke") == 25 and "Grouped by file" not in every


def test_refusals_and_exit_codes(ours, mini_project):
    r = ours("explain", "spoke", cwd=mini_project)  # prefix of 25 nodes of two files
    assert r.exit_code == 3
    assert r.stdout.splitlines()[:5] == ["Ambiguous: 'spoke' matches 2 nodes in different files.",
                                         "  hub_a.units", "    id: spoke a", "  hub_b.units", "    id: spoke p"]
    r = ours("explain", "ancer", cwd=mini_project)
    assert r.exit_code == 4 and r.stdout.startswith("No exact match for 'ancer'.")
    r = ours("explain", "nothing-like-it", cwd=mini_project)
    assert (r.exit_code, r.stdout) == (4, "No node matching 'nothing-like-it' found.\n")


def test_lesson_line_from_the_sidecar(tmp_path):
    gp = tmp_path / "graph.json"
    data = {"nodes": [{"id": "a", "label": "A", "source_file": ""}, {"id": "b", "label": "B"}],
            "links": [{"source": "a", "target": "b", "relation": "r", "confidence": "EXTRACTED"}]}
    gp.write_text(json.dumps(data))
    (tmp_path / ".graphify_learning.json").write_text(json.dumps({"version": 1, "nodes": {
        "a": {"status": "preferred", "uses": 2, "score": 1.5, "source_file": ""},
        "b": {"status": "contested", "uses": 1, "neg": 2, "score": -0.5, "source_file": "gone.py"}}}))
    from kgservice.graphify.loader import load_graph

    g = load_graph(gp)
    assert "  Lesson: preferred source (start here) — 2 useful, score=1.5" in run_explain(g, "A").text.splitlines()
    g = load_graph(gp)
    assert ("  Lesson: contested (useful 1 / dead-end 2) [code changed since — re-verify]"
            in run_explain(g, "B").text.splitlines())


def test_in_and_out_arcs_to_one_neighbour_are_two_connections():
    g = graph_from_data({"nodes": [{"id": "x", "label": "x"}, {"id": "y", "label": "y"}],
                         "links": [{"source": "x", "target": "y", "relation": "calls"},
                                   {"source": "y", "target": "x", "relation": "calls"}]})
    res = run_explain(g, "x")
    assert [(c.direction, c.neighbor) for c in res.connections] == [("out", "y"), ("in", "y")]

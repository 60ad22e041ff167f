"""`path` on the mini corpus and small hand-made graphs."""

from kgservice.graphify.loader import graph_from_data
from kgservice.graphify.path import run_path, shortest_path


def test_directed_chain(ours, mini_project):
    r = ours("path", "alpha", "delta", cwd=mini_project)
    assert (r.exit_code, r.stderr) == (0, "")
    assert r.stdout == ("Shortest path (3 hops):\n  alpha --precedes [EXTRACTED]--> beta --precedes [EXTRACTED]--> "
                        "gamma --precedes [EXTRACTED]--> delta\n")


def test_against_direction_hints_undirected(ours, mini_project):
    r = ours("path", "delta", "alpha", cwd=mini_project)
    assert r.exit_code == 0
    assert r.stdout == ("No directed path found between 'delta' and 'alpha'. "
                        "Re-run with --undirected to search ignoring edge direction.\n")
    r = ours("path", "delta", "alpha", "--undirected", cwd=mini_project)
    assert r.stdout == ("Shortest path (3 hops):\n  delta <--precedes [EXTRACTED]-- gamma <--precedes [EXTRACTED]-- "
                        "beta <--precedes [EXTRACTED]-- alpha\n")


def test_equal_paths_choose_deterministically_and_show_every_relation(ours, mini_project):
    # north -> east -> south and north -> west -> south are both two hops; the search
    # visits neighbours in id order, so "east" wins; east -> south carries two relations
    for _ in range(3):
        r = ours("path", "north", "south", cwd=mini_project)
        assert r.stdout == ("Shortest path (2 hops):\n  north --flows to [EXTRACTED]--> east "
                            "--drains to/flows to [EXTRACTED]--> south\n")


def test_same_node_is_an_error(ours, mini_project):
    r = ours("path", "alpha", "Alpha", cwd=mini_project)
    assert r.exit_code == 3
    assert r.stderr == ("'alpha' and 'Alpha' both resolved to the same node 'alpha'. "
                        "Use a more specific label or the exact node ID.\n")


def test_unknown_endpoint(ours, mini_project):
    r = ours("path", "alpha", "nowhere-at-all", cwd=mini_project)
    assert (r.exit_code, r.stdout, r.stderr) == (4, "", "No node matching 'nowhere-at-all' found.\n")


def test_close_runner_up_warns():
    g = graph_from_data({"nodes": [{"id": "a1", "label": "alpha one"}, {"id": "a2", "label": "alpha two"},
                                   {"id": "z", "label": "zulu"}],
                         "links": [{"source": "a1", "target": "z", "relation": "r"}]})
    res = run_path(g, "alpha", "zulu")
    assert res.stderr.startswith("warning: source match was ambiguous (top score ")
    assert res.stdout == "Shortest path (1 hops):\n  alpha one --r--> zulu"


def test_bidirectional_search_by_hand():
    # a->b->d, a->c->d, c->e->d: shortest a..d is 2 hops, via b (smaller id)
    g = graph_from_data({"nodes": [{"id": x} for x in "abcde"],
                         "links": [{"source": s, "target": t} for s, t in
                                   [("a", "c"), ("a", "b"), ("b", "d"), ("c", "d"), ("c", "e"), ("e", "d")]]})
    assert shortest_path(g, "a", "d") == ["a", "b", "d"]
    assert shortest_path(g, "d", "a") is None
    assert shortest_path(g, "d", "a", undirected=True) == ["d", "b", "a"]


def test_contains_may_be_walked_back():
    # file -contains-> f1, f1 -calls-> g1, file2 -contains-> g1: g1 reaches file2 only backwards
    g = graph_from_data({"nodes": [{"id": x, "label": x} for x in ("file", "f1", "g1", "file2")],
                         "links": [{"source": "file", "target": "f1", "relation": "contains"},
                                   {"source": "f1", "target": "g1", "relation": "calls"},
                                   {"source": "file2", "target": "g1", "relation": "contains"}]})
    res = run_path(g, "f1", "file2")
    assert res.stdout == "Shortest path (2 hops):\n  f1 --calls--> g1 <--contains-- file2"


def test_values_join_no_two_facts_unless_asked():
    """a and b share the confidence value "high" (modifier links to a literal) and the source W (a
    modifier link to a concept); their facts also meet over a - x - y - b. By hand: through values
    the path is a -> high <- b (2 hops); without, a - x - y - b (3). W may end a path (one modifier
    hop from a), but not join a and c in the middle (a -> W <- c)."""
    def link(s, t, rel, modifier=False):
        return {"source": s, "target": t, "relation": rel, **({"modifier": True} if modifier else {})}
    nodes = [{"id": i, "label": i} for i in ("a", "b", "c", "d", "x", "y", "W")] + [{"id": "high", "label": "high",
                                                                               "file_type": "literal"}]
    links = [link("a", "high", "confidence", True), link("b", "high", "confidence", True),
             link("a", "x", "has"), link("x", "y", "has"), link("y", "b", "has"),
             link("a", "W", "source", True), link("c", "W", "source", True), link("d", "a", "causes")]
    g = graph_from_data({"nodes": nodes, "links": links})
    assert shortest_path(g, "a", "b", undirected=True) == ["a", "high", "b"]
    assert shortest_path(g, "a", "b", undirected=True, through_values=False) == ["a", "x", "y", "b"]
    assert shortest_path(g, "a", "W", undirected=True, through_values=False) == ["a", "W"]
    assert shortest_path(g, "W", "a", undirected=True, through_values=False) == ["W", "a"]
    assert shortest_path(g, "a", "high", undirected=True, through_values=False) == ["a", "high"]
    assert shortest_path(g, "d", "W", undirected=True, through_values=False) == ["d", "a", "W"]
    assert shortest_path(g, "W", "d", through_values=False) is None  # directed: W is no link's source
    assert shortest_path(g, "a", "c", undirected=True) == ["a", "W", "c"]
    assert shortest_path(g, "a", "c", undirected=True, through_values=False) is None
    r = run_path(g, "a", "c", undirected=True, through_values=False)
    assert r.nodes is None and "joined no two facts" in r.stdout

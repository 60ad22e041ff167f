"""``god-nodes`` and ``affected`` on small hand-made graphs, every expected answer worked out by hand
(the byte-for-byte comparison with graphify itself is test_differential.py's job)."""

from __future__ import annotations

from pathlib import Path

from kgservice.graphify.affected import affected_nodes, run_affected
from kgservice.graphify.gods import god_nodes, render_json, render_text
from kgservice.graphify.loader import graph_from_data
from kgservice.graphify.seeds import repo_relative, resolve_seed


def n(nid, label, sf, loc="L2", **extra):
    return {"id": nid, "label": label, "source_file": sf, "source_location": loc, **extra}


def lk(u, v, rel, loc=None, **extra):
    d = {"source": u, "target": v, "relation": rel, "source_file": "x.py", **extra}
    if loc:
        d["source_location"] = loc
    return d


def graph(nodes, links, multigraph=False):
    return graph_from_data({"directed": False, "multigraph": multigraph, "nodes": nodes, "links": links},
                           Path("/p/graphify-out/graph.json"))


# --- god-nodes --------------------------------------------------------------------------------


def hub_graph(multigraph=False):
    nodes = [n("hub", "Registry", "reg.py"), n("file", "reg.py", "reg.py", "L1"),  # file node: label = basename
             n("stub", ".run()", "reg.py"), n("concept", "Idea", ""), n("doc", "Plan", "docs/PLAN"),  # no extension
             n("key", "version", "package.json"), n("builtin", "Path", "a.py"), n("lone", "helper()", "a.py"),
             n("svc", "Service", "svc.py"), n("nul", None, "n.py")]
    links = [lk("file", "hub", "contains"), lk("file", "stub", "contains"), lk("file", "svc", "contains"),
             lk("svc", "hub", "calls", key=0), lk("svc", "hub", "references", key=0),  # same key: one edge
             lk("svc", "hub", "uses"),  # no key: a second edge on a multigraph
             lk("hub", "svc", "calls"), lk("concept", "hub", "mentions"), lk("doc", "hub", "mentions"),
             lk("key", "hub", "mentions"), lk("builtin", "hub", "mentions"), lk("builtin", "svc", "mentions"),
             lk("builtin", "key", "mentions"), lk("lone", "hub", "calls"), lk("nul", "svc", "calls"),
             lk("nul", "hub", "calls"), lk("nul", "nul", "calls")]
    return graph(nodes, links, multigraph)


def test_god_nodes_rank_real_entities_by_networkx_degree():
    g = hub_graph()
    # simple DiGraph: hub's arcs in: file, svc, concept, doc, key, builtin, lone, nul; out: svc -> 9
    # svc: in file, hub, builtin, nul; out hub -> 5; nul: out svc, hub, itself; in itself -> 4
    # left out: file (its file's name), stub (.method()), concept (no file), doc (no extension),
    # key (a JSON key), builtin (Path), lone (a function with one link)
    assert god_nodes(g) == [{"id": "hub", "label": "Registry", "degree": 9},
                            {"id": "svc", "label": "Service", "degree": 5},
                            {"id": "nul", "label": None, "degree": 4}]
    assert render_text(god_nodes(g)) == ("God nodes (most connected):\n  1. Registry - 9 edges\n"
                                         "  2. Service - 5 edges\n  3. None - 4 edges")
    assert render_json(god_nodes(g, top_n=1)) == '[\n  {\n    "id": "hub",\n    "label": "Registry",\n    "degree": 9\n  }\n]'


def test_god_nodes_on_a_multigraph_count_keyed_edges():
    # svc -> hub: key 0 twice (one edge) + one keyless link (a new key): 2 edges, so hub 10, svc 6
    assert [(d["id"], d["degree"]) for d in god_nodes(hub_graph(multigraph=True))] == [("hub", 10), ("svc", 6),
                                                                                      ("nul", 4)]


def test_god_nodes_top_and_hub_percentile():
    g = hub_graph()
    assert [d["id"] for d in god_nodes(g, top_n=2)] == ["hub", "svc"]
    assert [d["id"] for d in god_nodes(g, top_n=0)] == ["hub"]  # graphify checks the count after adding
    # the 10 degrees sorted: 1 1 1 1 (stub, concept, doc, lone) 2 (key) 3 3 (file, builtin) 4 5 9;
    # the 80th percentile is index int(10 * 80 / 100) - 1 = 7 -> 4: hub (9) and svc (5) are cut
    degrees = sorted(g.degree(x, directed=True, multigraph=False) for x in g.order)
    assert degrees[7] == 4
    assert [d["id"] for d in god_nodes(g, exclude_hubs_percentile=80)] == ["nul"]


# --- affected ---------------------------------------------------------------------------------


def oop():
    nodes = [n("base", "Base", "pkg/base.py", "L3"), n("base_head", ".head()", "pkg/base.py", "L5"),
             n("child", "Child", "pkg/child.py", "L2"), n("child_head", ".head()", "pkg/child.py", "L4"),
             n("walk", "walk()", "pkg/walk.py", "L10"), n("main", "main()", "pkg/walk.py", "L30"),
             n("other", "Other", "pkg/other.py", "L1"), n("other_head", ".head()", "pkg/other.py", "L3"),
             n("user", "use_other()", "pkg/use.py", "L7"), n("f_child", "child.py", "pkg/child.py", "L1"),
             n("f_main", "main.py", "pkg/main.py", "L1")]
    links = [lk("base", "base_head", "method"), lk("child", "child_head", "method"), lk("child", "base", "inherits"),
             lk("walk", "base_head", "calls", "L11"), lk("main", "walk", "calls"),
             lk("other", "other_head", "method"), lk("user", "other_head", "calls", "L8"),
             lk("f_child", "child", "contains"), lk("f_main", "f_child", "imports_from", "L1"),
             lk("user", "child", "references", "L9", source_file="pkg/use.py")]
    return graph(nodes, links)


def hits(g, seed, **kw):
    return [(h.node, h.depth, h.relation) for h in affected_nodes(g, seed, **kw)]


def test_an_override_pulls_in_the_callers_of_the_method_it_overrides():
    g = oop()
    # Child.head overrides Base.head (Child inherits Base): walk() calls Base.head, so it is affected at
    # depth 1 and main() (calls walk) at 2; Base.head itself is walked, not reported; Other.head is
    # another class's method of the same name and stays out
    assert hits(g, "child_head") == [("walk", 1, "calls"), ("main", 2, "calls")]
    assert hits(g, "child_head", depth=1) == [("walk", 1, "calls")]
    assert hits(g, "base_head") == [("walk", 1, "calls"), ("main", 2, "calls")]


def test_a_class_seeds_its_members_and_follows_only_the_relations_asked():
    g = oop()
    # Child: its method child_head is walked from (unreported); references from use_other(), contains from
    # the file is not in the default set
    assert hits(g, "child") == [("user", 1, "references"), ("walk", 1, "calls"), ("main", 2, "calls")]
    assert hits(g, "child", relations=("references",)) == [("user", 1, "references")]
    assert hits(g, "child", relations=("contains", "imports_from")) == [("f_child", 1, "contains"),
                                                                        ("f_main", 2, "imports_from")]


def test_the_text_names_the_site_of_each_link():
    g = oop()
    seed, text = run_affected(g, "Child", relations=("references", "calls"), depth=2)
    assert seed == "child"
    assert text == ("Affected nodes for Child\nRelations: references, calls\nDepth: 2\n"
                    "- use_other() [references] pkg/use.py:L9\n"  # the link's own file and line
                    "- walk() [calls] x.py:L11\n"
                    "- main() [calls] pkg/walk.py:L30")  # no site line: the node's own definition
    assert run_affected(g, "Other", relations=("inherits",))[1].endswith("Depth: 2\nNo affected nodes found.")
    assert run_affected(g, "nosuch") == (None, "No unique node match for nosuch")


def test_seed_resolution_order():
    g = oop()
    assert resolve_seed(g, "walk") == "walk"  # an id
    assert resolve_seed(g, "CHILD") == "child"  # a label, case-folded
    assert resolve_seed(g, "main") == "main"  # an id beats the bare name of main()
    assert resolve_seed(g, "use_other") == "user"  # the bare name of a callable
    assert resolve_seed(g, ".head()") is None  # three methods share it
    # a file: several nodes, the one at L1 labelled with the file's name
    assert resolve_seed(g, "pkg/child.py") == "f_child"
    assert resolve_seed(g, "/p/pkg/child.py", Path("/p")) == "f_child"
    assert resolve_seed(g, "./pkg/child.py/") == "f_child"
    assert resolve_seed(g, "pkg/main.py") == "f_main"  # the only node of that file
    assert resolve_seed(g, "Othe") is None  # contained in two labels: Other, use_other()
    assert resolve_seed(g, "se_oth") == "user"  # contained in exactly one label
    assert repo_relative("/p/a/b.py", Path("/p")) == "a/b.py" and repo_relative("/q/a.py", Path("/p")) == "/q/a.py"

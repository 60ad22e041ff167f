"""The Explore page's neighbourhood graph in a real Chromium: the large-graph path (spiral
placement, light edges, shortened labels, no force layout) and the small-graph path a click takes."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.web.conftest import drag_node, find_path, signed_in

NEIGHBOURHOOD_JS = """(n) => {
  const nbs = [];
  for (let i = 1; i < n; i++) nbs.push({node_id: 'n' + i, label: i === 1 ? '茶の木' : (i === 2 ? 'x'.repeat(80) : 'node ' + i),
    direction: i % 3 ? 'out' : 'in', predicate: 'rel', family: i % 2 ? 'causal' : 'taxonomic', kind: 'statement', unit_id: 'u' + i});
  return {node: {id: 'n0', label: 'hub', kind: 'entity'}, neighbors: nbs, total: nbs.length};
}"""


def explore(server, page) -> None:
    signed_in(page, server, "reader", "/ui/explore")
    page.wait_for_function("() => !!window.cytoscape && !!window.kgGraph")
    page.evaluate("() => { document.getElementById('node-panel').hidden = false; }")


def test_a_large_neighbourhood_is_placed_without_a_force_layout(server, page):
    explore(server, page)
    nb = page.evaluate(NEIGHBOURHOOD_JS, 600)
    page.evaluate("(nb) => window.kgGraph.draw(nb, true)", nb)
    got = page.evaluate("""() => { const cy = window.kgGraph.cy();
        const ps = cy.nodes().map((n) => n.position()); const key = new Set(ps.map((p) => p.x.toFixed(3) + ',' + p.y.toFixed(3)));
        return {nodes: cy.nodes().length, edges: cy.edges().length, distinct: key.size, light: cy.edges('.light').length,
                hub: cy.getElementById('n0').position(), seed: cy.getElementById('n0').hasClass('seed'),
                cjk: cy.getElementById('n1').data('label'), long: cy.getElementById('n2').data('label'),
                zoom: cy.zoom(), measured: performance.getEntriesByName('kg-graph-draw').length,
                inView: cy.nodes().filter((n) => { const p = n.renderedPosition(); return p.x >= 0 && p.y >= 0 && p.x <= cy.width() && p.y <= cy.height(); }).length}; }""")
    assert (got["nodes"], got["edges"]) == (600, 599)
    assert got["distinct"] == 600  # the spiral gives every node its own place
    assert got["light"] == 599  # no arrows or edge labels on a graph this size
    assert got["hub"] == {"x": 0, "y": 0} and got["seed"]
    assert got["cjk"] == "茶の木"
    assert got["long"] == "x" * 39 + "…"
    assert got["inView"] == 600  # fitted: the whole graph is on screen
    assert got["measured"] == 1
    # expanding a node keeps every node already placed where it was
    before = page.evaluate("() => window.kgGraph.cy().getElementById('n5').position()")
    more = {"node": {"id": "n7", "label": "node 7", "kind": "entity"},
            "neighbors": [{"node_id": f"m{i}", "label": f"more {i}", "direction": "out", "predicate": "rel",
                           "family": "part", "kind": "statement", "unit_id": f"v{i}"} for i in range(20)], "total": 20}
    page.evaluate("(nb) => window.kgGraph.draw(nb, false)", more)
    after = page.evaluate("""() => { const cy = window.kgGraph.cy(); const c = cy.getElementById('n7').position();
        const m = cy.getElementById('m0').position();
        return {n5: cy.getElementById('n5').position(), nodes: cy.nodes().length, seed: cy.nodes('.seed').map((n) => n.id()),
                near: Math.hypot(m.x - c.x, m.y - c.y)}; }""")
    assert after["n5"] == before
    assert after["nodes"] == 620 and after["seed"] == ["n7"]
    assert after["near"] < 100  # the new nodes sit around the node that was expanded


def test_a_large_graph_node_follows_the_mouse(server, page):
    explore(server, page)
    page.evaluate("(nb) => window.kgGraph.draw(nb, true)", page.evaluate(NEIGHBOURHOOD_JS, 400))
    start, end = drag_node(page, "n200")
    assert end != start and end["x"] > start["x"]


def test_a_small_neighbourhood_keeps_arrows_and_a_force_layout(server, page):
    explore(server, page)
    page.get_by_label("Search entry nodes").fill("smoking")
    page.get_by_role("button", name="Search").click()
    page.locator("button.hit", has_text="smoking").first.click()
    expect(page.locator("#node-title")).to_contain_text("smoking")
    page.wait_for_function("() => window.kgGraph.cy() && window.kgGraph.cy().nodes().length > 1")
    got = page.evaluate("""() => { const cy = window.kgGraph.cy();
        return {nodes: cy.nodes().length, light: cy.edges('.light').length, edges: cy.edges().length,
                arrow: cy.edges()[0].style('target-arrow-shape')}; }""")
    assert 1 < got["nodes"] <= 150 and got["edges"] >= 1
    assert got["light"] == 0 and got["arrow"] == "triangle"


def test_find_path_is_one_server_request_and_draws_the_path(server, page):
    """The page asks the server's path search once (it used to walk the neighbours route itself, up
    to 60 requests in a row, and hit the per-key rate limit) and draws the hops it returns."""
    explore(server, page)
    page.evaluate("() => { document.getElementById('node-panel').hidden = true; }")
    api: list[str] = []
    page.on("request", lambda r: api.append(r.url) if "/ui/v1/" in r.url else None)
    page.get_by_label("also through values").check()  # Python and health facts meet only at a value
    find_path(page, "Guido van Rossum", "stroke")
    steps = page.locator("#path li").count()
    assert steps >= 3  # a multi-hop path
    assert len(api) == 1 and api[0].endswith("/ui/v1/graphify/path")
    expect(page.locator("#node-panel")).to_be_visible()
    got = page.evaluate("""() => { const cy = window.kgGraph.cy();
        return {nodes: cy.nodes().map((n) => n.data('label')), edges: cy.edges().length}; }""")
    assert got["edges"] == steps and len(got["nodes"]) == steps + 1
    assert got["nodes"][0] == "Guido van Rossum" and got["nodes"][-1] == "stroke"
    # an unknown name is the server's own message, and so is no path
    page.get_by_label("To", exact=True).fill("qqqzzzxq")
    page.get_by_role("button", name="Find path").click()
    expect(page.locator("#path li.error")).to_contain_text("qqqzzzxq")
    page.get_by_label("To", exact=True).fill("Guido van Rossum")
    page.get_by_role("button", name="Find path").click()
    expect(page.locator("#path li.error")).to_contain_text("same node")
    assert len(api) == 3


def test_search_hits_keep_the_server_order_and_say_how_they_were_found(server, page):
    """The number beside a hit was the entry weight, not the order's key nor a similarity (a nonsense
    query showed "(1.00)"): hits are listed in the server's order, each labelled named / similar."""
    explore(server, page)
    for q in ("吸烟 戒烟", "qqqzzzxq"):
        want = page.evaluate("""(q) => fetch('/ui/v1/search', {method: 'POST', credentials: 'same-origin',
            headers: {'Content-Type': 'application/json', 'X-CSRF-Token': document.querySelector('meta[name="csrf-token"]').content},
            body: JSON.stringify({query: q, top_k: 10})}).then((r) => r.json())""", q)
        page.get_by_label("Search entry nodes").fill(q)
        page.get_by_role("button", name="Search").click()
        if want:
            expect(page.locator("#hits li")).to_have_count(len(want))
        got = page.evaluate("""() => [...document.querySelectorAll('#hits li')].map((li) => ({id: li.dataset.node,
            text: li.textContent, how: li.querySelector('.hit-how') && li.querySelector('.hit-how').textContent}))""")
        assert [g["id"] for g in got if g["id"]] == [h["node_id"] for h in want]
        for g, h in zip(got, want):
            assert g["how"] == ("named" if h["named"] else "similar")
            assert "(" not in g["text"].replace(h["label"], "")  # no score number


def path_shown(page) -> list[tuple[str, str]]:
    return page.locator("#path li[data-source]").evaluate_all(
        "(lis) => lis.map((li) => [li.dataset.source, li.dataset.target])")


def test_find_path_goes_through_no_value_unless_asked(server, page):
    """"CPython -confidence-> high <-confidence- smoking -causes-> lung cancer" joined two facts by a
    shared confidence level. The page's path lets no value join two facts: a modifier link only
    when its value is an end of the path, no literal node between the ends, unless "also through
    values" is ticked; checked against networkx on the server's own graph.json."""
    import json

    import networkx as nx

    explore(server, page)
    page.get_by_label("From", exact=True).fill("CPython")
    page.get_by_label("To", exact=True).fill("lung cancer")
    page.get_by_role("button", name="Find path").click()
    expect(page.locator("#path li.no-path")).to_contain_text("joined no two facts")  # only "high" joined them
    find_path(page, "CPython", "PyPI")
    hops = path_shown(page)
    data = json.loads((server["root"] / "kg" / "graphify-out" / "graph.json").read_text("utf-8"))
    literal = {n["id"] for n in data["nodes"] if n.get("file_type") == "literal"}
    source, target = hops[0][0], hops[-1][1]
    full = nx.Graph()
    full.add_edges_from((lk["source"], lk["target"]) for lk in data["links"])
    allowed = [lk for lk in data["links"] if not lk.get("modifier") or lk["target"] in (source, target)]
    plain = nx.Graph()  # a modifier link only into an end (its value), no literal in between
    plain.add_edges_from((lk["source"], lk["target"]) for lk in allowed)
    plain.remove_nodes_from(literal - {source, target})
    shortest_plain = nx.shortest_path_length(plain, source, target)
    shortest_any = nx.shortest_path_length(full, source, target)
    assert shortest_any < shortest_plain  # a value is a shortcut here: the case this test is about
    assert len(hops) == shortest_plain
    assert not [t for _, t in hops[:-1] if t in literal]
    pairs = {frozenset((lk["source"], lk["target"])) for lk in allowed}
    assert all(frozenset(h) in pairs for h in hops)
    # asked for: through values, the shorter path of every link
    page.get_by_label("also through values").check()
    page.get_by_role("button", name="Find path").click()
    expect(page.locator("#path li[data-source]")).to_have_count(shortest_any)
    assert any(t in literal for _, t in path_shown(page)[:-1])

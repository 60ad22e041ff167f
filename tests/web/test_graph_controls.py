"""Explore's graph, steered: "of N" neighbours with the next page or all of them, zoom, fit,
fullscreen, a layout choice, the legend as a family filter, the node panel, distinct legend
colours, a focus ring that stands out, and a 5,000-node graph that still moves. Keyboard-only
routes for each; no timing asserted (render times are scripts/bench/web_page.py's)."""

from __future__ import annotations

import math
import re

import httpx
from playwright.sync_api import expect

from tests.web.conftest import drag_node, signed_in
from tests.web.test_access import tab_to
from tests.web.test_documents import put_document

HUB = "control hub"
LEAVES = 120


def rest(server: dict) -> httpx.Client:
    return httpx.Client(base_url=server["base"], headers={"Authorization": f"Bearer {server['keys']['reader']}"},
                        timeout=60)


def hub(server: dict) -> dict:
    """A node with 120 neighbours over two families, stored once per session."""
    with rest(server) as c:
        found = c.get(f"/v1/nodes/{HUB}/neighbors", params={"limit": 1000})
        if found.status_code == 200 and found.json()["total"] == LEAVES:
            return found.json()
    put_document(server, "controls/hub.units", "".join(
        f"{{{HUB}}} [{'causes' if i % 3 == 0 else 'has'}] {{leaf {i:03d}}}\n" for i in range(LEAVES)))
    with rest(server) as c:
        return c.get(f"/v1/nodes/{HUB}/neighbors", params={"limit": 1000}).json()


def open_hub(server: dict, page) -> dict:
    everything = hub(server)
    signed_in(page, server, "reader", "/ui/explore?node=" + HUB.replace(" ", "%20"))
    expect(page.locator("#nb-count")).to_contain_text(f"of {LEAVES} neighbours")
    return everything


def drawn(page) -> set[str]:
    return set(page.evaluate("() => window.kgGraph.cy().nodes().map((n) => n.id())"))


def test_the_neighbours_route_pages_through_all_of_them(server):
    everything = hub(server)
    with rest(server) as c:
        pages = [c.get(f"/v1/nodes/{HUB}/neighbors", params={"limit": 7, "offset": o}).json() for o in range(0, LEAVES + 7, 7)]
    assert all(p["total"] == LEAVES for p in pages)
    joined = [(n["unit_id"], n["node_id"]) for p in pages for n in p["neighbors"]]
    assert joined == [(n["unit_id"], n["node_id"]) for n in everything["neighbors"]]
    assert len(set(joined)) == LEAVES


def test_of_n_neighbours_next_page_and_all(server, page):
    everything = open_hub(server, page)
    want = {n["node_id"] for n in everything["neighbors"]} | {everything["node"]["id"]}
    expect(page.locator("#nb-count")).to_have_text(f"Showing 50 of {LEAVES} neighbours of {HUB}.")
    assert len(drawn(page)) == 51
    page.get_by_role("button", name="Show 50 more").click()
    expect(page.locator("#nb-count")).to_have_text(f"Showing 100 of {LEAVES} neighbours of {HUB}.")
    assert len(drawn(page)) == 101
    expect(page.locator("#neighbours li[data-node]")).to_have_count(100)
    # keyboard only: the rest, through the "all" button
    tab_to(page, "#nb-all", most=120)
    page.keyboard.press("Enter")
    expect(page.locator("#nb-count")).to_have_text(f"Showing {LEAVES} of {LEAVES} neighbours of {HUB}.")
    assert drawn(page) == want
    expect(page.locator("#nb-all")).to_have_count(0)


def cy_state(page) -> dict:
    return page.evaluate("""() => { const cy = window.kgGraph.cy();
        const inView = cy.nodes(':visible').filter((n) => { const p = n.renderedPosition();
            return p.x >= -1 && p.y >= -1 && p.x <= cy.width() + 1 && p.y <= cy.height() + 1; }).length;
        return {zoom: cy.zoom(), pan: cy.pan(), visible: cy.nodes(':visible').length, inView,
                positions: cy.nodes(':visible').map((n) => [n.id(), n.position().x, n.position().y])}; }""")


def test_zoom_fit_fullscreen_and_layouts(server, page):
    open_hub(server, page)
    start = cy_state(page)
    assert start["inView"] == start["visible"]  # drawn fitted
    page.get_by_role("button", name="zoom in").click()
    assert math.isclose(cy_state(page)["zoom"], start["zoom"] * 1.25, rel_tol=1e-6)
    page.get_by_role("button", name="zoom in").click()
    assert cy_state(page)["inView"] < start["visible"]  # zoomed past the edges
    page.get_by_role("button", name="Fit").click()
    fitted = cy_state(page)
    assert fitted["inView"] == fitted["visible"]
    # fullscreen covers the window; Escape on the focused graph leaves it
    page.get_by_role("button", name="Fullscreen").click()
    box = page.locator("#graph-box").bounding_box()
    assert box["width"] >= 1270 and box["height"] >= 890
    expect(page.locator("#graph")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.get_by_role("button", name="Fullscreen")).to_have_attribute("aria-pressed", "false")
    assert page.locator("#graph-box").bounding_box()["height"] < 600
    # layouts: a circle puts every node at one distance from the middle; a grid on rows and columns
    page.get_by_label("Layout").select_option("circle")
    pts = [(x, y) for _, x, y in cy_state(page)["positions"]]
    cx, cy_ = sum(x for x, _ in pts) / len(pts), sum(y for _, y in pts) / len(pts)
    radii = [math.hypot(x - cx, y - cy_) for x, y in pts]
    assert max(radii) - min(radii) < 1e-6 * max(radii) + 1e-6
    page.get_by_label("Layout").select_option("grid")
    pts = [(x, y) for _, x, y in cy_state(page)["positions"]]
    cols = math.ceil(math.sqrt(len(pts)))
    assert len({x for x, _ in pts}) == cols and len({y for _, y in pts}) == math.ceil(len(pts) / cols)
    page.get_by_label("Layout").select_option("cose")  # 51 nodes: the force layout runs
    expect(page.locator("#layout-note")).to_have_text("")
    assert [(x, y) for _, x, y in cy_state(page)["positions"]] != pts
    after = cy_state(page)
    assert after["inView"] == after["visible"]


def test_keyboard_steers_the_graph(server, page):
    open_hub(server, page)
    tab_to(page, "#graph", most=60)
    z0 = cy_state(page)["zoom"]
    page.keyboard.press("+")
    assert math.isclose(cy_state(page)["zoom"], z0 * 1.25, rel_tol=1e-6)
    p0 = cy_state(page)["pan"]
    page.keyboard.press("ArrowLeft")
    assert cy_state(page)["pan"]["x"] == p0["x"] + 60
    page.keyboard.press("0")
    s = cy_state(page)
    assert s["inView"] == s["visible"]
    # the toolbar (just before the graph) is reachable and works from the keyboard too
    for _ in range(10):
        page.keyboard.press("Shift+Tab")
        if page.evaluate("() => document.activeElement.id") == "fullscreen":
            break
    page.keyboard.press("Enter")
    expect(page.locator("#fullscreen")).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("Escape")
    expect(page.locator("#fullscreen")).to_have_attribute("aria-pressed", "false")


def test_the_legend_filters_families(server, page):
    everything = open_hub(server, page)
    page.get_by_role("button", name=f"Show all {LEAVES}").click()
    expect(page.locator("#nb-count")).to_have_text(re.compile(f"Showing {LEAVES} of"))
    causal = {n["family"] for n in everything["neighbors"] if n["predicate"] == "causes"}
    assert len(causal) == 1 and len({n["family"] for n in everything["neighbors"]}) == 2  # two families to tell apart
    fam = causal.pop()
    hidden_leaves = {n["node_id"] for n in everything["neighbors"] if n["family"] == fam}
    page.locator(f'#legend input[data-family="{fam}"]').uncheck()
    # cytoscape applies a batch's style changes on its next frame, not inside the change handler
    page.wait_for_function("(n) => window.kgGraph.cy().edges(':visible').length === n", arg=LEAVES - len(hidden_leaves))
    got = page.evaluate("""() => { const cy = window.kgGraph.cy();
        return {edges: cy.edges(':visible').length, nodes: cy.nodes(':visible').map((n) => n.id())}; }""")
    assert got["edges"] == LEAVES - len(hidden_leaves)
    assert set(got["nodes"]) == drawn(page) - hidden_leaves
    page.locator(f'#legend input[data-family="{fam}"]').check()
    page.wait_for_function("(n) => window.kgGraph.cy().edges(':visible').length === n", arg=LEAVES)


def test_a_click_on_a_node_opens_its_panel(server, page):
    open_hub(server, page)
    leaf = page.evaluate("""() => { const cy = window.kgGraph.cy(); const n = cy.nodes().filter((x) => !x.hasClass('seed'))[0];
        const box = document.getElementById('graph').getBoundingClientRect(); const p = n.renderedPosition();
        return {id: n.id(), label: n.data('name'), x: box.left + p.x, y: box.top + p.y}; }""")
    page.mouse.click(leaf["x"], leaf["y"])
    expect(page.locator("#node-info-title")).to_have_text(leaf["label"])
    expect(page.locator("#node-info .node-info-count")).to_contain_text("1 link drawn")
    expect(page.locator("#node-info")).to_contain_text(HUB)
    expect(page.locator("#node-title")).to_contain_text(leaf["label"])  # and it was expanded


def luminance(rgb: tuple[int, int, int]) -> float:
    def chan(c: int) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (chan(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def rgb(css: str) -> tuple[int, int, int]:
    r, g, b = (int(float(x)) for x in re.findall(r"[\d.]+", css)[:3])
    return r, g, b


def test_thirty_families_get_thirty_colours_that_stand_out(server, page):
    signed_in(page, server, "reader", "/ui/explore")
    page.wait_for_function("() => !!window.cytoscape && !!window.kgGraph")
    page.evaluate("() => { document.getElementById('node-panel').hidden = false; }")
    colours = page.evaluate("""async () => {
        const nb = {node: {id: 'c0', label: 'centre', kind: 'entity'}, total: 30, neighbors: []};
        for (let i = 1; i <= 30; i++) nb.neighbors.push({node_id: 'c' + i, label: 'n' + i, direction: 'out', predicate: 'p' + i,
            family: 'family ' + i, kind: 'statement', unit_id: 'cu' + i});
        await window.kgGraph.draw(nb, true);
        const probe = document.createElement('span'); document.body.append(probe);
        // each edge's family from the data drawn (edge ids are "e:<unit>:<node>"), its colour as the browser reads it
        const family = Object.fromEntries(nb.neighbors.map((n) => ['e:' + n.unit_id + ':' + n.node_id, n.family]));
        return window.kgGraph.cy().edges().map((e) => { probe.style.color = e.style('line-color'); return [family[e.id()], getComputedStyle(probe).color]; }); }""")
    by_family = dict(colours)
    assert len(by_family) == 30
    assert len(set(by_family.values())) == 30  # none repeats
    white = (255, 255, 255)
    assert min(contrast(rgb(c), white) for c in by_family.values()) >= 3.0


def test_the_focus_ring_stands_out_everywhere(server, page):
    """Every control reached by Tab on Ask, Explore and Documents: its outline against what is
    behind it (the nearest ancestor with a background) is 3:1 or more."""
    base = signed_in(page, server, "writer", "/ui/ask")
    checked = 0
    for path in ("/ui/ask", "/ui/explore", "/ui/documents"):
        page.goto(base + path)
        for _ in range(14):
            page.keyboard.press("Tab")
            got = page.evaluate("""() => { const e = document.activeElement; if (!e || e === document.body) return null;
                const s = getComputedStyle(e); let bg = 'rgba(0, 0, 0, 0)'; let a = e.parentElement;
                while (a) { const b = getComputedStyle(a).backgroundColor; if (!/rgba\\(.*, 0\\)$/.test(b) && b !== 'transparent') { bg = b; break; } a = a.parentElement; }
                return {what: e.outerHTML.slice(0, 80), style: s.outlineStyle, width: parseFloat(s.outlineWidth), colour: s.outlineColor, bg}; }""")
            if got is None:
                continue
            assert got["style"] != "none" and got["width"] >= 2, got
            assert contrast(rgb(got["colour"]), rgb(got["bg"])) >= 3.0, got
            checked += 1
    assert checked >= 30


def test_a_5000_node_graph_stays_steerable(server, page):
    signed_in(page, server, "reader", "/ui/explore")
    page.wait_for_function("() => !!window.cytoscape && !!window.kgGraph")
    page.evaluate("() => { document.getElementById('node-panel').hidden = false; }")
    page.evaluate("""async () => { const nbs = [];
        for (let i = 1; i < 5000; i++) nbs.push({node_id: 'b' + i, label: 'big ' + i, direction: i % 2 ? 'out' : 'in', predicate: 'r' + (i % 7),
            family: 'fam ' + (i % 7), kind: 'statement', unit_id: 'bu' + i});
        await window.kgGraph.draw({node: {id: 'b0', label: 'big hub', kind: 'entity'}, neighbors: nbs, total: nbs.length}, true); }""")
    s = cy_state(page)
    assert s["visible"] == 5000 and s["inView"] == 5000
    # labels wait for a zoom where they can be read: none laid out now but the centre's
    assert page.evaluate("""() => window.kgGraph.cy().nodes().filter((n) => n.style('label') !== '').map((n) => n.id())""") == ["b0"]
    page.evaluate("""() => { const cy = window.kgGraph.cy(); cy.zoom({level: 1.5, position: cy.getElementById('b2500').position()}); }""")
    page.wait_for_function("() => window.kgGraph.cy().getElementById('b2500').style('label') === 'big 2500'")
    in_view = page.evaluate("""() => { const cy = window.kgGraph.cy(); const e = cy.extent();
        const inside = cy.nodes().filter((n) => { const p = n.position(); return p.x >= e.x1 && p.x <= e.x2 && p.y >= e.y1 && p.y <= e.y2; });
        return [inside.length, inside.filter((n) => n.style('label') === n.data('label')).length]; }""")
    assert 0 < in_view[0] < 5000 and in_view[1] == in_view[0]
    page.get_by_role("button", name="Fit").click()
    s = cy_state(page)
    page.get_by_role("button", name="zoom in").click()
    assert math.isclose(cy_state(page)["zoom"], s["zoom"] * 1.25, rel_tol=1e-6)
    page.get_by_label("Layout").select_option("grid")
    assert len({round(y) for _, _, y in cy_state(page)["positions"]}) == math.ceil(5000 / math.ceil(math.sqrt(5000)))
    page.get_by_label("Layout").select_option("cose")  # too many for the force layout: it says so, moves nothing
    expect(page.locator("#layout-note")).to_contain_text("up to 300 nodes")
    start, end = drag_node(page, "b2500")  # a node still follows the mouse
    assert end["x"] > start["x"]

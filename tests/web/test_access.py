"""Keyboard only, labelled controls, the 390 px width and the README's screenshots, in a real
Chromium against the real server."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from playwright.sync_api import expect

from tests.web.conftest import ARTIFACTS, sign_in, signed_in

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = ("ask", "explore", "documents", "jobs", "admin")


def tab_to(page, selector: str, most: int = 30) -> None:
    """Press Tab until ``selector`` has the focus (fails after ``most`` presses)."""
    for _ in range(most):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement && document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


def test_keyboard_only_sign_in_ask_and_open_a_citation(server, page):
    base = server["base"]
    page.goto(base + "/")
    tab_to(page, "#key")
    page.keyboard.type(server["keys"]["reader"])
    page.keyboard.press("Enter")
    page.wait_for_url(base + "/ui/ask")
    tab_to(page, "#question")
    page.keyboard.type("What does smoking cause?")
    page.keyboard.press("Enter")
    expect(page.locator("button.citation").first).to_be_visible(timeout=90_000)
    tab_to(page, "button.citation")
    page.keyboard.press("Enter")
    expect(page.locator('#unit dd[data-field="notation"]')).to_contain_text("smoking")
    # the focused control is visibly marked
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"


def open_smoking_by_keyboard(server, page) -> None:
    """Sign in, search "smoking" and open the first hit, with the keyboard only."""
    signed_in(page, server, "reader", "/ui/explore")
    tab_to(page, "#search-q")
    page.keyboard.type("smoking")
    page.keyboard.press("Enter")
    expect(page.locator("button.hit").first).to_be_visible()
    tab_to(page, "button.hit")
    page.keyboard.press("Enter")


def test_keyboard_only_explore_search_and_open_a_node(server, page):
    open_smoking_by_keyboard(server, page)
    expect(page.locator("#node-title")).not_to_be_empty()
    expect(page.locator("#facts li").first).to_be_visible()  # the graph's neighbours, as text


def test_keyboard_only_expand_a_graph_node(server, page):
    """The neighbours list's "expand" buttons do what a click on the graph node does."""
    open_smoking_by_keyboard(server, page)
    expect(page.locator("#neighbours button.expand").first).to_be_visible()
    # a neighbour whose own neighbours are not all drawn yet (asked the way the page asks)
    target = page.evaluate("""async () => { const cy = window.kgGraph.cy();
        for (const b of document.querySelectorAll('#neighbours button.expand')) {
          const id = b.dataset.node;
          const nb = await (await fetch('/ui/v1/nodes/' + encodeURIComponent(id) + '/neighbors?limit=40')).json();
          const fresh = [...new Set(nb.neighbors.map((n) => n.node_id))].filter((n) => cy.getElementById(n).empty());
          if (fresh.length) return {id, label: nb.node.label, fresh, before: cy.nodes().length, name: b.getAttribute('aria-label')};
        }
        return null; }""")
    assert target, "no neighbour of the first hit has neighbours of its own to add"
    assert target["name"] == "expand " + target["label"]  # the button says which node it expands
    selector = f'#neighbours button.expand[data-node={json.dumps(target["id"])}]'
    tab_to(page, selector, most=80)
    # the focused button's node is the graph's visible selection
    assert page.evaluate("(id) => window.kgGraph.cy().getElementById(id).selected()", target["id"])
    page.keyboard.press("Enter")
    page.wait_for_function("(n) => window.kgGraph.cy().nodes().length > n", arg=target["before"])
    expect(page.locator("#node-title")).to_be_focused()
    expect(page.locator("#node-title")).to_contain_text(target["label"])
    got = page.evaluate("""(t) => { const cy = window.kgGraph.cy();
        return {missing: t.fresh.filter((n) => cy.getElementById(n).empty()), seed: cy.nodes('.seed').map((n) => n.id()),
                edges: cy.getElementById(t.id).connectedEdges().length}; }""", target)
    assert got["missing"] == [] and got["seed"] == [target["id"]]
    assert got["edges"] >= len(target["fresh"])  # joined to the node expanded
    expect(page.locator("#neighbours li").first).to_be_visible()  # the new node's neighbours, listed


def test_every_page_fits_390_px_and_labels_its_controls(server, page):
    sign_in(page, server["base"], server["keys"]["admin"])
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        for name in PAGES:
            page.goto(server["base"] + "/ui/" + name)
            page.wait_for_load_state("networkidle")
            over = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert over <= 1, f"/ui/{name} scrolls sideways by {over}px at {width}px"
            unlabelled = page.evaluate("""() => [...document.querySelectorAll('input, select, textarea')]
                .filter((e) => e.type !== 'hidden' && !(e.labels && e.labels.length) && !e.getAttribute('aria-label'))
                .map((e) => e.outerHTML)""")
            assert not unlabelled, f"/ui/{name}: controls without a label: {unlabelled}"


def test_readme_screenshots(server, page):
    """The README's pictures of Ask and Explore, made here; KG_WEB_README_SHOTS=1 also copies
    them into docs/ (how they are refreshed)."""
    page.set_viewport_size({"width": 1000, "height": 640})
    sign_in(page, server["base"], server["keys"]["reader"])
    page.get_by_label("Question").fill("What does smoking cause?")
    page.get_by_role("button", name="Ask").click()
    page.locator("button.citation").first.click(timeout=90_000)
    expect(page.locator('#unit dd[data-field="notation"]')).to_contain_text("smoking")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "web-ask.png"))
    page.goto(server["base"] + "/ui/explore")
    page.get_by_label("Search entry nodes").fill("smoking")
    page.get_by_role("button", name="Search").click()
    page.locator("button.hit", has_text="smoking").first.click()
    page.wait_for_function("() => window.kgGraph.cy() && window.kgGraph.cy().nodes().length > 1")
    page.locator("#node-panel").screenshot(path=str(ARTIFACTS / "web-explore.png"))
    readme = (DOCS.parent / "README.md").read_text("utf-8")
    for name in ("web-ask.png", "web-explore.png"):
        assert (ARTIFACTS / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"docs/{name}" in readme
        if os.environ.get("KG_WEB_README_SHOTS"):
            shutil.copyfile(ARTIFACTS / name, DOCS / name)


def test_cjk_labels_draw_as_glyphs(server, page):
    """Two different CJK characters drawn in the page's font differ pixel for pixel (a missing
    font draws both as the same empty box), on the page's text and on the graph's canvas font."""
    signed_in(page, server, "reader", "/ui/explore")
    same = page.evaluate("""() => {
      const font = '20px ' + getComputedStyle(document.body).fontFamily;
      const draw = (ch) => { const c = document.createElement('canvas'); c.width = 40; c.height = 40;
        const g = c.getContext('2d'); g.font = font; g.fillText(ch, 5, 30); return Array.from(g.getImageData(0, 0, 40, 40).data).join(','); };
      return [['茶', '飲'], ['吸', '烟'], ['の', 'み']].map(([a, b]) => draw(a) === draw(b));
    }""")
    assert same == [False, False, False]

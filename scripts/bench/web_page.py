"""The web page in a real browser (Debian's Chromium through Playwright), not a timed test.

1. Ask: time from pressing Ask to the first streamed round, to the answer's first text (the
   answer arrives in one SSE event, so "first answer token" is when its text is on screen) and
   to the full answer with its citations — for an uncached question and then the same question
   again (served from the in-memory answer front).
2. A neighbourhood graph of N nodes (default 2,000) drawn by the page's own cytoscape.js on the
   Explore page: time to first render (elements added, layout run, first frame painted) for the
   precomputed (preset) layout (``--cose``: also the page's force layout), then the frame rate while a
   node is dragged with the mouse.

    python scripts/bench/web_page.py [--nodes 2000] [--drag-seconds 3] [--cose]

Starts ``kg serve`` on the demo corpus (embedded backend, hash embedder, offline rules model)
in a temporary folder; prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.server.test_processes import env_for, kg, new_key, serving  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
QUESTION = "What does smoking cause?"

GRAPH_JS = """async ([n, layout]) => {
  const box = document.getElementById('bench-graph') || Object.assign(document.createElement('div'), {id: 'bench-graph'});
  box.style.width = '1200px'; box.style.height = '800px'; document.body.prepend(box);
  const els = [];
  for (let i = 0; i < n; i++) els.push({data: {id: 'n' + i, label: 'node ' + i},
    position: {x: (i % 50) * 24, y: Math.floor(i / 50) * 24}});
  for (let i = 1; i < n; i++) els.push({data: {id: 'e' + i, source: 'n' + Math.floor((i - 1) / 3), target: 'n' + i}});
  const t0 = performance.now();
  if (window.__cy) window.__cy.destroy();
  const cy = window.cytoscape({container: box, elements: els, layout: {name: layout, animate: false},
    style: [{selector: 'node', style: {label: 'data(label)', 'font-size': 6}},
            {selector: 'edge', style: {width: 1, 'curve-style': 'haystack'}}]});
  window.__cy = cy;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return performance.now() - t0;
}"""

FPS_START = """() => { window.__frames = 0; window.__counting = true;
  const tick = () => { if (!window.__counting) return; window.__frames++; requestAnimationFrame(tick); };
  requestAnimationFrame(tick); window.__t0 = performance.now(); }"""
FPS_STOP = "() => { window.__counting = false; return [window.__frames, performance.now() - window.__t0]; }"


def ask_times(page, question: str) -> dict:
    page.get_by_label("Question").fill(question)
    t0 = time.perf_counter()
    page.get_by_role("button", name="Ask").click()
    page.locator("#rounds li.round").first.wait_for(timeout=180_000)
    t_round = time.perf_counter()
    page.locator("#answer .answer-text, #answer .not-in-graph").first.wait_for(timeout=180_000)
    t_answer = time.perf_counter()
    page.locator("#citations li").first.wait_for(timeout=180_000)
    t_full = time.perf_counter()
    return {"first_round_ms": round((t_round - t0) * 1000, 1), "first_answer_text_ms": round((t_answer - t0) * 1000, 1),
            "full_answer_ms": round((t_full - t0) * 1000, 1)}


def say(out: dict) -> None:
    print(json.dumps(out), file=sys.stderr, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--drag-seconds", type=float, default=3.0)
    ap.add_argument("--cose", action="store_true", help="also time the force layout (cose) the page uses")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    out: dict = {"nodes": args.nodes, "load": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as tmp:
        env = env_for(Path(tmp) / "kg", KG_ALLOWED_HOSTS="127.0.0.1,localhost")
        assert kg(env, "ingest", str(ROOT / "demo" / "units")).returncode == 0
        key = new_key(env, "bench", "reader")
        with serving(env) as (base, _proc, _log), sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(base + "/ui/login")
            page.get_by_label("API key").fill(key)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(base + "/ui/ask")
            out["ask_uncached"] = ask_times(page, QUESTION)
            say(out)
            out["ask_cached"] = ask_times(page, QUESTION)
            say(out)
            page.goto(base + "/ui/explore")
            page.wait_for_function("() => !!window.cytoscape")
            out["graph_first_render_ms_preset"] = round(page.evaluate(GRAPH_JS, [args.nodes, "preset"]), 1)
            say(out)
            # drag the node nearest the middle of the drawn graph (preset layout again)
            page.evaluate(GRAPH_JS, [args.nodes, "preset"])
            pos = page.evaluate("""() => { const cy = window.__cy; cy.fit(); const box = document.getElementById('bench-graph').getBoundingClientRect();
                const n = cy.nodes()[Math.floor(cy.nodes().length / 2)]; const p = n.renderedPosition();
                return [box.left + p.x, box.top + p.y]; }""")
            page.mouse.move(pos[0], pos[1])
            page.mouse.down()
            page.evaluate(FPS_START)
            t_end = time.perf_counter() + args.drag_seconds
            step = 0
            while time.perf_counter() < t_end:
                step += 1
                page.mouse.move(pos[0] + 120 * ((step % 40) / 40), pos[1] + 60 * ((step % 20) / 20))
            frames, ms = page.evaluate(FPS_STOP)
            page.mouse.up()
            moved = page.evaluate("() => window.__cy.nodes()[Math.floor(window.__cy.nodes().length / 2)].position()")
            out["drag_fps"] = round(frames / (ms / 1000), 1)
            out["drag_mouse_moves"] = step
            out["dragged_node_position"] = moved
            say(out)
            if args.cose:  # the page's force layout on the same graph (slow at this size)
                out["graph_first_render_ms_cose"] = round(page.evaluate(GRAPH_JS, [args.nodes, "cose"]), 1)
            browser.close()
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

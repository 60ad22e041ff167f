"""The web page in a real browser (Debian's Chromium through Playwright), not a timed test.

1. Ask: time from pressing Ask to the first streamed round, to the answer's first text (the
   answer arrives in one SSE event, so "first answer token" is when its text is on screen) and
   to the full answer with its citations — once the server's background warm-up is done (its
   process idle) — for an uncached question (the process's first), the same question again
   (served from the in-memory answer front) and another uncached question.
2. A neighbourhood graph of N nodes (default 2,000; a hub, 40 topics, the rest off the topics) in
   the neighbours route's JSON shape, drawn side by side in one page, interleaved: *before* is the
   page's earlier cytoscape.js set-up (bezier edges, arrows and labels on every edge, ellipsis
   labels; preset layout, ``--cose``: the force layout it ran on every draw), *after* is the
   page's own drawing code (``window.kgGraph.draw``, the path of a click) with its phases from the
   page's performance marks. Time to first render = elements added, layout, first frame painted.
   Then the frame rate while the mouse drags a node, for each. Also the neighbours route's answer
   for a node with 1,000 neighbours (bytes, fetch time).

    python scripts/bench/web_page.py [--nodes 2000] [--repeat 3] [--drag-seconds 3] [--cose] [--skip-ask]
    python scripts/bench/web_page.py --old /tmp/kg-main --sizes 1000,5000 [--repeat 5]

4. ``--sigma DIR`` (a folder holding sigma.js's ``sigma.min.js`` and graphology's
   ``graphology.umd.min.js``, e.g. from ``npm pack sigma@3 graphology``; nothing is vendored): the
   same neighbourhoods drawn by sigma.js (WebGL; software rendering in headless Chromium without a
   GPU) beside the page's cytoscape drawing, alternated in one page: first render, and the frame
   rate while the camera zooms.

3. ``--old TREE`` (a checkout of another version, e.g. ``git worktree add /tmp/kg-main main``):
   today's page and this one side by side. Two ``kg serve`` on one store's copy, one per tree,
   one browser; each size's first render (``window.kgGraph.draw``, the code path of a click)
   alternates between the two pages, so both see the same load. Prints the median per size and
   the ratio new / old; the load average before and after.

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

from tests.processes import env_for, kg, new_key, serving  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
QUESTION = "What does smoking cause?"
OTHER_QUESTION = "Who created Python?"  # uncached too, asked once the process has answered one

# A neighbourhood answer of n nodes in the neighbours route's shape: a hub, 40 topics around it and
# the rest hanging off the topics, six predicate families, some CJK and long labels.
NEIGHBOURHOOD_JS = """(n) => {
  const fams = ['causal', 'taxonomic', 'part', 'temporal', 'attribute', 'other'];
  const nbs = [];
  for (let i = 1; i < n; i++) nbs.push({node_id: 'n' + i, label: (i % 7 ? 'node ' + i : '節点 ' + i + ' with a rather long label that the page shortens'),
    direction: i % 3 ? 'out' : 'in', predicate: 'rel' + (i % 6), family: fams[i % 6], kind: 'statement', unit_id: 'u' + i});
  return {node: {id: 'n0', label: 'hub', kind: 'entity'}, neighbors: nbs, total: nbs.length};
}"""

# The page's graph before this change, reproduced: its cytoscape style (bezier edges with arrows
# and labels on every edge, ellipsis labels) on the same positions, preset layout — or, with
# ``--cose``, the force layout the page then ran on every draw.
BEFORE_JS = """async ([nb, layout]) => {
  const box = document.getElementById('bench-before') || Object.assign(document.createElement('div'), {id: 'bench-before'});
  box.style.width = '1200px'; box.style.height = '800px'; document.body.prepend(box);
  const els = [{data: {id: nb.node.id, label: nb.node.label}, position: {x: 0, y: 0}}];
  nb.neighbors.forEach((n, k) => { const r = 40 + 22 * Math.sqrt(k + 1), a = (k + 1) * Math.PI * (3 - Math.sqrt(5));
    els.push({data: {id: n.node_id, label: n.label}, position: {x: r * Math.cos(a), y: r * Math.sin(a)}});
    els.push({data: {id: 'e' + n.unit_id, source: n.direction === 'out' ? nb.node.id : n.node_id, target: n.direction === 'out' ? n.node_id : nb.node.id, label: n.predicate, colour: '#1f77b4'}}); });
  const t0 = performance.now();
  if (window.__before) window.__before.destroy();
  const cy = window.cytoscape({container: box, elements: els, layout: {name: layout, animate: false}, style: [
      { selector: "node", style: { label: "data(label)", "font-size": 10, "background-color": "#557", color: "#111", "text-wrap": "ellipsis", "text-max-width": 120 } },
      { selector: "edge", style: { width: 1.5, "curve-style": "bezier", "target-arrow-shape": "triangle", "line-color": "data(colour)", "target-arrow-color": "data(colour)", label: "data(label)", "font-size": 8 } } ]});
  window.__before = cy;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return performance.now() - t0;
}"""

# The page's own drawing (window.kgGraph.draw: the code path of a click) into its #graph box,
# with the page's own performance marks for the phases.
AFTER_JS = """async (nb) => {
  document.getElementById('node-panel').hidden = false;
  const box = document.getElementById('graph'); box.style.width = '1200px'; box.style.height = '800px';
  performance.clearMeasures();
  const t0 = performance.now();
  await window.kgGraph.draw(nb, true);
  const total = performance.now() - t0;
  const ph = {}; for (const m of performance.getEntriesByType('measure')) if (m.name.startsWith('kg-graph-')) ph[m.name.slice(9)] = Math.round(m.duration * 10) / 10;
  return {ms: total, phases: ph};
}"""

FPS_START = """() => { window.__frames = 0; window.__counting = true;
  const tick = () => { if (!window.__counting) return; window.__frames++; requestAnimationFrame(tick); };
  requestAnimationFrame(tick); window.__t0 = performance.now(); }"""
FPS_STOP = "() => { window.__counting = false; return [window.__frames, performance.now() - window.__t0]; }"


ROUTE_JS = """async (label) => {
  const hits = await (await fetch('/ui/v1/search', {method: 'POST', credentials: 'same-origin',
    headers: {'Content-Type': 'application/json', 'X-CSRF-Token': document.querySelector('meta[name=csrf-token]').content},
    body: JSON.stringify({query: label, top_k: 1})})).json();
  const t0 = performance.now();
  const r = await fetch('/ui/v1/nodes/' + encodeURIComponent(hits[0].node_id) + '/neighbors?limit=1000', {credentials: 'same-origin'});
  const text = await r.text();
  const t1 = performance.now();
  const nb = JSON.parse(text);
  return {neighbours: nb.neighbors.length, bytes: text.length, fetch_ms: Math.round((t1 - t0) * 10) / 10};
}"""


def drag(page, cy_js: str, box_id: str, seconds: float) -> dict:
    """Frames painted while the mouse drags the node nearest the middle of the drawn graph."""
    pos = page.evaluate(f"""() => {{ const cy = ({cy_js})(); const box = document.getElementById('{box_id}').getBoundingClientRect();
        const n = cy.nodes()[Math.floor(cy.nodes().length / 2)]; const p = n.renderedPosition();
        window.__dragged = n.id(); window.__from = Object.assign({{}}, n.position());
        return [box.left + p.x, box.top + p.y]; }}""")
    page.mouse.move(pos[0], pos[1])
    page.mouse.down()
    page.evaluate(FPS_START)
    t_end = time.perf_counter() + seconds
    step = 0
    while time.perf_counter() < t_end:
        step += 1
        page.mouse.move(pos[0] + 120 * ((step % 40) / 40), pos[1] + 60 * ((step % 20) / 20))
    frames, ms = page.evaluate(FPS_STOP)
    page.mouse.up()
    moved = page.evaluate(f"() => {{ const p = ({cy_js})().getElementById(window.__dragged).position(); return Math.hypot(p.x - window.__from.x, p.y - window.__from.y); }}")
    return {"fps": round(frames / (ms / 1000), 1), "mouse_moves": step, "node_moved_px": round(moved, 1)}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_idle(pid: int, timeout: float = 300.0) -> float:
    """Seconds until the server process uses under a tenth of a core for a second (its
    background warm-up is done), so the first question measures the answer, not the start."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        c0 = cpu_seconds(pid)
        time.sleep(1.0)
        if cpu_seconds(pid) - c0 < 0.1:
            break
    return round(time.perf_counter() - t0, 1)


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


def sign_in(browser, base: str, key: str):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(base + "/ui/login")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(base + "/ui/ask")
    page.goto(base + "/ui/explore")
    page.wait_for_function("() => !!window.cytoscape && !!window.kgGraph")
    return page


def side_by_side(old_tree: Path, sizes: list[int], repeat: int) -> dict:
    """First renders of ``sizes``-node neighbourhoods in the page of ``old_tree`` and in this
    one, alternated in one browser (a fresh draw each time, reset=true)."""
    import statistics

    from playwright.sync_api import sync_playwright

    out: dict = {"load_before": os.getloadavg()[0], "old_tree": str(old_tree), "sizes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        env = env_for(Path(tmp) / "kg", KG_ALLOWED_HOSTS="127.0.0.1,localhost")
        assert kg(env, "ingest", str(ROOT / "demo" / "units")).returncode == 0
        key = new_key(env, "bench", "reader")
        old_env = dict(env, PYTHONPATH=str(old_tree), KG_DATA_DIR=str(Path(tmp) / "kg-old"))
        import shutil

        shutil.copytree(Path(tmp) / "kg", Path(tmp) / "kg-old")  # its own copy: one server per store
        new_env = dict(env, PYTHONPATH=str(ROOT))
        with serving(old_env) as (old_base, _p1, _l1), serving(new_env) as (new_base, _p2, _l2), sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            pages = {"old": sign_in(browser, old_base, key), "new": sign_in(browser, new_base, key)}
            for n in sizes:
                nb = pages["new"].evaluate(NEIGHBOURHOOD_JS, n)
                got: dict[str, list[float]] = {"old": [], "new": []}
                phases: dict[str, dict] = {}
                for _ in range(repeat):
                    for side in ("old", "new"):
                        r = pages[side].evaluate(AFTER_JS, nb)
                        got[side].append(round(r["ms"], 1))
                        phases[side] = r["phases"]
                out["sizes"][n] = {"old_ms": got["old"], "new_ms": got["new"],
                                   "old_median_ms": statistics.median(got["old"]),
                                   "new_median_ms": statistics.median(got["new"]),
                                   "new_over_old": round(statistics.median(got["new"]) / statistics.median(got["old"]), 3),
                                   "phases_last": phases, "load": os.getloadavg()[0]}
                say(out)
            browser.close()
    out["load_after"] = os.getloadavg()[0]
    return out


SIGMA_JS = """async (nb) => {
  const box = document.getElementById('bench-sigma') || Object.assign(document.createElement('div'), {id: 'bench-sigma'});
  box.style.width = '1200px'; box.style.height = '800px'; document.body.prepend(box);
  if (window.__sigma) { window.__sigma.kill(); window.__sigma = null; }
  const t0 = performance.now();
  const g = new window.graphology.Graph({multi: true});
  const golden = Math.PI * (3 - Math.sqrt(5));
  g.addNode(nb.node.id, {x: 0, y: 0, size: 6, label: nb.node.label, color: '#000'});
  nb.neighbors.forEach((n, k) => { const r = 40 + 22 * Math.sqrt(k + 1), a = (k + 1) * golden;
    if (!g.hasNode(n.node_id)) g.addNode(n.node_id, {x: r * Math.cos(a), y: r * Math.sin(a), size: 3, label: n.label.slice(0, 40), color: '#557'});
    g.addEdge(n.direction === 'out' ? nb.node.id : n.node_id, n.direction === 'out' ? n.node_id : nb.node.id, {color: '#1f77b4', size: 1}); });
  window.__sigma = new window.Sigma(g, box, {renderEdgeLabels: false, labelRenderedSizeThreshold: 8});
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return performance.now() - t0;
}"""

ZOOM_FPS_JS = """async ([which, ms]) => {
  let frames = 0, on = true; const tick = () => { if (!on) return; frames++; requestAnimationFrame(tick); }; requestAnimationFrame(tick);
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    const f = 1 + 0.1 * Math.sin((performance.now() - t0) / 200);
    if (which === 'sigma') { const c = window.__sigma.getCamera(); c.setState({ratio: f}); }
    else { const cy = window.kgGraph.cy(); cy.zoom({level: cy.zoom() * (f > 1 ? 1.01 : 0.99), renderedPosition: {x: 600, y: 400}}); }
    await new Promise((r) => requestAnimationFrame(r));
  }
  on = false; return frames / ((performance.now() - t0) / 1000);
}"""


def sigma_vs_cytoscape(folder: Path, sizes: list[int], repeat: int) -> dict:
    """sigma.js + graphology (from ``folder``, served same-origin so the page's CSP allows them)
    beside the page's own cytoscape drawing, alternated in one page."""
    import statistics

    from playwright.sync_api import sync_playwright

    out: dict = {"load_before": os.getloadavg()[0], "sizes": {}}
    files = {"sigma.min.js": (folder / "sigma.min.js").read_bytes(),
             "graphology.umd.min.js": (folder / "graphology.umd.min.js").read_bytes()}
    with tempfile.TemporaryDirectory() as tmp:
        env = env_for(Path(tmp) / "kg", KG_ALLOWED_HOSTS="127.0.0.1,localhost")
        assert kg(env, "ingest", str(ROOT / "demo" / "units")).returncode == 0
        key = new_key(env, "bench", "reader")
        with serving(env) as (base, _proc, _log), sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = sign_in(browser, base, key)
            page.route(base + "/ui/static/bench/*", lambda r: r.fulfill(
                body=files[r.request.url.rsplit("/", 1)[1]], content_type="application/javascript"))
            for name in ("graphology.umd.min.js", "sigma.min.js"):
                page.add_script_tag(url=base + "/ui/static/bench/" + name)
            page.evaluate("() => { document.getElementById('node-panel').hidden = false; const b = document.getElementById('graph'); b.style.width = '1200px'; b.style.height = '800px'; }")
            for n in sizes:
                nb = page.evaluate(NEIGHBOURHOOD_JS, n)
                got: dict[str, list[float]] = {"cytoscape": [], "sigma": []}
                for _ in range(repeat):
                    got["cytoscape"].append(round(page.evaluate(AFTER_JS, nb)["ms"], 1))
                    got["sigma"].append(round(page.evaluate(SIGMA_JS, nb), 1))
                fps = {"cytoscape": round(page.evaluate(ZOOM_FPS_JS, ["cytoscape", 3000]), 1),
                       "sigma": round(page.evaluate(ZOOM_FPS_JS, ["sigma", 3000]), 1)}
                out["sizes"][n] = {**{f"{k}_ms": v for k, v in got.items()},
                                   **{f"{k}_median_ms": statistics.median(v) for k, v in got.items()},
                                   "zoom_fps": fps, "load": os.getloadavg()[0]}
                say(out)
            browser.close()
    out["load_after"] = os.getloadavg()[0]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--drag-seconds", type=float, default=3.0)
    ap.add_argument("--repeat", type=int, default=3, help="first renders per side (interleaved)")
    ap.add_argument("--skip-ask", action="store_true", help="only the graph")
    ap.add_argument("--cose", action="store_true", help="also time the force layout the page used before")
    ap.add_argument("--old", type=Path, help="a checkout of another version: its page beside this one (see 3.)")
    ap.add_argument("--sizes", default="1000,5000", help="node counts for --old / --sigma, comma-separated")
    ap.add_argument("--sigma", type=Path, help="a folder with sigma.min.js and graphology.umd.min.js (see 4.)")
    args = ap.parse_args()
    if args.sigma:
        print(json.dumps(sigma_vs_cytoscape(args.sigma, [int(x) for x in args.sizes.split(",")], args.repeat), indent=2))
        return
    if args.old:
        print(json.dumps(side_by_side(args.old.resolve(), [int(x) for x in args.sizes.split(",")], args.repeat), indent=2))
        return
    from playwright.sync_api import sync_playwright

    out: dict = {"nodes": args.nodes, "load": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as tmp:
        env = env_for(Path(tmp) / "kg", KG_ALLOWED_HOSTS="127.0.0.1,localhost")
        hub = Path(tmp) / "hub.units"  # a node with 1,000 neighbours, for the neighbours route's answer size
        hub.write_text("".join(f"#hub{i} {{bench hub}} [has] {{bench leaf {i}}}\n" for i in range(1000)), "utf-8")
        assert kg(env, "ingest", str(ROOT / "demo" / "units"), str(hub)).returncode == 0
        key = new_key(env, "bench", "reader")
        with serving(env) as (base, proc, _log), sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(base + "/ui/login")
            page.get_by_label("API key").fill(key)
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(base + "/ui/ask")
            if not args.skip_ask:
                out["server_warm_up_s"] = wait_idle(proc.pid)
                out["load_ask"] = os.getloadavg()[0]
                out["ask_uncached"] = ask_times(page, QUESTION)
                say(out)
                out["ask_cached"] = ask_times(page, QUESTION)
                say(out)
                out["ask_uncached_second_question"] = ask_times(page, OTHER_QUESTION)
                say(out)
            page.goto(base + "/ui/explore")
            page.wait_for_function("() => !!window.cytoscape && !!window.kgGraph")
            out["neighbours_route"] = page.evaluate(ROUTE_JS, "bench hub")
            say(out)
            nb = page.evaluate(NEIGHBOURHOOD_JS, args.nodes)
            out["nb_json_bytes"] = len(json.dumps(nb))
            before, after = [], []
            for _ in range(args.repeat):  # interleaved, so both see the same machine load
                before.append(round(page.evaluate(BEFORE_JS, [nb, "preset"]), 1))
                page.evaluate("() => { window.__before.destroy(); window.__before = null; document.getElementById('bench-before').remove(); }")
                after.append(page.evaluate(AFTER_JS, nb))
            out["before_first_render_ms_preset"] = before
            out["after_first_render_ms"] = [round(a["ms"], 1) for a in after]
            out["after_phases_ms"] = after[-1]["phases"]
            out["load_graph"] = os.getloadavg()[0]
            say(out)
            page.evaluate(BEFORE_JS, [nb, "preset"])
            out["before_drag"] = drag(page, "() => window.__before", "bench-before", args.drag_seconds)
            page.evaluate("() => { window.__before.destroy(); window.__before = null; document.getElementById('bench-before').remove(); }")
            page.evaluate("() => window.kgGraph.cy().fit()")
            out["after_drag"] = drag(page, "() => window.kgGraph.cy()", "graph", args.drag_seconds)
            say(out)
            if args.cose:  # the force layout the page ran on every draw before (minutes at this size)
                out["before_first_render_ms_cose"] = round(page.evaluate(BEFORE_JS, [nb, "cose"]), 1)
            browser.close()
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

// The page's own script (no inline script: the CSP allows only files from /ui/static).
// Every text from the server goes in with textContent, never innerHTML.
"use strict";
(function () {
  const csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  // "/w/<name>" when the page was opened under a workspace's prefix: every request stays in it
  const base = document.body.dataset.base || "";
  const $ = (id) => document.getElementById(id);
  function el(tag, text, attrs) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  }
  async function api(path, body) {
    const opts = { method: body === undefined ? "GET" : "POST", credentials: "same-origin",
                   headers: { "X-CSRF-Token": csrf, "Accept": "application/json" } };
    if (body !== undefined) { opts.headers["Content-Type"] = "application/json"; opts.body = JSON.stringify(body); }
    const r = await fetch(base + "/ui/v1" + path, opts);
    const data = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(data.detail ? (typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail)) : r.statusText);
    return data;
  }

  // htmx requests (the job list) carry the CSRF header too
  document.body.addEventListener("htmx:configRequest", (e) => { e.detail.headers["X-CSRF-Token"] = csrf; });

  // -- Ask ------------------------------------------------------------------------------------
  // The cited unit: notation, document and line range with the source lines (the cited ones
  // highlighted) where the server keeps them, and what it supersedes / is superseded by.
  function unitLinks(ids) {
    const dd = el("dd");
    if (!ids || !ids.length) { dd.textContent = "—"; return dd; }
    ids.forEach((id, i) => {
      const b = el("button", "#" + id, { type: "button", class: "unit-link", "data-unit": id });
      b.addEventListener("click", () => showUnit(id)); if (i) dd.append(", "); dd.append(b);
    });
    return dd;
  }
  function linesOf(u) {
    const l = u.lines;
    if (!l) return null;
    if (Array.isArray(l)) return [Number(l[0]), Number(l[l.length - 1])];
    if (typeof l === "object") return [Number(l.start ?? l.first), Number(l.end ?? l.last ?? l.start)];
    const m = String(l).match(/(\d+)(?:\D+(\d+))?/); return m ? [Number(m[1]), Number(m[2] || m[1])] : null;
  }
  function sourceBlock(u, range) {
    const text = u.snippet ?? u.source ?? u.source_text;
    if (!text) return null;
    const pre = el("pre", null, { class: "source", "aria-label": "source lines" });
    const first = u.snippet_first_line ?? (range ? range[0] : 1);
    String(text).split("\n").forEach((line, i) => {
      const n = first + i; const hit = range ? n >= range[0] && n <= range[1] : true;
      const row = el(hit ? "mark" : "span", null, { class: "src-line" + (hit ? " cited" : ""), "data-line": String(n) });
      row.append(el("span", String(n).padStart(4, " ") + "  ", { class: "ln" }), document.createTextNode(line + "\n"));
      pre.append(row);
    });
    return pre;
  }
  async function showUnit(id) {
    const dl = $("unit"); dl.replaceChildren(); $("unit-panel").hidden = false;
    const src = $("unit-source"); if (src) src.replaceChildren();
    let u;
    try { u = await api("/units/" + encodeURIComponent(id)); }
    catch (err) {
      const missing = /no unit|404|not found/i.test(err.message);
      dl.append(el("dd", missing ? "#" + id + " is not in the graph (it may have been retracted or forgotten)." : "Could not open the unit: " + err.message,
                   { class: missing ? "not-in-graph" : "error" }));
      return;
    }
    try {  // where the statement came from (the lifecycle's provenance: document, lines, source lines)
      const r = await fetch(base + "/ui/provenance/" + encodeURIComponent(u.unit_id), { credentials: "same-origin", headers: { Accept: "application/json" } });
      const pv = r.ok ? await r.json() : { sources: [] };
      const first = (pv.sources || [])[0];
      if (first) { u.doc = first.doc; u.lines = first.lines; u.snippet = first.snippet; u.location = first.location; u.page = first.page; u.other_docs = pv.sources.slice(1).map((x) => x.doc); }
    } catch (err) { /* the unit's own doc field stays */ }
    const range = linesOf(u);
    const rows = [["unit", "#" + u.unit_id, "unit_id"], ["notation", u.notation, "notation"],
                  ["document", u.doc || "—", "doc"], ["lines", u.page ? u.location : range ? (range[0] === range[1] ? "line " + range[0] : "lines " + range[0] + "–" + range[1]) : "not recorded", "lines"],
                  ["family", u.family, "family"], ["kind", u.kind, "kind"], ["ingested", u.ingested_at || "—", "ingested_at"]];
    for (const [label, v, k] of rows) dl.append(el("dt", label), el("dd", v, { "data-field": k }));
    if (u.other_docs && u.other_docs.length) dl.append(el("dt", "also stated by"), el("dd", u.other_docs.join(", "), { "data-field": "other_docs" }));
    for (const [label, k] of [["supersedes", "supersedes"], ["superseded by", "superseded_by"]]) {
      const dd = unitLinks(u[k]); dd.setAttribute("data-field", k); dl.append(el("dt", label), dd);
    }
    if (u.superseded_by && u.superseded_by.length) dl.append(el("dd", "A newer unit supersedes this one: answers use the newer one.", { class: "note" }));
    const block = sourceBlock(u, range);
    if (src) src.replaceChildren(block || el("p", u.doc ? "The source text of " + u.doc + " is not kept on this server." : "This unit has no source document.", { class: "note" }));
    if (u.doc && $("unit-doc-link")) { const a = $("unit-doc-link"); a.hidden = false; a.href = base + "/ui/documents?doc=" + encodeURIComponent(u.doc) + (range ? "&lines=" + range[0] + "-" + range[1] + "#L" + range[0] : ""); }
  }
  // A drill-down round as a sentence ("Round 1 (directed): looked at 12 new facts around smoking;
  // 3 relevant; enough"), not its JSON; the seeds' labels are looked up once each.
  const labels = new Map();
  function labelOf(id) {
    if (!labels.has(id)) labels.set(id, api("/nodes/" + encodeURIComponent(id)).then((n) => n.label).catch(() => id));
    return labels.get(id);
  }
  async function roundText(d) {
    const seeds = Object.keys(d.seeds || {});
    const names = await Promise.all(seeds.slice(0, 3).map(labelOf));
    const around = names.join(", ") + (seeds.length > 3 ? " and " + (seeds.length - 3) + " more" : "");
    const n = (d.new_units || []).length; const dec = d.decision || {};
    const parts = ["Round " + d.round + (d.mode ? " (" + d.mode + ")" : "") + ": looked at " + n + " new fact" + (n === 1 ? "" : "s") +
                   (around ? " around " + around : "")];
    if (dec.relevant) parts.push(dec.relevant.length + " relevant");
    if (dec.enough === true) parts.push("enough");
    else if (dec.enough === false) parts.push("not enough yet" + ((dec.next_seeds || []).length ? ": next around " + dec.next_seeds.slice(0, 3).join(", ") : ""));
    if (dec.drift) parts.push("drifted off the question");
    if (dec.reason) parts.push(dec.reason);
    if (d.note) parts.push(d.note);
    return parts.join("; ");
  }
  function showAnswer(a) {
    const box = $("answer"); box.replaceChildren();
    if (String(a.stop_reason || "").startsWith("no model configured")) box.append(el("p", "No model is configured: these are the graph's best-matching units, cited, not a written answer.", { class: "note no-model" }));
    if (!a.found) { box.append(el("p", "Not in the graph: the knowledge base has no units that answer this.", { class: "not-in-graph" })); }
    const number = Object.fromEntries((a.cited || []).map((id, i) => [id, i + 1]));
    // the short answer (a name, number or date: what the question asked for) above the sentences
    if (a.found && a.short_answer) box.append(shortAnswer(a.short_answer, "short-answer"));
    if (a.found) {
      // the answer's [unit-id] markers become numbered citation links (text stays text)
      const p = el("p", null, { class: "answer-text" });
      a.answer.split(/\[([^\]\s]+)\]/).forEach((part, i) => {
        if (i % 2 === 1 && part in number) {
          const b = el("button", "[" + number[part] + "]", { type: "button", class: "cite-ref", "data-unit": part, "aria-label": "citation " + number[part] });
          b.addEventListener("click", () => showUnit(part)); p.append(b);
        } else p.append(document.createTextNode(i % 2 === 1 ? "[" + part + "]" : part));
      });
      box.append(p);
    }
    const ol = $("citations"); ol.replaceChildren();
    const texts = Object.fromEntries((a.hit_units || []).map((h) => [h.id, h.unit]));
    (a.cited || []).forEach((id, i) => {
      const li = el("li"); const b = el("button", "[" + (i + 1) + "] " + (texts[id] || id), { type: "button", class: "citation", "data-unit": id });
      b.addEventListener("click", () => showUnit(id)); li.append(b); ol.append(li);
    });
  }
  function shortAnswer(text, cls) {
    const p = el("p", null, { class: cls });
    p.append(el("span", "Answer: ", { class: "short-label" }), el("strong", text, { class: "short-text" }));
    return p;
  }
  // The answer as the model writes it (answer_start / answer_short / answer_text / answer_cite / answer_check
  // events): a draft marked "not yet checked", its citations linked as soon as each id is whole.
  // The checked answer (the `answer` event) always replaces it; a draft the grounded check
  // refused is marked so at once, and the checked answer says that it replaced it.
  const draft = { el: null, attempt: 0, refused: null };
  function draftSentence(i) {
    let s = draft.el.querySelector('[data-sentence="' + i + '"]');
    if (!s) {
      s = el("span", null, { class: "draft-sentence", "data-sentence": String(i) });
      s.append(el("span", null, { class: "draft-text" }), el("span", null, { class: "draft-cites" }));
      draft.el.querySelector(".draft-body").append(i ? " " : "", s);
    }
    return s;
  }
  function onDraft(ev, d) {
    const box = $("answer");
    if (ev === "answer_start") {
      const again = draft.refused !== null;
      draft.attempt = d.attempt;
      draft.el = el("div", null, { class: "answer-draft", "data-attempt": String(d.attempt) });
      draft.el.append(el("p", again ? "The previous draft did not pass the grounding check (" + draft.refused + "); the model is writing another, not yet checked:"
                                    : "The model is writing the answer (not yet checked against the cited facts):", { class: "note draft-state" }),
                      el("p", null, { class: "draft-body" }));
      const short = shortAnswer("", "short-answer draft-short"); short.hidden = true;
      draft.el.querySelector(".draft-body").before(short);
      box.setAttribute("aria-busy", "true"); box.replaceChildren(draft.el);
      return;
    }
    if (!draft.el || d.attempt !== draft.attempt) return;
    if (ev === "answer_short") {
      const short = draft.el.querySelector(".draft-short"); short.hidden = false;
      const t = short.querySelector(".short-text"); t.append(document.createTextNode(d.text));
    } else if (ev === "answer_text") {
      const t = draftSentence(d.sentence).querySelector(".draft-text");
      t.textContent = t.textContent + d.text;
    } else if (ev === "answer_cite") {
      const c = draftSentence(d.sentence).querySelector(".draft-cites");
      if (d.resolved) {
        const b = el("button", "[" + d.number + "]", { type: "button", class: "cite-ref draft-cite", "data-unit": d.unit,
                                                       "aria-label": "citation " + d.number, title: d.text || d.unit });
        b.addEventListener("click", () => showUnit(d.unit)); c.append(" ", b);
      } else c.append(" ", el("span", "[" + d.unit + "?]", { class: "cite-unknown", title: "not among the facts found for this question" }));
    } else if (ev === "answer_check") {
      const state = draft.el.querySelector(".draft-state");
      if (d.passed) { draft.refused = null; state.textContent = "Checked: every sentence is grounded in the facts it cites."; draft.el.classList.add("checked"); }
      else {
        draft.refused = (d.problems || []).slice(0, 2).join("; ") || "ungrounded";
        state.textContent = "This draft did not pass the grounding check and will not be kept: " + draft.refused;
        draft.el.classList.add("refused");
      }
    }
  }
  function finalAnswer(d) {
    const refused = draft.el !== null && draft.refused !== null;
    showAnswer(d);
    if (refused) $("answer").prepend(el("p", "The streamed draft did not pass the grounding check (" + draft.refused + "), so it was replaced by this checked answer.", { class: "note stream-replaced", role: "status" }));
    $("answer").setAttribute("aria-busy", "false");
  }
  async function ask(question) {
    draft.el = null; draft.attempt = 0; draft.refused = null;
    $("rounds").replaceChildren(); $("answer").replaceChildren(el("p", "Asking…")); $("citations").replaceChildren();
    const r = await fetch(base + "/ui/v1/ask", { method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "text/event-stream", "X-CSRF-Token": csrf },
      body: JSON.stringify({ question }) });
    if (!r.ok) { const d = await r.json().catch(() => ({})); $("answer").replaceChildren(el("p", "Error: " + (d.detail || r.statusText), { class: "error" })); return; }
    const reader = r.body.getReader(); const dec = new TextDecoder(); let buf = "";
    for (;;) {
      const { value, done } = await reader.read(); if (done) break;
      buf += dec.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i); buf = buf.slice(i + 2);
        let ev = "message", data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) ev = line.slice(6).trim();
          else if (line.startsWith("data:")) data += line.slice(5).trim();
        }
        const d = data ? JSON.parse(data) : {};
        if (ev === "round") { const li = el("li", "Round " + d.round + "…", { class: "round" }); $("rounds").append(li); roundText(d).then((t) => { li.textContent = t; }); }
        else if (ev.startsWith("answer_")) onDraft(ev, d);
        else if (ev === "answer") finalAnswer(d);
        else if (ev === "error") { $("answer").replaceChildren(el("p", "Error: " + d.detail, { class: "error" })); $("answer").setAttribute("aria-busy", "false"); }
      }
    }
    if ($("answer").getAttribute("aria-busy") === "true") {  // the stream ended before the checked answer
      $("answer").replaceChildren(el("p", "The connection ended before the answer was checked; the unchecked draft is not shown. Ask again.", { class: "error" }));
      $("answer").setAttribute("aria-busy", "false");
    }
  }
  if ($("ask-form")) $("ask-form").addEventListener("submit", (e) => { e.preventDefault(); ask($("question").value).catch((err) => $("answer").replaceChildren(el("p", "Error: " + err.message, { class: "error" }))); });

  // -- Explore --------------------------------------------------------------------------------
  // Family colours: golden-angle hues (no two families share one, however many there are), at a
  // lightness that keeps every line and swatch at 3.8:1 or more against the white graph.
  const familyColour = {};
  function colourOf(f) {
    if (!(f in familyColour)) {
      const i = Object.keys(familyColour).length;
      familyColour[f] = "hsl(" + ((i * 137.508) % 360).toFixed(1) + ", 65%, " + (i % 2 ? 25 : 32) + "%)";
    }
    return familyColour[f];
  }
  const hiddenFamilies = new Set();  // the legend's filter: families whose links are not drawn
  let cy = null;
  // Above this many nodes the graph keeps the spiral placement (a force layout over thousands of
  // nodes is far too slow in a browser) and draws lighter edges; labels always wait for a zoom
  // where they are readable, so a large graph paints dots and lines first.
  const FORCE_MAX = 150;
  const GOLDEN = Math.PI * (3 - Math.sqrt(5));
  function shortLabel(s) { const cs = Array.from(String(s)); return cs.length > 40 ? cs.slice(0, 39).join("") + "…" : cs.join(""); }
  function mode() { const m = document.querySelector('input[name="mode"]:checked'); return m ? m.value : "directed"; }
  function ensureGraph() {
    if (cy || !window.cytoscape) return cy;
    cy = window.cytoscape({ container: $("graph"), elements: [], pixelRatio: 1, motionBlur: false,
      textureOnViewport: true, hideEdgesOnViewport: true, style: [
      { selector: "node", style: { label: "data(label)", "font-size": 10, "min-zoomed-font-size": 8, "background-color": "#557", color: "#111", width: 14, height: 14 } },
      { selector: "node.active", style: { "background-color": "#e6550d", width: "mapData(act, 0, 1, 18, 48)", height: "mapData(act, 0, 1, 18, 48)" } },
      { selector: "node.seed", style: { "background-color": "#000", "border-width": 3, "border-color": "#fc0" } },
      { selector: "node:selected", style: { "border-width": 4, "border-color": "#04c", "font-weight": "bold" } },
      { selector: "edge", style: { width: 1.5, "curve-style": "straight", "target-arrow-shape": "triangle", "arrow-scale": 0.8, "line-color": "data(colour)", "target-arrow-color": "data(colour)", label: "data(label)", "font-size": 8, "min-zoomed-font-size": 9 } },
      { selector: "edge.on-path", style: { width: 3 } },
      { selector: "edge.light", style: { "curve-style": "haystack", "haystack-radius": 0, "target-arrow-shape": "none", label: "" } },
      { selector: "node.nolabel", style: { label: "" } },
      { selector: "node.seed, node:selected", style: { label: "data(label)" } },
      { selector: ".filtered", style: { display: "none" } } ] });
    cy.on("tap", "node", (e) => { showNodeInfo(e.target.id()); expandNode(e.target.id(), false); });
    window.addEventListener("resize", () => { cy.resize(); fitPositions(cy, 20); });
    let labelling = null;
    cy.on("viewport", () => { clearTimeout(labelling); labelling = setTimeout(() => labelInView(cy), 120); });
    return cy;
  }
  // A large graph's node labels are not even laid out (measuring thousands of labels doubled the
  // first render) until the view is zoomed in far enough to read them (LABEL_ZOOM: the 10 px font
  // at 8 px, the smallest drawn); then the nodes in view get theirs, and keep them.
  const LABEL_ZOOM = 0.8;
  function labelInView(g) {
    if (g.zoom() < LABEL_ZOOM || g.nodes(".nolabel").empty()) return;
    const e = g.extent();
    g.nodes(".nolabel").filter((n) => { const p = n.position(); return p.x >= e.x1 && p.x <= e.x2 && p.y >= e.y1 && p.y <= e.y2; })
      .removeClass("nolabel");
  }
  // Draws a neighbours answer ({node, neighbors}) into the graph: new nodes go on a sunflower
  // spiral around the expanded node (cheap, no overlap), a small graph then gets a bounded force
  // layout from there. The timings land in the page's performance timeline ("kg-graph-draw").
  function drawNeighbourhood(nb, reset) {
    const g = ensureGraph();
    if (!g) { nb.neighbors.forEach((n) => colourOf(n.family)); return Promise.resolve(null); }
    performance.mark("kg-graph-start");
    g.batch(() => {
      if (reset) g.elements().remove();
      const centre = g.getElementById(nb.node.id);
      const c = centre.nonempty() ? centre.position() : { x: 0, y: 0 };
      const add = []; const seen = new Set();
      if (centre.empty()) { add.push({ group: "nodes", data: { id: nb.node.id, label: shortLabel(nb.node.label), name: shortLabel(nb.node.label) }, position: { x: c.x, y: c.y } }); seen.add(nb.node.id); }
      let k = 0;
      for (const n of nb.neighbors) {
        if (!seen.has(n.node_id) && g.getElementById(n.node_id).empty()) {
          seen.add(n.node_id); k++;
          const r = 40 + 22 * Math.sqrt(k); const a = k * GOLDEN;
          add.push({ group: "nodes", data: { id: n.node_id, label: shortLabel(n.label), name: shortLabel(n.label) }, position: { x: c.x + r * Math.cos(a), y: c.y + r * Math.sin(a) } });
        }
        const eid = "e:" + n.unit_id + ":" + n.node_id;
        if (g.getElementById(eid).empty()) {
          const [s, t] = n.direction === "out" ? [nb.node.id, n.node_id] : [n.node_id, nb.node.id];
          add.push({ group: "edges", data: { id: eid, source: s, target: t, label: n.predicate, family: n.family, colour: colourOf(n.family) } });
        }
      }
      const large = g.nodes().length + seen.size > FORCE_MAX;
      if (large) {
        for (const a of add) a.classes = a.group === "edges" ? "light" : "nolabel";
        g.edges(":not(.light)").addClass("light");
        if (reset || g.nodes(".nolabel").empty()) g.nodes().addClass("nolabel");
      }
      g.add(add); g.nodes(".seed").removeClass("seed"); g.getElementById(nb.node.id).addClass("seed");
      if (hiddenFamilies.size) applyFilter(g);
    });
    performance.mark("kg-graph-added");
    if (g.nodes().length > FORCE_MAX) fitPositions(g, 20);
    else g.layout({ name: "cose", animate: false, randomize: false, numIter: 400, fit: true, padding: 20 }).run();
    performance.mark("kg-graph-laid-out");
    labelInView(g);
    // the first frame painted after the layout: two animation frames later
    return new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => {
      performance.mark("kg-graph-painted");
      const m = performance.measure("kg-graph-draw", "kg-graph-start", "kg-graph-painted");
      performance.measure("kg-graph-add", "kg-graph-start", "kg-graph-added");
      performance.measure("kg-graph-layout", "kg-graph-added", "kg-graph-laid-out");
      performance.measure("kg-graph-paint", "kg-graph-laid-out", "kg-graph-painted");
      done(m.duration);
    })));
  }
  // cy.fit() measures every label's box first; the node centres are known, so fit those instead
  function fitPositions(g, pad) {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    g.nodes().forEach((n) => { const p = n.position(); x0 = Math.min(x0, p.x); y0 = Math.min(y0, p.y); x1 = Math.max(x1, p.x); y1 = Math.max(y1, p.y); });
    if (!isFinite(x0)) return;
    const w = g.width(), h = g.height();
    const zoom = Math.min(2, (w - 2 * pad) / Math.max(1, x1 - x0), (h - 2 * pad) / Math.max(1, y1 - y0));
    g.viewport({ zoom, pan: { x: w / 2 - zoom * (x0 + x1) / 2, y: h / 2 - zoom * (y0 + y1) / 2 } });
  }
  // -- the graph's controls: zoom, fit, fullscreen, layout, family filter, the node panel --------
  function zoomBy(f) {
    if (!cy) return;
    cy.zoom({ level: Math.max(cy.minZoom(), Math.min(cy.maxZoom(), cy.zoom() * f)), renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
  }
  function setFullscreen(on) {
    const box = $("graph-box"); if (!box) return;
    box.classList.toggle("full", on); $("fullscreen").setAttribute("aria-pressed", String(on));
    $("fullscreen").textContent = on ? "Exit fullscreen" : "Fullscreen";
    if (cy) { cy.resize(); fitPositions(cy, 20); }
    if (on) $("graph").focus();
  }
  // Layouts a graph of any size can take are computed here (positions only, no measuring);
  // the force layout (cose) is offered up to FORCE_LAYOUT_MAX nodes, where it stays under a second.
  const FORCE_LAYOUT_MAX = 300;
  function relayout(name) {
    const g = cy; if (!g || !g.nodes().length) return;
    const nodes = g.nodes(":visible");
    const seed = g.nodes(".seed").first();
    const order = nodes.sort((a, b) => b.degree() - a.degree() || (a.id() < b.id() ? -1 : 1));
    const pos = {};
    if (name === "cose") {
      if (nodes.length > FORCE_LAYOUT_MAX) { $("layout-note").textContent = "The force layout draws up to " + FORCE_LAYOUT_MAX + " nodes; this graph has " + nodes.length + "."; return; }
      g.layout({ name: "cose", animate: false, randomize: false, numIter: 400, fit: false, eles: g.elements(":visible") }).run();
    } else {
      const n = order.length;
      order.forEach((node, k) => {
        let x, y;
        if (name === "circle") { const r = Math.max(60, n * 9 / (2 * Math.PI)); x = r * Math.cos(2 * Math.PI * k / n); y = r * Math.sin(2 * Math.PI * k / n); }
        else if (name === "grid") { const cols = Math.ceil(Math.sqrt(n)); x = (k % cols) * 60; y = Math.floor(k / cols) * 40; }
        else if (name === "rings") { // by links: the busiest in the middle, a ring per step down
          const ring = Math.floor(Math.sqrt(k)); const inRing = 2 * ring + 1; const at = k - ring * ring;
          const r = ring * 70; x = r * Math.cos(2 * Math.PI * at / inRing); y = r * Math.sin(2 * Math.PI * at / inRing); }
        else { const j = node.same(seed) ? 0 : k + 1; const r = j ? 40 + 22 * Math.sqrt(j) : 0; x = r * Math.cos(j * GOLDEN); y = r * Math.sin(j * GOLDEN); }
        pos[node.id()] = { x, y };
      });
      g.batch(() => nodes.forEach((node) => { node.position(pos[node.id()]); }));
    }
    $("layout-note").textContent = "";
    fitPositions(g, 20);
  }
  // The legend is the family filter: unticking a family hides its links, and the nodes left with
  // no visible link (the node being explored always stays).
  function applyFilter(g) {
    g.elements(".filtered").removeClass("filtered");
    if (!hiddenFamilies.size) return;
    g.edges().filter((e) => hiddenFamilies.has(e.data("family"))).addClass("filtered");
    g.nodes().filter((n) => !n.hasClass("seed") && n.connectedEdges().length &&
                     n.connectedEdges().every((e) => e.hasClass("filtered"))).addClass("filtered");
  }
  function showLegend() {
    const legend = $("legend"); legend.replaceChildren();
    for (const [f, c] of Object.entries(familyColour)) {
      const li = el("li", null, { "data-family": f }); const box = el("input", null, { type: "checkbox", "data-family": f });
      box.checked = !hiddenFamilies.has(f);
      box.addEventListener("change", () => { if (box.checked) hiddenFamilies.delete(f); else hiddenFamilies.add(f); if (cy) cy.batch(() => applyFilter(cy)); });
      const sw = el("span", "", { class: "swatch" }); sw.style.backgroundColor = c;
      const label = el("label"); label.append(box, sw, f); li.append(label); legend.append(li);
    }
  }
  // The node panel: what the graph shows about one node (its links in view, how many it has in
  // all), with its own "expand" and a link that opens it as the page's node.
  function showNodeInfo(id) {
    const g = cy; const box = $("node-info"); if (!g || !box) return;
    const n = g.getElementById(id); if (n.empty()) return;
    box.hidden = false; box.replaceChildren();
    box.append(el("h3", n.data("name") || n.data("label"), { id: "node-info-title" }));
    const links = n.connectedEdges();
    const known = totals[id];
    box.append(el("p", links.length + " link" + (links.length === 1 ? "" : "s") + " drawn" + (known !== undefined ? " of " + known : "") + ".", { class: "node-info-count" }));
    const ul = el("ul");
    links.slice(0, 20).forEach((e) => {
      const out = e.source().same(n); const other = out ? e.target() : e.source();
      ul.append(el("li", (out ? "→ " : "← ") + e.data("label") + " " + (other.data("name") || other.data("label"))));
    });
    if (links.length > 20) ul.append(el("li", "… and " + (links.length - 20) + " more"));
    const go = el("button", "expand", { type: "button", "aria-label": "expand " + (n.data("name") || id) });
    go.addEventListener("click", () => expandNode(id, true));
    const a = el("a", "open as its own page", { href: base + "/ui/explore?node=" + encodeURIComponent(id) });
    box.append(ul, go, " ", a);
  }
  if ($("graph-tools")) {
    $("zoom-in").addEventListener("click", () => zoomBy(1.25));
    $("zoom-out").addEventListener("click", () => zoomBy(0.8));
    $("fit").addEventListener("click", () => cy && fitPositions(cy, 20));
    $("fullscreen").addEventListener("click", () => setFullscreen(!$("graph-box").classList.contains("full")));
    $("layout").addEventListener("change", () => relayout($("layout").value));
    // the graph itself takes keys once focused: + - zoom, 0 fits, arrows pan, Escape leaves fullscreen
    $("graph").addEventListener("keydown", (e) => {
      if (!cy) return;
      const step = 60; const moves = { ArrowLeft: [step, 0], ArrowRight: [-step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
      if (e.key === "+" || e.key === "=") zoomBy(1.25);
      else if (e.key === "-") zoomBy(0.8);
      else if (e.key === "0") fitPositions(cy, 20);
      else if (e.key in moves) cy.panBy({ x: moves[e.key][0], y: moves[e.key][1] });
      else if (e.key === "Escape" && $("graph-box").classList.contains("full")) setFullscreen(false);
      else return;
      e.preventDefault();
    });
  }

  // A click on a graph node and its "expand" button in the neighbours list do the same; the
  // button route moves the focus to the new node's title so a keyboard user hears where they are.
  function expandNode(id, focusTitle) {
    return openNode(id, false).then(() => { if (focusTitle) $("node-title").focus(); }).catch(alertText);
  }
  // The neighbours list: one focusable, labelled "expand" button per neighbour node (the keyboard's
  // way to expand the graph); the focused or hovered one is the graph's selected node. A later
  // page of the same node's neighbours is appended.
  function showNeighbours(nb, append) {
    const ul = $("neighbours"); if (!append) ul.replaceChildren();
    const rows = new Map();
    for (const n of nb.neighbors) {
      const r = rows.get(n.node_id) || { label: n.label, links: [] };
      r.links.push((n.direction === "out" ? "→ " : "← ") + n.predicate); rows.set(n.node_id, r);
    }
    const pick = (id) => { if (!cy) return; cy.nodes(":selected").unselect(); cy.getElementById(id).select(); };
    for (const [id, r] of rows) {
      const li = el("li", null, { "data-node": id });
      const b = el("button", "expand", { type: "button", class: "expand", "data-node": id, "aria-label": "expand " + r.label });
      b.addEventListener("click", () => expandNode(id, true));
      b.addEventListener("focus", () => pick(id)); b.addEventListener("mouseenter", () => pick(id));
      li.append(b, " ", el("span", r.label, { class: "nb-label" }), el("span", "  (" + r.links.join(", ") + ")", { class: "nb-links" }));
      ul.append(li);
    }
    if (!rows.size && !append) ul.append(el("li", "No neighbours."));
  }
  // "of N": a node's neighbours come a page at a time; the counts say how many are drawn and how
  // many there are, and two buttons fetch the next page or all the rest (pages of 1,000).
  const PAGE = 50;
  const totals = {}; const loaded = {};
  let current = null;
  function showMore(nb) {
    const box = $("nb-more"); box.replaceChildren();
    const id = nb.node.id; const total = nb.total; const have = loaded[id];
    box.append(el("span", "Showing " + have + " of " + total + " neighbours of " + nb.node.label + ".", { id: "nb-count", tabindex: "-1" }));
    if (have >= total) return;
    const more = el("button", "Show " + Math.min(PAGE, total - have) + " more", { type: "button", id: "nb-next" });
    const all = el("button", "Show all " + total, { type: "button", id: "nb-all" });
    more.addEventListener("click", () => loadMore(nb.node, PAGE).catch(alertText));
    all.addEventListener("click", () => loadMore(nb.node, total).catch(alertText));
    box.append(" ", more, " ", all);
  }
  async function loadMore(node, count) {
    const id = node.id; const until = Math.min(totals[id], loaded[id] + count);
    $("nb-more").setAttribute("aria-busy", "true");
    while (loaded[id] < until) {
      const limit = Math.min(1000, until - loaded[id]);
      const nb = await api("/nodes/" + encodeURIComponent(id) + "/neighbors?limit=" + limit + "&offset=" + loaded[id]);
      if (!nb.neighbors.length) break;
      loaded[id] += nb.neighbors.length; totals[id] = nb.total;
      await drawNeighbourhood(nb, false);
      if (current === id) { showNeighbours(nb, true); showMore({ ...nb, node }); }
    }
    $("nb-more").removeAttribute("aria-busy");
    showLegend();
    if ($("nb-count")) $("nb-count").focus();
  }
  // the graph's drawing for the page's own benchmark and tests (same code path as a click)
  window.kgGraph = { draw: drawNeighbourhood, cy: () => cy, relayout };
  async function openNode(id, reset) {
    $("node-panel").hidden = false;
    const nb = await api("/nodes/" + encodeURIComponent(id) + "/neighbors?limit=" + PAGE);
    $("node-title").textContent = nb.node.label + " (" + nb.node.kind + ")";
    const g = ensureGraph();
    if (reset) { for (const k of Object.keys(loaded)) delete loaded[k]; }
    current = nb.node.id; totals[nb.node.id] = nb.total; loaded[nb.node.id] = Math.max(loaded[nb.node.id] || 0, nb.neighbors.length);
    await drawNeighbourhood(nb, reset);
    showNeighbours(nb);
    showMore(nb);
    showLegend();
    const out = await api("/expand", { seeds: [nb.node.id], mode: mode(), limit: 30 });
    // facts: the directed expansion's units grouped under their predicate family (named)
    const facts = $("facts"); facts.replaceChildren();
    const families = {};
    for (const u of out.units || []) (families[u.family || "other"] ||= []).push(u);
    if (!(out.units || []).length) for (const n of nb.neighbors) (families[n.family] ||= []).push({ id: n.unit_id, text: (n.direction === "out" ? "→ " : "← ") + n.predicate + " " + n.label, via: [] });
    for (const [fam, us] of Object.entries(families)) {
      const li = el("li", null, { class: "facts-family", "data-family": fam });
      const h = el("h4", fam + " (" + us.length + ")"); const sw = el("span", "", { class: "swatch" }); sw.style.backgroundColor = colourOf(fam); h.prepend(sw);
      const ul = el("ul"); for (const u of us) ul.append(el("li", u.text + (u.via && u.via.length ? "  (via " + u.via.join(" → ") + ")" : ""), { "data-unit": u.id }));
      li.append(h, ul); facts.append(li);
    }
    if (!Object.keys(families).length) facts.append(el("li", mode() === "spread" ? "Spreading activation ranks nodes: see the activation list." : "No facts from this node."));
    // activation: spreading activation's values, on the list and on the graph's nodes
    const ranked = $("ranked"); ranked.replaceChildren();
    const labelOf = (id) => { const n = g && g.getElementById(id); return n && n.nonempty() ? n.data("label") : null; };
    const rows = out.ranked || [];
    const missing = rows.map((r) => r.node).filter((id) => !labelOf(id)).slice(0, 10);
    const fetched = Object.fromEntries(await Promise.all(missing.map((id) => api("/nodes/" + encodeURIComponent(id)).then((n) => [id, n.label]).catch(() => [id, id]))));
    const maxE = rows.reduce((m, r) => Math.max(m, Number(r.energy)), 0) || 1;
    const paint = () => {
      if (g) g.nodes(".active").forEach((n) => { n.data("act", null); n.data("label", n.data("name") || n.data("label")); n.removeClass("active"); });
      for (const r of rows) {
        const label = labelOf(r.node) || fetched[r.node] || r.node; const e = Number(r.energy);
        ranked.append(el("li", label + " — activation " + e.toFixed(3), { "data-node": r.node }));
        const n = g && g.getElementById(r.node);
        if (n && n.nonempty()) { n.data("name", n.data("name") || n.data("label")); n.data("act", e / maxE); n.data("label", n.data("name") + " · " + e.toFixed(3)); n.addClass("active"); }
      }
    };
    if (g) g.batch(paint); else paint();
    $("ranked-panel").hidden = !rows.length;
  }
  async function search(q) {
    const ul = $("hits"); ul.replaceChildren();
    const hits = await api("/search", { query: q, top_k: 10 });
    if (!hits.length) ul.append(el("li", "No entry nodes for that."));
    for (const h of hits) {
      // the server's order (the entry step's specificity-weighted weight, not shown: it is not a
      // similarity); each hit says how it was found: named in the text, or a similar vector
      const how = h.named ? "named" : "similar";
      const li = el("li", null, { "data-node": h.node_id }); const b = el("button", h.label, { type: "button", class: "hit", "data-how": how });
      b.addEventListener("click", () => openNode(h.node_id, true).catch((err) => alertText(err)));
      li.append(b, " ", el("span", how, { class: "hit-how" })); ul.append(li);
    }
  }
  function alertText(err) { $("hits").append(el("li", "Error: " + err.message, { class: "error" })); }
  document.querySelectorAll('input[name="mode"]').forEach((r) => r.addEventListener("change", () => {
    const seed = cy && cy.nodes(".seed").first(); if (seed && seed.length) openNode(seed.id(), false);
  }));
  if ($("search-form")) $("search-form").addEventListener("submit", (e) => { e.preventDefault(); search($("search-q").value).catch(alertText); });

  // the shortest path: one request to the server's path search (graphify's `kg path`, the same
  // hops the command prints), drawn as the graph; an unknown or ambiguous name, or no path, is the
  // server's own message. Clicking a node of the path expands it as usual.
  function drawPath(p) {
    const g = ensureGraph(); if (!g) return;
    g.batch(() => {
      g.elements().remove();
      const add = p.nodes.map((n, i) => ({ group: "nodes", data: { id: n.id, label: shortLabel(n.label), name: shortLabel(n.label) },
                                           position: { x: i * 140, y: (i % 2) * 40 }, classes: "on-path" }));
      p.hops.forEach((h, i) => {
        const [s, t] = h.forward ? [h.source, h.target] : [h.target, h.source];
        add.push({ group: "edges", data: { id: "p:" + i, source: s, target: t, label: h.relations.join("/"), colour: "#e6550d" }, classes: "on-path" });
      });
      g.add(add);
    });
    fitPositions(g, 40);
  }
  async function findPath(a, b) {
    const out = $("path"); out.replaceChildren(el("li", "Searching…")); $("path-note").textContent = "";
    const directed = $("path-directed") && $("path-directed").checked;
    // literal values and modifiers join unrelated facts ("CPython -confidence-> high <-confidence- smoking"):
    // walked only when asked for
    const values = $("path-values") && $("path-values").checked;
    const r = await api("/graphify/path", { source: a, target: b, undirected: !directed, format: "json", through_values: !!values });
    out.replaceChildren();
    $("path-note").textContent = (r.notes || []).join(" ");
    if (!r.path) { out.append(el("li", r.text, { class: "no-path" })); return; }
    const label = Object.fromEntries(r.path.nodes.map((n) => [n.id, n.label]));
    for (const h of r.path.hops) {
      const rel = h.relations.join("/");
      out.append(el("li", label[h.source] + (h.forward ? " —" + rel + "→ " : " ←" + rel + "— ") + label[h.target], { "data-source": h.source, "data-target": h.target }));
    }
    $("node-panel").hidden = false;
    $("node-title").textContent = "Path: " + label[r.path.nodes[0].id] + " → " + label[r.path.nodes[r.path.nodes.length - 1].id] + " (" + r.path.hops.length + " hops)";
    for (const id of ["neighbours", "facts", "legend", "ranked", "nb-more"]) $(id).replaceChildren();
    if ($("node-info")) $("node-info").hidden = true;
    $("ranked-panel").hidden = true;
    drawPath(r.path);
  }
  if ($("path-form")) $("path-form").addEventListener("submit", (e) => { e.preventDefault(); findPath($("path-a").value, $("path-b").value).catch((err) => $("path").replaceChildren(el("li", "Error: " + err.message, { class: "error" }))); });

  // -- Admin: every key of the deployment (its admin only) ---------------------------------------
  // A key's workspaces change through the REST route (PATCH /v1/admin/keys/{id}, under /ui/v1):
  // the form's workspace set to the role chosen, or taken away; the route's checks say no.
  document.querySelectorAll("form.grant").forEach((f) => f.addEventListener("submit", async (e) => {
    e.preventDefault();
    const id = f.dataset.keyId; const grants = JSON.parse(f.dataset.grants || "{}");
    const ws = f.elements.workspace.value; const role = f.elements.role.value;
    if (role === "none") delete grants[ws]; else grants[ws] = role;
    const status = $("grant-status");
    try {
      const r = await fetch(base + "/ui/v1/admin/keys/" + encodeURIComponent(id), { method: "PATCH", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": csrf },
        body: JSON.stringify({ workspaces: grants }) });
      const data = await r.json().catch(() => ({}));
      if (!r.ok) throw new Error(data.detail ? (typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail)) : r.statusText);
      f.dataset.grants = JSON.stringify(data.workspaces);
      const shown = Object.keys(data.workspaces).sort().map((w) => w + ":" + data.workspaces[w]).join(" ");
      f.closest("tr").querySelector(".workspaces").textContent = shown;
      status.className = "note"; status.textContent = "Key " + id + " now acts in: " + shown;
    } catch (err) {
      status.className = "error"; status.textContent = "Key " + id + " not changed: " + err.message;
    }
  }));

  // -- Upload and live job status --------------------------------------------------------------
  // The job's own SSE stream (GET: the session cookie is enough, no CSRF) drives a progress bar
  // and an event log; the jobs table below refreshes itself (htmx) as well.
  function followJob(id, onEnd) {
    const log = $("job-events"); const bar = $("job-progress"); log.replaceChildren(); bar.hidden = false; bar.removeAttribute("value");
    const steps = { queued: 0.1, running: 0.5, done: 1, failed: 1, cancelled: 1 };
    const es = new EventSource(base + "/ui/v1/jobs/" + encodeURIComponent(id) + "/events");
    es.addEventListener("status", (e) => {
      const d = JSON.parse(e.data);
      log.append(el("li", d.status + (d.message ? ": " + d.message : ""), { "data-status": d.status }));
      if (d.status in steps && d.status !== "running") bar.value = steps[d.status];
      $("job-state").textContent = "Job " + id + ": " + d.status;
    });
    es.addEventListener("end", (e) => {
      const d = JSON.parse(e.data); es.close(); bar.value = 1;
      $("job-state").textContent = "Job " + id + ": " + d.status; $("job-state").setAttribute("data-status", d.status || "");
      if (window.htmx && $("jobs")) window.htmx.trigger("#jobs", "refresh");
      if (onEnd) onEnd(d.status);
    });
    es.onerror = () => { if (es.readyState === EventSource.CLOSED) $("job-state").textContent = "Job " + id + ": lost the status stream; the table below still refreshes."; };
  }
  // The types the server reads (its accepted_formats list, in a data-formats attribute): the one
  // whose suffix ends the name (the longest), or null.
  function formatFor(name, formats) {
    return formats.filter((f) => name.toLowerCase().endsWith(f.suffix.toLowerCase())).sort((a, b) => b.suffix.length - a.suffix.length)[0] || null;
  }
  // The ingest request for one file of that format: unit notation and text as text, a format the
  // server converts ("file": PDF, Word ...) as its bytes in base64.
  async function ingestBody(file, format, doc) {
    if (format.kind === "units") return { units: await file.text(), doc };
    if (format.kind === "file") {
      const bytes = new Uint8Array(await file.arrayBuffer()); let bin = "";
      for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
      // the server reads the format off the name: a name typed without the suffix gets it
      return { file: btoa(bin), doc: doc.toLowerCase().endsWith(format.suffix.toLowerCase()) ? doc : doc + format.suffix };
    }
    return { text: await file.text(), doc, mode: format.mode === "detail" ? "detail" : "summary" };
  }
  const SENDABLE = ["units", "text", "file"];
  if ($("upload-form")) $("upload-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = $("upload-file").files[0]; if (!f) return;
    const formats = JSON.parse($("upload-form").dataset.formats || "[]"); const kind = formatFor(f.name, formats);
    if (!kind || !SENDABLE.includes(kind.kind)) { $("upload-status").textContent = "Upload refused: the server reads " + formats.map((x) => x.suffix).join(", "); return; }
    const docId = ($("upload-doc") && $("upload-doc").value.trim()) || f.name;
    const body = await ingestBody(f, kind, docId);
    try { const j = await api("/ingest", body); $("upload-status").textContent = "Queued job " + j.job_id + " (" + j.status + ")"; followJob(j.job_id); }
    catch (err) { $("upload-status").textContent = "Upload refused: " + err.message; }
  });

  // -- Documents: many files or a folder at once (choose or drop), one job per file ------------
  // The formats are the server's (its accepted_formats list, in the drop zone's data-formats); a
  // file of another type is skipped and says so. Files are sent one after another (the per-key
  // rate limit), each as the upload of one document named by its path; then the jobs list is
  // polled once a second (one request for every file, not a stream each) until all are final,
  // and the documents table below is drawn anew as they finish.
  function jobWords(j) {
    const r = j.result || {};
    if (j.status === "failed" || j.status === "cancelled") return j.status + (j.error ? ": " + j.error : "");
    if (j.status !== "done") return j.status;
    const n = r.units_added ?? r.added ?? 0; const same = r.units_unchanged ?? r.unchanged ?? 0;
    let t = "done: " + n + " unit" + (n === 1 ? "" : "s") + " added";
    if (same) t += ", " + same + " unchanged";
    if (r.retracted) t += ", " + r.retracted + " retracted";
    if (r.llm_calls) t += " (" + r.llm_calls + " model call" + (r.llm_calls === 1 ? "" : "s") + ")";
    return t;
  }
  const zone = $("drop-zone");
  if (zone) {
    const formats = JSON.parse(zone.dataset.formats || "[]");
    const formatOf = (name) => formatFor(name, formats);
    const list = $("upload-list"); const rows = []; let polling = false; let running = Promise.resolve();
    const setRow = (row, status, text) => { row.status = status; const td = row.tr.querySelector(".upload-status"); td.textContent = text; td.setAttribute("data-status", status); };
    const final = (st) => ["done", "failed", "cancelled", "refused", "skipped"].includes(st);
    function summary() {
      const by = {}; for (const r of rows) by[r.status] = (by[r.status] || 0) + 1;
      const over = rows.filter((r) => final(r.status)).length;
      $("upload-summary").textContent = over + " of " + rows.length + " files finished" +
        Object.entries(by).filter(([k]) => k !== "done").map(([k, v]) => ", " + v + " " + k).join("") + (by.done ? ", " + by.done + " done" : "") + ".";
    }
    function refreshList() { if (window.htmx && $("docs-list")) window.htmx.trigger("#docs-list", "refresh"); }
    async function poll() {
      if (polling) return; polling = true;
      try {
        while (rows.some((r) => r.job && !final(r.status))) {
          await new Promise((ok) => setTimeout(ok, 1000));
          const want = rows.filter((r) => r.job && !final(r.status)).length;
          const got = await api("/jobs?limit=" + Math.min(1000, want + 100));
          const byId = Object.fromEntries((got.jobs || []).map((j) => [j.id, j]));
          let ended = false;
          for (const r of rows) {
            const j = r.job && byId[r.job];
            if (!j || final(r.status)) continue;
            if (j.status !== r.status) { setRow(r, j.status, jobWords(j)); ended = ended || final(j.status); }
          }
          summary(); if (ended) refreshList();
        }
      } catch (err) { $("upload-summary").textContent = "Lost track of the jobs: " + err.message + " (the table below still shows each document's status)."; }
      finally { polling = false; }
    }
    async function send(row) {
      const f = formatOf(row.path);
      if (!f) { setRow(row, "skipped", "skipped: not a type the server reads (" + formats.map((x) => x.suffix).join(", ") + ")"); return; }
      if (!SENDABLE.includes(f.kind)) { setRow(row, "skipped", "skipped: the page cannot send " + f.suffix + " files yet; use kg ingest"); return; }
      setRow(row, "sending", "sending…");
      try {
        const j = await api("/ingest", await ingestBody(row.file, f, row.path));
        row.job = j.job_id; row.tr.setAttribute("data-job", j.job_id); setRow(row, j.status, j.status + " (job " + j.job_id + ")");
      } catch (err) { setRow(row, "refused", "refused: " + err.message); }
    }
    function add(files) {
      if (!files.length) return;
      list.hidden = false;
      for (const { file, path } of files) {
        const tr = el("tr", null, { "data-file": path });
        tr.append(el("td", path), el("td", "waiting", { class: "upload-status", "data-status": "waiting" }));
        list.tBodies[0].append(tr);
        const row = { file, path, tr, status: "waiting", job: null }; rows.push(row);
        running = running.then(() => send(row)).then(() => { summary(); refreshList(); poll(); });
      }
      summary();
    }
    const picked = (input) => () => { add(Array.from(input.files).map((file) => ({ file, path: file.webkitRelativePath || file.name }))); input.value = ""; };
    $("upload-files").addEventListener("change", picked($("upload-files")));
    $("upload-folder").addEventListener("change", picked($("upload-folder")));
    // a dropped folder is walked through the entries API (its files keep their path)
    function walk(entry, prefix) {
      if (entry.isFile) return new Promise((ok) => entry.file((file) => ok([{ file, path: prefix + file.name }]), () => ok([])));
      return new Promise((ok) => {
        const reader = entry.createReader(); const all = [];
        const more = () => reader.readEntries(async (batch) => {
          if (!batch.length) { ok((await Promise.all(all.map((e) => walk(e, prefix + entry.name + "/")))).flat()); return; }
          all.push(...batch); more();
        }, () => ok([]));
        more();
      });
    }
    zone.addEventListener("dragover", (e) => { e.preventDefault(); zone.classList.add("over"); });
    zone.addEventListener("dragleave", () => zone.classList.remove("over"));
    zone.addEventListener("drop", async (e) => {
      e.preventDefault(); zone.classList.remove("over");
      const entries = Array.from(e.dataTransfer.items || []).map((i) => i.webkitGetAsEntry && i.webkitGetAsEntry()).filter(Boolean);
      if (entries.length) add((await Promise.all(entries.map((en) => walk(en, "")))).flat());
      else add(Array.from(e.dataTransfer.files || []).map((file) => ({ file, path: file.name })));
    });
  }

  // Replaces the element ``id`` with the same element of this page fetched again: the part of the
  // page a change made stale is drawn anew without a reload (and without re-posting anything).
  async function refreshPart(id) {
    const r = await fetch(location.pathname + location.search, { credentials: "same-origin", headers: { Accept: "text/html" } });
    if (!r.ok) return;
    const fresh = new DOMParser().parseFromString(await r.text(), "text/html").getElementById(id);
    const old = $(id);
    if (fresh && old) { old.replaceWith(document.importNode(fresh, true)); $(id).setAttribute("data-refreshed", "1"); }
  }

  // a replacement or a forget queued from the documents page: follow the job, then say what it changed
  function changeDone(id) {
    api("/jobs/" + encodeURIComponent(id)).then((j) => {
      const box = $("doc-job"); const r = j.result || {};
      if (j.status !== "done") { box.after(el("p", "Job " + id + " " + j.status + (j.error ? ": " + j.error : ""), { class: "error", role: "alert", id: "change-failed" })); return; }
      let text = "Done: " + r.kind + (r.change ? " (change " + r.change + ")" : "") + " — " + r.added + " added, " + r.retracted + " retracted";
      if (r.kept_shared) text += ", " + r.kept_shared + " kept (stated by another document)";
      box.after(el("p", text + ".", { class: "note", role: "status", id: "change-done" }));
      return refreshPart("doc-view");  // the document as it is now: the new version, or gone
    }).catch((err) => $("doc-job").after(el("p", "Job " + id + ": " + err.message, { class: "error" })));
  }
  if ($("doc-job")) { const id = $("doc-job").getAttribute("data-job"); followJob(id, () => changeDone(id)); }

  // a node page is linkable: /ui/explore?node=ID opens it
  if ($("search-form")) {
    const q = new URLSearchParams(location.search).get("node");
    if (q) openNode(q, true).catch(alertText);
  }
})();

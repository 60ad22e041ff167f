// The page's own script (no inline script: the CSP allows only files from /ui/static).
// Every text from the server goes in with textContent, never innerHTML.
"use strict";
(function () {
  const csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
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
    const r = await fetch("/ui/v1" + path, opts);
    const data = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(data.detail ? (typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail)) : r.statusText);
    return data;
  }

  // htmx requests (the job list) carry the CSRF header too
  document.body.addEventListener("htmx:configRequest", (e) => { e.detail.headers["X-CSRF-Token"] = csrf; });

  // -- Ask ------------------------------------------------------------------------------------
  async function showUnit(id) {
    const dl = $("unit"); dl.replaceChildren(); $("unit-panel").hidden = false;
    try {
      const u = await api("/units/" + encodeURIComponent(id));
      for (const k of ["unit_id", "notation", "doc", "family", "kind", "mode", "ingested_at", "supersedes", "superseded_by"]) {
        const v = Array.isArray(u[k]) ? (u[k].length ? u[k].join(", ") : "—") : (u[k] ?? "—");
        dl.append(el("dt", k.replace("_", " ")), el("dd", v, { "data-field": k }));
      }
    } catch (err) { dl.append(el("dd", "Could not open the unit: " + err.message, { class: "error" })); }
  }
  function roundText(d) {
    const parts = [];
    for (const k of ["round", "query", "queries", "seeds", "new_units", "decision", "stop", "reason"]) {
      if (d[k] !== undefined && d[k] !== null) parts.push(k + ": " + (Array.isArray(d[k]) ? d[k].length + (k === "new_units" ? " new" : "") + " [" + d[k].slice(0, 6).join(", ") + "]" : JSON.stringify(d[k])));
    }
    return parts.length ? parts.join(" · ") : JSON.stringify(d).slice(0, 300);
  }
  function showAnswer(a) {
    const box = $("answer"); box.replaceChildren();
    if (!a.in_graph) { box.append(el("p", "Not in the graph: the knowledge base has no units that answer this.", { class: "not-in-graph" })); }
    const number = Object.fromEntries((a.citations || []).map((id, i) => [id, i + 1]));
    if (a.in_graph) {
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
    (a.citations || []).forEach((id, i) => {
      const li = el("li"); const b = el("button", "[" + (i + 1) + "] " + (texts[id] || id), { type: "button", class: "citation", "data-unit": id });
      b.addEventListener("click", () => showUnit(id)); li.append(b); ol.append(li);
    });
  }
  async function ask(question) {
    $("rounds").replaceChildren(); $("answer").replaceChildren(el("p", "Asking…")); $("citations").replaceChildren();
    const r = await fetch("/ui/v1/ask", { method: "POST", credentials: "same-origin",
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
        if (ev === "round") $("rounds").append(el("li", roundText(d), { class: "round" }));
        else if (ev === "answer") showAnswer(d);
        else if (ev === "error") $("answer").replaceChildren(el("p", "Error: " + d.detail, { class: "error" }));
      }
    }
  }
  if ($("ask-form")) $("ask-form").addEventListener("submit", (e) => { e.preventDefault(); ask($("question").value).catch((err) => $("answer").replaceChildren(el("p", "Error: " + err.message, { class: "error" }))); });

  // -- Explore --------------------------------------------------------------------------------
  const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"];
  const familyColour = {};
  function colourOf(f) { if (!(f in familyColour)) familyColour[f] = COLOURS[Object.keys(familyColour).length % COLOURS.length]; return familyColour[f]; }
  let cy = null;
  function mode() { const m = document.querySelector('input[name="mode"]:checked'); return m ? m.value : "directed"; }
  function ensureGraph() {
    if (cy || !window.cytoscape) return cy;
    cy = window.cytoscape({ container: $("graph"), elements: [], style: [
      { selector: "node", style: { label: "data(label)", "font-size": 10, "background-color": "#557", color: "#111", "text-wrap": "ellipsis", "text-max-width": 120 } },
      { selector: "node.seed", style: { "background-color": "#000", "border-width": 3, "border-color": "#fc0" } },
      { selector: "edge", style: { width: 1.5, "curve-style": "bezier", "target-arrow-shape": "triangle", "line-color": "data(colour)", "target-arrow-color": "data(colour)", label: "data(label)", "font-size": 8 } } ] });
    cy.on("tap", "node", (e) => openNode(e.target.id(), false));
    window.addEventListener("resize", () => { cy.resize(); cy.fit(); });
    return cy;
  }
  async function openNode(id, reset) {
    $("node-panel").hidden = false;
    const nb = await api("/nodes/" + encodeURIComponent(id) + "/neighbors?limit=40");
    $("node-title").textContent = nb.node.label + " (" + nb.node.kind + ")";
    const g = ensureGraph();
    if (g) {
      if (reset) g.elements().remove();
      const add = [];
      if (g.getElementById(nb.node.id).empty()) add.push({ group: "nodes", data: { id: nb.node.id, label: nb.node.label } });
      for (const n of nb.neighbors) {
        if (g.getElementById(n.node_id).empty() && !add.some((a) => a.data.id === n.node_id)) add.push({ group: "nodes", data: { id: n.node_id, label: n.label } });
        const eid = "e:" + n.unit_id + ":" + n.node_id;
        if (g.getElementById(eid).empty()) {
          const [s, t] = n.direction === "out" ? [nb.node.id, n.node_id] : [n.node_id, nb.node.id];
          add.push({ group: "edges", data: { id: eid, source: s, target: t, label: n.predicate, colour: colourOf(n.family) } });
        }
      }
      g.add(add); g.nodes().removeClass("seed"); g.getElementById(nb.node.id).addClass("seed");
      g.layout({ name: "cose", animate: false }).run();
    } else {
      nb.neighbors.forEach((n) => colourOf(n.family));
    }
    const legend = $("legend"); legend.replaceChildren();
    for (const [f, c] of Object.entries(familyColour)) { const li = el("li", f); const sw = el("span", "", { class: "swatch" }); sw.style.backgroundColor = c; li.prepend(sw); legend.append(li); }
    const out = await api("/expand", { seeds: [nb.node.id], mode: mode(), limit: 30 });
    const facts = $("facts"); facts.replaceChildren();
    for (const u of out.units || []) facts.append(el("li", u.text + (u.via && u.via.length ? "  (via " + u.via.join(" → ") + ")" : ""), { "data-unit": u.id }));
    for (const n of nb.neighbors) if (mode() === "directed" && !(out.units || []).length) facts.append(el("li", (n.direction === "out" ? "→ " : "← ") + n.predicate + " [" + n.family + "] " + n.label));
    const ranked = $("ranked"); ranked.replaceChildren();
    for (const r of out.ranked || []) ranked.append(el("li", r.node + " — activation " + Number(r.energy).toFixed(3)));
  }
  async function search(q) {
    const ul = $("hits"); ul.replaceChildren();
    const hits = await api("/search", { query: q, top_k: 10 });
    if (!hits.length) ul.append(el("li", "No entry nodes for that."));
    for (const h of hits) {
      const li = el("li"); const b = el("button", h.label + " (" + Number(h.score).toFixed(2) + ")", { type: "button", class: "hit" });
      b.addEventListener("click", () => openNode(h.node_id, true).catch((err) => alertText(err))); li.append(b); ul.append(li);
    }
  }
  function alertText(err) { $("hits").append(el("li", "Error: " + err.message, { class: "error" })); }
  document.querySelectorAll('input[name="mode"]').forEach((r) => r.addEventListener("change", () => {
    const seed = cy && cy.nodes(".seed").first(); if (seed && seed.length) openNode(seed.id(), false);
  }));
  if ($("search-form")) $("search-form").addEventListener("submit", (e) => { e.preventDefault(); search($("search-q").value).catch(alertText); });

  // a shortest path by breadth-first search over the neighbours route (undirected, ≤ 4 steps)
  async function findPath(a, b) {
    const out = $("path"); out.replaceChildren(el("li", "Searching…"));
    const [na, nbb] = await Promise.all([api("/nodes/" + encodeURIComponent(a)), api("/nodes/" + encodeURIComponent(b))]);
    const prev = { [na.id]: null }; let frontier = [na.id]; const labels = { [na.id]: na.label, [nbb.id]: nbb.label };
    for (let depth = 0; depth < 4 && frontier.length && !(nbb.id in prev); depth++) {
      const next = [];
      for (const id of frontier.slice(0, 60)) {
        const nb = await api("/nodes/" + encodeURIComponent(id) + "/neighbors?limit=100");
        for (const n of nb.neighbors) if (!(n.node_id in prev)) { prev[n.node_id] = { from: id, n }; labels[n.node_id] = n.label; next.push(n.node_id); }
      }
      frontier = next;
    }
    out.replaceChildren();
    if (!(nbb.id in prev)) { out.append(el("li", "No path within 4 steps.")); return; }
    const steps = []; let cur = nbb.id;
    while (prev[cur]) { steps.unshift(prev[cur]); cur = prev[cur].from; }
    for (const s of steps) out.append(el("li", labels[s.from] + (s.n.direction === "out" ? " —" + s.n.predicate + "→ " : " ←" + s.n.predicate + "— ") + s.n.label));
  }
  if ($("path-form")) $("path-form").addEventListener("submit", (e) => { e.preventDefault(); findPath($("path-a").value, $("path-b").value).catch((err) => $("path").replaceChildren(el("li", "Error: " + err.message, { class: "error" }))); });

  // -- Upload ---------------------------------------------------------------------------------
  if ($("upload-form")) $("upload-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const f = $("upload-file").files[0]; if (!f) return;
    const text = await f.text();
    const body = f.name.endsWith(".units") ? { units: text, doc: f.name } : { text, doc: f.name };
    try { const j = await api("/ingest", body); $("upload-status").textContent = "Queued job " + j.job_id + " (" + j.status + ")"; }
    catch (err) { $("upload-status").textContent = "Upload refused: " + err.message; }
  });
})();

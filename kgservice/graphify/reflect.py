"""``reflect``: memory docs -> a deterministic LESSONS.md and the learning sidecar.

Every memory doc with an outcome scores the nodes it cites: ``useful`` +1, ``dead_end``
and ``corrected`` -1, each times ``0.5 ** (age_days / half_life)`` (30 days by default;
undated docs keep full weight). A node cited only positively is *preferred* once at least
``min_corroboration`` (2) distinct useful docs cite it, *tentative* before that; a node
with both signs is *contested* and the sign of its decayed score (recency) gives the
verdict. Dead ends and corrections are listed by question, the latest save of a question
winning. With a graph, cited nodes the graph no longer has are dropped and the lessons
are also grouped by community from graphify's ``.graphify_analysis.json`` (as graphify
does: no analysis file, no ``## By topic``). ``kg reflect`` also groups without it, from
the ``community`` / ``community_name`` the nodes of graph.json carry (``topics_from_graph``).

No LLM, sorted everywhere, byte-stable for the same inputs. The same lessons are projected
into ``.graphify_learning.json`` next to graph.json (graphify's sidecar format), which
``explain`` and ``query`` read to annotate nodes.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kgservice.graphify.memory import OUTCOMES, load_memory_docs

UNCATEGORIZED = "Uncategorized"
SIDECAR_NAME = ".graphify_learning.json"
SIDECAR_VERSION = 1
PROVENANCE_CAP = 5
HALF_LIFE_DAYS = 30.0
MIN_CORROBORATION = 2
SCORE_DIGITS = 9
OUT_DIR_NAME = "graphify-out"


# --- inputs from the graph ------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def node_communities(graph_path: Path, analysis_path: Path | None, labels_path: Path | None,
                     graph_data: dict | None = None, *, from_graph: bool = False) -> dict[str, str] | None:
    """node id and label -> community label, or None when the graph has no communities."""
    graph_path = Path(graph_path)
    if not graph_path.exists():
        return None
    data = graph_data if graph_data is not None else _read_json(graph_path)
    nodes = data.get("nodes", []) if isinstance(data, dict) else []
    labels = _read_json(labels_path) if labels_path is not None and Path(labels_path).exists() else None
    labels = labels if isinstance(labels, dict) else {}
    id_to_label = {str(n["id"]): str(n["label"]) for n in nodes
                   if isinstance(n, dict) and n.get("id") is not None and n.get("label") is not None}
    members: dict[Any, list[str]] = {}
    names: dict[str, str] = {}
    analysis = _read_json(analysis_path) if analysis_path is not None and Path(analysis_path).exists() else None
    if isinstance(analysis, dict) and analysis.get("communities"):
        members = {cid: [str(x) for x in ids] for cid, ids in analysis["communities"].items()}
    elif (analysis_path is not None and Path(analysis_path).exists()) or not from_graph:
        return None
    else:
        for n in nodes:
            if not isinstance(n, dict) or n.get("id") is None:
                continue
            cid = n.get("community")
            if cid is None or cid == "":
                continue
            members.setdefault(cid, []).append(str(n["id"]))
            if n.get("community_name") and str(cid) not in names:
                names[str(cid)] = str(n["community_name"])
    if not members:
        return None
    out: dict[str, str] = {}
    for cid in sorted(members, key=str):
        label = labels.get(str(cid)) or names.get(str(cid)) or f"Community {cid}"
        for nid in members[cid]:
            out.setdefault(nid, label)
            lab = id_to_label.get(nid)
            if lab is not None:
                out.setdefault(lab, label)
    return out


def known_nodes(graph_data: Any) -> set[str] | None:
    nodes = graph_data.get("nodes") if isinstance(graph_data, dict) else None
    if not isinstance(nodes, list):
        return None
    known: set[str] = set()
    for n in nodes:
        if isinstance(n, dict):
            if n.get("id") is not None:
                known.add(str(n["id"]))
            if n.get("label") is not None:
                known.add(str(n["label"]))
    return known or None


# --- aggregation ----------------------------------------------------------------------------


def _parse_dt(text: str) -> datetime | None:
    if not text:
        return None
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def decay(date: str, now: datetime, half_life_days: float) -> float:
    dt = _parse_dt(date)
    if dt is None or half_life_days <= 0:
        return 1.0
    age = max(0.0, (now - dt).total_seconds() / 86400.0)
    return 0.5 ** (age / half_life_days)


def _bucket() -> dict[str, Any]:
    return {"counts": {k: 0 for k in (*OUTCOMES, "unmarked")}, "score": {}, "pos": Counter(),
            "neg": Counter(), "last": {}, "trail": {}, "dead_ends": [], "corrections": []}


def _finalize(b: dict[str, Any], k: int) -> dict[str, list]:
    preferred: list[dict[str, Any]] = []
    tentative: list[dict[str, Any]] = []
    contested: list[dict[str, Any]] = []
    for node, raw in b["score"].items():
        pos, neg = b["pos"][node], b["neg"][node]
        score = round(raw, SCORE_DIGITS)
        if pos and neg:
            verdict = "useful" if score > 0 else "dead end" if score < 0 else "even"
            contested.append({"node": node, "pos": pos, "neg": neg, "score": score, "verdict": verdict,
                              "last": b["last"].get(node, "")})
        elif pos:
            (preferred if pos >= k else tentative).append({"node": node, "n": pos, "score": score})
    for lst in (preferred, tentative, contested):
        lst.sort(key=lambda e: (-e["score"], e["node"]))
    return {"preferred": preferred, "tentative": tentative, "contested": contested}


def _latest_per_question(items: list[dict]) -> list[dict]:
    latest: dict[str, dict] = {}
    for it in items:
        latest[it.get("question", "")] = it
    return sorted(latest.values(), key=lambda it: (it.get("date", ""), it.get("question", "")))


def aggregate(docs: list[dict], communities: dict[str, str] | None = None, *, now: datetime | None = None,
              half_life_days: float = HALF_LIFE_DAYS, min_corroboration: int = MIN_CORROBORATION,
              known: set[str] | None = None) -> dict[str, Any]:
    now = now or datetime.now(timezone.utc)
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    overall = _bucket()
    groups: dict[str, dict[str, Any]] = {}
    for doc in docs:
        outcome = doc.get("outcome")
        date = doc.get("date", "")
        question = doc.get("question", "")
        nodes = list(dict.fromkeys(n for n in doc.get("source_nodes", []) if known is None or n in known))
        if communities:
            labels = [communities[n] for n in nodes if n in communities]
            topic = min(Counter(labels).items(), key=lambda kv: (-kv[1], kv[0]))[0] if labels else UNCATEGORIZED
        else:
            topic = UNCATEGORIZED
        group = groups.setdefault(topic, _bucket())
        sign = 1 if outcome == "useful" else -1 if outcome in ("dead_end", "corrected") else 0
        weight = decay(date, now, half_life_days) if sign else 0.0
        for b in (overall, group):
            b["counts"][outcome if outcome in OUTCOMES else "unmarked"] += 1
            if sign:
                for n in nodes:
                    b["score"][n] = b["score"].get(n, 0.0) + sign * weight
                    (b["pos"] if sign > 0 else b["neg"])[n] += 1
                    if date > b["last"].get(n, ""):
                        b["last"][n] = date
                    if outcome in ("useful", "corrected"):
                        b["trail"].setdefault(n, []).append((date, question, outcome))
            if outcome == "dead_end":
                b["dead_ends"].append({"question": question, "nodes": nodes, "date": date})
            elif outcome == "corrected":
                b["corrections"].append({"question": question, "correction": doc.get("correction", ""),
                                         "date": date})
    by_topic = {}
    if communities:
        by_topic = {label: {"counts": b["counts"], **_finalize(b, min_corroboration),
                            "dead_ends": _latest_per_question(b["dead_ends"]),
                            "corrections": _latest_per_question(b["corrections"])}
                    for label, b in groups.items()}
    return {"total": len(docs), "counts": overall["counts"], "min_corroboration": min_corroboration,
            **_finalize(overall, min_corroboration),
            "dead_ends": _latest_per_question(overall["dead_ends"]),
            "corrections": _latest_per_question(overall["corrections"]),
            "by_community": by_topic, "_trail": overall["trail"]}


# --- LESSONS.md -------------------------------------------------------------------------------


def _section(out: list[str], data: dict[str, Any], k: int) -> None:
    if data["preferred"]:
        out += [f"**Preferred sources** — corroborated by ≥{k} useful results; start here.", ""]
        out += [f"- `{e['node']}` ({e['n']}× useful)" for e in data["preferred"]] + [""]
    if data["tentative"]:
        out += [f"**Tentative** — useful in fewer than {k} results; verify before relying.", ""]
        out += [f"- `{e['node']}` ({e['n']}× useful)" for e in data["tentative"]] + [""]
    if data["contested"]:
        out += ["**Contested** — mixed signals; recency decides.", ""]
        for e in data["contested"]:
            day = e["last"][:10]
            verdict = "evenly split" if e["verdict"] == "even" else f"recency leans **{e['verdict']}**"
            out.append(f"- `{e['node']}` — {e['pos']}× useful, {e['neg']}× dead end/corrected → {verdict}"
                       + (f" (latest {day})" if day else ""))
        out.append("")
    if data["dead_ends"]:
        out += ["**Known dead ends** — led nowhere; don't re-derive.", ""]
        for d in data["dead_ends"]:
            nodes = ", ".join(f"`{n}`" for n in d["nodes"])
            out.append(f"- \"{d['question']}\"" + (f" — {nodes}" if nodes else ""))
        out.append("")
    if data["corrections"]:
        out += ["**Corrections** — do these differently.", ""]
        out += [f"- \"{c['question']}\" → {c['correction']}" for c in data["corrections"]] + [""]
    if not any(data[key] for key in ("preferred", "tentative", "contested", "dead_ends", "corrections")):
        out += ["_No marked outcomes yet._", ""]


def render_lessons(agg: dict[str, Any]) -> str:
    c = agg["counts"]
    k = agg.get("min_corroboration", MIN_CORROBORATION)
    total = agg["total"]
    out = ["# Lessons", "",
           f"_Auto-generated by `graphify reflect` from {total} session {'memory' if total == 1 else 'memories'} "
           "in graphify-out/memory/. Deterministic; no LLM. Use for orientation — verify before relying, "
           "and revisit dead ends if the code has changed since._", "",
           "## Summary", "",
           f"- {c['useful']} useful · {c['dead_end']} dead ends · {c['corrected']} corrected · "
           f"{c['unmarked']} unmarked",
           "", "## Lessons", ""]
    _section(out, agg, k)
    if agg["by_community"]:
        out += ["## By topic", ""]
        for label in sorted(agg["by_community"], key=lambda s: (s == UNCATEGORIZED, s)):
            out += [f"### {label}", ""]
            _section(out, agg["by_community"][label], k)
    return "\n".join(out).rstrip("\n") + "\n"


# --- sidecar ------------------------------------------------------------------------------------


def _resolve_source(src: str, graph_path: Path) -> Path | None:
    """The node's source file on disk: root marker, then the layout's likely roots, then cwd."""
    if not src:
        return None
    p = Path(src)
    if p.is_absolute():
        return p if p.is_file() else None
    out_dir = Path(graph_path).parent
    bases: list[Path] = []
    try:
        marker = (out_dir / ".graphify_root").read_text(encoding="utf-8-sig").strip()
        if marker:
            bases.append(Path(marker))
    except (OSError, ValueError):
        pass
    bases += [out_dir.parent, out_dir] if out_dir.name == OUT_DIR_NAME else [out_dir, out_dir.parent]
    bases.append(Path("."))
    seen = set()
    for base in bases:
        if str(base) in seen:
            continue
        seen.add(str(base))
        if (base / p).is_file():
            return base / p
    return None


def _file_hash(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def _links_hash(graph, nid: str) -> str:
    """kg's fingerprint for a node whose source is not a file (a ``kg export`` graph names the
    unit document, often not on disk): its stored relations, so the lesson goes stale when they
    change rather than always (graphify's rule, which kg would otherwise show on every lesson)."""
    sig = []
    for i in graph.incident(nid):
        lk = graph.links[i]
        d = lk.data
        sig.append([lk.src, lk.tgt, str(d.get("relation", "")), str(d.get("unit", "")),
                    str(d.get("source_location", ""))])
    sig.sort()
    return "links:" + hashlib.sha256(json.dumps(sig, ensure_ascii=False).encode("utf-8")).hexdigest()


def fingerprint(node: dict | None, nid: str, graph_path: Path, graph=None, links_fallback: bool = False) -> str:
    """The sha256 of the node's source file; ``""`` when it is not on disk (graphify: such a
    lesson reads as stale), or with ``links_fallback`` (kg) the hash of its relations."""
    if not node:
        return ""
    sp = _resolve_source(str(node.get("source_file") or ""), graph_path)
    if sp is not None:
        return _file_hash(sp)
    if links_fallback and graph is not None and nid in graph:
        return _links_hash(graph, nid)
    return ""


def build_overlay(agg: dict[str, Any], graph_path: Path, *, now: datetime | None = None, graph=None,
                  links_fallback: bool = False) -> dict:
    now = now or datetime.now(timezone.utc)
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    if graph is None:
        from kgservice.graphify.loader import GraphLoadError, load_graph

        try:
            graph = load_graph(graph_path)
        except GraphLoadError:
            graph = None
    by_label: dict[str, list[str]] = {}
    if graph is not None:
        for nid in graph.order:
            lab = graph.attrs[nid].get("label")
            if lab is not None:
                by_label.setdefault(str(lab), []).append(nid)
    trail = agg.get("_trail", {})
    out: dict[str, dict] = {}

    def canonical(cited: str) -> str | None:
        if graph is not None and cited in graph:
            return cited
        ids = by_label.get(cited)
        return ids[0] if ids and len(ids) == 1 else None

    def add(e: dict, status: str) -> None:
        nid = canonical(e["node"])
        if nid is None or nid in out:
            return
        node = graph.attrs.get(nid) if graph is not None else None
        events = sorted(trail.get(e["node"], []), key=lambda x: (x[0], x[1]), reverse=True)
        prov = [{"q": q, "date": d, "outcome": o} for d, q, o in events[:PROVENANCE_CAP]]
        entry = {"status": status, "score": e["score"], "uses": e.get("n", e.get("pos", 0)),
                 "last": e.get("last", ""),
                 "label": str(node.get("label", e["node"])) if node else str(e["node"]),
                 "source_file": str(node.get("source_file") or "") if node else "",
                 "code_fingerprint": fingerprint(node, nid, graph_path, graph, links_fallback),
                 "provenance": prov}
        if status == "contested":
            entry["verdict"] = e.get("verdict", "even")
            entry["neg"] = e.get("neg", 0)
        elif not entry["last"] and prov:
            entry["last"] = prov[0]["date"]
        out[nid] = entry

    for status in ("preferred", "tentative", "contested"):
        for e in agg.get(status, []):
            add(e, status)
    return {"version": SIDECAR_VERSION, "generated_at": now.isoformat(), "nodes": out}


def write_sidecar(agg: dict[str, Any], graph_path: Path, *, now: datetime | None = None, graph=None,
                  links_fallback: bool = False) -> Path:
    overlay = build_overlay(agg, graph_path, now=now, graph=graph, links_fallback=links_fallback)
    path = Path(graph_path).parent / SIDECAR_NAME
    path.write_text(json.dumps(overlay, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def is_stale(entry: dict, graph_path: Path, graph=None, nid: str | None = None, links_fallback: bool = False) -> bool:
    """graphify's rule: no source file, never stale; a file that is gone or was never
    fingerprinted, stale; else its hash changed. ``links_fallback`` (kg) compares a ``links:``
    fingerprint with the node's relations when the file is not on disk."""
    src = entry.get("source_file", "")
    if not src:
        return False
    stored = str(entry.get("code_fingerprint", "") or "")
    sp = _resolve_source(src, graph_path)
    if sp is None:
        if (links_fallback and stored.startswith("links:") and graph is not None and nid is not None
                and nid in graph):
            return _links_hash(graph, nid) != stored
        return True
    if not stored:
        return True
    return _file_hash(sp) != stored


def load_learning_overlay(graph_path: Path, graph=None, links_fallback: bool = False) -> dict[str, dict]:
    """The sidecar next to ``graph_path`` as {node id: entry + ``stale``}; {} when absent."""
    data = _read_json(Path(graph_path).parent / SIDECAR_NAME)
    nodes = data.get("nodes") if isinstance(data, dict) else None
    if not isinstance(nodes, dict):
        return {}
    if links_fallback and graph is None and any(
            isinstance(e, dict) and str(e.get("code_fingerprint", "")).startswith("links:") for e in nodes.values()):
        from kgservice.graphify.loader import GraphLoadError, load_graph

        try:
            graph = load_graph(graph_path)
        except GraphLoadError:
            graph = None
    out = {}
    for nid, entry in nodes.items():
        if isinstance(entry, dict):
            merged = dict(entry)
            merged["stale"] = is_stale(entry, graph_path, graph, str(nid), links_fallback)
            out[str(nid)] = merged
    return out


# --- the command ------------------------------------------------------------------------------


def lessons_fresh(out_path: Path, memory_dir: Path, inputs: list[Path | None]) -> bool:
    """True when ``out_path`` exists and is at least as new as every input."""
    try:
        out_mtime = Path(out_path).stat().st_mtime
    except OSError:
        return False
    newest = 0.0
    md = Path(memory_dir)
    if md.is_dir():
        for f in md.glob("*.md"):
            try:
                newest = max(newest, f.stat().st_mtime)
            except OSError:
                pass
    for p in inputs:
        if p is None:
            continue
        try:
            newest = max(newest, Path(p).stat().st_mtime)
        except OSError:
            pass
    return out_mtime >= newest


def reflect(memory_dir: Path, out_path: Path, graph_path: Path | None = None, analysis_path: Path | None = None,
            labels_path: Path | None = None, *, now: datetime | None = None,
            half_life_days: float = HALF_LIFE_DAYS, min_corroboration: int = MIN_CORROBORATION,
            topics_from_graph: bool = False, links_fallback: bool = False) -> tuple[Path, dict[str, Any]]:
    """Write LESSONS.md (and, with a graph, the learning sidecar); graphify's rules unless
    ``topics_from_graph`` / ``links_fallback`` (kg reflect: topics from graph.json's own
    communities, relation fingerprints for nodes whose source file is not on disk)."""
    docs = load_memory_docs(memory_dir)
    communities = known = None
    graph_data = None
    if graph_path is not None:
        graph_path = Path(graph_path)
        analysis_path = Path(analysis_path) if analysis_path else graph_path.parent / ".graphify_analysis.json"
        labels_path = Path(labels_path) if labels_path else graph_path.parent / ".graphify_labels.json"
        graph_data = _read_json(graph_path) if graph_path.exists() else None
        communities = node_communities(graph_path, analysis_path, labels_path, graph_data,
                                       from_graph=topics_from_graph)
        known = known_nodes(graph_data)
    agg = aggregate(docs, communities, now=now, half_life_days=half_life_days,
                    min_corroboration=min_corroboration, known=known)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(render_lessons(agg), encoding="utf-8")
    if graph_path is not None and isinstance(graph_data, dict):
        try:
            from kgservice.graphify.loader import graph_from_data

            write_sidecar(agg, graph_path, now=now, graph=graph_from_data(graph_data, graph_path),
                          links_fallback=links_fallback)
        except Exception:  # the lessons file is the product; the sidecar is best-effort
            pass
    return out_path, agg

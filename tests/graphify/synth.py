"""A seeded synthetic graph.json shaped like graphify's code graphs, for differential tests and benchmarks.

``write_synth(path, files=250)`` gives about 20 nodes per file (≈5k nodes at 250 files,
≈100k at 5,000): file nodes at ``L1``, classes, ``.method()`` homonyms shared by many files
(``.login()``), functions, docs and concepts; ``contains`` / ``method`` / ``calls`` /
``imports_from`` / ``references`` links with graphify's ``context`` values and call-site
``source_location``; 10 % of calls stored flipped with ``_src``/``_tgt``; a few parallel
links on one pair (a simple graph folds them, as networkx does); communities (3 % null,
names on ~80 %); ``attributes`` and ``rationale`` on some nodes; three hubs (``Logger``,
``get_logger()``, ``Settings``); an isolated ``island_alpha()`` -> ``island_beta()`` pair.
Optionally graphify's ``.graphify_analysis.json`` / ``.graphify_labels.json`` sidecars.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

PKGS = ["auth", "web", "report", "store", "util", "api", "jobs", "billing"]
WORDS = ["session", "token", "user", "record", "invoice", "config", "schema", "cache", "queue", "order"]
VERBS = ["load", "save", "build", "parse", "encode", "refresh", "logout", "render", "check", "sync"]
METHODS = [".login()", ".save()", ".load()", ".close()", ".__init__()", ".run()", ".refresh()"]
CONTEXTS = ["call", "call", "call", "parameter_type", "return_type", "field", "generic_arg"]


def synth_graph(files: int = 250, seed: int = 7) -> dict:
    rng = random.Random(seed)
    nodes: list[dict] = []
    links: list[dict] = []
    funcs: list[tuple[str, str]] = []  # (id, source_file)
    classes: list[str] = []
    file_ids: list[str] = []
    n_comm = max(4, files // 8)
    names = {c: f"{rng.choice(WORDS).title()} {rng.choice(['Layer', 'Flow', 'Core', 'Model'])} {c}"
             for c in range(n_comm) if rng.random() < 0.8}

    def community(fi: int):
        if rng.random() < 0.03:
            return None
        return fi % n_comm

    def node(nid, label, sf, loc, comm, **extra):
        d = {"id": nid, "label": label, "file_type": extra.pop("file_type", "code"), "source_file": sf,
             "source_location": loc, "community": comm}
        if comm is not None and comm in names:
            d["community_name"] = names[comm]
        d.update(extra)
        nodes.append(d)
        return nid

    def link(u, v, relation, sf, loc=None, context=None, confidence="EXTRACTED", flip=False):
        lk = {"source": u, "target": v, "relation": relation, "confidence": confidence, "source_file": sf}
        if loc:
            lk["source_location"] = loc
        if context:
            lk["context"] = context
        if flip:
            lk = {**lk, "source": v, "target": u, "_src": u, "_tgt": v}
        links.append(lk)

    # hubs
    node("util_log", "log.py", "util/log.py", "L1", 0)
    node("util_log_logger", "Logger", "util/log.py", "L3", 0, attributes={"kind": "class", "bases": ["object"]})
    node("util_log_get_logger", "get_logger()", "util/log.py", "L20", 0)
    node("util_settings_settings", "Settings", "util/settings.py", "L5", 1,
         rationale="Central settings object read by every module.")
    link("util_log", "util_log_logger", "contains", "util/log.py", "L3")
    link("util_log", "util_log_get_logger", "contains", "util/log.py", "L20")
    for fi in range(files):
        pkg = PKGS[fi % len(PKGS)]
        word = WORDS[(fi // len(PKGS)) % len(WORDS)]
        mod = f"{word}_{fi}"
        sf = f"{pkg}/{mod}.py"
        fid = f"{pkg}_{mod}"
        comm = community(fi)
        node(fid, f"{mod}.py", sf, "L1", comm)
        file_ids.append(fid)
        line = 3
        for ci in range(2):
            cname = f"{word.title()}{rng.choice(['Store', 'Service', 'Client', 'Manager'])}{ci}"
            cid = node(f"{fid}_{cname.lower()}", cname, sf, f"L{line}", comm,
                       **({"attributes": {"dataclass": True, "fields": rng.randint(1, 9)}} if rng.random() < 0.1
                          else {}))
            classes.append(cid)
            link(fid, cid, "contains", sf, f"L{line}")
            line += 2
            for m in rng.sample(METHODS, 3):
                mid = node(f"{cid}_{m.strip('.()_')}", m, sf, f"L{line}", comm)
                link(cid, mid, "method", sf, f"L{line}")
                funcs.append((mid, sf))
                line += 4
        for k in range(8):
            verb = VERBS[(fi + k) % len(VERBS)]
            w = WORDS[(fi * 3 + k) % len(WORDS)]
            fname = f"{verb}_{w}" if rng.random() < 0.5 else f"{verb}_{w}_{fi}"
            extra = {"rationale": f"{verb.title()}s the {w} before it is used."} if rng.random() < 0.05 else {}
            fn = node(f"{fid}_{fname}", f"{fname}()", sf, f"L{line}", comm, **extra)
            link(fid, fn, "contains", sf, f"L{line}")
            funcs.append((fn, sf))
            line += 6
    # docs and concepts
    for di in range(max(2, files // 10)):
        sf = f"docs/guide_{di}.md"
        did = node(f"docs_guide_{di}", f"guide_{di}.md", sf, "L1", di % n_comm, file_type="document")
        for k in range(3):
            w = WORDS[(di + k) % len(WORDS)]
            cid = node(f"docs_guide_{di}_{w}_{k}", f"{w.title()} handling {di}-{k}", sf, f"L{3 + k * 10}",
                       di % n_comm, file_type="concept")
            link(did, cid, "contains", sf, f"L{3 + k * 10}")
            tgt = rng.choice(funcs)[0]
            link(cid, tgt, "references", sf, f"L{4 + k * 10}", confidence="INFERRED")
    # calls, imports, type references
    for fn, sf in funcs:
        for _ in range(rng.randint(1, 3)):
            tgt = rng.choice(funcs)[0]
            if tgt == fn:
                continue
            link(fn, tgt, "calls", sf, f"L{rng.randint(2, 400)}", context=rng.choice(CONTEXTS),
                 confidence=rng.choice(["EXTRACTED", "EXTRACTED", "INFERRED"]), flip=rng.random() < 0.1)
        r = rng.random()
        if r < 0.08:
            link(fn, "util_log_get_logger", "calls", sf, f"L{rng.randint(2, 400)}", context="call")
        elif r < 0.16:
            link(fn, "util_log_logger", "references", sf, f"L{rng.randint(2, 400)}", context="return_type")
        elif r < 0.2:
            link(fn, "util_settings_settings", "references", sf, f"L{rng.randint(2, 400)}", context="parameter_type")
    for fid in file_ids:
        for tgt in rng.sample(file_ids, 2):
            if tgt != fid:
                link(fid, tgt, "imports_from", fid.replace("_", "/", 1) + ".py", "L1", context="import")
    # parallel links on a few pairs (folded by a simple graph)
    for fn, sf in funcs[:: max(1, len(funcs) // 20)]:
        tgt = rng.choice(funcs)[0]
        if tgt != fn:
            link(fn, tgt, "calls", sf, "L7", context="call")
            link(fn, tgt, "references", sf, "L8", context="return_type", confidence="INFERRED")
    node("jobs_island_alpha", "island_alpha()", "jobs/island.py", "L2", None)
    node("jobs_island_beta", "island_beta()", "jobs/island.py", "L9", None)
    link("jobs_island_alpha", "jobs_island_beta", "calls", "jobs/island.py", "L3", context="call")
    return {"directed": False, "multigraph": False, "graph": {"schema_version": 1}, "nodes": nodes,
            "links": links, "hyperedges": []}


def write_synth(path: Path, files: int = 250, seed: int = 7, sidecars: bool = True) -> dict:
    data = synth_graph(files, seed)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    if sidecars:
        comms: dict[str, list[str]] = {}
        labels: dict[str, str] = {}
        for n in data["nodes"]:
            if n["community"] is not None:
                comms.setdefault(str(n["community"]), []).append(n["id"])
                if n.get("community_name"):
                    labels[str(n["community"])] = n["community_name"]
        (path.parent / ".graphify_analysis.json").write_text(json.dumps(
            {"communities": comms, "cohesion": {}, "gods": [], "surprises": [], "questions": []}), encoding="utf-8")
        (path.parent / ".graphify_labels.json").write_text(json.dumps(labels), encoding="utf-8")
    return data


PREFIXES = ["café_", "naïve_", "Ærø_", "日本語_", "Привет_", "🚀_", "straße_", "Ω_"]
RELATIONS = ["calls", "calls", "imports_from", "references", "uses", "inherits", "method", "defines"]


def nulls_graph(n: int = 300, seed: int = 5) -> dict:
    """A graph with the label shapes graphify meets in the wild: every 20th node from n4 on with
    ``"label": null``, every 20th from n9 on with no ``label`` at all, ~30 % of the rest behind a
    non-ASCII prefix (café / 日本語 / Привет / 🚀 ...), 3 labels held by 3 nodes each, ~5 % null
    communities, file nodes at L1, and a labelled hub ``RenderCache0`` (n0) with 34 links."""
    rng = random.Random(seed)
    nodes: list[dict] = []
    for i in range(n):
        mod = i % 20
        sf = f"pkg/mod{mod}.py"
        d: dict = {"id": f"n{i}", "file_type": "code", "source_file": sf, "source_location": f"L{i % 50 + 1}",
                   "community": None if rng.random() < 0.05 else i % 12}
        if i < 20:
            d["label"], d["source_location"] = f"mod{mod}.py", "L1"
        if i == 0:
            d["label"], d["source_location"] = "RenderCache0", "L3"
        elif i % 20 == 4:
            d["label"] = None
        elif i % 20 == 9:
            d.pop("label", None)  # no label at all
        elif i >= 20:
            base = rng.choice([f"render_{rng.choice(WORDS)}_{i}()", f"{rng.choice(WORDS).title()}Store{i}",
                               f".{rng.choice(VERBS)}()", f"{rng.choice(VERBS)}_{rng.choice(WORDS)}()"])
            if i in (40, 41, 42):
                base = "shared_helper()"
            elif i in (60, 61, 62):
                base = "Config"
            elif i in (80, 81, 82):
                base = "parse()"
            d["label"] = (rng.choice(PREFIXES) + base) if rng.random() < 0.3 else base
        nodes.append(d)
    links: list[dict] = []

    def link(u: int, v: int, rel: str) -> None:
        lk = {"source": f"n{u}", "target": f"n{v}", "relation": rel,
              "confidence": rng.choice(["EXTRACTED", "EXTRACTED", "INFERRED"]),
              "source_file": nodes[u]["source_file"], "source_location": f"L{rng.randint(1, 90)}"}
        if rel == "calls":
            lk["context"] = "call"
        links.append(lk)

    for k in range(34):
        link(rng.randrange(20, n), 0, rng.choice(["calls", "references", "uses"]))
    for i in range(20, n):
        link(i % 20, i, "contains")
    while len(links) < 627:
        u, v = rng.randrange(n), rng.randrange(n)
        if u != v:
            link(u, v, rng.choice(RELATIONS))
    return {"directed": False, "multigraph": False, "graph": {"schema_version": 1}, "nodes": nodes,
            "links": links, "hyperedges": []}

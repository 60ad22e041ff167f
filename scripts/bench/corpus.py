#!/usr/bin/env python
"""Synthetic unit corpus for the benchmarks: seeded, power-law degrees, every family.

    python scripts/bench/corpus.py --units 100000 --out /tmp/kgbench/corpus-100k [--seed 7]

Writes ``part-00000.units`` ... (``--per-file`` units each, default 10 000; each file is
one ingest batch and one ``doc``) plus ``meta.json`` (counts per family, hub labels,
parameters). The same ``--units/--seed`` always gives byte-identical files.

What the corpus looks like (chosen before any measurement, not tuned to the results):

* concepts: ``units * 0.3`` English concepts ("adaptive lattice", "quantum cache 17"),
  picked with Zipf-like rank weights, so a few hub concepts carry most mentions and
  most concepts appear a handful of times. Subjects use exponent 0.6 (facts are about
  many things), objects 0.85 (facts point at hubs), i.e. a degree tail of
  P(k) ~ k^-2.2 — the range measured for real knowledge graphs (2.0-2.5).
* a category layer (the first 2 % of concepts) that ``belongs_to`` edges point into,
  parents always lower-ranked than children, so the taxonomy is a DAG of depth 2-6.
* families, per 100 units: content 38 (causes / uses / leads to / 导致 / 使用 / created by /
  released in / written in ...), of 14, belongs_to 14, synonym 8 (two thirds Chinese <->
  English across languages, the rest English aliases), related_to 8, narrows 3,
  node-level supersession 2 (tool v1 replaced by v2 replaced by v3), and 13 units that
  restate an earlier fact and supersede it (unit-level chains of 2-4).
* modifier rows on ~35 % of units: ``()[confidence] (high|medium|low)``, a ``()[source]
  {report N}`` node (sources are hubs too), quantities ``()[degree] (N %)``; ~10 % of
  units carry a literal argument (a year).
* Chinese predicates and Chinese concept twins so the lexicon's zh side is exercised.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ADJ = ("adaptive abstract active acoustic aerial agile ambient analog ancient angular applied "
       "atomic autonomous balanced binary biological bounded bright broad carbon cellular central "
       "chaotic chemical civic classical clinical coastal cognitive cold compact composite "
       "concurrent conic cosmic crystal cubic cyclic dark deep dense digital discrete distributed "
       "dormant dual dynamic early elastic electric elliptic embedded emergent empirical encrypted "
       "equatorial ethical federated fiscal fixed fluid formal fractal free frozen functional "
       "general genetic global golden granular graphic green hidden high hybrid hyper implicit "
       "inert infinite inner integral internal inverse ionic kinetic lateral latent legal linear "
       "liquid local logical low lunar magnetic marine massive medical mental metric micro "
       "minimal mobile modal modular molecular mutual natural neural nominal nuclear numeric "
       "oceanic open optical orbital organic outer parallel passive periodic planar polar "
       "portable primal private public pure quantum radial random rapid rational recursive "
       "regional relative remote residual rigid robust rural scalar secure semantic serial "
       "shallow silent simple social solar sonic sparse spatial spectral stable static "
       "statistical stellar stochastic strategic structural subtle symbolic synthetic tactical "
       "temporal thermal tidal topical toxic tropical urban vast verbal virtual visual "
       "volatile weak wild").split()
NOUN = ("agent algorithm anchor antenna archive array asset atlas balance barrier basin beacon "
        "bridge buffer cache canal catalyst channel charter circuit cluster codec colony compass "
        "compiler conduit corridor cortex crystal current cycle decoder delta dialect diode "
        "doctrine domain dynamo economy ecosystem effect element engine enzyme equation estuary "
        "field filter flux forest formula fossil fragment frame frontier furnace gateway genome "
        "glacier gradient grammar graph grid habitat harbor heuristic horizon hormone index "
        "inertia interface island kernel lattice layer ledger lens lexicon library ligand "
        "manifold market matrix membrane memory mesh metric module monsoon motor network neuron "
        "nucleus orbit organ oscillator parser pathway pattern pendulum pipeline plasma plateau "
        "polymer portal prism probe processor protein protocol pulse quasar reactor receptor "
        "reef register relay reservoir resonance ribbon river router satellite scheduler "
        "sediment sensor sequence signal socket solvent spectrum spindle spiral stack "
        "syntax system tensor terrain theorem thread tissue token topology torrent tracker "
        "turbine valley vector vessel virus vortex wave window").split()
# 319 common Chinese characters: twins are 2-4 character compounds (unique per concept)
HANZI = ("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后"
         "多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它"
         "合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变"
         "条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头"
         "基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即"
         "保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带")
PRED = {  # kind -> (weight, surface predicates); surfaces are lexicon members (en + zh)
    "content": (38, ["causes", "leads to", "uses", "relies on", "created by", "written in", "released in",
                     "triggers", "prevents", "导致", "使用", "引起", "introduces", "believes"]),
    "of": (14, ["has", "contains", "includes", "有", "具有"]),
    "belongs_to": (14, ["is a", "part of", "subclass of", "属于", "是一种", "instance of"]),
    "synonym": (8, ["同义", "also known as", "same as", "又称"]),
    "related_to": (8, ["related to", "associated with", "相关于", "see also"]),
    "narrows": (3, ["narrows", "is a kind of", "特化"]),
    "superseded": (2, ["replaced by", "superseded by", "被取代"]),
    "restate": (13, []),  # a newer version of an earlier fact: ()[supersedes] #old
}
CONFIDENCE = ["high", "medium", "low"]


def _label(i: int) -> str:
    """Unique English label of concept i (hubs get the short ones)."""
    a, rest = i % len(ADJ), i // len(ADJ)
    n, k = rest % len(NOUN), rest // len(NOUN)
    return f"{ADJ[a]} {NOUN[n]}" + (f" {k}" if k else "")


def _zh(i: int) -> str:
    """Unique Chinese label of concept i's twin: base-319 digits, at least 2 characters."""
    chars, x = [], i + len(HANZI)
    while x:
        x, d = divmod(x, len(HANZI))
        chars.append(HANZI[d])
    return "".join(reversed(chars)) + ("类" if len(chars) < 3 else "")


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace("}", "\\}").replace(")", "\\)").replace("]", "\\]")


class Sampler:
    """Zipf-like ranks over [0, n): weight(r) ~ 1 / (r + 1) ** s, drawn in vectorised blocks."""

    def __init__(self, rng: np.random.Generator, n: int, s: float, block: int = 65536):
        w = 1.0 / np.power(np.arange(1, n + 1, dtype=np.float64), s)
        self.cdf = np.cumsum(w) / w.sum()
        self.rng, self.block, self.buf, self.pos = rng, block, np.empty(0, dtype=np.int64), 0

    def __call__(self) -> int:
        if self.pos >= len(self.buf):
            self.buf = np.searchsorted(self.cdf, self.rng.random(self.block), side="right")
            self.pos = 0
        self.pos += 1
        return int(self.buf[self.pos - 1])


def generate(units: int, seed: int, out: Path, per_file: int = 10_000) -> dict:
    rng = np.random.default_rng(seed)
    n_concepts = max(100, int(units * 0.3))
    n_categories = max(10, n_concepts // 50)
    n_sources = max(5, units // 2000)
    subj = Sampler(rng, n_concepts, 0.6)
    obj = Sampler(rng, n_concepts, 0.85)
    cat = Sampler(rng, n_categories, 0.9)
    src = Sampler(rng, n_sources, 1.0)
    kinds = list(PRED)
    weights = np.array([PRED[k][0] for k in kinds], dtype=np.float64)
    kind_draw = rng.choice(len(kinds), size=units, p=weights / weights.sum())
    u01 = rng.random((units, 6))
    pick = rng.integers(0, 1 << 30, size=(units, 3))

    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("part-*.units"):
        old.unlink()
    counts: dict[str, int] = {k: 0 for k in kinds}
    mods = literals = 0
    # restatable facts: (unit id, subject, predicate, object) of earlier content/of units; chain tails only
    restatable: list[tuple[str, str, str, str]] = []
    version_of: dict[int, int] = {}  # concept -> last version number used in a supersession chain
    narrowed: dict[int, int] = {}
    lines: list[str] = []
    part = 0

    def flush() -> None:
        nonlocal lines, part
        (out / f"part-{part:05d}.units").write_text("\n".join(lines) + "\n", "utf-8")
        lines = []
        part += 1

    for i in range(units):
        uid = f"u{i}"
        kind = kinds[kind_draw[i]]
        r = u01[i]
        p = pick[i]
        mod_rows: list[str] = []
        s = subj()
        if kind == "restate" and restatable:
            j = int(p[0] % len(restatable))
            old_id, s_label, pred, _ = restatable[j]
            new_obj = _label(obj())
            head = f"#{uid} {{{_esc(s_label)}}} [{pred}] {{{_esc(new_obj)}}}"
            mod_rows.append(f"    ()[supersedes] #{old_id}")
            restatable[j] = (uid, s_label, pred, new_obj)  # the chain continues from the newest
        else:
            if kind == "restate":
                kind = "content"
            surfaces = PRED[kind][1]
            pred = surfaces[int(p[0] % len(surfaces))]
            if kind == "belongs_to":
                # child (any concept beyond the category layer, or a category) -> a lower-ranked category
                child = s if s >= n_categories else int(p[1] % n_concepts)
                parent = cat()
                if parent >= child:
                    parent = int(p[2] % max(1, child)) if child else 0
                if parent == child:
                    child = n_categories + int(p[1] % (n_concepts - n_categories))
                head = f"#{uid} {{{_esc(_label(child))}}} [{pred}] {{{_esc(_label(parent))}}}"
            elif kind == "synonym":
                if r[1] < 0.67:  # cross-language twin, in either direction
                    zh, en = _zh(s), _label(s)
                    a, b = (zh, en) if r[2] < 0.5 else (en, zh)
                else:
                    a, b = f"{_label(s)} system", _label(s)
                    pred = "also known as"
                head = f"#{uid} {{{_esc(a)}}} [{pred}] {{{_esc(b)}}}"
            elif kind == "narrows":
                base = obj()
                k = narrowed.get(base, 0) + 1
                narrowed[base] = k
                head = f"#{uid} {{{_esc(_label(base))} variant {k}}} [{pred}] {{{_esc(_label(base))}}}"
            elif kind == "superseded":
                v = version_of.get(s, 0) + 1
                version_of[s] = v
                head = f"#{uid} {{{_esc(_label(s))} v{v}}} [{pred}] {{{_esc(_label(s))} v{v + 1}}}"
            else:
                o = obj()
                if o == s:
                    o = (o + 1) % n_concepts
                s_label = _zh(s) if r[3] < 0.05 else _label(s)
                args = f"{{{_esc(_label(o))}}}"
                if kind == "content" and r[4] < 0.10:
                    args += f" ({1990 + int(p[1] % 35)})"
                    literals += 1
                head = f"#{uid} {{{_esc(s_label)}}} [{pred}] {args}"
                if kind in ("content", "of") and len(restatable) < 50_000:
                    restatable.append((uid, s_label, pred, _label(o)))
                elif kind in ("content", "of"):
                    restatable[int(p[2] % len(restatable))] = (uid, s_label, pred, _label(o))
            if r[0] < 0.20:
                mod_rows.append(f"    ()[confidence] ({CONFIDENCE[int(p[1] % 3)]})")
            if r[0] > 0.90:
                mod_rows.append(f"    ()[source] {{report {src()}}}")
            if 0.55 < r[0] < 0.60:
                mod_rows.append(f"    ()[degree] ({int(p[2] % 100)} %)")
        counts[kind] += 1
        mods += len([m for m in mod_rows if "supersedes" not in m])
        lines.append(head)
        lines.extend(mod_rows)
        if (i + 1) % per_file == 0:
            flush()
    if lines:
        flush()
    meta = {
        "units": units, "seed": seed, "files": part, "per_file": per_file,
        "concepts": n_concepts, "categories": n_categories, "sources": n_sources,
        "families": counts, "modifier_rows": mods, "literal_args": literals,
        "hubs": [_label(i) for i in range(5)], "categories_top": [_label(i) for i in range(5)],
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return meta


def ensure(units: int, seed: int, root: Path, per_file: int = 10_000) -> Path:
    """The corpus directory for (units, seed) under root, generated once and reused."""
    out = root / f"corpus-{units}-s{seed}"
    meta = out / "meta.json"
    if meta.exists():
        m = json.loads(meta.read_text("utf-8"))
        if m.get("units") == units and m.get("seed") == seed and m.get("per_file") == per_file:
            return out
    generate(units, seed, out, per_file)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--units", type=int, required=True)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--per-file", type=int, default=10_000)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    import time

    t0 = time.perf_counter()
    meta = generate(a.units, a.seed, a.out, a.per_file)
    dt = time.perf_counter() - t0
    print(f"{a.units} units in {meta['files']} files under {a.out} ({dt:.1f}s)")
    for k, v in meta["families"].items():
        print(f"  {k:12s} {v:>9d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Which question words :mod:`kgservice.entry.spelling` reads as another word, per shortest
length: the evidence for :data:`kgservice.entry.spelling.MIN_LETTERS` (scripts/eval/RESULTS.md,
"One-letter misspellings"). For each graph, the questions of its floor sets (demo: the demo gold
questions and the off-topic set; MuSiQue: whole questions, first hops and the off-topic set),
every word respelt against the label vocabulary (the entry step, its other forms counted in
labels and units as the entry step does) and against the units' stems
(the name rule, name words only), at each length from 4 to 9. No model.

    python scripts/eval/spelling_probe.py --graph demo --graph musique \
        [--graph $KG_EVAL_DIR/musique-spacy.json] [--graph $KG_EVAL_DIR/musique-rules.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from kgservice.answer.graph_words import graph_stems  # noqa: E402
from kgservice.answer.shape import asked, stem  # noqa: E402
from kgservice.entry.match import singular  # noqa: E402
from kgservice.entry.spelling import respelt  # noqa: E402

SETS = ROOT / "scripts" / "eval" / "answer_sets"
LENGTHS = range(4, 10)


def graph(name: str) -> tuple[Any, list[tuple[str, str]]]:
    """The knowledge base and its (kind, question) pairs."""
    from scripts.eval import floor_eval

    off = json.loads((SETS / "offtopic.json").read_text("utf-8"))["questions"]
    if name == "demo":
        demo = ROOT / "kgservice" / "demo"
        kb = floor_eval.text_graph("demo", [demo / "units"], [demo / "texts"])
        spec = json.loads((SETS / "demo.json").read_text("utf-8"))
        return kb, [("demo", x["q"]) for x in spec["demo"]] + [("off-topic", x["q"]) for x in off
                                                                if x["kind"] != "near-musique"]
    from scripts.eval.dataset import load, load_musique
    from scripts.eval.harness import build

    ctx = build(load_musique() if name == "musique" else load(Path(name)))
    return ctx.kb, [(k, q) for q, _, k in floor_eval.musique_questions(ctx)] + \
        [("off-topic", x["q"]) for x in off if x["kind"] != "near-demo"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--graph", action="append", required=True, help="demo, musique, or a MuSiQue set file")
    args = p.parse_args(argv)
    for name in args.graph:
        kb, qs = graph(name)
        vocab = kb.parts.entry_finder.index().vocab
        df = graph_stems(kb.parts.lexical_units.index())
        print(f"\n## {name}: {len(qs)} questions")
        for n in LENGTHS:
            entry, names = set(), set()
            for kind, q in qs:
                for w in re.findall(r"[^\W\d_]+", q):
                    r = respelt(w.lower(), lambda x: vocab.get(x, 0), n,
                                own=lambda x: max(vocab.get(singular(x), 0), df.get(stem(x), 0)))
                    if r:
                        entry.add(f"{kind}: {w}->{r}")
                for nm in asked(q).names:
                    for t in nm:
                        if not df.get(stem(t), 0):
                            r = respelt(t, lambda x: int(df.get(stem(x), 0) > 0), n, same=stem)
                            if r:
                                names.add(f"{kind}: {t}->{r}")
            print(f"- {n}+ letters: entry {len(entry)}: {'; '.join(sorted(entry))}")
            print(f"  name rule {len(names)}: {'; '.join(sorted(names))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How many first hops an extractor's graph can walk: MuSiQue's first-hop passages that hold a
triple from their title entity to the bridge entity.

``python scripts/eval/bridge_edges.py SET.json [SET2.json …]`` (sets in the generic shape over
MuSiQue's passages: ``musique-spacy``, ``musique-rules``; the MuSiQue files for the questions'
decompositions come from ``KG_EVAL_MUSIQUE``).

Every MuSiQue question is a chain; its first step names an entity and asks for the bridge
("What company published *Journal of Psychotherapy Integration*?" -> American Psychological
Association), answered by one passage, whose title is the entity. The second hop can only be
walked if that passage's triples join the title to the bridge: a triple one side of which is the
title (less a qualifier such as "(film)"; the side holds the title's words or the title holds
the side's) and the other side holds the bridge's words. "X is a 1952 film directed by Y" read
as ``1952 film / directed by / Y`` does not.

>>> same_entity("Talk About a Stranger", "Talk About a Stranger (film)"), same_entity("1952 film", "Talk About a Stranger")
(True, False)
>>> holds("David Bradley (director)", "David Bradley"), holds("Bradley", "David Bradley")
(True, False)
>>> joins([["Talk About a Stranger", "directed by", "David Bradley"]], "Talk About a Stranger (film)", "David Bradley")
True
>>> joins([["1952 American film noir", "directed by", "David Bradley"]], "Talk About a Stranger", "David Bradley")
False
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from kgservice.entry.match import STOPWORDS, bare_label, tokens  # noqa: E402
from scripts.eval.dataset import MUSIQUE_DIR  # noqa: E402


def _words(text: str) -> set[str]:
    return {t for t in tokens(text) if t not in STOPWORDS}


def same_entity(side: str, title: str) -> bool:
    """Is a triple's side the passage's title entity (its words hold the bare title's, or the
    bare title's hold its)?"""
    s, t = _words(side), _words(bare_label(title))
    return bool(s) and bool(t) and (t <= s or s <= t)


def holds(side: str, answer: str) -> bool:
    """Does a triple's side hold every word of the answer?"""
    a = _words(answer)
    return bool(a) and a <= _words(side)


def joins(triples: list[list[str]], title: str, answer: str) -> bool:
    """Does one of the triples join the title entity to the answer (either way round)?"""
    for t in triples:
        if len(t) != 3:
            continue
        s, _, o = (str(x) for x in t)
        if (same_entity(s, title) and holds(o, answer)) or (same_entity(o, title) and holds(s, answer)):
            return True
    return False


def coverage(path: Path) -> tuple[int, int]:
    """(first-hop passages joining title to bridge, first-hop passages) over the set's questions."""
    ds = json.loads(path.read_text("utf-8"))
    raw = {q["id"]: q for q in json.loads((MUSIQUE_DIR / "musique_train.json").read_text("utf-8"))}
    corpus = json.loads((MUSIQUE_DIR / "musique_train_corpus.json").read_text("utf-8"))
    index = {(p["title"], p["text"]): f"m{i:04d}" for i, p in enumerate(corpus)}
    passages = {p["id"]: p for p in ds["passages"]}
    hit = total = 0
    for q in ds["questions"]:
        r = raw.get(q["id"])
        if r is None:
            continue
        step = r["question_decomposition"][0]
        para = r["paragraphs"][step["paragraph_support_idx"]]
        p = passages[index[(para["title"], para["paragraph_text"])]]
        total += 1
        hit += joins(p.get("triples", []), p["title"], step["answer"])
    return hit, total


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: bridge_edges.py SET.json [SET2.json …]", file=sys.stderr)
        return 2
    for a in argv:
        h, n = coverage(Path(a))
        print(f"{a}: {h} of {n} first-hop passages join their title to the bridge ({100.0 * h / max(1, n):.0f} %)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Eval data: one generic JSON shape, a MuSiQue/HippoRAG loader, and units built from triples.

The shape the harness runs on (any corpus of this shape works, ``--data FILE``)::

    {
      "name": "my-set",
      "passages": [ {"id": "p1", "title": "…", "text": "…",
                     "triples": [["subject", "predicate", "object"], …]}, … ],
      "questions": [ {"id": "q1", "question": "…", "gold": ["p1", "p7"], "hops": 2,
                      "type": "bridge", "candidates": ["p1", "p3", "p7"]}, … ]
    }

``gold`` lists the supporting passage ids; ``hops`` is optional (per-hop rows use it, else a
MuSiQue-style id prefix ``2hop__…``/``3hop1__…``, else ``len(gold)``); ``type`` is optional
(``bridge``, ``comparison``, …; else ``bridge`` for two hops and ``n-hop`` beyond);
``candidates`` is optional: the passages a question's own context lists, which ``--slice``
keeps (gold passages are always kept). One unit per usable triple, ``{subject} [predicate] {object}``, id
``<passage id>.t<n>`` and ``doc`` = the passage id, so every unit maps back to its passage.
A triple whose parts are not three non-empty strings (or that no store could index) is
skipped and counted.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgservice.families import Lexicon
from kgservice.model import Unit, Value
from kgservice.stores.validate import text_problem

# The slice lives in the team's shared folder beside the checkout (never copied into the repo);
# KG_EVAL_MUSIQUE points elsewhere.
MUSIQUE_DIR = Path(os.environ.get("KG_EVAL_MUSIQUE")
                   or Path(__file__).resolve().parents[2].parent / "shared" / "eval" / "musique")
HOTPOTQA_DIR = Path(os.environ.get("KG_EVAL_HOTPOTQA")
                    or Path(__file__).resolve().parents[2].parent / "shared" / "eval" / "hotpotqa")
_OPENIE = "openie_musique_train_results_ner_gpt-3.5-turbo-1106_1890.json"
_ID_OK = re.compile(r"[^A-Za-z0-9_.:\-]")
_HOP_ID = re.compile(r"^(\d+)hop")


@dataclass
class Passage:
    id: str
    title: str
    text: str
    triples: list[list[Any]] = field(default_factory=list)


@dataclass
class Question:
    id: str
    question: str
    gold: list[str]
    hops: int | None = None
    type: str | None = None
    candidates: list[str] = field(default_factory=list)

    @property
    def hop_count(self) -> int:
        """Declared hops, else the count a MuSiQue-style string id carries, else one per gold passage.

        >>> Question("4hop1__709382_146811", "?", ["a", "b"]).hop_count, Question("q7", "?", ["a", "b"]).hop_count
        (4, 2)
        >>> Question("x", "?", ["a"], hops="3").hop_count
        3
        """
        if self.hops is not None and str(self.hops).strip().isdigit():
            return int(str(self.hops).strip())
        m = _HOP_ID.match(str(self.id))
        return int(m.group(1)) if m else len(self.gold)

    @property
    def kind(self) -> str:
        """The question type of the per-type rows.

        >>> Question("2hop__1_2", "?", ["a", "b"]).kind, Question("3hop1__1", "?", ["a"]).kind
        ('bridge', '3-hop')
        >>> Question("h1", "?", ["a", "b"], type="comparison").kind
        'comparison'
        """
        if self.type:
            return str(self.type)
        return "bridge" if self.hop_count <= 2 else f"{self.hop_count}-hop"


@dataclass
class Dataset:
    """``graph``: the name of another set whose passages (ids, texts and triples) this one shares
    and whose built store it reuses, when only the questions differ (a second question set over
    one corpus, ``twowiki_dev.py``); the store's key still digests the passages and triples, so a
    set naming a graph it does not match builds its own store under that name."""
    name: str
    passages: list[Passage]
    questions: list[Question]
    graph: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, **({"graph": self.graph} if self.graph else {}),
                "passages": [p.__dict__ for p in self.passages],
                "questions": [q.__dict__ for q in self.questions]}


class DatasetError(ValueError):
    pass


def load(path: Path) -> Dataset:
    """A dataset in the generic shape; every gold id must be a passage id."""
    raw = json.loads(Path(path).read_text("utf-8"))
    try:
        passages = [Passage(str(p["id"]), str(p.get("title", "")), str(p.get("text", "")), list(p.get("triples", [])))
                    for p in raw["passages"]]
        questions = [Question(str(q["id"]), str(q["question"]), [str(g) for g in q["gold"]], q.get("hops"),
                              q.get("type"), [str(c) for c in q.get("candidates", [])])
                     for q in raw["questions"]]
    except (KeyError, TypeError) as exc:
        raise DatasetError(f"{path}: not the eval shape (see scripts/eval/dataset.py): missing {exc}") from None
    ids = {p.id for p in passages}
    if len(ids) != len(passages):
        raise DatasetError(f"{path}: passage ids are not unique")
    for q in questions:
        bad = [g for g in q.gold if g not in ids]
        if bad or not q.gold:
            raise DatasetError(f"{path}: question {q.id} has gold passages that are not passages: {bad or 'none given'}")
    graph = raw.get("graph")
    return Dataset(str(raw.get("name", Path(path).stem)), passages, questions, str(graph) if graph else None)


def subset(ds: Dataset, limit: int | None = None, slice_corpus: bool = False) -> Dataset:
    """The first ``limit`` questions; with ``slice_corpus`` only the passages they list (their
    gold and candidate passages), for a small run. The name says which part it is, so the
    build cache never mistakes a part for the whole."""
    questions = ds.questions[:limit] if limit is not None else list(ds.questions)
    passages = ds.passages
    if slice_corpus:
        keep = {p for q in questions for p in (*q.gold, *q.candidates)}
        passages = [p for p in ds.passages if p.id in keep]
    name = ds.name + (f"-{limit}q" if limit is not None else "") + ("-sliced" if slice_corpus else "")
    return Dataset(name, passages, questions, ds.graph if not slice_corpus else None)


def load_musique(directory: Path = MUSIQUE_DIR, limit: int | None = None, slice_corpus: bool = False) -> Dataset:
    """The HippoRAG MuSiQue files as a :class:`Dataset` (passage ids ``m<corpus index>``).

    ``limit``: the first N questions; ``slice_corpus``: keep only the passages those
    questions list (their 20 paragraphs each), for a small smoke run."""
    qs = json.loads((directory / "musique_train.json").read_text("utf-8"))
    corpus = json.loads((directory / "musique_train_corpus.json").read_text("utf-8"))
    docs = json.loads((directory / _OPENIE).read_text("utf-8"))["docs"]
    index = {(p["title"], p["text"]): i for i, p in enumerate(corpus)}
    passages = [Passage(f"m{i:04d}", p["title"], p["text"], docs[i]["extracted_triples"]
                        if docs[i]["title"] == p["title"] and docs[i]["text"] == p["text"] else [])
                for i, p in enumerate(corpus)]
    questions = []
    for q in qs:
        ids = [f"m{index[(p['title'], p['paragraph_text'])]:04d}" for p in q["paragraphs"]]
        gold = [i for i, p in zip(ids, q["paragraphs"]) if p["is_supporting"]]
        questions.append(Question(q["id"], q["question"], gold, len(q["question_decomposition"]), candidates=ids))
    return subset(Dataset("musique", passages, questions), limit, slice_corpus)


def load_hotpotqa(directory: Path = HOTPOTQA_DIR, limit: int | None = None, slice_corpus: bool = False) -> Dataset:
    """HippoRAG's HotpotQA slice (``hotpotqa_train.json`` and ``hotpotqa_train_corpus.json``,
    branch ``legacy``) as a :class:`Dataset`: passage ids ``h<corpus index>``, a passage's text
    its sentences joined, gold = the titles of the question's supporting facts, ``type`` =
    HotpotQA's own (``bridge`` / ``comparison``), two hops each. No triples: HippoRAG released
    none for this slice, so a graph comes from an extractor (``spacy_triples.py``,
    ``rules_set.py --set hotpotqa``)."""
    qs = json.loads((directory / "hotpotqa_train.json").read_text("utf-8"))
    corpus = json.loads((directory / "hotpotqa_train_corpus.json").read_text("utf-8"))
    ids = {title: f"h{i:04d}" for i, title in enumerate(corpus)}
    passages = [Passage(ids[t], t, "".join(sents)) for t, sents in corpus.items()]
    questions = [Question(str(q["_id"]), q["question"], list(dict.fromkeys(ids[t] for t, _ in q["supporting_facts"])),
                          2, q.get("type"), [ids[t] for t, _ in q["context"]])
                 for q in qs]
    return subset(Dataset("hotpotqa", passages, questions), limit, slice_corpus)


def unit_id(pid: str, n: int) -> str:
    return f"{_ID_OK.sub('_', pid)}.t{n}"


def build_units(ds: Dataset, lexicon: Lexicon) -> tuple[list[Unit], dict[str, str], int]:
    """(units, unit id -> passage id, triples skipped)."""
    units: list[Unit] = []
    origin: dict[str, str] = {}
    skipped = 0
    for p in ds.passages:
        for n, t in enumerate(p.triples):
            if not (isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) and x.strip() for x in t)):
                skipped += 1
                continue
            s, pred, o = (x.strip() for x in t)
            if any(text_problem(x) for x in (s, pred, o)):
                skipped += 1
                continue
            info = lexicon.resolve(pred)
            uid = unit_id(p.id, n)
            units.append(Unit(id=uid, subject=s, predicate=pred, family=info.base, kind=info.kind,
                              inverse=info.inverse, args=(Value(node=o),), doc=p.id, mode="manual"))
            origin[uid] = p.id
    return units, origin, skipped


def save(ds: Dataset, path: Path) -> str:
    """Write the set in the generic shape through a temporary file, so a reader never sees half
    of one (``spacy_triples.py`` writes its own: it imports nothing of kgservice); returns the
    line the set builders print: where, and how many passages (with triples), triples and
    questions."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(ds.to_json(), ensure_ascii=False), "utf-8")
    tmp.replace(path)
    n = sum(len(p.triples) for p in ds.passages)
    return (f"{path}: {len(ds.passages)} passages ({sum(bool(p.triples) for p in ds.passages)} with triples), "
            f"{n} triples, {len(ds.questions)} questions")


def main(argv: list[str] | None = None) -> int:
    """Write a source set in the generic shape, for an extractor to fill (``spacy_triples.py``)."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(description="write an eval set in the generic shape")
    ap.add_argument("set", choices=["musique", "hotpotqa"])
    ap.add_argument("--dir", type=Path, help="the set's folder (default: KG_EVAL_MUSIQUE / KG_EVAL_HOTPOTQA)")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    loader, default = {"musique": (load_musique, MUSIQUE_DIR), "hotpotqa": (load_hotpotqa, HOTPOTQA_DIR)}[a.set]
    try:
        ds = loader(a.dir or default)
    except (OSError, ValueError, KeyError) as exc:
        print(f"{a.set} from {a.dir or default}: {exc}", file=sys.stderr)
        return 2
    print(save(ds, a.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

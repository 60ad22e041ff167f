"""A second eval set: MuSiQue's corpus and questions with triples from the project's own rules
extraction (:func:`kgservice.llm.rules.extract`, summary mode) instead of HippoRAG's GPT
OpenIE, so the graph is not LLM-built.

``python scripts/eval/rules_set.py [--musique DIR] [--out FILE]`` writes the set in the
generic shape (scripts/eval/dataset.py) to ``$KG_EVAL_DIR/musique-rules.json`` by default;
run it with ``scripts/eval/run.py --data FILE``. The file is derived data and stays out of
the repository, like the MuSiQue files it comes from. Passage ids, gold passages and
questions are those of ``--musique``, so the two sets differ only in their triples (and the
passage vectors are shared through the harness's text-keyed cache).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from kgservice.llm.rules import extract  # noqa: E402
from scripts.eval.dataset import MUSIQUE_DIR, Dataset, load_musique, save  # noqa: E402
from scripts.eval.harness import CACHE  # noqa: E402


def rules_triples(title: str, text: str) -> list[list[str]]:
    """(subject, predicate, object) per object of every unit the rules find in the passage's
    text. The title is given as the section heading a document's chunk carries: it is no
    sentence, but it names whom "Fawell" and "he" stand for (:func:`kgservice.llm.rules.whole_name`)."""
    out: list[list[str]] = []
    for u in extract(text, "summary", title)["units"]:
        for a in u["args"]:
            obj = a.get("node") or a.get("literal")
            if obj:
                out.append([u["subject"], u["predicate"], obj])
    return out


def rules_set(directory: Path = MUSIQUE_DIR) -> Dataset:
    ds = load_musique(directory)
    for p in ds.passages:
        p.triples = rules_triples(p.title, p.text)
    ds.name = "musique-rules"
    return ds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--musique", type=Path, default=MUSIQUE_DIR)
    ap.add_argument("--out", type=Path, default=CACHE / "musique-rules.json")
    a = ap.parse_args(argv)
    if not (a.musique / "musique_train_corpus.json").exists():
        print(f"--musique {a.musique}: no musique_train_corpus.json there", file=sys.stderr)
        return 2
    ds = rules_set(a.musique)
    save(ds, a.out)
    n = sum(len(p.triples) for p in ds.passages)
    print(f"{a.out}: {len(ds.passages)} passages ({sum(bool(p.triples) for p in ds.passages)} with triples), "
          f"{n} triples, {len(ds.questions)} questions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

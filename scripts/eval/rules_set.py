"""A second eval set: MuSiQue's (or HotpotQA's) corpus and questions with triples from the
project's own rules extraction (:func:`kgservice.llm.rules.extract`, summary mode) instead of
HippoRAG's GPT OpenIE, so the graph is not LLM-built.

``python scripts/eval/rules_set.py [--set musique|hotpotqa] [--dir DIR] [--out FILE]`` writes
the set in the generic shape (scripts/eval/dataset.py) to ``$KG_EVAL_DIR/<set>-rules.json`` by
default (``musique-rules.json`` with no ``--set``, as before); run it with
``scripts/eval/run.py --data FILE``. ``--dir`` is the source's folder (default
``KG_EVAL_MUSIQUE`` / ``KG_EVAL_HOTPOTQA``); ``--musique DIR`` is kept as ``--set musique
--dir DIR``. The file is derived data and stays out of the repository, like the files it
comes from. Passage ids, gold passages and questions are those of the source set, so a rules
set differs from the source's other graphs only in its triples (and the passage vectors are
shared through the harness's text-keyed cache). HotpotQA's slice has no released triples, so
``hotpotqa-rules`` sits beside ``hotpotqa-spacy`` (``spacy_triples.py``), not beside a GPT graph.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from kgservice.llm.rules import extract  # noqa: E402
from scripts.eval.dataset import (HOTPOTQA_DIR, MUSIQUE_DIR, Dataset, load_hotpotqa, load_musique,  # noqa: E402
                                  save)

# set -> (loader, default folder, the corpus file that must be in the folder)
SOURCES = {"musique": (load_musique, MUSIQUE_DIR, "musique_train_corpus.json"),
           "hotpotqa": (load_hotpotqa, HOTPOTQA_DIR, "hotpotqa_train_corpus.json")}
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


def rules_set(directory: Path | None = None, source: str = "musique") -> Dataset:
    """The ``source`` set (``musique`` or ``hotpotqa``) read from ``directory`` (default: its
    folder), every passage's triples replaced by the rules extraction's; named ``<source>-rules``."""
    loader, default, _ = SOURCES[source]
    return ruled(loader(directory or default))


def ruled(ds: Dataset) -> Dataset:
    """``ds`` with every passage's triples replaced by the rules extraction's
    (:func:`rules_triples`), named ``<its name>-rules``: any set's rules graph."""
    for p in ds.passages:
        p.triples = rules_triples(p.title, p.text)
    ds.name += "-rules"
    return ds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--set", choices=sorted(SOURCES), default="musique", dest="source",
                    help="the source set (default musique)")
    ap.add_argument("--dir", type=Path, help="the source's folder (default: KG_EVAL_MUSIQUE / KG_EVAL_HOTPOTQA)")
    ap.add_argument("--musique", type=Path, help="the MuSiQue folder (the same as --set musique --dir DIR)")
    ap.add_argument("--out", type=Path, help="default: $KG_EVAL_DIR/<set>-rules.json")
    a = ap.parse_args(argv)
    if a.musique is not None:
        if a.source != "musique" or a.dir is not None:
            print(f"--musique {a.musique}: give either --musique DIR or --set/--dir, not both", file=sys.stderr)
            return 2
        a.dir = a.musique
    _, default, corpus = SOURCES[a.source]
    directory = a.dir or default
    if not (directory / corpus).exists():
        print(f"--set {a.source} --dir {directory}: no {corpus} there", file=sys.stderr)
        return 2
    out = a.out or CACHE / f"{a.source}-rules.json"
    try:
        ds = rules_set(directory, a.source)
    except (OSError, ValueError, KeyError) as exc:
        print(f"--set {a.source} --dir {directory}: {exc}", file=sys.stderr)
        return 2
    print(save(ds, out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

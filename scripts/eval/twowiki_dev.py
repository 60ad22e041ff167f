"""A larger 2WikiMultiHopQA question set over the haystack graphs' passages: HippoRAG's 2Wiki dev questions.

``python scripts/eval/twowiki_dev.py --base $KG_EVAL_DIR/2wiki-haystack-spacy.json --questions FILE``
writes ``$KG_EVAL_DIR/<base name>-dev.json``: the base set's passages (ids, texts and triples
untouched) with the questions of ``FILE`` in place of the base's 20, and ``graph`` naming the
base set, so the run reuses the base's built store (``Dataset.graph``; the store's key still
digests the passages and triples). The base is a haystack set built by ``twowiki_set.py
--haystack`` (then ``spacy_triples.py``, or with ``--rules``): its passages hold HippoRAG's
6,119-passage 2Wiki corpus, the union of the contexts of HippoRAG's 1,000 2Wiki dev questions.

``FILE`` holds HippoRAG's 2Wiki question records (``data/2wikimultihopqa.json`` of its repository:
``_id``, ``question``, ``type``, ``supporting_facts`` [[title, sentence], …], ``evidences``
[[s, r, o], …]), as a JSON list or one record a line; a ``supporting_facts`` entry may also be a
bare title. Kept outside the repo, under ``KG_EVAL_2WIKI`` (README: where the copy came from).

Gold is mechanical: a question's gold passages are the corpus passages whose titles its
``supporting_facts`` name (each title once, in order). A question with a gold title the corpus
lacks is dropped and counted; so is any of IRCoT's 20 prompt questions (``twowiki_set``), which
the 20-question set already holds. ``type`` is 2WikiMultiHopQA's own (comparison, compositional,
inference, bridge_comparison); ``hops`` is the number of gold passages.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripts.eval.dataset import Dataset, DatasetError, Question, load, save  # noqa: E402
from scripts.eval.twowiki_set import CORPUS_FILE, PROMPT_FILE, TWOWIKI_DIR, parse_prompts  # noqa: E402


class RecordError(ValueError):
    pass


def read_records(path: Path) -> list[dict[str, Any]]:
    """The question records of ``path``: a JSON list, or one JSON object a line."""
    text = path.read_text("utf-8")
    try:
        if text.lstrip().startswith("["):
            rows = json.loads(text)
        else:
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError as exc:
        raise RecordError(f"{path}: not JSON or JSON lines: {exc}") from None
    for n, r in enumerate(rows):
        if not (isinstance(r, dict) and isinstance(r.get("_id"), str) and isinstance(r.get("question"), str)
                and isinstance(r.get("supporting_facts"), list) and r["supporting_facts"]):
            raise RecordError(f"{path}: record {n + 1}: needs a string '_id' and 'question' and a non-empty "
                              "'supporting_facts' list")
    return rows


def gold_titles(record: dict[str, Any]) -> list[str]:
    """The titles a record's ``supporting_facts`` name, each once, in order.

    >>> gold_titles({"supporting_facts": [["Lothair II", 1], ["Ermengarde of Tours", 0], ["Lothair II", 2]]})
    ['Lothair II', 'Ermengarde of Tours']
    >>> gold_titles({"supporting_facts": ["Aas Ka Panchhi", "Phoolwari"]})
    ['Aas Ka Panchhi', 'Phoolwari']
    """
    titles = [f if isinstance(f, str) else f[0] for f in record["supporting_facts"]]
    return list(dict.fromkeys(str(t) for t in titles))


def dev_set(base: Dataset, records: list[dict[str, Any]], corpus: list[dict[str, str]],
            exclude: frozenset[str] | set[str] = frozenset()) -> tuple[Dataset, dict[str, list[str]]]:
    """The base set's passages with ``records`` as its questions, and what was left out:
    ``{"missing gold": [ids], "excluded": [ids]}``. A gold title maps to the corpus passage of
    that title, found in the base by its title and text (a prompt paragraph of the same title
    but another text is not gold)."""
    pid = {(p.title, p.text): p.id for p in base.passages}
    by_title: dict[str, str] = {}
    for n, c in enumerate(corpus):
        key = (str(c.get("title")), str(c.get("text")))
        if key not in pid:
            raise RecordError(f"corpus passage {n} ({c.get('title')!r}) is not a passage of the base set "
                              f"{base.name}: the base must be built over the same corpus (twowiki_set.py --haystack)")
        by_title.setdefault(key[0], pid[key])
    left: dict[str, list[str]] = {"missing gold": [], "excluded": []}
    questions: list[Question] = []
    for r in records:
        if r["_id"] in exclude:
            left["excluded"].append(r["_id"])
            continue
        titles = gold_titles(r)
        if any(t not in by_title for t in titles):
            left["missing gold"].append(r["_id"])
            continue
        gold = list(dict.fromkeys(by_title[t] for t in titles))
        questions.append(Question(r["_id"], r["question"], gold, len(gold), str(r.get("type") or "") or None))
    return Dataset(f"{base.name}-dev", base.passages, questions, base.graph or base.name), left


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", type=Path, required=True, help="a built haystack set (twowiki_set.py --haystack …)")
    ap.add_argument("--questions", type=Path, required=True, help="HippoRAG's 2Wiki question records")
    ap.add_argument("--dir", type=Path, help="the folder of the corpus and prompt files (default: KG_EVAL_2WIKI)")
    ap.add_argument("--out", type=Path, help="default: $KG_EVAL_DIR/<base name>-dev.json")
    a = ap.parse_args(argv)
    directory = a.dir or TWOWIKI_DIR
    try:
        base = load(a.base)
        records = read_records(a.questions)
        corpus = json.loads((directory / CORPUS_FILE).read_text("utf-8"))
        exclude = {ex.qid for ex in parse_prompts((directory / PROMPT_FILE).read_text("utf-8"), str(directory / PROMPT_FILE))}
        ds, left = dev_set(base, records, corpus, exclude)
    except (OSError, ValueError, DatasetError) as exc:
        print(f"2wiki dev set: {exc}", file=sys.stderr)
        return 2
    if not ds.questions:
        print(f"2wiki dev set: no question of {a.questions} qualifies ({len(left['missing gold'])} with a gold "
              f"title the corpus lacks, {len(left['excluded'])} of IRCoT's 20)", file=sys.stderr)
        return 2
    from scripts.eval.harness import CACHE

    out = a.out or CACHE / f"{ds.name}.json"
    types = ", ".join(f"{k} {v}" for k, v in sorted(Counter(str(q.type) for q in ds.questions).items()))
    print(save(ds, out) + f" ({len(ds.questions)} of {len(records)} questions: {types}; dropped "
          f"{len(left['missing gold'])} with a gold title the corpus lacks, {len(left['excluded'])} of IRCoT's 20)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

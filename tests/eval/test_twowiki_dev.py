"""``twowiki_dev.py``: HippoRAG's 2Wiki dev questions over a haystack set's passages, on a small
sample written here (HippoRAG's record shape), not the fetched file; and the graph key a set of
new questions over the same passages shares with its base (``Dataset.graph``)."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest

from scripts.eval import harness, twowiki_dev
from scripts.eval.dataset import Passage, load, save, subset
from scripts.eval.twowiki_set import CORPUS_FILE, PROMPT_FILE, build, parse_prompts

PROMPT = """# METADATA: {"qid": "ircot1"}
Wikipedia Title: Lothair II
Lothair II was a king. His mother was Ermengarde of Tours.

Q: Who was Lothair II's mother?
A: Lothair II's mother was Ermengarde of Tours. So the answer is: Ermengarde of Tours.
"""

CORPUS = [
    {"title": "Lothair II", "text": "Lothair II (835 -) was the king of Lotharingia. He was the son of Ermengarde of Tours."},
    {"title": "Ermengarde of Tours", "text": "Ermengarde of Tours (d. 20 March 851) was a queen."},
    {"title": "Aas Ka Panchhi", "text": "Aas Ka Panchhi is a 1961 Hindi movie."},
    {"title": "Phoolwari", "text": "Phoolwari is a 1946 Indian film."},
]

RECORDS = [
    {"_id": "d1", "type": "compositional", "question": "When did Lothair Ii's mother die?",
     "supporting_facts": [["Lothair II", 1], ["Ermengarde of Tours", 0], ["Lothair II", 0]],
     "evidences": [["Lothair II", "mother", "Ermengarde of Tours"]]},
    {"_id": "d2", "type": "comparison", "question": "Which film was released first, Aas Ka Panchhi or Phoolwari?",
     "supporting_facts": ["Aas Ka Panchhi", "Phoolwari"]},
    {"_id": "d3", "type": "comparison", "question": "Which came first, Phoolwari or Nowhere?",
     "supporting_facts": [["Phoolwari", 0], ["Nowhere (film)", 0]]},
    {"_id": "ircot1", "type": "compositional", "question": "Who was Lothair II's mother?",
     "supporting_facts": [["Lothair II", 0]]},
]


def _base():
    """A haystack set as twowiki_set builds it: the prompt's paragraph (same title as a corpus
    passage, another text) first, then the corpus; triples as an extractor would add them."""
    ds = build(parse_prompts(PROMPT), CORPUS, "2wiki-haystack", {})
    for n, p in enumerate(ds.passages):
        p.triples = [[p.title, "is", f"thing {n}"]]
    ds.name = "2wiki-haystack-spacy"
    return ds


def test_doctests():
    result = doctest.testmod(twowiki_dev)
    assert result.attempted > 0 and result.failed == 0


def test_gold_is_the_corpus_passages_the_supporting_facts_name_prompt_copies_are_not_gold():
    base = _base()
    ds, left = twowiki_dev.dev_set(base, RECORDS, CORPUS, {"ircot1"})
    pid = {(p.title, p.text): p.id for p in base.passages}
    assert [q.id for q in ds.questions] == ["d1", "d2"]
    d1, d2 = ds.questions
    # the prompt's "Lothair II" paragraph (w0000) has another text: the corpus copy is the gold one
    assert d1.gold == [pid[("Lothair II", CORPUS[0]["text"])], pid[("Ermengarde of Tours", CORPUS[1]["text"])]]
    assert "w0000" not in d1.gold and d1.hops == 2 and d1.type == "compositional"
    assert d2.gold == [pid[("Aas Ka Panchhi", CORPUS[2]["text"])], pid[("Phoolwari", CORPUS[3]["text"])]]
    assert left == {"missing gold": ["d3"], "excluded": ["ircot1"]}


def test_the_set_keeps_the_base_passages_and_names_its_graph():
    base = _base()
    ds, _ = twowiki_dev.dev_set(base, RECORDS, CORPUS)
    assert ds.name == "2wiki-haystack-spacy-dev" and ds.graph == "2wiki-haystack-spacy"
    assert [(p.id, p.text, p.triples) for p in ds.passages] == [(p.id, p.text, p.triples) for p in base.passages]


def test_new_questions_over_the_same_passages_reuse_the_base_store_key(tmp_path):
    base = _base()
    ds, _ = twowiki_dev.dev_set(base, RECORDS, CORPUS)
    assert harness._fingerprint(ds, "hash:64") == harness._fingerprint(base, "hash:64")
    # the graph survives a save and load, and a --limit part of the set
    save(ds, tmp_path / "dev.json")
    again = load(tmp_path / "dev.json")
    assert again.graph == "2wiki-haystack-spacy"
    assert harness._fingerprint(subset(again, limit=1), "hash:64") == harness._fingerprint(base, "hash:64")
    # naming a graph does not share a store whose passages differ: the digest still decides
    other = type(ds)(ds.name, ds.passages + [Passage("extra", "X", "x.", [["X", "is", "y"]])], ds.questions, ds.graph)
    assert harness._fingerprint(other, "hash:64") != harness._fingerprint(base, "hash:64")
    # a sliced part holds other passages: it keeps no graph name
    assert subset(again, limit=1, slice_corpus=True).graph is None


def test_read_records_takes_a_json_list_or_lines_and_names_a_bad_record(tmp_path):
    lines = tmp_path / "q.jsonl"
    lines.write_text("\n".join(json.dumps(r) for r in RECORDS) + "\n", "utf-8")
    listed = tmp_path / "q.json"
    listed.write_text(json.dumps(RECORDS), "utf-8")
    assert twowiki_dev.read_records(lines) == twowiki_dev.read_records(listed) == RECORDS
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(RECORDS[0]) + "\n" + json.dumps({"_id": "x", "question": "?"}) + "\n", "utf-8")
    with pytest.raises(twowiki_dev.RecordError, match=r"bad.jsonl: record 2: .*supporting_facts"):
        twowiki_dev.read_records(bad)


def test_a_base_over_another_corpus_is_refused():
    base = build(parse_prompts(PROMPT), CORPUS[:2], "2wiki-haystack", {})
    with pytest.raises(twowiki_dev.RecordError, match=r"corpus passage 2 \('Aas Ka Panchhi'\) is not a passage of the base"):
        twowiki_dev.dev_set(base, RECORDS, CORPUS)


def test_main_writes_the_set_and_exits_2_on_bad_input(tmp_path, capsys):
    (tmp_path / PROMPT_FILE).write_text(PROMPT, "utf-8")
    (tmp_path / CORPUS_FILE).write_text(json.dumps(CORPUS), "utf-8")
    base_path = tmp_path / "base.json"
    save(_base(), base_path)
    questions = tmp_path / "q.jsonl"
    questions.write_text("\n".join(json.dumps(r) for r in RECORDS), "utf-8")
    out = tmp_path / "dev.json"
    assert twowiki_dev.main(["--base", str(base_path), "--questions", str(questions), "--dir", str(tmp_path),
                             "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "2 of 4 questions" in said and "dropped 1 with a gold title the corpus lacks, 1 of IRCoT's 20" in said
    ds = load(out)
    assert [q.id for q in ds.questions] == ["d1", "d2"] and ds.graph == "2wiki-haystack-spacy"
    assert twowiki_dev.main(["--base", str(tmp_path / "none.json"), "--questions", str(questions),
                             "--dir", str(tmp_path)]) == 2
    assert "2wiki dev set:" in capsys.readouterr().err

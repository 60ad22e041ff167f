"""``twowiki_set.py``: the 2WikiMultiHopQA set from IRCoT's prompt file, on a two-question sample
written here (the file's shape: METADATA, titled paragraphs, ``Q:``, ``A:``), not the fetched file."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest

from scripts.eval import twowiki_set
from scripts.eval.dataset import load

SAMPLE = """# METADATA: {"qid": "q1"}
Wikipedia Title: Laughter in Hell
Laughter in Hell is a 1933 American film directed by Edward L. Cahn.

Wikipedia Title: Edward L. Cahn
Edward L. Cahn (February 12, 1899 – August 25, 1963) was an American film director.

Wikipedia Title: Peter Levin
Peter Levin is an American director of film, television and theatre.

Q: When did the director of film Laughter In Hell die?
A: The film Laughter In Hell was directed by Edward L. Cahn. Edward L. Cahn died on August 25, 1963. So the answer is: August 25, 1963.


# METADATA: {"qid": "q2"}
Wikipedia Title: Maria Alexandrovna (Marie of Hesse)
Maria Alexandrovna was Empress of Russia.
She died in 1880.

Wikipedia Title: Peter Levin
Peter Levin is an American director of film, television and theatre.

Wikipedia Title: Trojkrsti
Trojkrsti is a village in Macedonia.

Q: Who was born first out of Maria Alexandrovna and Trojkrsti?
A: Maria Alexandrovna was born in 1824. Trojkrsti is a village. So the answer is: Peter Levin.
"""


def test_doctests():
    result = doctest.testmod(twowiki_set)
    assert result.attempted > 0 and result.failed == 0


def test_parse_reads_each_question_its_paragraphs_and_answer():
    q1, q2 = twowiki_set.parse_prompts(SAMPLE)
    assert q1.qid == "q1" and q1.question == "When did the director of film Laughter In Hell die?"
    assert [t for t, _ in q1.paragraphs] == ["Laughter in Hell", "Edward L. Cahn", "Peter Levin"]
    # a paragraph's lines are joined; the blank line before the next title ends it
    assert q2.paragraphs[0] == ("Maria Alexandrovna (Marie of Hesse)", "Maria Alexandrovna was Empress of Russia. She died in 1880.")
    assert q2.answer.endswith("So the answer is: Peter Levin.")


def test_gold_is_the_titles_the_reasoning_names_case_insensitive_qualifier_dropped():
    q1, q2 = twowiki_set.parse_prompts(SAMPLE)
    # "Laughter In Hell" in the reasoning names "Laughter in Hell"; "Peter Levin" is not named
    assert twowiki_set.gold_titles(q1) == ["Laughter in Hell", "Edward L. Cahn"]
    # the title less "(Marie of Hesse)" is named; the final answer ("Peter Levin") is not reasoning
    assert twowiki_set.gold_titles(q2) == ["Maria Alexandrovna (Marie of Hesse)", "Trojkrsti"]


def test_build_shares_a_paragraph_two_questions_list_and_keeps_the_types():
    ds = twowiki_set.build(twowiki_set.parse_prompts(SAMPLE))
    assert [p.title for p in ds.passages] == ["Laughter in Hell", "Edward L. Cahn", "Peter Levin",
                                              "Maria Alexandrovna (Marie of Hesse)", "Trojkrsti"]
    q1, q2 = ds.questions
    assert (q1.gold, q1.hops, q1.type, q1.candidates) == (["w0000", "w0001"], 2, "compositional",
                                                           ["w0000", "w0001", "w0002"])
    assert (q2.gold, q2.type, q2.candidates) == (["w0003", "w0004"], "comparison", ["w0003", "w0002", "w0004"])


def test_fixes_and_corpus_distractors():
    corpus = [{"title": "Peter Levin", "text": "Peter Levin is an American director of film, television and theatre."},
              {"title": "Cheese", "text": "Cheese is a dairy product."}]
    ds = twowiki_set.build(twowiki_set.parse_prompts(SAMPLE), corpus, "x", {"q1": ["Edward L. Cahn"]})
    assert ds.questions[0].gold == ["w0001"] and ds.questions[0].hops == 1
    # the corpus's copy of a question's paragraph is the same passage; a new one is appended
    assert [p.id for p in ds.passages][-1] == "w0005" and ds.passages[-1].title == "Cheese"


@pytest.mark.parametrize("text, says", [
    ("Wikipedia Title: A\nA.\n\nQ: ?\nA: A.\n", "no '# METADATA"),
    ('# METADATA: {"id": "x"}\nWikipedia Title: A\nA.\n\nQ: ?\nA: A.\n', "holds no qid"),
    ('# METADATA: {"qid": "x"}\nWikipedia Title: A\nA.\n\nQ: ?\n', "needs paragraphs, a 'Q:' and an 'A:'"),
])
def test_malformed_prompt_file_names_what_and_where(text, says):
    with pytest.raises(twowiki_set.PromptError, match=says):
        twowiki_set.parse_prompts(text, "f.txt")


def test_reasoning_naming_no_paragraph_is_an_error():
    ex = twowiki_set.parse_prompts('# METADATA: {"qid": "x"}\nWikipedia Title: A\nA.\n\nQ: ?\nA: B. So the answer is: A.\n')
    with pytest.raises(twowiki_set.PromptError, match="question x: its reasoning names none"):
        twowiki_set.build(ex)


def test_main_writes_the_generic_shape_and_refuses_a_missing_folder(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    (src / twowiki_set.PROMPT_FILE).write_text(SAMPLE, "utf-8")
    (src / twowiki_set.CORPUS_FILE).write_text(json.dumps([{"title": "Cheese", "text": "Cheese is food."}]), "utf-8")
    out = tmp_path / "w.json"
    assert twowiki_set.main(["--dir", str(src), "--haystack", "--out", str(out)]) == 0
    ds = load(out)
    assert ds.name == "2wiki-haystack" and len(ds.passages) == 6 and len(ds.questions) == 2
    assert twowiki_set.main(["--dir", str(tmp_path / "nowhere"), "--out", str(out)]) == 2
    assert "2wiki from" in capsys.readouterr().err


def test_rules_variant_takes_the_rules_triples(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / twowiki_set.PROMPT_FILE).write_text(SAMPLE, "utf-8")
    out = tmp_path / "r.json"
    assert twowiki_set.main(["--dir", str(src), "--rules", "--out", str(out)]) == 0
    ds = json.loads(Path(out).read_text("utf-8"))
    assert ds["name"] == "2wiki-rules"
    from scripts.eval.rules_set import rules_triples

    p = ds["passages"][0]
    assert p["triples"] and p["triples"] == rules_triples(p["title"], p["text"])

"""The no-model answer's first hops on 2Wiki (``answers.py --floor --floor-set 2wiki --floor-data
…/2wiki-*.json --gold audited``, :func:`scripts.eval.floor_eval.twowiki_asked`): on a tiny inline
2Wiki-shaped set, the read gold's ids are scored as unit ids, a step with no stating unit is left
out with its reason, all the off-topic questions are asked, and a graph with no read gold or a run
without read gold is refused; ``--floor-compare`` counts 2Wiki's questions; and the shipped gold
files were read on the shipped first hops."""

from __future__ import annotations

import json

import pytest

from scripts.eval import answers, floor_eval

SET = {
    "name": "2wiki-rules",
    "passages": [
        {"id": "w0000", "title": "Nevada (1927 film)", "text": "Nevada is a 1927 American silent Western film "
         "directed by John Waters.", "triples": [["Nevada", "directed by", "John Waters"],
                                                 ["Nevada", "is a", "1927 American silent Western film"]]},
        {"id": "w0001", "title": "Two Weeks with Pay", "text": "Two Weeks with Pay is a lost 1921 American silent "
         "comedy film directed by Maurice Campbell.", "triples": [["Two Weeks with Pay", "directed by", "Maurice Campbell"]]},
        {"id": "w0002", "title": "Martin Hodge", "text": "Martin Hodge (born 4 February 1959 in Southport) is an "
         "English former footballer.", "triples": [["Martin Hodge", "born in", "Southport"]]},
    ],
    "questions": [{"id": "q1", "question": "Which film has the director born first, Nevada or Two Weeks with Pay?",
                   "gold": ["w0000", "w0001"]}],
}
GOLD = {"kind": "first hop", "graph": "rules", "questions": [
    {"id": "q1.h1", "step": "Who directed the film Nevada (1927 film)?", "answer": "John Waters", "passage": "w0000",
     "gold": ["w0000.t0"], "gold_text": ["Nevada | directed by | John Waters"]},
    {"id": "q1.h2", "step": "Who directed the film Two Weeks With Pay?", "answer": "Maurice Campbell",
     "passage": "w0001", "gold": ["w0001.t0"], "gold_text": ["Two Weeks with Pay | directed by | Maurice Campbell"]},
    {"id": "q2.h1", "step": "When was Martin Hodge born?", "answer": "4 February 1959", "passage": "w0002",
     "gold": [], "gold_text": [], "reason": "only the birthplace"},
]}


@pytest.fixture()
def tiny_2wiki(tmp_path, monkeypatch, hash_built):
    """The inline set as ``2wiki-rules.json`` with its read gold in place of the shipped one, built
    with the hash embedder in a temporary directory (no download, no model)."""
    data = tmp_path / "2wiki-rules.json"
    data.write_text(json.dumps(SET), "utf-8")
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps(GOLD), "utf-8")
    monkeypatch.setitem(floor_eval.TWOWIKI_GOLD, "2wiki-rules.json", gold)
    return data


def test_first_hops_scored_by_read_gold_ids(tiny_2wiki, tmp_path, capsys):
    """Two first hops have a stating unit, one has none (left out, its reason printed); each asked
    hop carries its read gold ids, the 36 off-topic questions are asked too, and the table's count
    of top-3 hits is the count of rows whose top 3 holds a gold id (not a gold word in a text)."""
    out = tmp_path / "run.json"
    code = answers.main(["--floor", "--floor-set", "2wiki", "--floor-data", str(tiny_2wiki), "--gold", "audited",
                         "--json", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "2 first hops with a stating unit; 1 left out" in printed
    assert "q2.h1: only the birthplace" in printed
    doc = json.loads(out.read_text("utf-8"))
    rows = doc["questions"]["2wiki"]
    hops = [r for r in rows if r["set"] == "2wiki"]
    off = [r for r in rows if r["set"] == "off-topic"]
    assert [(r["q"], r["gold"], r["kind"]) for r in hops] == [
        ("Who directed the film Nevada (1927 film)?", ["w0000.t0"], "first hop"),
        ("Who directed the film Two Weeks With Pay?", ["w0001.t0"], "first hop")]
    assert len(off) == len(json.loads((floor_eval.SETS / "offtopic.json").read_text("utf-8"))["questions"])
    shipped = doc["2wiki"][floor_eval.SHIPPED]["summary"]["2wiki (first hop)"]
    assert shipped["answerable"] == 2
    assert shipped["top3"] == sum(floor_eval.answered(r) for r in hops)
    # the director's unit of the one film the question names is found by its id
    assert "w0000.t0" in hops[0]["top3"]


def test_a_graph_without_read_gold_or_a_run_without_it_is_refused(tmp_path, capsys):
    """The 2Wiki first hops have read gold only, for the four 2Wiki graphs by file name: another
    file, no file, or another gold kind stop before anything is built (exit 2)."""
    assert floor_eval.twowiki_gold_file(tmp_path / "2wiki-haystack-spacy.json").name == "2wiki-gold-spacy.json"
    for argv, said in (
            (["--floor-data", str(tmp_path / "2wiki-other.json"), "--gold", "audited"], "needs --floor-data naming"),
            (["--gold", "audited"], "(got none)"),
            (["--floor-data", str(tmp_path / "2wiki-rules.json")], "read gold only")):
        assert answers.main(["--floor", "--floor-set", "2wiki", *argv]) == 2
        assert said in capsys.readouterr().err


def test_floor_compare_counts_2wiki_questions(tmp_path):
    """Two runs of one 2Wiki graph compared question by question: a first hop whose gold unit
    entered the top 3 is counted better (2Wiki's gold is ids, as MuSiQue's)."""
    def run(top3: list[str]) -> dict:
        return {"questions": {"2wiki": [{"set": "2wiki", "kind": "first hop", "q": "Who directed Nevada?",
                                         "answerable": True, "gold": ["w0000.t0"], "top3": top3,
                                         "verdict": {"3": ["strong", "", []]}}]}}
    before, after = tmp_path / "a.json", tmp_path / "b.json"
    before.write_text(json.dumps(run(["w0000.t1"])), "utf-8")
    after.write_text(json.dumps(run(["w0000.t0"])), "utf-8")
    lines = floor_eval.compare(before, after)
    assert lines[0].startswith("2wiki: 2wiki (first hop): 0 -> 1 of 1; better / same / worse 1 / 0 / 0")


def test_shipped_gold_was_read_on_the_shipped_first_hops():
    """Both gold files hold every first hop of ``2wiki-first-hops.json``, with its words and
    answer, each gold id with the triple it was read as, and a reason where there is none."""
    hops = json.loads((floor_eval.SETS / "2wiki-first-hops.json").read_text("utf-8"))["questions"]
    for g in ("spacy", "rules"):
        doc = json.loads((floor_eval.SETS / f"2wiki-gold-{g}.json").read_text("utf-8"))
        assert doc["kind"] == "first hop"
        assert [(q["id"], q["step"], q["answer"]) for q in doc["questions"]] == \
            [(h["id"], h["step"], h["answer"]) for h in hops]
        for q in doc["questions"]:
            assert len(q["gold"]) == len(q["gold_text"])
            assert all(u.startswith(q["passage"] + ".t") for u in q["gold"])
            assert q["gold"] or q.get("reason")
    assert {floor_eval.TWOWIKI_GOLD[f"2wiki-haystack-{g}.json"] for g in ("spacy", "rules")} == \
        {floor_eval.TWOWIKI_GOLD[f"2wiki-{g}.json"] for g in ("spacy", "rules")}


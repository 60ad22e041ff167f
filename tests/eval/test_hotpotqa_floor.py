"""The off-topic floor on a HotpotQA graph (``answers.py --floor --floor-set hotpotqa --floor-data
…/hotpotqa-*.json``, :func:`scripts.eval.floor_eval.hotpot_asked`): on a tiny inline set, all 36
off-topic questions and each whole question (no gold: only a refusal is scored, a proxy for false
abstentions) are asked; a run without a graph file or with another set beside it is refused; and
``--floor-compare`` counts the whole questions by their refusals alone."""

from __future__ import annotations

import json

import pytest

from scripts.eval import answers, floor_eval

SET = {
    "name": "hotpotqa-rules",
    "passages": [
        {"id": "h0000", "title": "Kassel", "text": "Kassel is located near the Fulda River.",
         "triples": [["Kassel", "located near", "Fulda River"]]},
        {"id": "h0001", "title": "Fulda River", "text": "The Fulda River flows into the Weser.",
         "triples": [["Fulda River", "flows into", "Weser"]]},
    ],
    "questions": [{"id": "q1", "question": "Which river is Kassel located near?", "gold": ["h0000"]},
                  {"id": "q2", "question": "What does the river near Kassel flow into?", "gold": ["h0000", "h0001"]}],
}


@pytest.fixture()
def tiny_hotpot(tmp_path, hash_built):
    """The inline set as ``hotpotqa-rules.json``, built with the hash embedder (``hash_built``) in a temporary
    directory (no download, no model)."""
    data = tmp_path / "hotpotqa-rules.json"
    data.write_text(json.dumps(SET), "utf-8")
    return data


def test_offtopic_and_whole_questions_asked(tiny_hotpot, tmp_path):
    out = tmp_path / "run.json"
    assert answers.main(["--floor", "--floor-set", "hotpotqa", "--floor-data", str(tiny_hotpot),
                         "--json", str(out)]) == 0
    rows = json.loads(out.read_text("utf-8"))["questions"]["hotpotqa"]
    whole = [r for r in rows if r["set"] == "hotpotqa"]
    off = [r for r in rows if r["set"] == "off-topic"]
    assert [(r["q"], r["gold"], r["answerable"]) for r in whole] == [
        (q["question"], [], True) for q in SET["questions"]]
    offtopic = json.loads((floor_eval.SETS / "offtopic.json").read_text("utf-8"))["questions"]
    assert [r["q"] for r in off] == [x["q"] for x in offtopic] and not any(r["answerable"] for r in off)
    # the proxy: a whole question counts as answered unless refused, whatever its top 3
    for r in whole:
        assert floor_eval.answered(r) == (r["verdict"]["3"][0] != "none")
    same = floor_eval.compare(out, out)
    assert any(line.startswith("hotpotqa: hotpotqa (whole, no gold): ") and line.endswith("of 2; better / same / worse "
               "0 / 2 / 0 (p 1.00)") for line in same), same


@pytest.mark.parametrize("argv", [["--floor-set", "hotpotqa"],
                                  ["--floor-set", "hotpotqa", "--floor-set", "demo", "--floor-data", "x.json"]])
def test_refused_without_one_graph_file(argv, capsys):
    assert answers.main(["--floor", *argv]) == 2
    assert "--floor-set hotpotqa" in capsys.readouterr().err

"""The answer-level read of the no-model answer's top 3 (scripts/eval/answer_gold.py, ``answers.py
--floor --gold answers``): a question counts when it was not abstained on and one of its top 3 is
labelled "answers" ("partly" apart); a run whose top 3 holds a unit nobody labelled is refused —
never scored as a miss or a hit —, and so is a labelled id showing other words; the unlabelled
units of a new run are written for reading without any verdict; the report puts the unit-level
gold beside the answer-level read on the same questions."""

from __future__ import annotations

import json

import pytest

from kgservice.answer.floor import Relevance
from scripts.eval import answer_gold, floor_eval


def _row(q: str, units: list[tuple[str, str]], found: bool = True, graph: str = "g") -> dict:
    return {"graph": graph, "set": "s", "kind": "first hop", "q": q, "answers": ["Beijing"], "found": found,
            "units": [{"id": i, "text": t} for i, t in units]}


LABELS = {"rows": [
    {"graph": "g", "q": "where are the 2022 games?", "answers": ["Beijing"], "units": [
        {"id": "a.t1", "text": "2022 Winter Olympics held in Beijing.", "label": "answers"},
        {"id": "b.t0", "text": "Beijing is a city.", "label": "no"},
        {"id": "c.t4", "text": "Olympics held in China.", "label": "partly"}]},
    {"graph": "g", "q": "who hosts?", "answers": ["Beijing"], "units": [
        {"id": "c.t4", "text": "Olympics held in China.", "label": "partly"},
        {"id": "b.t0", "text": "Beijing is a city.", "label": "no"}]},
]}


def test_counting_answers_partly_abstained():
    """Any "answers" among the top 3 is a hit whatever its place; "partly" only when no unit
    answers; an abstained question is no hit though its units answer; the top 3 in another
    order are still labelled (labels are per question and unit, not per ranking)."""
    run = [_row("where are the 2022 games?", [("b.t0", "Beijing is a city."), ("c.t4", "Olympics held in China."),
                                               ("a.t1", "2022 Winter Olympics held in Beijing.")]),
           _row("who hosts?", [("b.t0", "Beijing is a city."), ("c.t4", "Olympics held in China.")]),
           _row("where are the 2022 games?", [("a.t1", "2022 Winter Olympics held in Beijing.")], found=False)]
    got = answer_gold.score(run, LABELS)
    assert [r["verdict"] for r in got] == ["answers", "partly", "abstained"]
    assert got[0]["labels"] == ["no", "partly", "answers"]


def test_an_unlabelled_unit_refuses_the_run():
    """One new unit in a top 3 (a changed ranking) refuses the whole run, naming it."""
    run = [_row("who hosts?", [("c.t4", "Olympics held in China."), ("d.t9", "Games held in Beijing.")])]
    with pytest.raises(answer_gold.LabelError, match=r"1 top-3 units of this run are unlabelled .*d\.t9"):
        answer_gold.score(run, LABELS)
    other_graph = [_row("who hosts?", [("c.t4", "Olympics held in China.")], graph="h")]
    with pytest.raises(answer_gold.LabelError, match="unlabelled"):
        answer_gold.score(other_graph, LABELS)


def test_a_labelled_id_showing_other_words_is_refused():
    run = [_row("who hosts?", [("c.t4", "Olympics held in Korea.")])]
    with pytest.raises(answer_gold.LabelError, match="not the graph the labels were read on"):
        answer_gold.score(run, LABELS)
    with pytest.raises(answer_gold.LabelError, match="not the graph the labels were read on"):
        answer_gold.unlabelled(run, LABELS)


def test_bad_or_conflicting_labels_are_refused():
    bad = {"rows": [{"graph": "g", "q": "q", "units": [{"id": "u", "text": "t", "label": "yes"}]}]}
    with pytest.raises(answer_gold.LabelError, match="'yes' is not one of answers, partly, no"):
        answer_gold.index(bad)
    twice = {"rows": LABELS["rows"] + [{"graph": "g", "q": "who hosts?", "units": [
        {"id": "b.t0", "text": "Beijing is a city.", "label": "answers"}]}]}
    with pytest.raises(answer_gold.LabelError, match="labelled twice"):
        answer_gold.index(twice)


def test_unlabelled_dump_is_blind_and_merges_back():
    """The dump holds only the unlabelled units, no abstention or verdict; labelled and merged
    back, the run scores."""
    run = [_row("who hosts?", [("c.t4", "Olympics held in China."), ("d.t9", "Games held in Beijing.")],
                found=False)]
    todo = answer_gold.unlabelled(run, LABELS)
    assert todo == [{"graph": "g", "q": "who hosts?", "answers": ["Beijing"],
                     "units": [{"id": "d.t9", "text": "Games held in Beijing.", "label": ""}]}]
    todo[0]["units"][0]["label"] = "answers"
    merged = answer_gold.merge(LABELS, todo)
    assert [r["verdict"] for r in answer_gold.score(run, merged)] == ["abstained"]
    run[0]["found"] = True
    assert [r["verdict"] for r in answer_gold.score(run, merged)] == ["answers"]
    with pytest.raises(answer_gold.LabelError, match="label '' is not one of"):
        answer_gold.merge(LABELS, answer_gold.unlabelled(run, {"rows": []}))


def _asked(q: str, gold: list[str], top: list[str], texts: dict[str, str], found: bool = True) -> floor_eval.Asked:
    a = floor_eval.Asked("musique", q, True, gold, top, {u: u for u in top}, top[:3], kind="first hop",
                         shown=texts, answers=["Beijing"])
    a.rankings[floor_eval.SHIPPED] = top
    a.relevance[floor_eval.SHIPPED] = Relevance("strong" if found else "none")
    return a


def test_report_puts_unit_level_beside_answer_level(tmp_path, capsys):
    """A unit-level miss whose top 3 answers from another passage, and a unit-level hit whose
    gold unit was read as not answering, are both listed; a first hop with no unit-level gold is
    scored by the answer-level read alone. An unlabelled run exits through GoldError."""
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps(LABELS), "utf-8")
    texts = {"a.t1": "2022 Winter Olympics held in Beijing.", "b.t0": "Beijing is a city.",
             "c.t4": "Olympics held in China."}
    graphs = {"musique": [_asked("where are the 2022 games?", ["c.t9"], ["a.t1", "b.t0"], texts),
                          _asked("who hosts?", ["b.t0"], ["b.t0", "c.t4"], texts)]}
    extra = {"musique": [_asked("where are the 2022 games?", [], ["a.t1"], texts, found=False)]}
    graphs["g"] = graphs.pop("musique")
    extra["g"] = extra.pop("musique")
    assert floor_eval.answer_report(graphs, extra, None, labels, None) == 0
    out = capsys.readouterr().out
    assert "| g: musique | 3 | 1 / 1 / 1 | 2, 1 | 1 (2) |" in out
    assert "unit miss, answer answers: where are the 2022 games?" in out
    assert "unit hit, answer partly: who hosts?" in out
    dump = tmp_path / "todo.json"
    graphs["g"][1].rankings[floor_eval.SHIPPED] = ["b.t0", "x.t0"]
    graphs["g"][1].shown["x.t0"] = "X is Y."
    with pytest.raises(floor_eval.GoldError, match="unlabelled"):
        floor_eval.answer_report(graphs, extra, None, labels, None)
    assert floor_eval.answer_report(graphs, extra, None, labels, dump) == 0
    rows = json.loads(dump.read_text("utf-8"))["rows"]
    assert rows == [{"graph": "g", "q": "who hosts?", "answers": ["Beijing"],
                     "units": [{"id": "x.t0", "text": "X is Y.", "label": ""}]}]

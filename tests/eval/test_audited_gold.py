"""Scoring MuSiQue first hops against read gold (scripts/eval/floor_eval.audited_first_hops,
``answers.py --floor --gold audited``): on the tiny hand-made set, the gold ids a reader wrote
become the stored units (a duplicate triple read as the unit it was merged into), steps with no
stating unit are left out with their reason, and a file naming units of another graph or
passage, or read as other triples, is refused; the rules graph's file is accepted for its graph
and refuses the same ids over other triples."""

from __future__ import annotations

import json

import pytest

from scripts.eval import answers, floor_eval
from scripts.eval.dataset import load
from scripts.eval.harness import build


def _doc(*questions: dict) -> dict:
    return {"kind": "first hop", "graph": "tiny", "questions": list(questions)}


def test_read_gold_becomes_stored_units_by_hand(tiny_ctx):
    """p1.t0 is stored as itself; p4.t1 is the same triple as p1.t0 ("Hello Love performed by
    Hank Snow"), merged into it at ingest, so it is scored as p1.t0; p1.t1 ("Hello Love is a
    song") holds the words "Hello Love" but a reader did not list it, so it is no gold; a step
    with an empty list is left out with its reason."""
    doc = _doc({"id": "qa", "step": "Hello Love >> performer", "answer": "Hank Snow", "passage": "p1",
                "gold": ["p1.t0"]},
               {"id": "qb", "step": "Who sang Hello Love?", "answer": "Hank Snow", "passage": "p4",
                "gold": ["p4.t1"]},
               {"id": "qc", "step": "Where is the cheese from?", "answer": "France", "passage": "p4",
                "gold": [], "reason": "no unit says where the cheese is from"})
    read, left = floor_eval.audited_first_hops(tiny_ctx, doc)
    assert read == [("Hello Love >> performer", ["p1.t0"], "first hop"),
                    ("Who sang Hello Love?", ["p1.t0"], "first hop")]
    assert left == [("qc", "no unit says where the cheese is from")]


def test_a_unit_of_another_passage_is_refused(tiny_ctx):
    """p1.t0 is a unit of p1, not of p3 (Nashville's passage): the file does not fit this graph."""
    doc = _doc({"id": "qd", "step": "Nashville >> located in", "answer": "Tennessee", "passage": "p3",
                "gold": ["p1.t0"]})
    with pytest.raises(floor_eval.GoldError, match="question qd: 'p1.t0' is not a unit of passage 'p3'"):
        floor_eval.audited_first_hops(tiny_ctx, doc)
    with pytest.raises(floor_eval.GoldError, match="p9.t0"):
        floor_eval.audited_first_hops(tiny_ctx, _doc({"id": "qe", "step": "x", "passage": "p9", "gold": ["p9.t0"]}))


def test_gold_read_on_other_triples_is_refused(tiny_ctx):
    """A gold unit keeps the triple it was read as: p1.t0 here is "Hello Love | performed by |
    Hank Snow" (case and spacing aside it matches); read as "Hello Love | is a | song" it is
    another graph's p1.t0, so the file is refused."""
    ok = _doc({"id": "qa", "step": "Hello Love >> performer", "passage": "p1", "gold": ["p1.t0"],
               "gold_text": ["hello love | Performed by | Hank  Snow"]})
    assert floor_eval.audited_first_hops(tiny_ctx, ok)[0] == [("Hello Love >> performer", ["p1.t0"], "first hop")]
    bad = _doc({"id": "qa", "step": "Hello Love >> performer", "passage": "p1", "gold": ["p1.t0"],
                "gold_text": ["Hello Love | is a | song"]})
    with pytest.raises(floor_eval.GoldError, match="not the graph the gold was read on"):
        floor_eval.audited_first_hops(tiny_ctx, bad)


def test_audited_gold_on_an_unlabelled_graph_is_an_input_error(tmp_path, capsys):
    """Read gold exists for the GPT-3.5 graph, the spaCy one and the rules one; a graph of
    MuSiQue's passages nobody labelled (here a file named musique-other.json) has units of the
    same ids but other triples, so --gold audited stops before anything is built (exit 2)."""
    assert floor_eval.audited_file(None) == floor_eval.AUDITED
    assert floor_eval.audited_file(tmp_path / "musique-spacy.json").name == "musique-gold-audited-spacy.json"
    code = answers.main(["--floor", "--floor-set", "musique", "--gold", "audited",
                         "--floor-data", str(tmp_path / "musique-other.json")])
    assert code == 2
    assert "--gold audited: no read gold for musique-other.json" in capsys.readouterr().err


RULES = floor_eval.SETS / "musique-gold-audited-rules.json"


def _graph_of(doc: dict, swap: dict[str, list[str]] | None = None) -> dict:
    """A set holding, at their ids, the triples a gold file says its gold units were read as
    (the other positions of each passage filled with triples of no answer), so the shipped
    file can be checked against a graph of its own triples without MuSiQue's data; ``swap``
    puts other triples at some gold ids."""
    passages: dict[str, list[list[str]]] = {}
    for q in doc["questions"]:
        for g, seen in zip(q["gold"], q["gold_text"]):
            n = int(g.rpartition(".t")[2])
            ts = passages.setdefault(q["passage"], [])
            ts += [[f"filler {q['passage']} {k}", "is a", "filler"] for k in range(len(ts), n + 1)]
            ts[n] = (swap or {}).get(g) or seen.split(" | ")
    return {"name": "rules-gold-triples",
            "passages": [{"id": pid, "title": pid, "text": pid, "triples": ts} for pid, ts in passages.items()],
            "questions": [{"id": "q", "question": "?", "gold": [next(iter(passages))]}]}


def test_the_rules_graph_has_read_gold(tmp_path):
    """--floor-data …/musique-rules.json --gold audited reads answer_sets/musique-gold-audited-rules.json
    (before: refused as unlabelled, exit 2). Scored against a graph holding the triples its gold
    units were read as, every labelled step becomes a first hop with those units and every
    other step is left out with its reason."""
    assert floor_eval.audited_file(tmp_path / "musique-rules.json") == RULES
    doc = json.loads(RULES.read_text("utf-8"))
    path = tmp_path / "musique-rules.json"
    path.write_text(json.dumps(_graph_of(doc)), "utf-8")
    ctx = build(load(path), "hash:64", workdir=tmp_path / "kg", log=lambda m: None)
    try:
        read, left = floor_eval.audited_first_hops(ctx, doc)
    finally:
        ctx.kb.close()
    labelled = [q for q in doc["questions"] if q["gold"]]
    assert [(step, gold) for step, gold, _ in read] == [(q["step"], sorted(q["gold"])) for q in labelled]
    assert left == [(q["id"], q["reason"]) for q in doc["questions"] if not q["gold"]]


def test_the_rules_gold_refuses_a_graph_of_other_triples(tmp_path):
    """The same ids over other triples (m0006.t0 is here "Journal of Psychotherapy Integration
    | is a | peer-reviewed academic journal", as a differently built graph numbers it): the
    rules file names the unit it read as "… | published by | American Psychological
    Association", so it is refused, naming the question and the unit."""
    doc = json.loads(RULES.read_text("utf-8"))
    other = ["Journal of Psychotherapy Integration", "is a", "peer-reviewed academic journal"]
    path = tmp_path / "musique-rules.json"
    path.write_text(json.dumps(_graph_of(doc, {"m0006.t0": other})), "utf-8")
    ctx = build(load(path), "hash:64", workdir=tmp_path / "kg", log=lambda m: None)
    try:
        with pytest.raises(floor_eval.GoldError,
                           match="question 2hop__150763_14904: 'm0006.t0' was read as .*not the graph the gold was read on"):
            floor_eval.audited_first_hops(ctx, doc)
    finally:
        ctx.kb.close()


@pytest.mark.parametrize("path", [floor_eval.AUDITED, *floor_eval.AUDITED_BY_DATA.values()])
def test_the_shipped_files_are_whole(path):
    """Every question carries either gold units of its own passage or a reason, once each."""
    doc = json.loads(path.read_text("utf-8"))
    qs = doc["questions"]
    assert doc["kind"] == "first hop"
    assert len({q["id"] for q in qs}) == len(qs) == 100
    for q in qs:
        assert bool(q["gold"]) != bool(q.get("reason")), q["id"]
        assert all(g.startswith(q["passage"] + ".t") for g in q["gold"]), q["id"]
        if path != floor_eval.AUDITED:  # the later files keep each gold unit's triple beside its id
            assert len(q["gold_text"]) == len(q["gold"]), q["id"]

"""Scoring MuSiQue first hops against read gold (scripts/eval/floor_eval.audited_first_hops,
``answers.py --floor --gold audited``): on the tiny hand-made set, the gold ids a reader wrote
become the stored units (a duplicate triple read as the unit it was merged into), steps with no
stating unit are left out with their reason, and a file naming units of another graph or
passage, or read as other triples, is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts.eval import answers, floor_eval
from scripts.eval.dataset import load
from scripts.eval.harness import build

TINY = Path(__file__).with_name("tiny.json")


@pytest.fixture(scope="module")
def tiny_ctx(tmp_path_factory):
    ctx = build(load(TINY), "hash:64", workdir=tmp_path_factory.mktemp("tiny-gold"), log=lambda m: None)
    yield ctx
    ctx.kb.close()


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
    """Read gold exists for the GPT-3.5 graph and the spaCy one; the rules graph's units have
    the same ids but other triples, so --gold audited stops before anything is built (exit 2)."""
    assert floor_eval.audited_file(None) == floor_eval.AUDITED
    assert floor_eval.audited_file(tmp_path / "musique-spacy.json").name == "musique-gold-audited-spacy.json"
    code = answers.main(["--floor", "--floor-set", "musique", "--gold", "audited",
                         "--floor-data", str(tmp_path / "musique-rules.json")])
    assert code == 2
    assert "--gold audited: no read gold for musique-rules.json" in capsys.readouterr().err


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

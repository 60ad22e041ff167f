"""A one-letter misspelling of a word the graph uses is read as that word
(:mod:`kgservice.entry.spelling`), by the entry step and by the relevance floor's name rule,
on hand-made graphs shaped like the two MuSiQue cases: "Where will the next winter olimpics be
held?" (the entry step named no node: the answering unit was not in the pool) and MuSiQue's
own "Margaraviate" for *Margraviate* (the model-backed ask refused it before any call). A
nonsense name, and a short name one letter from a graph word ("Mars" / *mart*), stay refused."""

from __future__ import annotations

import kgservice.entry.step as entry_step
from kgservice.answer import NOT_IN_GRAPH_EN
from kgservice.answer.retrieval_only import answer_units
from kgservice.notation import parse_units
from kgservice.pipeline import ask
from tests.pipeline.conftest import ask_params

UNITS = """#o1 {Winter Olympics} [next held in] {Milan}
#o2 {Summer Olympics} [next held in] {Los Angeles}
#w1 {winter} [is] {season}
#w2 {Jack Winter} [born in] {Leeds}
#w3 {Winter Park} [located in] {Colorado}
#m1 {Margraviate of Moravia} [ruled by] {Premyslid dynasty}
#m2 {Margraviate of Moravia} [capital] {Brno}
#t1 {mart} [sells] {groceries}
"""
BEFORE_CALL = "not in the graph, decided before any model call: "


def _kb(kb):
    kb.ingest_units(parse_units(UNITS, kb.lexicon, doc="typo.units"))
    return kb


def test_a_misspelt_word_names_its_node(kb):
    found = _kb(kb).entry("Where will the next winter olimpics be held?")
    assert [n.label for n in found.nodes if n.named] == ["Winter Olympics"]
    assert found.read == "Where will the next winter olympics be held?"


def test_the_no_model_answer_lists_the_misspelt_things_unit(kb):
    got = answer_units(_kb(kb).parts, "Where will the next winter olimpics be held?")
    assert got.relevance.found
    assert got.units[0].id == "o1"


def test_the_no_model_answer_reads_the_question_once(kb, monkeypatch):
    """The entry step reads the misspellings, and the answer ranks and judges the question as
    it read it: one reading per ask, not one for the retrieval's entry step and one for the
    answer (a spy on the reading, not a timing)."""
    _kb(kb)
    calls: list[str] = []
    real = entry_step.respelled

    def spy(text, *args, **kw):
        calls.append(text)
        return real(text, *args, **kw)

    monkeypatch.setattr(entry_step, "respelled", spy)
    got = answer_units(kb.parts, "Where will the next winter olimpics be held?")
    assert got.relevance.found and got.units[0].id == "o1"
    assert calls == ["Where will the next winter olimpics be held?"]


def test_a_misspelt_name_goes_to_the_model(kb, boundary):
    res = ask(_kb(kb), "Who ruled the Margaraviate of Moravia?", params=ask_params())
    assert not any(n.startswith(BEFORE_CALL) for n in res.notes)
    assert res.llm["calls"] > 0 and boundary.count > 0
    res = ask(kb, "Who ruled the Margaraviate?", params=ask_params())
    assert not any(n.startswith(BEFORE_CALL) for n in res.notes)


def test_a_nonsense_name_and_a_short_name_stay_refused(kb, boundary):
    _kb(kb)
    for question, name in (("Who ruled the Quibbleton Margravine?", "quibbleton margravine"),
                           ("What is the capital of Mars?", "mars")):
        res = ask(kb, question, params=ask_params())
        assert not res.found and res.answer == NOT_IN_GRAPH_EN and res.llm["calls"] == 0
        assert res.notes == [BEFORE_CALL + f"the graph has nothing about {name!r}"]
    assert boundary.count == 0

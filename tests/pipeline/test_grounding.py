"""Grounding and abstention (issue 14): a key entity the graph lacks is "not in the graph" even
when related concepts and other words match; no answer sentence says what its cited units do not."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgservice.entry.match import STOPWORDS, tokens
from kgservice.notation import parse_file, parse_units
from kgservice.notation.serializer import format_unit
from kgservice.pipeline.asking import ask
from tests.pipeline.conftest import ask_params

NOT_IN_GRAPH_EN = "The graph has no information that answers this question."
ANIMALS = """\
#l1 {leopard} [causes] {fear}
#l2 {clouded leopard} [is a] {big cat}
#l3 {leopard} [is a] {big cat}
"""
DEMO = Path(__file__).resolve().parents[2] / "demo"


@pytest.fixture
def animals_kb(corpus_kb):
    corpus_kb.ingest_units(parse_units(ANIMALS, corpus_kb.lexicon, doc="animals.units"))
    return corpus_kb


def test_related_concept_present_but_key_entity_missing(animals_kb, boundary):
    known = ask(animals_kb, "What does the leopard cause?", params=ask_params())
    assert known.found and known.cited == ["l1"]
    # "snow leopard" is no node; the graph has "leopard" and "clouded leopard", and "snow" is in no
    # label: answering with leopard facts would state them of the snow leopard
    res = ask(animals_kb, "What does the snow leopard cause?", params=ask_params())
    assert not res.found and res.answer == NOT_IN_GRAPH_EN and res.cited == [] and res.hit_units == []
    assert "'snow leopard' is not in the graph" in res.stop_reason
    assert "answer" not in res.llm["by_purpose"] and "drilldown" not in res.llm["by_purpose"]
    # the same for a version the graph does not have, although "Python" matches: a name of the
    # question, so it is refused before any call (the relevance floor's name rule)
    py = ask(animals_kb, "What does Python 4 cause?", params=ask_params())
    assert not py.found and py.cited == [] and py.stop_reason == "the graph has nothing about 'python 4'"
    assert py.llm["calls"] == 0


def _words(text: str) -> set[str]:
    """Content words: joining words ("and", "和") list a unit's arguments, they state nothing."""
    return set(tokens(text)) - STOPWORDS


@pytest.mark.parametrize("kb", ["embedded"], indirect=True)
def test_demo_answers_state_only_what_cited_units_hold(kb, boundary):
    """Every sentence of every demo answer (rules provider) uses only words of the units it cites."""
    units = [u for f in sorted((DEMO / "units").glob("*.units")) for u in parse_file(f, kb.lexicon, doc=f.name)]
    kb.ingest_units(units)
    stored = {u.id: u for u in kb.store.iter_units()}
    questions = [q.strip() for q in (DEMO / "questions.txt").read_text("utf-8").splitlines() if q.strip()]
    answered = 0
    for q in questions + ["What does Python 4 use?", "What is the boiling point of mercury?"]:
        res = ask(kb, q)
        if not res.found:
            assert res.cited == [] and res.hit_units == [], q
            continue
        answered += 1
        for s in res.sentences:
            assert s["cites"], (q, s)
            held = set().union(*(_words(format_unit(stored[c], with_id=False)) for c in s["cites"]))
            extra = _words(s["text"]) - held
            assert not extra, (q, s["text"], extra)
    assert answered >= len(questions) // 2  # the invariant is about answers, so most questions must get one


CHAIN = """\
#k1 {deforestation} [causes] {soil erosion}
#k2 {soil erosion} [leads to] {crop failure}
#k3 {crop failure} [引起] {famine}
#k4 {famine} [causes] {migration}
"""


def test_causal_question_walks_the_chain(kb, boundary):
    kb.ingest_units(parse_units(CHAIN, kb.lexicon, doc="chain.units"))
    res = ask(kb, "What does deforestation lead to in the end?", trace=True, params=ask_params())
    first = res.rounds[0]
    # the 导致 chain from deforestation, 3 hops: k1 k2 k3 (k4 is a fourth hop)
    assert first["causal"] == [["k1", "k2", "k3"]]
    assert {"k1", "k2", "k3"} <= set(first["new_units"])
    assert res.found and "k1" in res.cited
    # what deforestation leads to is the chain's end: the answer cites every hop down to famine
    assert {"k1", "k2", "k3"} <= set(res.cited) and "famine" in res.answer


def test_a_causal_answer_that_stops_early_gets_the_whole_chain_stated(kb):
    from kgservice.answer import Answer, cite_chains

    units = {u.id: u for u in parse_units(CHAIN, kb.lexicon, doc="chain.units")}
    chain = [units["k1"], units["k2"], units["k3"]]
    ans = cite_chains(Answer(found=True, text="deforestation causes soil erosion. [k1]",
                             sentences=[{"text": "deforestation causes soil erosion.", "cites": ["k1"]}],
                             cited=["k1"]), [chain])
    assert ans.cited == ["k1", "k2", "k3"]
    assert ans.sentences[-1] == {"text": "deforestation causes soil erosion; soil erosion leads to crop failure; "
                                         "crop failure 引起 famine.", "cites": ["k1", "k2", "k3"]}
    assert ans.text.endswith("crop failure 引起 famine. [k1, k2, k3]")
    # every word of the added sentence is in the units it cites (the answer validator's rule)
    held = set().union(*(_words(format_unit(u, with_id=False)) for u in chain))
    assert not _words(ans.sentences[-1]["text"]) - held
    # a chain already cited adds nothing; an answer not found stays as it is
    assert len(cite_chains(ans, [chain]).sentences) == 2
    assert cite_chains(Answer(found=False, text="no"), [chain]).sentences == []


def test_entry_step_stands_in_when_the_key_node_step_finds_nothing(corpus_kb, boundary, script):
    # the key-node extraction (LLM) returns no key node at all: the no-LLM entry step names the
    # nodes found in the question instead ("smoking" is a node label; "cause" is no node)
    script.override_task("extract", lambda p: {"units": [], "mentions": []})
    res = ask(corpus_kb, "What does smoking cause?", params=ask_params())
    assert [k["id"] for k in res.key_nodes] == ["smoking"]
    assert any("entry nodes named in the question" in n for n in res.notes)
    assert res.found and "s1" in res.cited


def test_only_a_question_for_the_chain_end_takes_the_whole_chain():
    from kgservice.drilldown.loop import asks_for_chain_end

    cause = [{"predicate": "cause", "family": "导致", "kind": "content"}]
    lead = [{"predicate": "leads to", "family": "导致", "kind": "content"}]
    assert not asks_for_chain_end("What does smoking cause?", cause)  # one hop is the answer
    assert asks_for_chain_end("What does smoking lead to?", lead)
    assert asks_for_chain_end("What does smoking cause in the end?", cause)
    assert asks_for_chain_end("吸烟最终导致什么？", [{"predicate": "导致", "family": "导致", "kind": "content"}])

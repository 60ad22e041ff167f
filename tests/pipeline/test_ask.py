"""The query pipeline: invariants 2, 3 and 4, caps, trace, drift, the answer gate.

Expected results are worked out by hand from tests/pipeline/conftest.py CORPUS and the
rule-based responder (kgservice/llm/rules.py); see the comments in each test.
"""

from __future__ import annotations

from kgservice.answer import NOT_IN_GRAPH_EN, NOT_IN_GRAPH_ZH
from kgservice.llm import QUERY_PURPOSES
from kgservice.pipeline import ask
from tests.pipeline.conftest import answer_json, ask_params


def test_smoking_question_end_to_end(corpus_kb, boundary):
    # key nodes: [smoking] (exact node, ≡ class {smoking, 吸烟}); predicate "cause" -> 导致 (content),
    # so round 1 expands directed + spread: s1 s2 s4 (directed) and s3 (spread via lung cancer).
    # Judge: s1 scores 3 (key node) + 2 (导致) + 1 (expanded seed) = 6, s2/s4 score 4 -> relevant [s1], enough.
    res = ask(corpus_kb, "What does smoking cause?", trace=True, params=ask_params())
    assert res.found and res.cited == ["s1"]
    assert [u["id"] for u in res.hit_units] == ["s1"]
    assert res.answer == "smoking causes lung cancer (confidence: high). [s1]"
    assert [n["id"] for n in res.key_nodes] == ["smoking"] and res.key_nodes[0]["matches"] == ["smoking", "吸烟"]
    assert res.key_predicates == [{"predicate": "cause", "family": "导致", "kind": "content"}]
    (r1,) = res.rounds
    assert r1["mode"] == "both" and r1["seeds"] == {"smoking": 1.0}
    assert sorted(r1["new_units"]) == ["s1", "s2", "s3", "s4"]
    assert r1["decision"]["relevant"] == ["s1"] and r1["decision"]["enough"] is True
    assert res.stop_reason == "judge: enough"
    assert res.llm["by_purpose"].keys() == {"key_nodes", "drilldown", "answer"}
    assert res.llm["calls"] == 3 and res.llm["total_tokens"] > 0


def test_llm_calls_only_in_the_three_query_steps(corpus_kb, boundary):
    """Invariant 4: count every litellm call during a query; none outside 4.1 / 4.4 / 4.5."""
    questions = ["What does smoking cause?", "Who created Python?", "猫属于什么？", "What is the capital of France?"]
    for q in questions:
        n = boundary.count
        res = ask(corpus_kb, q, params=ask_params())
        new = boundary.calls[n:]
        assert len(new) == res.llm["calls"]  # the LLM's own count sees every call litellm saw
        assert set(res.llm["by_purpose"]) <= QUERY_PURPOSES
        assert {c["task"] for c in new} <= {"extract", "drilldown", "answer"}
        assert all(c["mode"] == "query" for c in new if c["task"] == "extract")  # extraction only of the question
        # France is in no unit of the corpus: the relevance floor refuses it before any call
        assert sum(c["task"] == "extract" for c in new) == (0 if "France" in q else 1)


def test_a_name_the_graph_lacks_is_refused_before_any_call(corpus_kb, boundary):
    """The no-model answer's name rule, on the model-backed path: "France" is in no unit of
    the corpus (and "Python 4" is held only as Python, no unit near it says 4), so no model is
    asked; a name the graph holds goes to the model."""
    for q, gone in (("What is the capital of France?", "'france'"), ("Who created Python 4?", "'python 4'")):
        res = ask(corpus_kb, q, params=ask_params())
        assert not res.found and res.llm["calls"] == 0 and boundary.count == 0
        assert res.stop_reason == f"the graph has nothing about {gone}" and res.answer == NOT_IN_GRAPH_EN
    assert ask(corpus_kb, "Who created Python?", params=ask_params()).found and boundary.count > 0


def test_no_llm_where_explicit_relations_answer(corpus_kb, boundary):
    """Expansion, unit-file ingest and cache stats never call the LLM."""
    from kgservice.expansion import expand_directed, spread_activation
    from kgservice.notation import parse_units

    expand_directed(corpus_kb.store, ["cat"])
    spread_activation(corpus_kb.store, ["smoking"], corpus_kb.spread_params())
    corpus_kb.ingest_units(parse_units("{cat} [has] {whiskers}", corpus_kb.lexicon))
    corpus_kb.caches.stats()
    assert boundary.count == 0


def test_repeated_question_makes_zero_llm_calls(corpus_kb, boundary):
    first = ask(corpus_kb, "What does smoking cause?", params=ask_params())
    n = boundary.count
    second = ask(corpus_kb, "  what does SMOKING cause? ", params=ask_params())  # same normalised question
    assert boundary.count == n and second.llm["calls"] == 0
    assert second.answer == first.answer and second.cited == first.cited
    assert all(v["misses"] == 0 for v in second.caches.values())
    assert sum(v["hits"] for v in second.caches.values()) == 5  # key_nodes, topk, activation, judge, answer


def test_missing_answer_says_not_in_the_graph(corpus_kb, boundary):
    # France is in no unit: refused before any call (the relevance floor's name rule)
    res = ask(corpus_kb, "What is the capital of France?", params=ask_params())
    assert not res.found and res.answer == NOT_IN_GRAPH_EN and res.cited == [] and res.hit_units == []
    assert res.stop_reason == "the graph has nothing about 'france'" and res.llm["calls"] == 0
    # key nodes capital / Paris exist nowhere and have no vector neighbour above 0.7 (Paris is
    # no name: the question is lower case): no seeds, so neither the drill-down nor the answer
    # step calls the LLM
    res = ask(corpus_kb, "what is the capital of paris?", params=ask_params())
    assert not res.found and res.stop_reason == "no key node matched an entry node"
    assert res.llm["by_purpose"].keys() == {"key_nodes"}
    zh = ask(corpus_kb, "法国的首都是哪里？", params=ask_params())
    assert zh.answer == NOT_IN_GRAPH_ZH


def test_answers_cite_only_hit_units(corpus_kb, boundary):
    """Invariant 3: every sentence cites, every cited id is a hit unit, hit units are stored units."""
    stored = {u.id for u in corpus_kb.store.iter_units()}
    for q in ["What does smoking cause?", "Who created Python?", "What does a mammal have?"]:
        res = ask(corpus_kb, q, params=ask_params())
        hits = {u["id"] for u in res.hit_units}
        assert res.found, q
        assert hits <= stored
        for s in res.sentences:
            assert s["cites"] and set(s["cites"]) <= hits


def test_similarity_and_energy_only_rank(corpus_kb, boundary):
    """Invariant 2: a vector neighbour or an activated node contributes units, never facts of its own;
    what the answer says is the cited units' text."""
    res = ask(corpus_kb, "What does smoking cause?", trace=True, params=ask_params(threshold=0.0, top_k=10))
    entry = {h for e in res.entries for h, _ in e["hits"]}
    assert len(entry) > 1  # threshold 0: unrelated nodes entered by similarity alone ...
    assert res.cited == ["s1"]  # ... but only the unit stating the relation is cited
    assert "smoking causes lung cancer" in res.answer


def test_hallucinated_answer_is_rejected(corpus_kb, boundary, script):
    # the model cites a unit that was not hit (p1) and states a fact that is in no unit
    script.override_task("answer", lambda p: answer_json([
        {"text": "Smoking causes lung cancer.", "cites": ["s1"]},
        {"text": "Smoking was banned in 1999.", "cites": ["p1"]}]))
    res = ask(corpus_kb, "What does smoking cause?", params=ask_params())
    assert not res.found and res.answer == NOT_IN_GRAPH_EN
    assert "not among the hit units" in " ".join(res.rejected)
    assert res.llm["by_purpose"]["answer"]["calls"] == 3  # first reply + 2 repair requests


def test_answer_with_unsupported_fact_is_rejected(corpus_kb, boundary, script):
    script.override_task("answer", lambda p: answer_json([{"text": "Smoking causes diabetes.", "cites": ["s1"]}]))
    res = ask(corpus_kb, "What does smoking cause?", params=ask_params())
    assert not res.found and "diabetes" in " ".join(res.rejected)


def test_round_and_unit_caps_and_trace(corpus_kb, boundary, script):
    # a judge that is never satisfied, always has a new seed and never selects a unit about
    # the key node (so the coverage rule cannot stop the loop either): only the caps stop it
    script.override_task("drilldown", lambda p: {
        "relevant": [u["id"] for u in p["units"] if "{python}" not in u["unit"].lower()], "enough": False, "mode": "directed",
        "next_seeds": [s for s in ["smoking", "cat", "mammal"] if s not in p["expanded"]][:1],
        "drift": False, "rephrase": None, "reason": "scripted: never enough"})
    # round 1: python -> p1 p2 p3; round 2: smoking -> s1 s2 s4; then the round cap, 2 by
    # default (key nodes + 2 judge rounds + the answer: at most 4 calls a question)
    res = ask(corpus_kb, "Who created Python?", trace=True, params=ask_params())
    assert [r["seeds"] for r in res.rounds] == [{"python": 1.0}, {"smoking": 1.0}]
    assert sorted(res.rounds[1]["new_units"]) == ["s1", "s2", "s4"]
    assert res.stop_reason == "round cap (2)"
    assert res.llm["calls"] == 4 and res.llm["by_purpose"]["drilldown"]["calls"] == 2
    three = ask(corpus_kb, "Who created Python?", trace=True, params=ask_params(max_rounds=3))
    assert [r["seeds"] for r in three.rounds][2] == {"cat": 1.0} and three.stop_reason == "round cap (3)"
    # unit cap 2: p1 p2 p3 -> two admitted, one dropped, and the pool is full
    capped = ask(corpus_kb, "Who created Python?", trace=True, params=ask_params(max_units=2))
    (r1,) = capped.rounds
    assert r1["pool"] == 2 and len(r1["new_units"]) == 2 and r1["dropped_over_cap"] == 1
    assert capped.stop_reason == "unit cap (2)"
    for r in res.rounds + capped.rounds:  # --trace: every round shows seeds, units, decision
        assert r["seeds"] and set(r["units_text"]) == set(r["new_units"])
        assert r["decision"]["reason"] == "scripted: never enough"


def test_next_seeds_and_mode_drive_the_next_round(corpus_kb, boundary, script):
    decisions = iter([
        {"relevant": [], "enough": False, "next_seeds": ["lung cancer"], "mode": "directed", "reason": "go on"},
        {"relevant": ["s3"], "enough": True, "next_seeds": [], "mode": "directed", "reason": "done"},
    ])
    script.override_task("drilldown", lambda p: next(decisions))
    res = ask(corpus_kb, "Who created Python?", trace=True, params=ask_params())
    r1, r2 = res.rounds
    assert r2["seeds"] == {"lung cancer": 1.0} and r2["mode"] == "directed"
    assert sorted(r2["new_units"]) == ["s1", "s3"]  # directed from lung cancer: context s1, subject s3
    assert res.stop_reason == "judge: enough" and [u["id"] for u in res.hit_units] == ["s3"]


def test_drift_goes_back_to_key_node_extraction(corpus_kb, boundary, script):
    from kgservice.llm import rules

    judged = iter([{"relevant": [], "enough": False, "drift": True, "rephrase": "cats", "reason": "off topic"}])
    script.override_task("drilldown", lambda p: next(judged, None) or rules.drilldown(p))
    script.override_task("extract", lambda p: {"units": [], "mentions": ["cat"]} if p.get("feedback")
                         else rules.extract(p["text"], p["mode"]))
    res = ask(corpus_kb, "What does smoking cause?", trace=True, params=ask_params())
    assert res.llm["by_purpose"]["key_nodes"]["calls"] == 2  # the question re-extracted once, with feedback
    assert res.rounds[0]["note"] == "drift: key nodes re-extracted -> cat"
    assert res.rounds[1]["seeds"] == {"cat": 1.0}
    assert res.cited == ["c1"]  # {cat} [belongs to] {mammal}

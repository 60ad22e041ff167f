"""Vocabulary-constrained expansion on the mini corpus (tests/fixtures/graphify/mini.units)."""

import pytest

from kgservice.graphify.vocabulary import MAX_TOKENS, Vocabulary, choose_with_llm, expand, variants
from kgservice.graphify.loader import load_graph


@pytest.fixture(scope="module")
def g(mini_graph):
    return load_graph(mini_graph)


@pytest.mark.parametrize("question, tokens", [
    # CJK segmented against the vocabulary; ≡ brings the English label (the graph's majority script)
    ("吸烟", ["吸烟", "smoking"]),
    ("肺癌的原因", ["肺癌", "lung", "cancer"]),
    # nothing of "猫" is a vocabulary token (one character): its super-class and that class's ≡
    ("猫", ["哺乳动物", "mammal"]),
    # morphology: "handlers" is not a token, "handler" is
    ("request handlers", ["request", "handler"]),
    # a one-word alias in the same script
    ("chronic obstructive pulmonary disease", ["chronic", "obstructive", "pulmonary", "disease", "copd"]),
    # English question on English labels: no cross-script synonyms added
    ("what causes lung cancer", ["lung", "cancer"]),
    ("zzzz qqqq", []),
])
def test_expansion_by_hand(g, question, tokens):
    assert expand(g, question).tokens == tokens


def test_tokens_are_vocabulary_tokens_and_capped(g):
    vocab = Vocabulary.of(g).all_tokens()
    q = "alpha beta gamma delta epsilon zeta eta theta iota north south east west hub spoke"
    exp = expand(g, q)
    assert exp.tokens == q.split()[:MAX_TOKENS]
    for question in ("吸烟", "猫", "request handlers", "COPD smoking cancer", "how do hubs work"):
        assert set(expand(g, question).tokens) <= vocab


def test_vocabulary_membership_is_exact(g):
    vocab = Vocabulary.of(g)
    assert "handler" in vocab and "handlers" not in vocab
    assert "mok" not in vocab  # inside "smoking", never a token of its own
    assert "吸烟" in vocab and "烟" not in vocab


def test_variants():
    assert variants("handlers")[0] == "handler"
    assert "study" in variants("studies")
    assert "run" in variants("running")
    assert "cafe" in variants("café")


def test_llm_chooser_keeps_only_vocabulary_tokens(g):
    seen = {}

    def fake(model, prompt):
        seen["model"], seen["prompt"] = model, prompt
        return 'Sure: ["smoking", "tobacco", "LUNG", "smoking"]'

    exp = choose_with_llm(g, "烟草与肺病", "test-model", complete=fake)
    assert exp.tokens == ["smoking", "lung"]
    assert exp.chooser == "llm"
    assert seen["model"] == "test-model" and "VOCABULARY:" in seen["prompt"] and "smoking" in seen["prompt"]


def test_llm_chooser_garbage_reply_gives_nothing(g):
    assert choose_with_llm(g, "x", "m", complete=lambda m, p: "no idea").tokens == []

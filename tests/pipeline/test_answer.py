"""The answer gate (invariant 3): cites only hit units, every sentence cites, no facts beyond them."""

from __future__ import annotations

from kgservice.answer import AnswerOut, unit_vocabulary, validate_answer


def _check(kb, sentences, hit=("s1", "s2"), short=""):
    units = {u.id: u for u in kb.store.get_units(list(hit))}
    vocab = {uid: unit_vocabulary(u, kb.store, kb.lexicon) for uid, u in units.items()}
    return validate_answer(AnswerOut(found=True, answer=short, sentences=sentences), units, vocab)


def test_the_short_answer_states_only_what_the_cited_units_do(corpus_kb):
    said = [{"text": "Smoking causes lung cancer.", "cites": ["s1"]}]
    assert _check(corpus_kb, said, short="lung cancer") == [] and _check(corpus_kb, said) == []
    assert _check(corpus_kb, said, short="diabetes") == ["answer: words not in the cited units: diabetes"]
    assert _check(corpus_kb, said, short="90 percent") == ["answer: number '90' is in none of the cited units",
                                                            "answer: words not in the cited units: percent"]
    # judged against the units the sentences cite, not every hit unit: s4 (smoking is a tobacco
    # use) is a hit here, but no sentence cites it
    assert _check(corpus_kb, said, hit=("s1", "s4"), short="tobacco use") == [
        "answer: words not in the cited units: tobacco"]


def test_grounded_sentences_pass(corpus_kb):
    assert _check(corpus_kb, [{"text": "Smoking causes lung cancer, with high confidence.", "cites": ["s1"]}]) == []
    assert _check(corpus_kb, [{"text": "Smoking is a cause of lung cancer.", "cites": ["s1"]}]) == []
    # the ≡ class and the predicate family give the Chinese wording: 吸烟 ≡ smoking, 导致 ∈ causes' family
    assert _check(corpus_kb, [{"text": "吸烟导致 lung cancer。", "cites": ["s1"]}]) == []
    assert validate_answer(AnswerOut(found=False), {}, {}) == []


def test_ungrounded_sentences_are_rejected(corpus_kb):
    cases = {
        "cites no unit": [{"text": "Smoking causes lung cancer.", "cites": []}],
        "not among the hit units": [{"text": "Python was created by Guido van Rossum.", "cites": ["p1"]}],
        "number '90'": [{"text": "Smoking causes 90 percent of lung cancer.", "cites": ["s1"]}],
        "diabetes": [{"text": "Smoking causes lung cancer and diabetes.", "cites": ["s1"]}],
        "糖尿病": [{"text": "吸烟导致糖尿病。", "cites": ["s1"]}],
        "no sentences": [],
    }
    for expected, sentences in cases.items():
        problems = _check(corpus_kb, sentences)
        assert problems and expected in " ".join(problems), (expected, problems)


def test_a_sentence_is_judged_by_its_own_citations(corpus_kb):
    # true in the graph (s3), but the sentence cites s1, which does not say it
    problems = _check(corpus_kb, [{"text": "Lung cancer leads to death.", "cites": ["s1"]}], hit=("s1", "s3"))
    assert problems and "death" in problems[0]
    assert _check(corpus_kb, [{"text": "Lung cancer leads to death.", "cites": ["s3"]}], hit=("s1", "s3")) == []

"""The no-model answer's family words are built once per lexicon, not once per switch between
knowledge bases: a process serving several workspaces holds one lexicon per knowledge base."""

from kgservice.answer import retrieval_only
from kgservice.families.lexicon import Lexicon


def test_asks_alternating_between_two_lexicons_build_each_lexicons_words_once(monkeypatch):
    built: list[int] = []
    real = retrieval_only.family_words

    def counting(members, base):
        built.append(len(members))
        return real(members, base)

    monkeypatch.setattr(retrieval_only, "family_words", counting)
    monkeypatch.setattr(retrieval_only, "_FAMILIES", {})
    a, b = Lexicon.load(), Lexicon.load()
    words = [retrieval_only._family_words(lex) for lex in (a, b, a, b, a, b)]
    assert len(built) == 2  # one build for a, one for b (before: six)
    assert words[0] is words[2] is words[4] and words[1] is words[3] is words[5]
    assert words[0] == words[1] and "导致" in words[0]  # two loads of the same lexicon agree


def test_a_new_lexicon_at_a_freed_ones_address_is_built_afresh(monkeypatch):
    monkeypatch.setattr(retrieval_only, "_FAMILIES", {})
    old = Lexicon.load()
    retrieval_only._family_words(old)
    key = id(old)
    ref, _ = retrieval_only._FAMILIES[key]
    del old
    assert ref() is None  # freed: a later lexicon may take its id
    fresh = Lexicon()  # no families at all
    retrieval_only._FAMILIES[id(fresh)] = retrieval_only._FAMILIES.pop(key)  # as if it took the same id
    assert retrieval_only._family_words(fresh) == {}

"""A word of the language is never read as a misspelling of the graph's word
(:mod:`kgservice.entry.spelling`). On the MuSiQue rules graph the reading took "premiere" for a
misspelt *premiered* (the entry step) and "thinking" for a misspelt *thinging* (the floor's
name rule, against the units' stems), both words simplemma's English dictionary knows; the two
real misspellings that motivated the reading, "olimpics" and "Margaraviate", are still read."""

from __future__ import annotations

from kgservice.answer.floor import missing_names
from kgservice.answer.shape import asked, stem
from kgservice.entry.spelling import respelled, respelt

# label words of a graph shaped like the rules graph's: the passages say "premiered in"
LABEL_WORDS = {"premiered": 4, "olympics": 65, "olympic": 9, "margraviate": 2, "opera": 3}


def _used(word: str) -> int:
    return LABEL_WORDS.get(word, 0)


def test_a_word_of_the_language_is_not_read_as_the_graphs_word() -> None:
    assert respelled("When did the opera premiere in Vienna?", _used) == "When did the opera premiere in Vienna?"
    assert respelt("premiere", _used) == ""


def test_the_real_misspellings_are_still_read() -> None:
    assert respelled("where will the next winter olimpics be held", _used) == \
        "where will the next winter olympics be held"
    assert respelled("Who ruled the Margaraviate of Brandenburg?", _used) == \
        "Who ruled the Margraviate of Brandenburg?"


def test_the_name_rule_does_not_read_a_word_as_a_misspelt_stem() -> None:
    # the units use "thinging" (stem *thing*), never "think": the name is not the graph's
    known = {"thing", "wrote"}.__contains__
    assert missing_names(asked("Who wrote Thinking Fondly?"), known) == ("thinking fondly",)
    # a misspelt name word is still the graph's (MuSiQue's "Margaraviate")
    assert missing_names(asked("Who ruled the Margaraviate?"), {stem("margraviate"), "rule"}.__contains__) == ()


def test_the_dictionary_knows_forms_and_not_misspellings() -> None:
    from kgservice.entry.spelling import dictionary_word

    assert [dictionary_word(w) for w in ("premiere", "premiered", "thinking", "olympics")] == [True] * 4
    assert [dictionary_word(w) for w in ("olimpics", "margaraviate", "zorblatt")] == [False] * 3


def test_a_short_name_spelt_another_way_is_read_as_the_graphs() -> None:
    # MuSiQue's "Siege of Cassel" over a graph that writes *Kassel* (the passage of the siege has
    # no unit): a six-letter name, left alone while the length alone kept real words from being
    # read as graph words ("router" / *route*), which the dictionary now does at any length
    used = {"kassel": 3, "route": 4, "wine": 6}.get
    assert respelled("What body of water is near the location where the Siege of Cassel took place?",
                     lambda w: used(w, 0)) == \
        "What body of water is near the location where the Siege of Kassel took place?"
    assert missing_names(asked("Where did the Siege of Cassel take place?"), {"kassel", "place"}.__contains__) == ()
    # a real word of six letters, and an acronym of five, stay as written
    assert respelled("How do I reset my router password?", lambda w: used(w, 0)) == \
        "How do I reset my router password?"
    assert respelled("Who funds WINEP?", lambda w: used(w, 0)) == "Who funds WINEP?"

"""The offline rules model's extraction on encyclopaedic text: a passage's title entity keeps
its whole name. Every sentence below is written by hand and its triples worked out by hand
(subject, predicate, objects) from what the sentence says."""

from __future__ import annotations

import doctest
import json

import pytest

from kgservice.llm import rules


def triples(text: str, title: str | None = None) -> list[tuple[str, str, list[str]]]:
    return [(u["subject"], u["predicate"], [a.get("node") or a.get("literal") for a in u["args"]])
            for u in rules.extract(text, "summary", title)["units"]]


def test_the_module_examples():
    result = doctest.testmod(rules)
    assert result.failed == 0 and result.attempted > 0


@pytest.mark.parametrize("text, expected", [
    # a title's abbreviation and a middle initial do not end the sentence
    ("The Oddventures of Mr. Cool is a song by Francis Magalona.",
     [("Oddventures of Mr. Cool", "song by", ["Francis Magalona"]), ("Oddventures of Mr. Cool", "is a", ["song"])]),
    ("Harris W. Fawell was the husband of Ruth Johnson.", [("Harris W. Fawell", "husband of", ["Ruth Johnson"])]),
    ("The Green Years is a 1946 film directed by A. J. Smith.",
     [("Green Years", "directed by", ["A. J. Smith"]), ("Green Years", "is a", ["1946 film"])]),
    # "World War I." still ends its sentence
    ("Roses cause hay fever after World War I. Tulips cause sneezing.",
     [("Roses", "cause", ["hay fever after World War I"]), ("Tulips", "cause", ["sneezing"])]),
])
def test_names_with_initials_and_titles_stay_whole(text, expected):
    assert triples(text) == expected


@pytest.mark.parametrize("title, text, expected", [
    # the surname a passage calls its title entity by stands for the whole name
    ("Harris W. Fawell", "Fawell was the husband of Ruth Johnson.",
     [("Harris W. Fawell", "husband of", ["Ruth Johnson"])]),
    ("Corey Taylor", "Taylor was the son of Mark Taylor.", [("Corey Taylor", "son of", ["Mark Taylor"])]),
    # "he" / "she" in a passage about a person
    ("Marie Curie", "She was the wife of Pierre Curie.", [("Marie Curie", "wife of", ["Pierre Curie"])]),
    # "it" in a passage about a place, and the relation written after the copula
    ("Kohuwala", "Hence it is connected to Nugegoda and Dehiwala.",
     [("Kohuwala", "connected to", ["Nugegoda", "Dehiwala"])]),
    ("Coffee and tea", "It contains caffeine.", [("It", "contains", ["caffeine"])]),
    # a qualifier in parentheses is not part of the name
    ("The Green Years (film)", "Green Years is a 1946 film directed by Victor Saville.",
     [("Green Years", "directed by", ["Victor Saville"]), ("Green Years", "is a", ["1946 film"])]),
    # no completion: "Hungary" is not "Kingdom of Hungary", a heading that is no name names no one
    ("Kingdom of Hungary", "Hungary is the wife of nobody.", [("Hungary", "wife of", ["nobody"])]),
    ("Coffee and tea", "Coffee contains caffeine.", [("Coffee", "contains", ["caffeine"])]),
    ("Coffee and tea", "She was the wife of Pierre Curie.", []),  # a pronoun standing for no one: nothing
])
def test_the_title_entity_keeps_its_whole_name(title, text, expected):
    assert triples(text, title) == expected


@pytest.mark.parametrize("text, expected", [
    ("The Oddventures of Mr. Cool is the seventh studio album of Filipino rap artist Francis Magalona, "
     "released in 1998.",
     [("Oddventures of Mr. Cool", "album by", ["Francis Magalona"]),
      ("Oddventures of Mr. Cool", "is a", ["seventh studio album"])]),
    ("Great Big Mouth Records is a record label based in Des Moines, Iowa, which was founded by Slipknot "
     "frontman Corey Taylor and Denny Harvey.",
     [("Great Big Mouth Records", "based in", ["Des Moines", "Iowa"]),
      ("Great Big Mouth Records", "is a", ["record label"]),
      ("Great Big Mouth Records", "founded by", ["Corey Taylor", "Denny Harvey"])]),
    # the shapes read before, unchanged
    ("Talk About a Stranger is a 1952 film directed by David Bradley.",
     [("Talk About a Stranger", "directed by", ["David Bradley"]), ("Talk About a Stranger", "is a", ["1952 film"])]),
    ("Hello Love is a song by Jim Reeves.", [("Hello Love", "song by", ["Jim Reeves"]), ("Hello Love", "is a", ["song"])]),
    ("Anne was the wife of King Henry VIII.", [("Anne", "wife of", ["Henry VIII"])]),
    ("In 1502, Arthur, son of king Henry VII, died at Ludlow.", [("Arthur", "son of", ["Henry VII"])]),
])
def test_works_of_a_maker_and_places_a_thing_is_based_in(text, expected):
    assert triples(text) == expected


def test_a_documents_heading_names_the_entity_through_the_request():
    """``kg ingest`` with no model sends each chunk with the heading it starts under."""
    reply = rules.respond({"task": "extract", "mode": "summary", "section": "Harris W. Fawell",
                           "text": "Fawell was the husband of Ruth Johnson. He was the son of Walter Fawell."})
    got = [(u["subject"], u["predicate"], [a["node"] for a in u["args"]]) for u in json.loads(reply)["units"]]
    assert got == [("Harris W. Fawell", "husband of", ["Ruth Johnson"]),
                   ("Harris W. Fawell", "son of", ["Walter Fawell"])]
    heading = "# Harris W. Fawell\n\nFawell was the husband of Ruth Johnson."
    assert triples(heading) == [("Harris W. Fawell", "husband of", ["Ruth Johnson"])]


@pytest.mark.parametrize("title, text, expected", [
    # a title whose first word is "It" / "He" / "She" is named by its sentence, not a pronoun there:
    # the sentence keeps its subject, as it does with no heading at all
    ("It Follows", "It Follows is a 2014 film directed by David Robert Mitchell.",
     [("It Follows", "directed by", ["David Robert Mitchell"]), ("It Follows", "is a", ["2014 film"])]),
    ("She Wore a Yellow Ribbon", "She Wore a Yellow Ribbon is a 1949 film directed by John Ford.",
     [("She Wore a Yellow Ribbon", "directed by", ["John Ford"]), ("She Wore a Yellow Ribbon", "is a", ["1949 film"])]),
    ("He Xiangning", "He Xiangning was the wife of Liao Zhongkai.", [("He Xiangning", "wife of", ["Liao Zhongkai"])]),
    # the pronoun itself still stands for the title entity
    ("He Xiangning", "She was the wife of Liao Zhongkai.", [("He Xiangning", "wife of", ["Liao Zhongkai"])]),
])
def test_a_title_beginning_with_a_pronouns_word_is_not_read_as_the_pronoun(title, text, expected):
    assert triples(text, title) == expected

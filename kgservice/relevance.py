"""Does the graph state what a question asks about? Pure functions over the question's words
and the units' words (subject, predicate, arguments, modifier values), shared by every step
that may answer "not in the graph" without reading units: the model-backed pre-check of
:func:`kgservice.pipeline.asking.missing_key_entities`, and any no-model floor that wants the
same rule.

The rule, from a real model's first run: a key concept that is no node ("average annual
snowfall") is not missing from the graph when its words are stated in units — a unit's
predicate can be exactly that phrase (``{Seattle} [average annual snowfall] (6.8 inches)``).
Only a word the graph states nowhere (no label, predicate, value or modifier: "leopard" in
"snow leopard" when only "leopard" is stored) or a number that no unit around the concept
holds ("Python 4") sets the concept apart from what the graph has.
"""

from __future__ import annotations

from collections.abc import Container, Iterable

from kgservice.entry.match import singular, tokens


def stated(word: str, vocabulary: Container[str], languages: tuple[str, ...] = ("en",)) -> bool:
    """Is a (normalised, :func:`kgservice.entry.match.tokens`) word in the vocabulary, as it
    is, as a plural's singular, or by its base form?

    >>> v = {"annual", "snowfall", "form"}
    >>> stated("annual", v), stated("snowfalls", v), stated("formed", v), stated("leopard", v)
    (True, True, True, False)
    """
    from kgservice.families.lemma import lemma

    return word in vocabulary or singular(word) in vocabulary or lemma(word, languages) in vocabulary


def unstated_words(words: Iterable[str], vocabulary: Container[str], nearby_text: str,
                   languages: tuple[str, ...] = ("en",)) -> list[str]:
    """Of the words that set a key concept apart from the nodes it contains, those the graph
    does not state: a word found in no unit (``vocabulary``: every token of every unit's
    text), a number found in none of the units around the concept (``nearby_text``: the text
    of the units that mention the nodes it contains). A number is judged near, not anywhere:
    "4" is stated somewhere in any large graph.

    >>> vocab = {"seattle", "average", "annual", "snowfall", "python", "3", "12", "4", "legs"}
    >>> unstated_words(["average", "annual"], vocab, "Seattle receives snowfall")
    []
    >>> unstated_words(["snow"], vocab, "leopard is a cat"), unstated_words(["4"], vocab, "Python 3.12 is latest")
    (['snow'], ['4'])
    >>> unstated_words(["4"], vocab, "Python 4 released in 2030")
    []
    """
    near = set(tokens(nearby_text))
    out = []
    for w in words:
        if any(c.isdigit() for c in w):
            if w not in near:
                out.append(w)
        elif not stated(w, vocabulary, languages):
            out.append(w)
    return out


def compound_words(key: str, spans: Iterable[tuple[int, int]]) -> set[str]:
    """The words of a key concept that form one compound with a node it contains: the run of
    words around the node's span with no stopword between ("snow leopard", "Python 4",
    "average annual snowfall"). A word joined by a preposition ("lyricist *of* Brother",
    "capital *of* France") describes something related to the node, which a drill-down can
    find, not a narrower kind of it: such words never refuse a question.

    >>> sorted(compound_words("giant snow leopard", [(2, 3)])), compound_words("lyricist of Brother", [(2, 3)])
    (['giant', 'snow'], set())
    >>> sorted(compound_words("Python 4 release notes", [(0, 1)]))
    ['4', 'notes', 'release']
    """
    from kgservice.entry.match import STOPWORDS

    toks = tokens(key)
    out: set[str] = set()
    for start, end in spans:
        i = start - 1
        while i >= 0 and toks[i] not in STOPWORDS:
            out.add(toks[i])
            i -= 1
        j = end
        while j < len(toks) and toks[j] not in STOPWORDS:
            out.add(toks[j])
            j += 1
    return out


__all__ = ["compound_words", "stated", "unstated_words"]

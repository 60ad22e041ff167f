"""The relevance floor: does the graph answer this question at all, and how strongly?

The retrieval always ranks something (a question's nearest node vectors, the units of any
word it shares with the graph), so without a floor "What is the capital of Mars?" over a
Wikipedia graph answered with three Bogotá units. A question is **not in the graph** when

* it writes a name no unit of the graph mentions ("Mars", "Ruby" over a graph about Python),
  or a name the graph has only without a number or word that sets it apart ("2030 FIFA World
  Cup" when the graph has the 2014 one: ``narrower``, the caller's
  :func:`kgservice.entry.match.narrower_than_graph`): the question is about something else,
  whatever other words it shares; or
* none of its best units is **about** a thing it names: a unit counts when one of its sides is
  named by the question (:func:`kgservice.answer.shape.match`: its anchor) and either that
  side is the unit's subject (the graph has units about the thing itself; not a synonym
  unit, which only renames it) or the unit is **related** to what the question asks (its
  relation, or another of its words). "When was Java first released?" over a graph where
  Java is only what Jython is written in: a unit names Java, none is about it.

Otherwise the match is **strong** when such a unit also has the question's relation, else
**partial**.

One pure function (:func:`relevance`) over the question and its ranked units, shared by the
no-model answer and the model-backed path's pre-check (before spending a call); the caller
gathers the units and what the graph knows (:mod:`kgservice.answer.retrieval_only`). The rules
were chosen on the demo and checked on MuSiQue and the reverse, with a written set of
off-topic questions (scripts/eval/RESULTS.md, "Answer-shaped ranking and the relevance
floor"); a word-specificity threshold on the anchor was tried and removed: it helped on no
set and cost the small ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from kgservice.answer.shape import Asked, Candidate, Match, asked, stem, words
from kgservice.entry.match import STOPWORDS

STRONG, PARTIAL, NONE = "strong", "partial", "none"
# how many of the ranked units the verdict reads; the answer lists the ones it found about a
# named thing first (:func:`about_first`), so it shows what the verdict rests on
TOP = 3


@dataclass(frozen=True)
class Relevance:
    """How strongly the graph answers a question: ``strength`` is strong / partial / none
    (none: "not in the graph"); ``missing`` the question's names the graph lacks; ``reason``
    one line for a person."""

    strength: str
    missing: tuple[str, ...] = ()
    reason: str = ""

    @property
    def found(self) -> bool:
        return self.strength != NONE

    @property
    def label(self) -> str:
        """"strong match", "partial match", "no match"."""
        return f"{'no' if self.strength == NONE else self.strength} match"


def missing_names(a: Asked, known: Callable[[str], bool],
                  narrower: Callable[[str], bool] = lambda name: False) -> tuple[str, ...]:
    """The question's names (:attr:`Asked.names`) none of whose words the graph uses
    (``known``: is this stem in any unit?), or that ``narrower`` says the graph has only in a
    broader form; numbers alone are no name.

    >>> missing_names(asked("What is the capital of Mars?"), {"capital"}.__contains__)
    ('mars',)
    >>> missing_names(asked("Who created Python 4?"), {"python", "creat"}.__contains__)
    ()
    >>> missing_names(asked("Who created Python 4?"), {"python"}.__contains__, lambda n: n == "python 4")
    ('python 4',)
    """
    out = []
    for name in a.names:
        content = [t for t in name if t not in STOPWORDS and not t.isdigit()]
        text = " ".join(name)
        if content and (not any(known(stem(t)) for t in content) or narrower(text)):
            out.append(text)
    return tuple(out)


def about(a: Asked, cand: Candidate, m: Match) -> bool:
    """Is the unit about a thing the question names: anchored, and its subject is that thing
    (not in a synonym unit) or it is related to what the question asks (module doc)?

    >>> from kgservice.answer.shape import match
    >>> a = asked("When was Java first released?")
    >>> jython = Candidate("u", ("Jython", "Java"), predicate="written in")
    >>> about(a, jython, match(a, jython))
    False
    >>> a = asked("Brother >> performer")
    >>> song = Candidate("v", ("Brother", "Pearl Jam"), predicate="is a song by")
    >>> about(a, song, match(a, song))
    True
    """
    if not m.anchor:
        return False
    asks = a.words - {w for i in m.anchor for w in words(cand.sides[i])}
    return (0 in m.anchor and not cand.synonym) or m.related or not asks


def relevance(question: str, ranked: Sequence[Match], candidates: Mapping[str, Candidate],
              known: Callable[[str], bool], narrower: Callable[[str], bool] = lambda name: False,
              top: int = TOP) -> Relevance:
    """The verdict over the ``top`` best of ``ranked`` (module doc). ``known``: is a stem in any
    unit of the graph; ``narrower``: does the graph hold this name only in a broader form.

    >>> from kgservice.answer.shape import rank
    >>> cands = [Candidate("b1", ("Bogotá", "Capital District"), predicate="administered as"),
    ...          Candidate("b2", ("Colombia", "Bogotá"), predicate="capital")]
    >>> known = {"capital", "colombia", "bogota", "district", "administ"}.__contains__
    >>> def verdict(q):
    ...     r = relevance(q, rank(q, cands), {c.id: c for c in cands}, known)
    ...     return r.strength, r.missing
    >>> verdict("What is the capital of Mars?")
    ('none', ('mars',))
    >>> verdict("What is the capital of Colombia?")
    ('strong', ())
    >>> verdict("what is a capital?")  # a word of a predicate is no anchor
    ('none', ())
    >>> verdict("When was Bogotá founded?")  # units about Bogotá, none says when it was founded
    ('partial', ())
    >>> verdict("How big is the Capital District?")  # named only as another thing's object
    ('none', ())
    """
    a = asked(question)
    gone = missing_names(a, known, narrower)
    if gone:
        return Relevance(NONE, gone, f"the graph has nothing about {', '.join(repr(g) for g in gone)}")
    hits = [m for m in ranked[:top] if about(a, candidates[m.id], m)]
    if not hits:
        named = any(m.anchor for m in ranked[:top])
        return Relevance(NONE, (), "units name a thing the question names, none is about it" if named
                         else "no unit is about a thing the question names")
    if any(m.relation > 0 for m in hits):
        return Relevance(STRONG, (), "a unit states the asked relation of a thing the question names")
    return Relevance(PARTIAL, (), "units about a thing the question names, none with the asked relation")


def about_first(question: str, ranked: Sequence[Match], candidates: Mapping[str, Candidate],
                top: int = TOP) -> list[Match]:
    """``ranked`` with the units of its ``top`` best that are about a thing the question names
    (:func:`about`) moved to the front, each group in its order: the answer lists the units its
    verdict rests on.

    >>> from kgservice.answer.shape import rank
    >>> cands = [Candidate("j", ("Jython", "Java"), predicate="written in"),
    ...          Candidate("k", ("Java", "Oracle"), predicate="owned by")]
    >>> [m.id for m in about_first("Who made Java?", rank("Who made Java?", cands), {c.id: c for c in cands})]
    ['k', 'j']
    """
    a = asked(question)
    head = list(ranked[:top])
    first = [m for m in head if about(a, candidates[m.id], m)]
    return first + [m for m in head if m not in first] + list(ranked[top:])

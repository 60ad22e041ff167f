"""The relevance floor: does the graph answer this question at all, and how strongly?

The retrieval always ranks something (a question's nearest node vectors, the units of any
word it shares with the graph), so without a floor "What is the capital of Mars?" over a
Wikipedia graph answered with three Bogotá units. A question is **not in the graph** when
its best units

* leave out a name the question writes that no unit of the graph mentions at all ("Mars",
  "Ruby" over a graph about Python): the question is about something else, whatever other
  words it shares; or
* share no anchor with it: none of their sides is a thing the question names, but for words
  so common in the graph that they say nothing ("capital", "film"): their specificity, the
  word's idf over the graph's units relative to a word no unit uses, is below ``FLOOR``.

Otherwise the match is **strong** when a best unit also has the question's relation
(:func:`kgservice.answer.shape.match`), else **partial**.

One pure function (:func:`relevance`) over the question and its ranked units, shared by the
no-model answer and the model-backed path's pre-check (before spending a call); the caller
gathers the units and the graph's word frequencies (:mod:`kgservice.answer.retrieval_only`).
``FLOOR`` was calibrated on the demo, MuSiQue and a written set of off-topic questions
(scripts/eval/RESULTS.md, "Answer-shaped ranking and the relevance floor").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from kgservice.answer.shape import Asked, Candidate, Match, asked, stem, words
from kgservice.entry.match import STOPWORDS

# the specificity an anchor's rarest word needs (idf relative to a word the graph never
# uses); calibrated on the demo, MuSiQue and the off-topic set (scripts/eval/RESULTS.md)
FLOOR = 0.5
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")

STRONG, PARTIAL, NONE = "strong", "partial", "none"


@dataclass(frozen=True)
class Relevance:
    """How strongly the graph answers a question: ``strength`` is strong / partial / none
    (none: "not in the graph"); ``support`` the specificity of the best anchor (0..1);
    ``missing`` the question's names no unit mentions; ``reason`` one line for a person."""

    strength: str
    support: float
    missing: tuple[str, ...] = ()
    reason: str = ""

    @property
    def found(self) -> bool:
        return self.strength != NONE

    @property
    def label(self) -> str:
        """"strong match", "partial match", "no match"."""
        return f"{'no' if self.strength == NONE else self.strength} match"


def missing_names(a: Asked, known: Callable[[str], bool]) -> tuple[str, ...]:
    """The question's names (:attr:`Asked.names`) none of whose words the graph uses
    (``known``: is this stem in any unit?); numbers alone are no name.

    >>> missing_names(asked("What is the capital of Mars?"), {"capital"}.__contains__)
    ('mars',)
    >>> missing_names(asked("Who created Python 4?"), {"python", "creat"}.__contains__)
    ()
    """
    out = []
    for name in a.names:
        content = [t for t in name if t not in STOPWORDS and not t.isdigit()]
        if content and not any(known(stem(t)) for t in content):
            out.append(" ".join(name))
    return tuple(out)


def anchor_support(a: Asked, cand: Candidate, m: Match, specificity: Callable[[str], float]) -> float:
    """How specific the unit's anchor is: the largest specificity among the words of the sides
    the question names (a CJK side, found as a run of two characters or more, counts fully; a
    side named through the entry step's synonyms too).

    >>> a = asked("What does smoking cause?")
    >>> c = Candidate("u", ("smoking", "lung cancer"), predicate="causes")
    >>> from kgservice.answer.shape import match
    >>> anchor_support(a, c, match(a, c), {"smok": 0.7}.get)
    0.7
    >>> a = asked("Who created Python?")
    >>> c = Candidate("u", ("Python", "Guido van Rossum"), predicate="created by")
    >>> anchor_support(a, c, match(a, c), {"python": 0.1}.get)  # a name, however common
    1.0
    """
    best = 0.0
    names = {stem(t) for name in a.names for t in name}
    for i in m.anchor:
        side = cand.sides[i]
        said = words(side) & a.words
        if (i in cand.named_sides and not said) or _CJK.search(side) or (said and said <= names):
            # named through a synonym, a CJK run, or a name as the question writes it: a
            # name is specific however many units mention it ("Python" in a graph about it)
            best = max(best, 1.0)
        else:
            best = max([best] + [specificity(w) or 0.0 for w in said])
    return best


def relevance(question: str, ranked: Sequence[Match], candidates: Mapping[str, Candidate],
              known: Callable[[str], bool], specificity: Callable[[str], float], top: int = 3,
              floor: float = FLOOR) -> Relevance:
    """The floor's verdict over the ``top`` best of ``ranked`` (module doc). ``known``: is a
    stem in any unit of the graph; ``specificity``: a stem's idf over the graph's units
    relative to a word no unit uses (0..1).

    >>> from kgservice.answer.shape import rank
    >>> cands = [Candidate("b1", ("Bogotá", "Capital District"), predicate="administered as"),
    ...          Candidate("b2", ("Colombia", "Bogotá"), predicate="capital")]
    >>> spec = {"capital": 0.4, "colombia": 0.8, "bogota": 0.8, "district": 0.6, "administ": 0.9}.get
    >>> known = lambda w: spec(w) is not None
    >>> def verdict(q):
    ...     r = relevance(q, rank(q, cands), {c.id: c for c in cands}, known, spec)
    ...     return r.strength, r.missing
    >>> verdict("What is the capital of Mars?")
    ('none', ('mars',))
    >>> verdict("What is the capital of Colombia?")
    ('strong', ())
    >>> verdict("what is a capital?")  # a common word alone is no anchor
    ('none', ())
    >>> verdict("When was Bogotá founded?")  # about Bogotá, but not what the graph says of it
    ('none', ())
    """
    a = asked(question)
    gone = missing_names(a, known)
    if gone:
        return Relevance(NONE, 0.0, gone, f"the graph has nothing about {', '.join(repr(g) for g in gone)}")
    best = support = 0.0
    strong = False
    for m in ranked[:top]:
        cand = candidates[m.id]
        s = anchor_support(a, cand, m, specificity)
        support = max(support, s)
        # the question's words besides the anchor's: what it asks about the thing it names
        asks = a.words - {w for i in m.anchor for w in words(cand.sides[i])}
        if s >= floor and (m.related or not asks):
            best = max(best, s)
            strong = strong or m.relation > 0
    if best < floor or not best:
        why = ("no unit is about a thing the question names" if support < floor or not support else
               "units about a thing the question names, none about what it asks")
        return Relevance(NONE, round(support, 3), (), why)
    if strong:
        return Relevance(STRONG, round(best, 3), (), "a unit states the asked relation of a thing the question names")
    return Relevance(PARTIAL, round(best, 3), (), "units about a thing the question names, none with the asked relation")

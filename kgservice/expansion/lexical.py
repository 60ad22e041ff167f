"""Lexical scoring of units against a question: BM25 over the stored unit text, no vectors.

Why: a multi-hop question names its first entity (the entry step finds that node), but the
hop it asks about is often named only by ordinary words — "the usual average *snowfall*",
"the *waterfall* in the country", "the *debt* load" — which are no node label, or a label
common enough that the entry step rightly ignores it. The unit that states that fact
("Seattle [has] seasonal snowfall ...") shares those words with the question. Scoring the
units' own text (subject, predicate, arguments, modifiers; the project's data, not source
passages) finds it, and :func:`kgservice.expansion.retrieve.retrieve` seeds spreading
activation from its nodes. Measured on MuSiQue (scripts/eval/RESULTS.md).

Tokens are the entry step's (:func:`kgservice.entry.match.tokens`: NFKC, case-fold, accents
folded, each CJK character a token), so Chinese units match Chinese questions character by
character; stopwords are dropped from the question. BM25 with the usual k1 = 1.2, b = 0.75.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kgservice.entry.match import STOPWORDS, tokens
from kgservice.model import Unit


def unit_text(unit: Unit) -> str:
    """The words of a unit: subject, predicate, arguments and modifier values.

    >>> from kgservice.model import Value
    >>> u = Unit(id="u1", subject="Seattle", predicate="has", family="has", kind="content",
    ...          args=(Value(literal="6.8 inches of snowfall"),))
    >>> unit_text(u)
    'Seattle has 6.8 inches of snowfall'
    """
    words = [unit.subject, unit.predicate]
    for value in list(unit.args) + [m.value for m in unit.mods]:
        words.append(value.node or value.literal or "")
    return " ".join(w for w in words if w)


@dataclass
class UnitIndex:
    """An inverted index of unit tokens with BM25 scoring.

    >>> ix = UnitIndex.build([("u1", "Seattle has heavy snowfall"), ("u2", "Seattle is a city"),
    ...                       ("u3", "Pearl Jam formed in Seattle")])
    >>> [u for u, _ in ix.top("What is the average snowfall in Seattle?", 2)]
    ['u1', 'u2']
    >>> ix.top("the of is", 3)  # stopwords only: nothing to match
    []
    >>> UnitIndex.build([]).top("snowfall", 1)
    []
    """

    postings: dict[str, dict[str, int]] = field(default_factory=dict)  # token -> unit id -> term frequency
    lengths: dict[str, int] = field(default_factory=dict)  # unit id -> tokens
    k1: float = 1.2
    b: float = 0.75

    @classmethod
    def build(cls, units: Iterable[tuple[str, str]]) -> "UnitIndex":
        """From (unit id, text) pairs."""
        ix = cls()
        for uid, text in units:
            toks = tokens(text)
            ix.lengths[uid] = len(toks)
            for t in toks:
                row = ix.postings.setdefault(t, {})
                row[uid] = row.get(uid, 0) + 1
        return ix

    def scores(self, question: str) -> dict[str, float]:
        """BM25 of every unit sharing a non-stopword token with the question."""
        n = len(self.lengths)
        if not n:
            return {}
        avg = sum(self.lengths.values()) / n or 1.0
        k1, b, lengths = self.k1, self.b, self.lengths
        out: dict[str, float] = {}
        for t in sorted(set(tokens(question)) - STOPWORDS):
            row = self.postings.get(t)
            if not row:
                continue
            idf = math.log(1.0 + (n - len(row) + 0.5) / (len(row) + 0.5))
            for uid, tf in row.items():
                out[uid] = out.get(uid, 0.0) + idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[uid] / avg))
        return out

    def top(self, question: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` best units, best first (ties by unit id)."""
        return sorted(self.scores(question).items(), key=lambda kv: (-kv[1], kv[0]))[:k]


class LexicalUnits:
    """Holds the :class:`UnitIndex` of a store, rebuilt when the store's counts change
    (as :class:`kgservice.entry.EntryFinder` holds its label index)."""

    def __init__(self, store: Any):
        self.store = store
        self._index: UnitIndex | None = None
        self._sig: Any = None

    def index(self) -> UnitIndex:
        sig = self.store.counts()
        if self._index is None or sig != self._sig:
            self._index = UnitIndex.build((u.id, unit_text(u)) for u in self.store.iter_units())
            self._sig = sig
        return self._index

"""Lexical scoring of units against a question: BM25 over the stored unit text, no vectors.

Why: a multi-hop question names its first entity (the entry step finds that node) and
describes the hop out of it in ordinary words — "Akinoshu Kenji's *birthplace*", "the
association which *published* Journal X". The unit that shares both the name and those words
("Akinoshū Kenji [from] Hiroshima, Japan") is the edge the question walks, and its other node
is the next hop's bridge, which spreading from the name alone reaches only as one neighbour
among many. Scoring the units' own text (subject, predicate, arguments, modifiers; the
project's data, not source passages) finds it, and :func:`kgservice.expansion.retrieve.retrieve`
seeds spreading activation from its nodes. Measured on MuSiQue (scripts/eval/RESULTS.md: the
question's relation words alone, without its names, do much worse).

Tokens are the entry step's (:func:`kgservice.entry.match.tokens`: NFKC, case-fold, accents
folded, each CJK character a token), so Chinese units match Chinese questions character by
character; stopwords are dropped from the question. BM25 with the usual k1 = 1.2, b = 0.75.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from kgservice.entry.match import STOPWORDS, tokens
from kgservice.model import Unit
from kgservice.stores.versioned import VersionedIndex


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


class UnitIndex:
    """An inverted index of unit tokens with BM25 scoring. Each posting holds its finished
    BM25 term weight (idf and length normalisation are known once the index is built; it is
    rebuilt whenever the store changes), so a question costs one numpy ``bincount`` over the
    postings of its words, not a Python loop over them (a common word such as "country" has
    hundreds of units).

    >>> ix = UnitIndex.build([("u1", "Seattle has heavy snowfall"), ("u2", "Seattle is a city"),
    ...                       ("u3", "Pearl Jam formed in Seattle")])
    >>> [u for u, _ in ix.top("What is the average snowfall in Seattle?", 2)]
    ['u1', 'u2']
    >>> ix.top("the of is", 3)  # stopwords only: nothing to match
    []
    >>> UnitIndex.build([]).top("snowfall", 1)
    []
    """

    k1 = 1.2
    b = 0.75

    def __init__(self, ids: list[str], postings: dict[str, tuple[np.ndarray, np.ndarray]]):
        self.ids = ids  # row -> unit id
        self.postings = postings  # token -> (rows, BM25 term weights)
        self._rows: dict[str, int] | None = None  # unit id -> row, built on first use

    @classmethod
    def build(cls, units: Iterable[tuple[str, str]]) -> UnitIndex:
        """From (unit id, text) pairs."""
        ids: list[str] = []
        lengths: list[int] = []
        tf: dict[str, dict[int, int]] = {}
        for uid, text in units:
            toks = tokens(text)
            row = len(ids)
            ids.append(uid)
            lengths.append(len(toks))
            for t in toks:
                d = tf.setdefault(t, {})
                d[row] = d.get(row, 0) + 1
        n = len(ids)
        avg = (sum(lengths) / n or 1.0) if n else 1.0
        norm = cls.k1 * (1 - cls.b + cls.b * np.asarray(lengths, dtype=np.float64) / avg)
        postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for t, d in tf.items():
            rows = np.fromiter(d.keys(), dtype=np.int64, count=len(d))
            f = np.fromiter(d.values(), dtype=np.float64, count=len(d))
            idf = math.log(1.0 + (n - len(d) + 0.5) / (len(d) + 0.5))
            postings[t] = (rows, idf * f * (cls.k1 + 1) / (f + norm[rows]))
        return cls(ids, postings)

    def _vector(self, question: str) -> np.ndarray | None:
        hits = [self.postings[t] for t in sorted(set(tokens(question)) - STOPWORDS) if t in self.postings]
        if not hits:
            return None
        rows = np.concatenate([r for r, _ in hits])
        weights = np.concatenate([w for _, w in hits])
        return np.bincount(rows, weights=weights, minlength=len(self.ids))

    def scores(self, question: str) -> dict[str, float]:
        """BM25 of every unit sharing a non-stopword token with the question."""
        v = self._vector(question)
        if v is None:
            return {}
        return {self.ids[i]: float(v[i]) for i in np.flatnonzero(v)}

    def best_of(self, question: str, ids: Iterable[str]) -> tuple[str, float] | None:
        """The best of the given units (ties by unit id), None when none shares a word with
        the question: scores only those rows, not every unit sharing a word.

        >>> ix = UnitIndex.build([("u1", "Seattle has heavy snowfall"), ("u2", "Seattle is a city"),
        ...                       ("u3", "Portland has snowfall")])
        >>> ix.best_of("snowfall in Seattle", ["u2", "u3"])[0]  # u1 would win, but is not asked
        'u3'
        >>> ix.best_of("Seattle", ["u3", "u2"])[0], ix.best_of("heavy", ["u2"])
        ('u2', None)
        >>> ix.best_of("snowfall", ["u2", "nope"]) is None
        True
        """
        if self._rows is None:
            self._rows = {u: i for i, u in enumerate(self.ids)}
        rows = sorted((u, self._rows[u]) for u in set(ids) if u in self._rows)
        v = self._vector(question)
        if v is None or not rows:
            return None
        vals = v[[r for _, r in rows]]
        i = int(np.argmax(vals))  # the first maximum: the smallest id among ties
        return (rows[i][0], float(vals[i])) if vals[i] > 0 else None

    def top(self, question: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` best units, best first (ties by unit id)."""
        v = self._vector(question)
        if v is None or k <= 0:
            return []
        nz = np.flatnonzero(v)
        if len(nz) > k:  # the k best plus every unit tied with the k-th, then an exact sort
            kth = np.partition(v[nz], len(nz) - k)[len(nz) - k]
            nz = nz[v[nz] >= kth]
        return sorted(((self.ids[i], float(v[i])) for i in nz), key=lambda kv: (-kv[1], kv[0]))[:k]


class LexicalUnits:
    """Holds the :class:`UnitIndex` of a store (:class:`kgservice.stores.versioned.VersionedIndex`: rebuilt
    when the store's change-log version moves, like the entry step's label index)."""

    def __init__(self, store: Any):
        self.store = store
        self._derived = VersionedIndex(store, lambda: UnitIndex.build((u.id, unit_text(u)) for u in store.iter_units()))

    def index(self) -> UnitIndex:
        return self._derived.get()

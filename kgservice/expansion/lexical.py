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
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
from immutables import Map

from kgservice.caches.untracked import settle, settle_list
from kgservice.entry.match import STOPWORDS, tokens
from kgservice.model import Unit
from kgservice.stores.versioned import FedIndex


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
    """An inverted index of unit tokens with BM25 scoring. Postings hold each unit's term
    frequency; the BM25 weight (idf, length normalisation) is worked out at question time for
    the question's words only, so a unit added or removed changes the postings of its own words
    and two counters (:meth:`patched`), not every weight in the index. A question still costs
    one numpy ``bincount`` over the postings of its words, not a Python loop over them (a common
    word such as "country" has hundreds of units).

    A patched index equals the one a full build of the same units makes (same units, tokens
    and scores: tests/expansion/test_fed_indexes.py); rows differ, but a unit's score is summed
    over its words in the same order either way, and ties are broken by unit id.

    >>> ix = UnitIndex.build([("u1", "Seattle has heavy snowfall"), ("u2", "Seattle is a city"),
    ...                       ("u3", "Pearl Jam formed in Seattle")])
    >>> [u for u, _ in ix.top("What is the average snowfall in Seattle?", 2)]
    ['u1', 'u2']
    >>> ix.top("the of is", 3)  # stopwords only: nothing to match
    []
    >>> UnitIndex.build([]).top("snowfall", 1)
    []
    >>> ix2 = ix.patched(["u1"], [("u4", "Portland has snowfall")])
    >>> [u for u, _ in ix2.top("snowfall", 3)], [u for u, _ in ix.top("snowfall", 3)]  # the old one is unchanged
    (['u4'], ['u1'])
    """

    k1 = 1.2
    b = 0.75

    def __init__(self) -> None:
        # row -> unit id, row -> its tokens: append-only lists a patch extends in place (rows past
        # ``size`` belong to a newer index), so a patch costs its own rows, not a copy of every row;
        # a removed unit's row stays, dead (its id no longer maps to it in ``rows``, its postings go)
        self.ids: list[str] = []
        self.toks: list[tuple[str, ...]] = []
        self.size = 0  # rows of this index (the lists may be longer)
        self.rows: Map[str, int] = Map()  # unit id -> row (persistent: a patch shares what it does not change)
        self._lengths = np.zeros(0, dtype=np.int64)  # row -> token count; a buffer with room, extended like the lists
        self.postings: Map[str, tuple[np.ndarray, np.ndarray]] = Map()  # token -> (rows ascending, term frequencies)
        self.n = 0  # live units
        self.total = 0  # their token count
        self.dead = 0  # rows of removed units (compacted once they outnumber the live ones)
        # derived per-word counts (the relevance floor's stems: :meth:`derived`), and for a patched
        # index the one it came from with the change of each word's unit count
        self._derived: dict[Any, Map[str, int]] = {}
        self._parent: tuple[UnitIndex, dict[str, int]] | None = None

    @property
    def lengths(self) -> np.ndarray:
        """Row -> token count."""
        return self._lengths[:self.size]

    @classmethod
    def build(cls, units: Iterable[tuple[str, str]]) -> UnitIndex:
        """From (unit id, text) pairs."""
        return cls._from_tokens((uid, tuple(map(sys.intern, tokens(text)))) for uid, text in units)

    @classmethod
    def _from_tokens(cls, units: Iterable[tuple[str, tuple[str, ...]]]) -> UnitIndex:
        ix = cls()
        tf: dict[str, dict[int, int]] = {}
        lengths: list[int] = []
        rows: dict[str, int] = {}
        for uid, toks in units:
            ix._append(uid, toks, tf, lengths, rows)
        ix._lengths = np.asarray(lengths, dtype=np.int64)
        ix.size = len(lengths)
        ix.rows = Map(rows)
        ix.postings = Map({t: (np.fromiter(d.keys(), dtype=np.int64, count=len(d)),
                               np.fromiter(d.values(), dtype=np.float64, count=len(d))) for t, d in tf.items()})
        return ix._settled()

    def _settled(self) -> UnitIndex:
        """This index's new trie nodes and its row lists (ids, token tuples) out of the cyclic
        collector's work (:func:`kgservice.caches.untracked.settle`): none can hold a cycle."""
        settle(self.rows, self.postings)
        settle_list(self.ids)
        settle_list(self.toks)
        return self

    def patched(self, remove: Iterable[str], add: Iterable[tuple[str, str]]) -> UnitIndex:
        """A new index: this one less the units ``remove`` names (absent ones are ignored), with
        ``add``'s (unit id, text) pairs (a unit already in the index is replaced). Costs the
        changed units' rows and the postings of their words, nothing per unit of the index: the
        maps are persistent (a patch shares every entry it does not change) and the per-row
        lists and lengths are extended past this index's rows, not copied. This index is left as
        it was (a request reading it meanwhile sees one consistent version)."""
        added = [(uid, tuple(map(sys.intern, tokens(text)))) for uid, text in add]
        return self._patched_tokens(remove, added)

    def _patched_tokens(self, remove: Iterable[str], added: list[tuple[str, tuple[str, ...]]]) -> UnitIndex:
        ix = UnitIndex.__new__(UnitIndex)
        ix._derived, ix._parent = {}, None
        newest = len(self.ids) == self.size
        if newest:  # the newest index of these lists: extend them in place
            ix.ids, ix.toks, ix._lengths = self.ids, self.toks, self._lengths
        else:  # a second patch of the same index: its own copies (tests; the fed index patches only its newest)
            ix.ids, ix.toks, ix._lengths = self.ids[:self.size], self.toks[:self.size], self._lengths[:self.size].copy()
        ix.size = self.size
        ix.n, ix.total, ix.dead = self.n, self.total, self.dead
        rows = self.rows.mutate()
        drop: dict[str, list[int]] = {}
        for uid in list(remove) + [uid for uid, _ in added]:
            row = rows.pop(uid, None)
            if row is None:
                continue
            toks = ix.toks[row]
            ix.n, ix.total, ix.dead = ix.n - 1, ix.total - len(toks), ix.dead + 1
            for t in set(toks):
                drop.setdefault(t, []).append(row)
        grow: dict[str, dict[int, int]] = {}
        lengths: list[int] = []
        for uid, toks in added:
            ix._append(uid, toks, grow, lengths, rows)
        ix.rows = rows.finish()
        if lengths:
            ix._lengths = _extended(ix._lengths, self.size, lengths)
        ix.size = self.size + len(lengths)
        postings = self.postings.mutate()
        for t in set(drop) | set(grow):
            got, tf = postings.get(t, (_NO_ROWS, _NO_TF))
            if t in drop:
                keep = ~np.isin(got, np.asarray(drop[t], dtype=np.int64))
                got, tf = got[keep], tf[keep]
            if t in grow:
                d = grow[t]
                got = np.concatenate([got, np.fromiter(d.keys(), dtype=np.int64, count=len(d))])
                tf = np.concatenate([tf, np.fromiter(d.values(), dtype=np.float64, count=len(d))])
            if len(got):
                postings[t] = (got, tf)
            else:
                postings.pop(t, None)
        ix.postings = postings.finish()
        ix._settled()
        if ix.dead > max(ix.n, 1024):  # mostly removed rows: renumber (amortised over as many removals)
            return UnitIndex._from_tokens((u, ix.toks[r]) for u, r in sorted(ix.rows.items(), key=lambda kv: kv[1]))
        delta = {t: len(grow.get(t, ())) - len(drop.get(t, ())) for t in set(drop) | set(grow)}
        if self._derived:  # one link at most: an index nobody derived from keeps no chain alive
            ix._parent = (self, {t: n for t, n in delta.items() if n})
        return ix

    def derived(self, fn: Callable[[str], str]) -> Mapping[str, int]:
        """``fn(word)`` -> how many units use a word that ``fn`` maps there (each word's units
        summed: the relevance floor's stem counts, ``fn`` its stemmer), computed once per index.
        A patched index derives it from the one it came from, word by word for the words the
        patch changed, instead of over every word of the store: what another server's ingest of
        k units costs a question here is O(k), as for the postings. Treat it as read-only."""
        got = self._derived.get(fn)
        if got is not None:
            return got
        parent = self._parent
        base = parent[0]._derived.get(fn) if parent is not None else None
        if base is not None and parent is not None:
            counts = base.mutate()  # persistent: the words the patch did not change are shared, not copied
            for t, n in parent[1].items():
                k = fn(t)
                left = counts.get(k, 0) + n
                if left > 0:
                    counts[k] = left
                else:
                    counts.pop(k, None)
            out = counts.finish()
        else:
            full: dict[str, int] = {}
            for t, (got_rows, _) in self.postings.items():
                k = fn(t)
                full[k] = full.get(k, 0) + len(got_rows)
            out = Map(full)
        settle(out)  # strings to counts: out of the cyclic collector's work
        self._derived[fn] = out
        self._parent = None  # the old index may go
        return out

    def _append(self, uid: str, toks: tuple[str, ...], tf: dict[str, dict[int, int]], lengths: list[int],
                rows: Any) -> None:
        """A new row for a unit not in ``rows`` (``tf``: token -> row -> count, and ``lengths``
        gain its entries; the caller turns them into postings and the lengths array)."""
        if uid in rows:
            return
        row = len(self.ids)
        self.ids.append(uid)
        rows[uid] = row
        self.toks.append(toks)
        lengths.append(len(toks))
        self.n, self.total = self.n + 1, self.total + len(toks)
        for t in toks:
            d = tf.setdefault(t, {})
            d[row] = d.get(row, 0) + 1

    def contents(self) -> dict[str, tuple[str, ...]]:
        """Unit id -> its tokens: what two indexes of the same units agree on (tests)."""
        return {u: self.toks[r] for u, r in self.rows.items()}

    def _terms(self, question: str) -> tuple[np.ndarray, np.ndarray] | None:
        """Every (row, BM25 term weight) of the question's non-stopword tokens, token by token
        in sorted order: what :meth:`_vector` and :meth:`_sparse` add up."""
        hits = [self.postings[t] for t in sorted(set(tokens(question)) - STOPWORDS) if t in self.postings]
        if not hits:
            return None
        n = self.n
        avg = (self.total / n or 1.0) if n else 1.0
        k1, b = self.k1, self.b
        weights = []
        for rows, f in hits:
            idf = math.log(1.0 + (n - len(rows) + 0.5) / (len(rows) + 0.5))
            norm = k1 * (1 - b + b * self.lengths[rows].astype(np.float64) / avg)
            weights.append(idf * f * (k1 + 1) / (f + norm))
        return np.concatenate([r for r, _ in hits]), np.concatenate(weights)

    def _vector(self, question: str) -> np.ndarray | None:
        terms = self._terms(question)
        if terms is None:
            return None
        return np.bincount(terms[0], weights=terms[1], minlength=self.size)

    def _sparse(self, question: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The rows sharing a word with the question (ascending, each once) and their BM25:
        :meth:`_vector` without the array of every unit (82k rows on a 6k-passage graph, most
        of a lexical look-up's time). Bit-identical to it: ``bincount`` adds each row's terms
        in the order given, the same order as there.

        >>> ix = UnitIndex.build([("u1", "Seattle has heavy snowfall"), ("u2", "Seattle is a city"),
        ...                       ("u3", "Portland has snowfall")])
        >>> rows, vals = ix._sparse("snowfall in Seattle")
        >>> v = ix._vector("snowfall in Seattle")
        >>> rows.tolist(), bool((vals == v[rows]).all()), bool((v[np.setdiff1d(np.arange(len(v)), rows)] == 0).all())
        ([0, 1, 2], True, True)
        """
        terms = self._terms(question)
        if terms is None:
            return None
        rows, inv = np.unique(terms[0], return_inverse=True)
        return rows, np.bincount(inv.reshape(-1), weights=terms[1], minlength=len(rows))

    def scores(self, question: str) -> dict[str, float]:
        """BM25 of every unit sharing a non-stopword token with the question."""
        v = self._vector(question)
        if v is None:
            return {}
        return {self.ids[i]: float(v[i]) for i in np.flatnonzero(v)}  # type: ignore[misc]

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
        known = self.rows
        rows = [(u, r) for u in set(ids) if (r := known.get(u)) is not None]
        v = self._vector(question)
        if v is None or not rows:
            return None
        vals = v[np.fromiter((r for _, r in rows), dtype=np.int64, count=len(rows))]
        best = vals.max()
        if not best > 0:
            return None
        # the smallest id among the maxima (the candidates are not sorted: a bridge hop asks of
        # hundreds on a large graph, and only the few tied at the top need comparing)
        u = min(rows[int(j)][0] for j in np.flatnonzero(vals == best))
        return u, float(best)

    def top(self, question: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` best units, best first (ties by unit id)."""
        sp = self._sparse(question) if k > 0 else None
        if sp is None:
            return []
        keep = sp[1] != 0  # the rows _vector holds nonzero, ascending, as flatnonzero gives them
        nz, vals = sp[0][keep], sp[1][keep]
        if len(nz) > k:  # the k best plus every unit tied with the k-th, then an exact sort
            kth = np.partition(vals, len(nz) - k)[len(nz) - k]
            best = vals >= kth
            nz, vals = nz[best], vals[best]
        return sorted(((self.ids[i], float(x)) for i, x in zip(nz, vals)), key=lambda kv: (-kv[1], kv[0]))[:k]  # type: ignore[misc]


def _extended(buf: np.ndarray, size: int, more: list[int]) -> np.ndarray:
    """``buf[:size]`` followed by ``more``: written in place past ``size`` when the buffer has
    room (rows past ``size`` belong to no index: the caller is the newest), else into a new
    buffer with as much room again, so extending by k rows costs O(k) amortised.

    >>> b = _extended(np.zeros(0, dtype=np.int64), 0, [3, 4]); b[:2].tolist(), len(b) >= 2
    ([3, 4], True)
    >>> c = _extended(b, 2, [5]); c[:3].tolist(), b[:2].tolist()
    ([3, 4, 5], [3, 4])
    """
    end = size + len(more)
    if end > len(buf):
        grown = np.zeros(max(end, 2 * len(buf), 1024), dtype=np.int64)
        grown[:size] = buf[:size]
        buf = grown
    buf[size:end] = more
    return buf


_NO_ROWS = np.zeros(0, dtype=np.int64)
_NO_TF = np.zeros(0, dtype=np.float64)


def patch_units(store: Any, index: UnitIndex, changes: list[Any]) -> UnitIndex | None:
    """``index`` brought past ``changes`` (:class:`kgservice.stores.versioned.FedIndex`): every
    unit a change lists is read again (gone, or stored as it is now); None when a change does
    not list its units (then the index is rebuilt)."""
    if any(c.units is None for c in changes):
        return None
    listed = sorted({u for c in changes for u in c.units})
    if not listed:
        return index
    now = store.get_units(listed)
    return index.patched(listed, [(u.id, unit_text(u)) for u in now])


class LexicalUnits:
    """Holds the :class:`UnitIndex` of a store: built once, then patched from the store's
    change log (:class:`kgservice.stores.versioned.FedIndex`), so another process's ingest of
    k units costs this one the reads and postings of those k units, not a scan of the store."""

    def __init__(self, store: Any):
        self.store = store
        self._derived = FedIndex(store, lambda: UnitIndex.build((u.id, unit_text(u)) for u in store.iter_units()),
                                 lambda index, changes: patch_units(store, index, changes))

    def index(self) -> UnitIndex:
        return self._derived.get()

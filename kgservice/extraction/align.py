"""The lines of the sentence(s) that state an extracted unit, found by aligning the unit's words
to its chunk's sentences (after extraction, with no change to the prompt, so recorded runs get
them too): a citation then opens at that sentence instead of the whole chunk.

A unit's words are those of its arguments and modifier values (weight 1), its subject (0.4: a
sentence often names it by a pronoun, "It is owned by ...") and its predicate (0.5: a model
rewords predicates); numbers are kept whole (``6.8``, ``1,000``), words compared by a crude
stem (``founded``/``founding``), CJK text by character pairs. Each sentence of the chunk
scores the weighted words it contains, a word counting less the more sentences contain it
(``Seattle`` in a text about Seattle names nothing); a Markdown heading is no candidate. The
best sentence wins (the earlier on a tie); a neighbouring sentence joins it while it adds
half or more of the unit's weight that the span lacks (a fact stated across two sentences),
up to three sentences. A unit no sentence shares a word with keeps the chunk's lines.
The weights were chosen on real extraction replies and measured on others
(``python3 -m scripts.eval.provenance_lines``; docs/documents.md has the figures).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from kgservice.extraction.sentences import sentence_spans
from kgservice.model import Unit

Lines = tuple[int, int]

_TOKEN = re.compile(r"\d+(?:[.,:]\d+)*|(?<![\w.])\.[^\W_]{1,5}\b|[^\W\d_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_STOP = frozenset("""
a an the of in on at to for from by with and or but is are was were be been being has have had it its this that
these those as into than then so not no
""".split())
_SUFFIXES = ("ations", "ation", "ions", "ion", "ings", "ing", "edly", "ed", "ally", "ly")
EXTEND_SHARE = 0.5
MAX_SENTENCES = 3
PREDICATE_WEIGHT = 0.5
SUBJECT_WEIGHT = 0.4


def _stem(w: str) -> str:
    """A crude English stem: ``decompresses``/``decompressed``/``decompression`` -> ``decompress``."""
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 4:
            return w[: -len(suf)]
    if w.endswith("es") and w[:-2].endswith(("s", "x", "z", "ch", "sh")) and len(w) >= 6:
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss") and len(w) >= 5:
        return w[:-1]
    return w


def words(text: str) -> set[str]:
    """The comparable words of ``text``: case-folded stems, numbers whole, CJK character pairs.

    >>> sorted(words("The band was founded in 1990; average snowfall: 6.8 inches"))
    ['1990', '6.8', 'average', 'band', 'found', 'inch', 'snowfall']
    >>> sorted(words("吸烟导致癌症"))
    ['吸烟', '导致', '烟导', '癌症', '致癌']
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    out: set[str] = set()
    for tok in _TOKEN.findall(text):
        if _CJK.search(tok):
            chars = [c for c in tok if _CJK.match(c)]
            out.update(a + b for a, b in zip(chars, chars[1:]))
            if len(chars) == 1:
                out.add(chars[0])
        elif tok[0].isdigit() or tok[0] == ".":  # a number, a file extension (".gz")
            out.add(tok)
        elif tok not in _STOP and len(tok) > 1:
            out.add(_stem(tok))
    return out


@dataclass(frozen=True)
class Sentence:
    lines: Lines
    words: frozenset[str]
    heading: bool = False  # a Markdown heading names a topic, it states no fact


def sentences(text: str, first_line: int = 1) -> list[Sentence]:
    """The sentences of ``text`` (a chunk that starts at line ``first_line`` of its document),
    each with its first and last line."""
    out = []
    line, pos = first_line, 0  # the line at offset pos: counted on from the last sentence, not from 0 each time
    for a, b in sentence_spans(text):
        line += text.count("\n", pos, a)
        last = line + text.count("\n", a, b)
        out.append(Sentence((line, last), frozenset(words(text[a:b])), text[a] == "#"))
        line, pos = last, b
    return out


def unit_weights(u: Unit) -> dict[str, float]:
    """Each word of the unit with its weight (the highest of the fields it appears in)."""
    w: dict[str, float] = {}
    fields = [v.node or v.literal or "" for v in u.args] + [m.value.node or m.value.literal or "" for m in u.mods]
    for f in fields:
        for t in words(f):
            w[t] = 1.0
    for t in words(u.subject):
        w.setdefault(t, SUBJECT_WEIGHT)
    for t in words(u.predicate):
        w[t] = max(w.get(t, 0.0), PREDICATE_WEIGHT)
    return w


def locate(u: Unit, sents: Sequence[Sentence]) -> Lines | None:
    """The lines of the sentence(s) of ``sents`` that state ``u``; None when none shares a word."""
    prose = [s for s in sents if not s.heading]
    sents = prose or list(sents)
    if not sents:
        return None
    weights = unit_weights(u)
    n = len(sents)
    df = {t: sum(t in s.words for s in sents) for t in weights}
    mass = {t: w * math.log(1 + n / df[t]) for t, w in weights.items() if df[t]}
    if not mass:
        return None

    def score(ix: range, covered: frozenset[str] | set[str] = frozenset()) -> float:
        got = set().union(*(sents[i].words for i in ix)) - covered
        return sum(m for t, m in mass.items() if t in got)

    best = max(range(n), key=lambda i: (score(range(i, i + 1)), -i))
    lo = hi = best
    total = sum(mass.values())
    while hi - lo + 1 < MAX_SENTENCES:
        have = set().union(*(sents[i].words for i in range(lo, hi + 1)))
        gains = []
        if lo > 0:
            gains.append((score(range(lo - 1, lo), have), -1))
        if hi < n - 1:
            gains.append((score(range(hi + 1, hi + 2), have), 1))
        if not gains:
            break
        gain, side = max(gains)
        if gain < EXTEND_SHARE * total:
            break
        lo, hi = (lo - 1, hi) if side < 0 else (lo, hi + 1)
    return sents[lo].lines[0], sents[hi].lines[1]


def unit_lines(units: Sequence[Unit], text: str, first_line: int) -> list[Lines | None]:
    """:func:`locate` for each unit extracted from ``text`` (a chunk at ``first_line``)."""
    sents = sentences(text, first_line)
    return [locate(u, sents) for u in units]

"""Entry nodes by name: question n-grams matched against node labels, no LLM, no vectors.

Pure functions (no store), so they are doctested here and shared by every caller:
``kg search``, ``kg ask``'s fallback, the server and the eval harness.

Both the labels and the question go through :func:`tokens`, which is the project's label
normalisation (NFKC, case-fold) plus accent folding, punctuation dropped, and each CJK
character a token of its own: Chinese has no spaces, so a label written in Chinese is found
as a run of characters anywhere in the question (character n-grams), exactly like an English
label is found as a run of words.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
import unicodedata
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from immutables import Map

from kgservice.caches.untracked import settle
from kgservice.ids import normalise_label

# one CJK / kana / hangul character per token; otherwise a run of letters and digits
_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]|[^\W_]+")
# n-grams made only of these never match on their own: "the", "who", "is", "的" are not concepts
STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or is are was were be been being what which who whom whose why how "
    "when where does did do has have had it its this that these those as into than then there their his her he she they "
    "them we you i me my our your s not no yes also same one".split()
    + list("的了是在和与及或吗呢什么哪谁")
)
MAX_NGRAM = 12
# at most this many nodes share a name with a disambiguator for them all to join the exact one
NAMESAKES = 3
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


# letters that carry their diacritic inside (no combining mark to drop under NFKD): "Tromsø",
# "Wrocław", "Dalkılıç" are written "Tromso", "Wroclaw", "Dalkilic" as often
_UNMARKED = str.maketrans({"ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ı": "i", "ħ": "h",
                           "Ħ": "H", "ŧ": "t", "Ŧ": "T", "ð": "d", "Ð": "D", "þ": "th", "Þ": "Th", "æ": "ae",
                           "Æ": "Ae", "œ": "oe", "Œ": "Oe"})


def _fold(text: str) -> str:
    """Accents off: "Jiménez" and "Jimenez", "Tromsø" and "Tromso" are one word.

    >>> _fold("Jiménez"), _fold("Tromsø"), _fold("Wrocław"), _fold("Dalkılıç"), _fold("Æsir")
    ('Jimenez', 'Tromso', 'Wroclaw', 'Dalkilic', 'Aesir')
    """
    if text.isascii():  # ASCII is unchanged by NFKC / NFKD and has no combining marks
        return text
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    return unicodedata.normalize("NFKC", "".join(c for c in text if not unicodedata.combining(c))).translate(_UNMARKED)


def name_tokens(text: str, sentence: bool = True) -> list[bool]:
    """Per token of :func:`tokens`: does it look like part of a name as written — capitalised,
    a number, or CJK (Chinese has no case; a run of two characters or more is judged by the
    span). A question's first word is capitalised by grammar, not as a name; a label's
    (``sentence=False``) is capitalised as written.

    >>> name_tokens("who wrote Hello Love in 1974?")
    [False, False, True, True, False, True]
    >>> name_tokens("Who wrote it")
    [False, False, False]
    >>> name_tokens("Maharashtra state", sentence=False)
    [True, False]
    """
    raw = _TOKEN.findall(_fold(" ".join(text.split())))
    flags = [t[:1].isupper() or t.isdigit() or bool(_CJK.match(t)) for t in raw]
    if sentence and flags and raw[0][:1].isupper() and not raw[0].isupper():
        flags[0] = False
    return flags if len(flags) == len(tokens(text)) else [False] * len(tokens(text))


def tokens(text: str) -> list[str]:
    """Normalised tokens of a label or a question.

    >>> tokens("Hello Love's performer")
    ['hello', 'love', 's', 'performer']
    >>> tokens("  Café  Müller ")
    ['cafe', 'muller']
    >>> tokens("吸烟导致肺癌")
    ['吸', '烟', '导', '致', '肺', '癌']
    >>> tokens("Python 3.12")
    ['python', '3', '12']
    """
    return list(_tokens_of(text))


@functools.lru_cache(maxsize=8192)
def _tokens_of(text: str) -> tuple[str, ...]:
    """:func:`tokens`, remembered for the most recent texts: a patch of the derived indexes
    reads each changed label several times over (the label index, its bare form, the name
    holders before and after, the names within it), and the normalisation is most of a patch's
    cost when each read tokenises again. A few thousand texts cover one patch's labels; more
    would hold unit texts too (a build tokenises every unit: 40 MB at 100k units for 64k)."""
    return tuple(_TOKEN.findall(_fold(normalise_label(text))))


def key_of(toks: Iterable[str]) -> str:
    """The lookup key of a token run (labels and question n-grams meet on this)."""
    return " ".join(toks)


def singular(tok: str) -> str:
    """An English plural's singular, so that a question's plural meets a label's singular
    ("Gila monsters" -> *Gila monster*). Only in that direction: a label in the plural names
    a set ("European countries"), which a question's singular ("a European country") is not.
    Short words, numbers and "-ss", "-us", "-is" endings are left alone.

    >>> [singular(w) for w in ("monsters", "eyes", "cities", "churches", "boss", "paris", "gps", "2010s")]
    ['monster', 'eye', 'city', 'church', 'boss', 'paris', 'gps', '2010s']
    """
    if len(tok) <= 3 or not tok.isalpha() or not tok.endswith("s") or tok.endswith(("ss", "us", "is")):
        return tok
    if tok.endswith("ies"):
        return tok[:-3] + "y"
    if tok.endswith(("shes", "ches", "xes", "zes", "sses")):
        return tok[:-2]
    return tok[:-1]


# a label's trailing qualifier, "(film)", "(AM)", "(1450 AM" cut off mid-way, or ", Iowa": the
# name is the part before it ("Monster Trucks (film)", "Indianola, Iowa")
_QUALIFIER = re.compile(r"\s*(\([^()]*\)?|,[^,()]*)\s*$")


def bare_label(label: str) -> str:
    """The label less a trailing qualifier, or the label itself when it has none.

    >>> bare_label("Monster Trucks (film)"), bare_label("WILM (1450 AM"), bare_label("Indianola, Iowa")
    ('Monster Trucks', 'WILM', 'Indianola')
    >>> bare_label("Python"), bare_label("(film)")
    ('Python', '(film)')
    """
    bare = _QUALIFIER.sub("", label)
    return bare if bare.strip() else label


def disambiguated(label: str) -> bool:
    """Is the label a name plus a disambiguator: a closed parenthesis ("Big Eyes (film)",
    "Paris (2008 film)") or a comma and a name ("Silverton, Colorado")? Not a parenthesis an
    extractor cut off ("Germany (1.1%", "summer (may − june"): that is a fragment of text, not
    another thing of the same name.

    >>> [disambiguated(x) for x in ("Big Eyes (film)", "Silverton, Colorado", "Paris (2008 film)", "Germany (1.1%",
    ...                             "summer (may − june", "Sweden, and others", "Silverton")]
    [True, True, True, False, False, False, False]
    """
    bare = bare_label(label)
    if bare == label:
        return False
    rest = label[len(bare):].strip()
    if rest.startswith("("):
        return rest.endswith(")") and any(c.isalpha() for c in rest)
    flags = name_tokens(rest[1:], sentence=False)
    return rest.startswith(",") and bool(flags) and all(f or t in STOPWORDS for t, f in zip(tokens(rest[1:]), flags))


@dataclass(frozen=True)
class Span:
    """A question n-gram that names a node: token positions [start, end)."""

    start: int
    end: int
    node: str
    name: bool = False  # written like a name in the question (see :func:`name_tokens`)
    partial: bool = False  # the question's name is part of the label, not all of it (:meth:`LabelIndex.partial`)
    namesake: bool = False  # the label is the question's name plus a disambiguator (:meth:`LabelIndex._namesakes`)

    def inside(self, other: "Span") -> bool:
        return other.start <= self.start and self.end <= other.end and (other.end - other.start) > (self.end - self.start)


_Table = Any  # a table of LabelIndex: Map, dict or MapMutation by phase (they share get, in, [k] = v, pop)


@dataclass
class LabelIndex:
    """Token key -> node ids with that key (several labels can normalise alike), the keys of
    labels less their trailing qualifier (:func:`bare_label`), and each token's keys (for
    :meth:`partial`). Every list is sorted (node ids, keys), so an index patched node by node
    (:meth:`patched`) equals one built from the same labels in any order; the counters beside
    them say when a word, a length or a named key loses its last label. The tables are
    persistent maps: a patch shares every entry it does not change with the index it came from,
    so it costs the changed labels' entries, not a copy of every label's."""

    # each table is a Map between patches, a dict while it is built, a MapMutation while patched (_Table)
    keys: _Table = field(default_factory=Map)  # key -> node ids
    longest: int = 1
    bare: _Table = field(default_factory=Map)  # key of a qualified label's bare name -> node ids
    # token -> keys of which a label is written as a name (:func:`_name_like`)
    postings: _Table = field(default_factory=Map)
    vocab_n: _Table = field(default_factory=Map, repr=False)  # token -> labels using it
    lengths: _Table = field(default_factory=Map, repr=False)  # token count -> indexed labels that long
    named: _Table = field(default_factory=Map, repr=False)  # key -> its labels written as names

    @property
    def vocab(self) -> Mapping[str, int]:
        """Every token of every label (``in`` is what callers ask of it)."""
        return self.vocab_n

    @classmethod
    def build(cls, labels: Iterable[tuple[str, str]]) -> "LabelIndex":
        """From (node id, label) pairs; labels that are only stopwords are left out.

        >>> ix = LabelIndex.build([("new york", "New York"), ("york", "York"), ("the", "The")])
        >>> sorted(ix.keys), ix.longest
        (['new york', 'york'], 2)
        >>> dict(LabelIndex.build([("big eyes", "Big Eyes"), ("mt", "Monster Trucks (film)")]).bare)
        {'monster trucks': ['mt']}
        """
        ix = cls({}, 1, {}, {}, {}, {}, {})  # plain dictionaries while building
        seen: set[str] = set()
        for nid, label in labels:
            if nid not in seen:
                seen.add(nid)
                ix._add(nid, label, None)
        for table in (ix.keys, ix.bare, ix.postings):
            for lst in table.values():
                lst.sort()
        return cls(Map(ix.keys), ix.longest, Map(ix.bare), Map(ix.postings), Map(ix.vocab_n), Map(ix.lengths),
                   Map(ix.named))._settled()

    def patched(self, before: Mapping[str, str], after: Mapping[str, str | None]) -> "LabelIndex":
        """A new index: ``after`` maps each changed node id to its label now (None: gone, or no
        longer indexed), ``before`` gives the labels this index was built with. Costs the
        entries of the changed labels (each list it changes is copied, the rest shared); this
        index is left as it was (a request reading it meanwhile sees one consistent version).

        >>> ix = LabelIndex.build([("a", "New York"), ("b", "York")])
        >>> ix.patched({"a": "New York", "b": "York"}, {"a": None, "c": "Old York"}) == LabelIndex.build(
        ...     [("c", "Old York"), ("b", "York")])
        True
        """
        ix = LabelIndex(self.keys.mutate(), self.longest, self.bare.mutate(), self.postings.mutate(),
                        self.vocab_n.mutate(), self.lengths.mutate(), self.named.mutate())
        fresh: set[tuple[int, str]] = set()
        shrunk = False
        for nid, label in after.items():
            old = before.get(nid)
            if old == label:
                continue
            if old is not None:
                shrunk |= ix._remove(nid, old, fresh)
            if label is not None:
                ix._add(nid, label, fresh)
        out = LabelIndex(ix.keys.finish(), ix.longest, ix.bare.finish(), ix.postings.finish(),
                         ix.vocab_n.finish(), ix.lengths.finish(), ix.named.finish())
        if shrunk:  # a length lost its last label: the longest may be shorter now
            out.longest = max([1, *out.lengths])
        return out._settled()

    def _settled(self) -> "LabelIndex":
        """This index with its tables' new trie nodes and lists out of the cyclic collector's
        work (:func:`kgservice.caches.untracked.settle`: they can hold no cycle)."""
        settle(self.keys, self.bare, self.postings, self.vocab_n, self.lengths, self.named)
        return self

    def _list(self, table: _Table, key: str, fresh: set[tuple[int, str]] | None) -> list[str]:
        """``table[key]``, created if absent; in a patch (``fresh`` set) a copy the first time,
        since the list is shared with the index the patch started from."""
        lst = table.get(key)
        if fresh is None:
            if lst is None:
                lst = table[key] = []
            return lst
        if lst is None or (id(table), key) not in fresh:
            fresh.add((id(table), key))
            lst = table[key] = list(lst or ())
        return lst

    def _put(self, table: _Table, key: str, item: str, fresh: set[tuple[int, str]] | None) -> None:
        lst = self._list(table, key, fresh)
        if fresh is None:
            lst.append(item)  # a build sorts every list once at the end
        else:
            i = bisect.bisect_left(lst, item)
            if i == len(lst) or lst[i] != item:
                lst.insert(i, item)

    def _take(self, table: _Table, key: str, item: str, fresh: set[tuple[int, str]] | None) -> None:
        if key not in table:
            return
        lst = self._list(table, key, fresh)
        if item in lst:
            lst.remove(item)
        if not lst:
            del table[key]

    def _indexed(self, label: str) -> tuple[list[str], str | None]:
        """The label's tokens, and its key (None for a label left out: empty, too long, stopwords)."""
        toks = tokens(label)
        if not toks or len(toks) > MAX_NGRAM or all(t in STOPWORDS for t in toks):
            return toks, None
        return toks, key_of(toks)

    def _add(self, nid: str, label: str, fresh: set[tuple[int, str]] | None) -> None:
        toks, key = self._indexed(label)
        for t in set(toks):
            self.vocab_n[t] = self.vocab_n.get(t, 0) + 1
        if key is None:
            return
        self._put(self.keys, key, nid, fresh)
        self.lengths[len(toks)] = self.lengths.get(len(toks), 0) + 1
        self.longest = max(self.longest, len(toks))
        if _name_like(label):
            self.named[key] = self.named.get(key, 0) + 1
            if self.named[key] == 1:
                for t in dict.fromkeys(toks):
                    self._put(self.postings, t, key, fresh)
        bare = tokens(bare_label(label))
        if bare and bare != toks and not all(t in STOPWORDS for t in bare):
            self._put(self.bare, key_of(bare), nid, fresh)

    def _remove(self, nid: str, label: str, fresh: set[tuple[int, str]]) -> bool:
        """Takes the label's entries out; True when a label length lost its last label."""
        toks, key = self._indexed(label)
        for t in set(toks):
            left = self.vocab_n.get(t, 0) - 1
            if left > 0:
                self.vocab_n[t] = left
            else:
                self.vocab_n.pop(t, None)
        if key is None:
            return False
        self._take(self.keys, key, nid, fresh)
        left = self.lengths.get(len(toks), 0) - 1
        shrunk = left <= 0
        if left > 0:
            self.lengths[len(toks)] = left
        else:
            self.lengths.pop(len(toks), None)
        if _name_like(label):
            left = self.named.get(key, 0) - 1
            if left > 0:
                self.named[key] = left
            else:
                self.named.pop(key, None)
                for t in dict.fromkeys(toks):
                    self._take(self.postings, t, key, fresh)
        bare = tokens(bare_label(label))
        if bare and bare != toks and not all(t in STOPWORDS for t in bare):
            self._take(self.bare, key_of(bare), nid, fresh)
        return shrunk

    def spans(self, question: str) -> list[Span]:
        """Every n-gram of the question that is a label, longest spans kept: a match lying
        strictly inside a longer match is dropped ("York" inside "New York"), and so is one
        whose words other than stopwords lie inside a longer match ("the world" in "the World
        Series": its "the" belongs to the other name). An n-gram that is no label exactly may
        still meet one as written differently (:meth:`_variants`).

        >>> ix = LabelIndex.build([("new york", "New York"), ("york", "York"), ("band", "band")])
        >>> [(s.node, s.start, s.end, s.name) for s in ix.spans("Which band is from New York?")]
        [('band', 1, 2, False), ('new york', 4, 6, True)]
        >>> ix = LabelIndex.build([("吸烟", "吸烟"), ("肺癌", "肺癌")])
        >>> [(s.node, s.name) for s in ix.spans("吸烟最终导致什么？肺癌吗")]
        [('吸烟', True), ('肺癌', True)]
        >>> ix = LabelIndex.build([(n, n) for n in ("the world", "World Series", "Big Eyes", "director")])
        >>> [s.node for s in ix.spans("Who won the World Series?")]
        ['World Series']
        >>> [s.node for s in ix.spans("Who is Big Eye's main director?")]
        ['Big Eyes', 'director']
        """
        toks = tokens(question)
        names = name_tokens(question)
        single = [singular(t) for t in toks]
        found: list[Span] = []
        for i in range(len(toks)):
            key = ""
            for n in range(1, min(self.longest, len(toks) - i) + 1):
                if n > 1 and toks[i + n - 2] not in self.vocab:
                    break  # a label holds every word of the run unchanged but the last
                head, k = key, i + n - 1
                key = f"{head} {toks[k]}" if head else toks[k]
                ids = self.keys.get(key)
                same = self._namesakes(key) if ids else []
                if not ids:
                    ids = self._variants(head, toks[k], single[k], toks[k + 1:k + 2] == ["s"]) or self._titled(key)
                if ids:
                    cjk = n >= 2 and all(_CJK.match(t) for t in toks[i:i + n])
                    name = cjk or any(names[i:i + n])
                    found.extend(Span(i, i + n, nid, name) for nid in ids)
                    found.extend(Span(i, i + n, nid, name, namesake=True) for nid in same)
        kept = [s for s in found if not any(s.inside(o) for o in found)]
        return [s for s in kept if not any(_content_inside(s, o, toks) for o in kept)]

    def _namesakes(self, key: str) -> list[str]:
        """Nodes of the same name with a disambiguator, beside the node the question names
        exactly: "Silverton" is *Silverton* and also *Silverton, Colorado*, which may hold the
        facts ("died in Silverton, Colorado"), since an extractor writes a place or a title as
        its text does. None when more than :data:`NAMESAKES` share the name: a name that many
        things share says too little to add them (the entry step prefers, among a few, those
        whose qualifier the question writes: :meth:`EntryFinder.find`).

        >>> ix = LabelIndex.build([(n, n) for n in ("Silverton", "Silverton, Colorado", "Sweden")])
        >>> ix._namesakes("silverton"), ix._namesakes("sweden")
        (['Silverton, Colorado'], [])
        >>> ix = LabelIndex.build([(n, n) for n in ("Paris", "Paris, Texas", "Paris (band)", "Paris, Ontario", "Paris (2008 film)")])
        >>> ix._namesakes("paris")
        []
        """
        ids = self.bare.get(key) if self.bare else None
        return list(ids) if ids and len(ids) <= NAMESAKES else []

    def _titled(self, key: str) -> list[str]:
        """A name written without its leading "The": "Beatles" -> *The Beatles*, "Oddventures
        of Mr. Cool" -> *The Oddventures of Mr. Cool*. Only labels written as names, so that a
        lower-case phrase ("the world") is not found by its noun.

        >>> ix = LabelIndex.build([(n, n) for n in ("The Beatles", "the world", "Beatles (band)")])
        >>> ix._titled("beatles"), ix._titled("world"), ix._titled("the")
        (['The Beatles'], [], [])
        """
        if key in STOPWORDS:
            return []
        full = f"the {key}"
        return list(self.keys.get(full, ())) if self.named.get(full) else []

    def _variants(self, head: str, last: str, single: str, possessive: bool) -> list[str]:
        """The nodes a run of words (its key less the last word, ``head``; the last word,
        ``last``, and its :func:`singular`) names when no label is written exactly so, in this
        order (the fewer words changed, the better): the run before a possessive "'s" with that
        "s" (the question's "Big Eye's" splits into big, eye, s: it is *Big Eyes*); a label
        less its trailing qualifier ("Monster Trucks" -> *Monster Trucks (film)*, "WILM" ->
        *WILM (AM)*); the last word singular ("Gila monsters" -> *Gila monster*), as a label or
        a label less its qualifier.

        >>> ix = LabelIndex.build([(n, n) for n in ("Big Eyes", "Gila monster", "Monster Trucks (film)", "monster truck")])
        >>> ix._variants("big", "eye", "eye", True), ix._variants("gila", "monsters", "monster", False)
        (['Big Eyes'], ['Gila monster'])
        >>> ix._variants("monster", "trucks", "truck", False), ix._variants("big", "eye", "eye", False)
        (['Monster Trucks (film)'], [])
        """
        join = (lambda w: f"{head} {w}") if head else (lambda w: w)
        if possessive and (ids := self.keys.get(join(last + "s"))):
            return ids
        if self.bare and (ids := self.bare.get(join(last))):
            return ids
        if single != last:
            return self.keys.get(join(single)) or self.bare.get(join(single)) or []
        return []

    def partial(self, question: str, spans: list[Span], limit: int = 3) -> list[Span]:
        """Nodes whose label holds a name the question writes but no label is: "Hayek" ->
        *Friedrich Hayek*, "Jonathan Reid" -> *Jonathan Douglass Reid*, "Golden State" ->
        *Golden State Warriors*, "Walk the Line" -> *I Walk the Line*. A name is a run of the
        question's words written like a name (:func:`name_tokens`), joined across the
        stopwords between two of them ("Walk the Line"), that no one of ``spans`` covers; when
        no label holds the joined run, each run of name words in it is tried alone ("Hayek
        and Jonathan Reid"). A run of numbers only is no name here ("1930"). The question's
        first word belongs to a run that follows it ("David Jones is ..."): only grammar
        capitalised it, and a name does not lose its first word for standing first. A word
        hyphenated to a name is part of it ("Kim Jong-chul").

        Only labels written as names themselves are candidates (:func:`_name_like`): a label
        that is a phrase mentioning the name ("just north of Cincinnati") is not another
        form of it.

        The candidates are the labels holding the run's words in order; the best are those
        holding them side by side, then those sharing most other words with the question,
        then those with the fewest other words. The best tie is the answer if it has at most
        ``limit`` labels: a name that many labels hold alike ("European": *European Union*,
        *European Council*, ...) says too little to pick one.

        >>> ix = LabelIndex.build([(n, n) for n in ("Friedrich Hayek", "Jonathan Douglass Reid", "I Walk the Line",
        ...                        "Gravel Walk", "University of Vienna")])
        >>> q = "Where did Hayek and Jonathan Reid study?"
        >>> [(s.node, s.start, s.end) for s in ix.partial(q, ix.spans(q))]
        [('Friedrich Hayek', 2, 3), ('Jonathan Douglass Reid', 4, 6)]
        >>> [s.node for s in ix.partial("Who sang in Walk the Line?", [])]
        ['I Walk the Line']
        >>> ix = LabelIndex.build([(n, n) for n in ("James Earl Jones", "just north of Cincinnati")])
        >>> ix.partial("David Jones is from where?", []), ix.partial("Is it near Cincinnati?", [])
        ([], [])
        >>> ix = LabelIndex.build([(f"European {x}", f"European {x}") for x in ("Union", "Commission", "Court", "Council")])
        >>> ix.partial("a European country", [])
        []
        """
        toks = tokens(question)
        names = _hyphenated(question, name_tokens(question))
        strict: list[tuple[int, int]] = []
        i = 0
        while i < len(toks):
            if names[i]:
                j = i
                while j < len(toks) and names[j]:
                    j += 1
                first = i == 1 and toks[0] not in STOPWORDS and name_tokens(question, sentence=False)[0]
                strict.append((0 if first else i, j))
                i = j
            else:
                i += 1
        joined: list[list[tuple[int, int]]] = []
        for r in strict:
            if joined and all(t in STOPWORDS for t in toks[joined[-1][-1][1]:r[0]]) and r[0] - joined[-1][-1][1] <= 2:
                joined[-1].append(r)
            else:
                joined.append([r])
        # the question's other words tell candidates apart ("Mr. Smith ... goes to the city" ->
        # *Mr. Smith Goes to Washington*); not single letters ("B." of another name)
        context = {t for t in toks if len(t) > 1 and t not in STOPWORDS}
        out: list[Span] = []
        for group in joined:
            tries = [(group[0][0], group[-1][1])] + (group if len(group) > 1 else [])
            for n, (i, j) in enumerate(tries):
                run = toks[i:j]
                if any(s.start <= i and j <= s.end for s in spans) or all(t.isdigit() or t in STOPWORDS for t in run):
                    continue
                ids = self._holding(run, context, limit)
                out.extend(Span(i, j, nid, True, True) for nid in ids)
                if n == 0 and (ids or len(group) == 1):
                    break
        return out

    def _holding(self, run: list[str], context: set[str], limit: int) -> list[str]:
        """Node ids of the best labels holding ``run``'s words in order (:meth:`partial`), or
        none when more than ``limit`` labels tie for best."""
        lists = [self.postings.get(t) for t in set(run)]
        if not all(lists):
            return []
        rarest = min(lists, key=len)  # type: ignore[arg-type]
        ranked: dict[tuple[bool, int, int], list[str]] = {}
        for key in rarest:  # type: ignore[union-attr]
            ktoks = key.split(" ")
            if len(ktoks) <= len(run) or not _in_order(run, ktoks):
                continue
            side_by_side = _contiguous(run, ktoks)
            shared = len((set(ktoks) - set(run)) & context)
            ranked.setdefault((not side_by_side, -shared, len(ktoks) - len(run)), []).append(key)
        if not ranked:
            return []
        best = ranked[min(ranked)]
        if len(best) > limit:
            return []
        return [nid for key in sorted(best) for nid in self.keys[key]]

    def names_within(self, label: str) -> list[str]:
        """Nodes named by the label itself or by a run of its words written like a name, the
        shorter names inside it included ("Maharashtra state" -> maharashtra state,
        maharashtra; "English Lake District" -> ..., lake district): the same entity written
        in other surface forms across the graph, which the graph does not connect.

        >>> ix = LabelIndex.build([(n, n) for n in ("maharashtra state", "maharashtra", "state", "lake district")])
        >>> ix.names_within("Maharashtra state")  # "state" is not written like a name
        ['maharashtra', 'maharashtra state']
        >>> ix.names_within("English Lake District")
        ['lake district']
        >>> ix.names_within("the state")
        []
        """
        toks = tokens(label)
        names = name_tokens(label, sentence=False)
        out: set[str] = set()
        for i in range(len(toks)):
            for n in range(1, min(self.longest, len(toks) - i) + 1):
                ids = self.keys.get(key_of(toks[i:i + n]))
                if ids and any(names[i:i + n]):
                    out.update(ids)
        return sorted(out)


def _in_order(run: list[str], toks: list[str]) -> bool:
    """Are ``run``'s tokens found in ``toks`` in the same order (others may come between)?

    >>> _in_order(["jonathan", "reid"], ["jonathan", "douglass", "reid"]), _in_order(["reid", "jonathan"], ["jonathan", "reid"])
    (True, False)
    """
    it = iter(toks)
    return all(t in it for t in run)


def _name_like(label: str) -> bool:
    """Is the label written as a name: each of its words (less a trailing qualifier, and
    stopwords) capitalised, a number or CJK?

    >>> _name_like("Friedrich Hayek"), _name_like("I Walk the Line"), _name_like("Monster Trucks (film)")
    (True, True, True)
    >>> _name_like("just north of Cincinnati"), _name_like("Stone Sour frontman Corey Taylor")
    (False, False)
    """
    bare = bare_label(label)
    return all(f or t in STOPWORDS for t, f in zip(tokens(bare), name_tokens(bare, sentence=False)))


def _hyphenated(text: str, names: list[bool]) -> list[bool]:
    """``names`` (per token of ``text``) with a word hyphenated to a name marked a name too.

    >>> _hyphenated("Kim Jong-chul", [True, True, False]), _hyphenated("a well-known Jong", [False, False, False, True])
    ([True, True, True], [False, False, False, True])
    """
    found = list(_TOKEN.finditer(_fold(" ".join(text.split()))))
    if len(found) != len(names):
        return names
    out = list(names)
    for k in range(1, len(found)):
        if out[k - 1] and not out[k] and found[k].start() == found[k - 1].end() + 1 \
                and found[k].string[found[k].start() - 1] == "-":
            out[k] = True
    return out


def _contiguous(run: list[str], toks: list[str]) -> bool:
    """Is ``run`` a contiguous part of ``toks``?

    >>> _contiguous(["walk", "the", "line"], ["i", "walk", "the", "line"]), _contiguous(["mr", "smith"], ["mr", "mrs", "smith"])
    (True, False)
    """
    n = len(run)
    return any(toks[i:i + n] == run for i in range(len(toks) - n + 1))


def _content_inside(s: Span, o: Span, toks: list[str]) -> bool:
    """Does ``s``, less the stopwords at its edges, lie inside the longer span ``o``?"""
    a, b = s.start, s.end
    while a < b and toks[a] in STOPWORDS:
        a += 1
    while b > a and toks[b - 1] in STOPWORDS:
        b -= 1
    return (o.start, o.end) != (s.start, s.end) and o.start <= a and b <= o.end and (o.end - o.start) > (b - a) \
        and not (s.start <= o.start and o.end <= s.end)


def _known(word: str, vocab: Container[str]) -> bool:
    """In the vocabulary, allowing an English plural ("versions" ~ "version")."""
    return word in vocab or (word.endswith("s") and (word[:-1] in vocab or (word.endswith("es") and word[:-2] in vocab)))


def narrower_than_graph(key: str, index: LabelIndex) -> tuple[list[str], list[str]]:
    """A key concept that is not a node but *contains* node labels, with words left over
    that set it apart — a number, or a word no label in the graph uses ("snow leopard" when
    the graph has only "leopard"; "Python 4" when it has "Python"): the graph holds related
    concepts, not this one. Returns (the contained nodes, the distinguishing words); empty
    lists when the key is not of that kind. The caller checks first that the key is no node.

    >>> ix = LabelIndex.build([("leopard", "leopard"), ("python", "Python"), ("python version", "Python version"),
    ...                        ("version", "version")])
    >>> narrower_than_graph("snow leopard", ix)
    (['leopard'], ['snow'])
    >>> narrower_than_graph("Python 4", ix)
    (['python'], ['4'])
    >>> narrower_than_graph("Python versions", ix)  # every word is graph vocabulary: a wording, not a new thing
    ([], [])
    >>> ix2 = LabelIndex.build([("吸烟", "吸烟")])
    >>> narrower_than_graph("非吸烟者死亡", ix2), narrower_than_graph("吸烟2", ix2)
    (([], []), (['吸烟'], ['2']))
    >>> narrower_than_graph("boiling point", ix)  # names nothing in the graph at all: not this rule's case
    ([], [])
    """
    toks = tokens(key)
    spans = index.spans(key)
    if not spans or any(s.end - s.start == len(toks) for s in spans):
        return [], []
    covered = {i for s in spans for i in range(s.start, s.end)}
    left = [t for i, t in enumerate(toks) if i not in covered and t not in STOPWORDS]
    # a CJK leftover is a single character: Chinese compounds too freely for a per-character
    # vocabulary to say "unknown", so only numbers set a CJK key apart
    odd = [t for t in left if any(c.isdigit() for c in t) or (not _CJK.match(t) and not _known(t, index.vocab))]
    if not odd:
        return [], []
    return sorted({s.node for s in spans}), odd


def specificity(mentions: int) -> float:
    """How good a seed a node is, from how many units mention it: 1 for a node one unit
    mentions, falling like 1/(1 + ln m) — a hub named by hundreds of units is still a seed,
    but a weak one (an idf, not a cut-off).

    >>> round(specificity(1), 3), round(specificity(10), 3), round(specificity(300), 3)
    (1.0, 0.303, 0.149)
    >>> specificity(0)
    1.0
    """
    return 1.0 / (1.0 + math.log(max(1, mentions)))


def fuse_entries(lexical: Mapping[str, float], vector: Mapping[str, float], spec: Mapping[str, float],
                 vector_weight: float = 0.5) -> dict[str, float]:
    """Seed weights from the two signals: a named node counts fully, a vector hit by its
    cosine times ``vector_weight``; either way times its specificity; normalised so the best
    seed weighs 1 (seed energies then stay on the ε scale of spreading activation).

    >>> fuse_entries({"a": 1.0}, {"a": 0.9, "b": 0.8}, {"a": 0.5, "b": 1.0}, vector_weight=0.5)
    {'a': 1.0, 'b': 0.8}
    >>> fuse_entries({}, {}, {})
    {}
    >>> fuse_entries({"a": 1.0, "b": 0.0}, {}, {})
    {'a': 1.0}
    """
    raw: dict[str, float] = {}
    for n, w in lexical.items():
        raw[n] = max(raw.get(n, 0.0), w * spec.get(n, 1.0))
    for n, cos in vector.items():
        raw[n] = max(raw.get(n, 0.0), cos * vector_weight * spec.get(n, 1.0))
    top = max(raw.values(), default=0.0)
    return {n: w / top for n, w in sorted(raw.items()) if w > 0} if top > 0 else {}

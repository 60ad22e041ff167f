"""A question's one-letter misspellings, read against the graph's own vocabulary.

"Where will the next winter olimpics be held?" names no node (*olympics* is the graph's word),
and MuSiQue writes "Margaraviate" for the graph's *Margraviate*: the entry step found nothing
for the word and the relevance floor's name rule refused the question before any model call.
A word of the question is read as a word of the graph when

* the graph never uses it as written (``used(word)`` is 0), and uses its other forms (its
  singular, its stem in units: ``own``) less than the word one edit away: "olimpics" is read
  as *olympics* (65 labels) although "FK Olimpic" gives its singular one label, while
  "released" stays "released" over a graph whose labels have only *release*, since its units
  use the stem far more,
* it is at least :data:`MIN_LETTERS` letters long (chosen by measurement, scripts/eval/RESULTS.md
  "One-letter misspellings" and "False abstentions on the rules graph": a shorter word, an
  acronym most often, has graph words one edit away by chance, "WINEP" -> *wine*), and
* exactly one word the graph uses is one edit away (:func:`one_edit`), or one of them is used
  more than every other, and
* it is no English word (:func:`dictionary_word`: simplemma's dictionary, already a
  dependency for the predicates' base forms): "premiere" is a word, not a misspelt
  *premiered*, nor "thinking" a misspelt *thinging*, whatever the graph's words.

Cheap: the edits of a word of n letters are about 54n + 25 dictionary look-ups, made only for a
long word the graph does not use and the language does not know; no scan of the graph's labels.
The language's dictionary is asked first (a look-up, some 5 µs) because making the edits costs
0.2–0.3 ms a word, and most long words a graph's labels lack are words of the language
("performer", "located"): asked last, it cost the rules graphs' retrieval 0.4–0.5 ms a question
(scripts/eval/RESULTS.md, "Latency since this morning"). The vocabulary is whatever the
caller holds already: the label index's tokens (the entry step), the stems of the units' words
(the floor's name rule).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable

from kgservice.entry.match import STOPWORDS
from kgservice.families.lemma import DEFAULT_LANGUAGES

# the shortest word read as another: chosen on the MuSiQue GPT-3.5 graph's questions and the
# off-topic set (scripts/eval/RESULTS.md, "One-letter misspellings"; 8 before the dictionary
# check, which leaves a real word alone at any length: 6 since, "False abstentions on the rules
# graph"). At 5 "WINEP" is read as *wine*; at 6 MuSiQue's "Cassel" is the graph's *Kassel*
MIN_LETTERS = 6

_WORD = re.compile(r"[^\W\d_]+")  # a word with an accent is left whole (and alone)


def one_edit(word: str) -> set[str]:
    """The words one deletion, transposition, substitution or insertion of a letter away.

    >>> "olympics" in one_edit("olimpics"), len(one_edit("ab")) > 50, "ab" in one_edit("ab")
    (True, True, False)
    """
    letters = string.ascii_lowercase
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    out = {a + b[1:] for a, b in splits if b}
    out |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    out |= {a + c + b[1:] for a, b in splits if b for c in letters}
    out |= {a + c + b for a, b in splits for c in letters}
    out.discard(word)
    return out


def dictionary_word(word: str) -> bool:
    """Does the English lemmatiser know ``word`` (lower case) as a word or a form of one? Its
    dictionary loads on first use (as :func:`kgservice.families.lemma.lemma`'s does: the same
    table; the service's warm-up loads it), and is asked only of a long word the graph does
    not use, before its edits are made.

    >>> [dictionary_word(w) for w in ("premiere", "thinking", "olimpics", "margaraviate")]
    [True, True, False, False]
    """
    import simplemma

    return bool(simplemma.is_known(word, lang=DEFAULT_LANGUAGES))


def respelt(word: str, used: Callable[[str], int], min_letters: int = MIN_LETTERS,
            same: Callable[[str], str] = str, own: Callable[[str], int] = lambda w: 0,
            known: Callable[[str], bool] = dictionary_word) -> str:
    """The graph's word that ``word`` misspells (module doc), or "". ``word`` in lower case;
    ``used``: how much the graph uses a word (0: never); ``same``: words it maps alike are one
    reading, not a tie (the floor counts stems: "margraviate" and "margraviates" are one word);
    ``own``: how much the graph uses the word's other forms (asked only of a long word ``used``
    does not know), which a reading must exceed; ``known``: is the word a word of the language
    (:func:`dictionary_word`), never a misspelling.

    >>> used = {"olympics": 4, "olympic": 9, "margraviate": 1, "mart": 3, "kassel": 2, "wine": 5}.get
    >>> def read(w): return respelt(w, lambda x: used(x, 0))
    >>> read("olimpics"), read("margaraviate"), read("cassel"), read("mars"), read("olympics"), read("zorblatt")
    ('olympics', 'margraviate', 'kassel', '', '', '')
    >>> respelt("olimpics", lambda x: used(x, 0), own={"olimpics": 5}.get)  # its forms used more: a word
    ''

    >>> respelt("winep", lambda x: used(x, 0), min_letters=5)  # why shorter words are left alone: an acronym
    'wine'
    >>> tie = {"ballards": 2, "bollard": 2}
    >>> respelt("ballard", lambda x: tie.get(x, 0))  # two words read equally well: neither
    ''
    >>> respelt("premiere", lambda x: {"premiered": 3}.get(x, 0))  # a word of the language: no misspelling
    ''
    """
    if len(word) < min_letters or not word.isascii() or not word.isalpha() or word in STOPWORDS or used(word):
        return ""
    if known(word):
        return ""  # a word of the language: asked before the edits, which cost fifty times more
    floor = own(word)
    best: dict[str, tuple[int, str]] = {}
    # the edits the graph uses more than the word's own forms, in their alphabetical order (the
    # first of a reading's forms used most stands for it); sorting only these, not every edit
    for n, x in sorted(((n, x) for x in one_edit(word) if (n := used(x)) > floor), key=lambda e: e[1]):
        if n > best.get(same(x), (0, ""))[0]:
            best[same(x)] = (n, x)
    counts = sorted(best.values(), reverse=True)
    if not counts or (len(counts) > 1 and counts[1][0] == counts[0][0]):
        return ""  # no such word, or two read equally well
    return counts[0][1]


def respelled(text: str, used: Callable[[str], int], min_letters: int = MIN_LETTERS,
              own: Callable[[str], int] = lambda w: 0) -> str:
    """``text`` with each misspelt word (:func:`respelt`; ``used``, ``own`` as there) replaced by
    the graph's word, its capital kept (a capital makes a name for the entry step).

    >>> used = {"olympics": 4, "margraviate": 1}
    >>> respelled("Where will the next winter olimpics be held?", lambda w: used.get(w, 0))
    'Where will the next winter olympics be held?'
    >>> respelled("Who ruled the Margaraviate of Brandenburg?", lambda w: used.get(w, 0))
    'Who ruled the Margraviate of Brandenburg?'
    """
    def read(m: re.Match[str]) -> str:
        w = m.group(0)
        right = respelt(w.lower(), used, min_letters, own=own)
        if not right:
            return w
        return right.upper() if w.isupper() and len(w) > 1 else right.capitalize() if w[0].isupper() else right

    return _WORD.sub(read, text)

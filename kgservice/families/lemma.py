"""Base forms of words, for predicates and for the grounded-answer check.

A model writes the predicate the text uses: "caused", "causing", "led to", "was replaced by",
"belonged to", "is" + a noun phrase. The lexicon lists base forms ("causes", "leads to",
"replaced by", "belongs to", "is"); :func:`predicate_keys` gives the lookup keys that let an
inflected or auxiliary form reach the family its base form has. Words are reduced by
simplemma (dictionary lemmatisation, 54 languages, no dependencies) in the lexicon's
languages; Chinese has no inflection, only aspect particles (了 过 着) after a verb, which are
tried off as a last resort ("导致了" -> 导致).

The dictionaries load on first use (about half a second for English), never at import, so
commands that resolve only predicates the lexicon lists word for word do not pay for them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from kgservice.ids import normalise_label

DEFAULT_LANGUAGES: tuple[str, ...] = ("en",)
# languages whose words have no inflection simplemma could undo (handled by ASPECT below)
UNINFLECTED = frozenset({"zh", "ja", "ko"})
# the auxiliary in front of the verb that carries the relation ("was replaced by", "is located
# in"; "has been replaced by" drops "have" too): dropped when the whole key names no family.
# "have" alone is a relation of its own ("has population of"), so it goes only before "be"
AUXILIARY = "be"
ASPECT = "了过着"
_SHORT = frozenset({"is", "am"})  # the only inflected forms shorter than three letters that matter here
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


@lru_cache(maxsize=1 << 16)
def lemma(word: str, languages: tuple[str, ...] = DEFAULT_LANGUAGES) -> str:
    """The base form of one lower-case word (the word itself when unknown or not a word).

    >>> [lemma(w) for w in ("caused", "causing", "led", "was", "belonged", "replaced", "uses", "wrote")]
    ['cause', 'cause', 'lead', 'be', 'belong', 'replace', 'use', 'write']
    >>> lemma("导致"), lemma("1990"), lemma("m"), lemma("is")
    ('导致', '1990', 'm', 'be')
    """
    langs = tuple(lang for lang in languages if lang not in UNINFLECTED)
    if not langs or not _WORD.fullmatch(word) or _CJK.search(word) or (len(word) < 3 and word not in _SHORT):
        return word  # a letter or two is a name, a unit or an abbreviation ("m", "s"), not "am" / "is"
    import simplemma

    try:
        return simplemma.lemmatize(word, lang=langs if len(langs) > 1 else langs[0]).lower()
    except ValueError:  # a language simplemma does not have (a user lexicon's choice)
        return word


def lemma_words(text: str, languages: tuple[str, ...] = DEFAULT_LANGUAGES) -> list[str]:
    """The base forms of a text's words (normalised: case-folded, NFKC).

    >>> lemma_words("The LZ77 algorithm is used by zip 1.9")
    ['the', 'lz77', 'algorithm', 'be', 'use', 'by', 'zip', '1.9']
    """
    return [lemma(w, languages) for w in normalise_label(text).split()]


def predicate_keys(predicate: str, languages: tuple[str, ...] = DEFAULT_LANGUAGES) -> list[str]:
    """Lookup keys of a predicate, most literal first: its words' base forms, then with each
    leading auxiliary dropped, then (Chinese) less a trailing aspect particle. The first key
    the lexicon has decides the family; none does: the predicate is a content family of its
    own, keyed by :func:`content_key`.

    >>> predicate_keys("was replaced by")
    ['be replace by', 'replace by']
    >>> predicate_keys("has been replaced by")
    ['have be replace by', 'be replace by', 'replace by']
    >>> predicate_keys("Led to"), predicate_keys("is")
    (['lead to'], ['be'])
    >>> predicate_keys("导致了")
    ['导致了', '导致']
    """
    words = lemma_words(predicate, languages)
    keys = [" ".join(words)]
    while len(words) > 1 and (words[0] == AUXILIARY or (words[0] == "have" and words[1] == AUXILIARY)):
        words = words[1:]
        keys.append(" ".join(words))
    text = normalise_label(predicate)
    if len(text) > 1 and text[-1] in ASPECT and _CJK.match(text[-2]):
        keys.append(text[:-1])
    return list(dict.fromkeys(keys))


def content_key(predicate: str, languages: tuple[str, ...] = DEFAULT_LANGUAGES) -> str:
    """The family of a predicate the lexicon does not know: its words' base forms less the
    leading auxiliaries, so every form of one relation is one family ("dropped" and "drops";
    "is located in" and "located in").

    >>> content_key("Is located in"), content_key("located in"), content_key("dropped")
    ('locate in', 'locate in', 'drop')
    >>> content_key("must be"), content_key("orbits"), content_key("has population of"), content_key("是一颗")
    ('must be', 'orbit', 'have population of', '是一颗')
    """
    return predicate_keys(predicate, languages)[-1] if not _CJK.search(predicate) \
        else normalise_label(predicate)


def languages_of(codes: Sequence[str]) -> tuple[str, ...]:
    """A lexicon's ``languages`` list as the tuple :func:`lemma` takes (order kept, no repeats)."""
    return tuple(dict.fromkeys(str(c).strip().lower() for c in codes if str(c).strip()))

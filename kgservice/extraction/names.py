"""How two concept labels relate as names: the candidates of entity resolution that a user
would agree with, and the pairs it should never ask about.

A vector neighbour alone is a poor candidate: a real run asked whether "zip" is "gunzip"
(cosine 0.88) and "gzip compilation" is "gzip format", and never asked about "Seattle,
Washington" and "Seattle" (the qualified name is far from the bare one in vector space).
So the name's structure decides (:func:`relation`):

* ``same form`` — the labels differ only in case, accents, punctuation or an English plural
  ("Sea-Tac Airport" / "Sea-Tac airport", "Jiménez" / "Jimenez"): the same node, no question;
* ``qualifier`` — one is the other plus a trailing qualifier ("Seattle, Washington" /
  "Seattle", "Brother (song)" / "Brother");
* ``acronym`` — one is the initials of the other ("GNU Compiler Collection" / "GCC");
* ``name part`` — one name holds the other whole, the rest written as a name too ("Eddie
  Vedder" / "Vedder");
* ``spelling`` — as many words, spelled nearly alike ("Abbruzzese" / "Abruzzese");
* ``other script`` — written in different scripts ("smoking" / "吸烟"): a translation, which
  only the vectors can propose;
* None — obviously different names: each has a word the other lacks and no spelling is close
  ("zip" / "gunzip", "gzip compilation" / "gzip format", "lung cancer" / "cancer").

The last five are asked (once: :mod:`kgservice.extraction.decisions`); None is never asked.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

from kgservice.entry.match import _fold, bare_label, key_of, name_tokens, singular, tokens

SAME_FORM = "same form"
ASKED = ("qualifier", "acronym", "name part", "spelling", "other script")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def form_key(label: str) -> str:
    """The label as a name is written regardless of case, accents, punctuation and an English
    plural: labels with one form key are one concept.

    >>> form_key("Sea-Tac Airport") == form_key("Sea-Tac airport"), form_key("Jiménez") == form_key("Jimenez")
    (True, True)
    >>> form_key("Gila monsters") == form_key("Gila monster"), form_key("zip") == form_key("gzip")
    (True, False)
    """
    return key_of(singular(t) for t in tokens(label))


def _initials(label: str) -> str:
    return "".join(t[0] for t in tokens(label) if t and not t.isdigit())


def _acronym(short: str, long: str) -> bool:
    s = _fold(short).replace(".", "")
    return (2 <= len(s) <= 8 and s.isalpha() and s.isupper() and len(tokens(long)) >= 2
            and _initials(long) == s.lower())


def _name_part(short: str, long: str) -> bool:
    """``short`` is a contiguous run of ``long``'s words, and every word of ``long`` outside it
    is written like a name, as is ``short`` itself."""
    st, lt = tokens(short), tokens(long)
    if not st or len(st) >= len(lt):
        return False
    ln = name_tokens(long, sentence=False)
    if not all(name_tokens(short, sentence=False)):
        return False
    for i in range(len(lt) - len(st) + 1):
        if lt[i:i + len(st)] == st:
            rest = [ok for k, ok in enumerate(ln) if not i <= k < i + len(st)]
            return bool(rest) and all(rest)
    return False


def relation(a: str, b: str) -> str | None:
    """How label ``a`` relates to label ``b`` as a name (see the module doc); symmetric.

    >>> relation("Seattle", "Seattle, Washington"), relation("Brother (song)", "Brother")
    ('qualifier', 'qualifier')
    >>> relation("Sea-Tac airport", "Sea-Tac Airport"), relation("GCC", "GNU Compiler Collection")
    ('same form', 'acronym')
    >>> relation("Vedder", "Eddie Vedder"), relation("Abbruzzese", "Abruzzese"), relation("吸烟", "smoking")
    ('name part', 'spelling', 'other script')
    >>> [relation(*p) for p in (("zip", "gunzip"), ("gzip compilation", "gzip format"), ("lung cancer", "cancer"),
    ...                          ("Seattle proper", "Seattle"), ("Python 3.12", "Python 3.13"))]
    [None, None, None, None, None]
    """
    ka, kb = form_key(a), form_key(b)
    if not ka or not kb:
        return None
    if ka == kb:
        return SAME_FORM
    if form_key(bare_label(a)) == kb or form_key(bare_label(b)) == ka:
        return "qualifier"
    if bool(_CJK.search(a)) != bool(_CJK.search(b)):
        return "other script"
    if _acronym(a, b) or _acronym(b, a):
        return "acronym"
    if _name_part(a, b) or _name_part(b, a):
        return "name part"
    ta, tb = ka.split(), kb.split()
    digits = re.findall(r"\d+", ka) == re.findall(r"\d+", kb)
    if len(ta) == len(tb) and digits and min(len(ka), len(kb)) >= 5 \
            and difflib.SequenceMatcher(None, ka, kb).ratio() >= 0.85:
        return "spelling"
    return None


def structural_candidates(label: str, keys: Mapping[str, list[str]], bare: Mapping[str, list[str]],
                          postings: Mapping[str, list[str]]) -> list[str]:
    """Node ids whose labels may name the same thing as ``label`` by structure, from a label
    index (:class:`kgservice.entry.match.LabelIndex`'s ``keys``, ``bare`` and ``postings``):
    same words (a plural too), the label less a qualifier or a label that is it plus one, a
    name run inside it, a longer name holding it. The caller judges each with :func:`relation`.

    >>> from kgservice.entry.match import LabelIndex
    >>> ix = LabelIndex.build([("seattle, washington", "Seattle, Washington"), ("eddie vedder", "Eddie Vedder"),
    ...                        ("brother", "Brother"), ("gunzip", "gunzip")])
    >>> [structural_candidates(x, ix.keys, ix.bare, ix.postings) for x in ("Seattle", "Vedder", "Brother (song)", "zip")]
    [['seattle, washington'], ['eddie vedder'], ['brother'], []]
    """
    toks = tokens(label)
    if not toks:
        return []
    out: list[str] = []
    single = [singular(t) for t in toks]
    for key in (key_of(toks), key_of(single), key_of(tokens(bare_label(label)))):
        out += keys.get(key, []) + bare.get(key, [])
    # a shorter name inside this one ("Vedder" in "Eddie Vedder"): contiguous runs
    for n in range(1, len(toks)):
        for i in range(len(toks) - n + 1):
            out += keys.get(key_of(toks[i:i + n]), [])
    # a longer name holding this one whole (postings list only labels written as names)
    lists = [postings.get(t) for t in set(toks)]
    present = [lst for lst in lists if lst]
    if len(present) == len(lists):
        for key in min(present, key=len)[:50]:
            k = key.split(" ")
            if len(k) > len(toks) and any(k[i:i + len(toks)] == toks for i in range(len(k) - len(toks) + 1)):
                out += keys.get(key, [])
    return list(dict.fromkeys(out))


__all__ = ["ASKED", "SAME_FORM", "form_key", "relation", "structural_candidates"]

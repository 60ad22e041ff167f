"""Answer-shaped ranking: how well a unit answers a question, not only how close it is.

The no-LLM retrieval (:mod:`kgservice.expansion.retrieve`) ranks units by the energy of their
nodes: every unit about the question's entity scores about alike, so "What does smoking
cause?" got *smoking [is a] tobacco use* and *smoking [associated with] tuberculosis* before
*smoking [causes] lung cancer*, and "What does coffee contain?" got *咖啡 [同义] coffee*. A unit
answers a question when it has

* the question's **relation**: its predicate's words are the question's ("contain" /
  *contains*), or a member of its predicate family is ("cause" / *导致*, *引起*): the
  question asks for that relation;
* an **anchor**: one of its sides is a thing the question names (the subject "smoking", or
  the object in "What causes lung cancer?"), so the unit is about what was asked;
* an **open slot**: another side the question does not name, which is the answer (a unit
  whose every side the question names tells nothing new); a date where the question asks
  "when", a number where it asks "how many".

Pure functions over plain data (no store, no model), doctested here; the caller
(:mod:`kgservice.answer.retrieval_only`) gathers the units, the family members, the nodes the
question names and the word frequencies. :mod:`kgservice.answer.floor` decides from the same
matches whether the graph answers the question at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kgservice.entry.match import STOPWORDS, bare_label, name_tokens, tokens

# question words that say what kind of answer is wanted, never what it is about
ASK_WORDS = frozenset("many much long old year years date time name named called kind type sort".split())
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_YEAR = re.compile(r"(?<!\d)(1\d{3}|20\d{2})(?!\d)|\d{4}-\d{2}|年")
_DIGIT = re.compile(r"\d")
_ELLIPSIS = re.compile(r"…|\.\.\.")
# Chinese question words for the answer's kind: 何时/什么时候/哪一年 a date, 多少/几 a number
_ZH_WHEN = ("何时", "什么时候", "哪一年", "哪年", "几时")
_ZH_COUNT = ("多少", "几")
# A question often names the relation it asks by a noun the predicate writes as a verb or a
# preposition ("the *composer* of Aschenbrödel" / *written by*; "*country*" / *located in*):
# the question's words -> the predicate words that state it. General English, not one data
# set's ("death" and "creator creation" were added for one MuSiQue first hop each: in-sample,
# RESULTS.md, "The answering unit ranked 4th or lower …"). Written as plain words and compared
# as stems (:func:`stem`), as the question's and the predicate's words are: written as stems by
# hand, "wrote", "daughter", "native", "score" and the key "state" never met a stemmed word
# ("Dead Ernest >> author" missed *wrote*).
_RELATION_NOUN_WORDS = {
    "author": "written wrote writes author novel book play poem",
    "writer writes written wrote": "written wrote writes writer author",
    "composer": "written wrote composed composer music score",
    "performer singer": "sung sang sing recorded performed",
    "country": "located situated country nation citizen capital", "state": "located situated state",
    "county": "located situated county seat", "city": "located situated city born",
    "birthplace": "born birthplace native", "birth": "born birth native", "death": "died death",
    "spouse": "married wife husband spouse", "wife": "married wife", "husband": "married husband",
    "father": "son daughter father child", "mother": "son daughter mother child",
    "founder": "founded established created started", "creator creation": "created founded founding established",
    "educated": "attended graduated studied educated alumnus",
    "university": "attended graduated studied university",
    "member": "member played joined", "sport": "played sport", "team": "played team member",
    "owner": "owned subsidiary acquired part", "parent": "owned subsidiary part parent",
    "employer": "worked employed", "language": "speaks spoken language",
    "charge": "leads head president governs ruled rules", "leader head": "leads head president chair",
    "located": "located situated in",
}


def stem(word: str) -> str:
    """A light English stem, so a question's verb meets a predicate's form of it ("contain" /
    "contains", "cause" / "caused" / "causes", "directed" / "direct"). Not a lemmatiser: it only
    has to make two forms of one word equal, and a short word, a number or CJK is left alone.

    >>> [stem(w) for w in ("contains", "contain", "causes", "caused", "cause", "causing", "directed")]
    ['contain', 'contain', 'caus', 'caus', 'caus', 'caus', 'direct']
    >>> [stem(w) for w in ("cities", "boss", "running", "created", "1991", "吸", "born", "series")]
    ['city', 'boss', 'run', 'creat', '1991', '吸', 'born', 'seri']
    >>> [stem(w) for w in ("performer", "performed", "director", "founders", "number", "river")]
    ['perform', 'perform', 'direct', 'found', 'number', 'river']
    """
    w = word.lower()
    if len(w) <= 3 or not w.isalpha() or not w.isascii():
        return w
    if w.endswith("ies") and len(w) > 4 and not w.endswith("eries"):
        return w[:-3] + "y"
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "lsz":
                w = w[:-1]  # "running" -> "runn" -> "run"
            break
    else:
        if w.endswith("es") and w[-3:-2] in ("s", "x", "z") or w.endswith(("ches", "shes")):
            w = w[:-2]
        elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
            w = w[:-1]
    if len(w) >= 7 and w.endswith(("er", "or")):
        return w[:-2]  # the doer of the verb: "performer", "director", "founder", "governor"
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    return w


RELATION_NOUNS: dict[str, frozenset[str]] = {
    stem(k): frozenset(stem(v) for v in vs.split()) for ks, vs in _RELATION_NOUN_WORDS.items() for k in ks.split()}


def words(text: str) -> set[str]:
    """The stems of the words that carry meaning: no stopwords, no single letters.

    >>> sorted(words("What does smoking cause?"))
    ['caus', 'smok']
    >>> sorted(words("吸烟导致肺癌"))
    ['吸', '导', '烟', '癌', '肺', '致']
    """
    return {stem(t) for t in tokens(text) if t not in STOPWORDS and _meaningful(t)}


def _meaningful(tok: str) -> bool:
    """Not a single letter ("s" of a possessive); a digit or a CJK character is ("Python 2")."""
    return len(tok) > 1 or tok.isdigit() or bool(_CJK.match(tok))


@dataclass(frozen=True)
class Asked:
    """What a question asks, read off its words: its content stems (less the words that only
    say what kind of answer is wanted), its names as written (runs of capitalised words,
    numbers or CJK: :func:`kgservice.entry.match.name_tokens`), its normalised text (a CJK
    label or predicate is found in it as a substring) and the kind of answer it wants."""

    text: str
    words: frozenset[str]
    names: tuple[tuple[str, ...], ...]
    when: bool = False
    count: bool = False
    # the asked kind of answer, as a common noun ("What *country* is Tai Chi-tao from?",
    # "Nugegoda >> *country*"): what the answer is, never the thing the question is about
    kind_words: frozenset[str] = frozenset()
    # the words that may state the asked relation: the content words outside the names ("wrote"
    # in "Songs I Wrote with Amy >> producer" is the title's, not the relation asked)
    relation_words: frozenset[str] = frozenset()


def asked(question: str) -> Asked:
    """Read a question.

    >>> a = asked("When was Python 2.0 released by Guido van Rossum?")
    >>> sorted(a.words), a.names, a.when, a.count
    (['0', '2', 'guido', 'python', 'releas', 'rossum', 'van'], (('python', '2', '0'), ('guido', 'van', 'rossum')), True, False)
    >>> asked("How many people does tobacco kill each year?").count
    True
    >>> asked("吸烟会导致哪些疾病？").names
    ()
    >>> asked("Silverton >> located in the administrative territorial entity").names
    (('silverton',),)
    >>> [sorted(asked(q).relation_words) for q in ("Songs I Wrote with Amy >> producer", "Who wrote Hello Love?")]
    [['produc'], ['wrot']]
    >>> [sorted(asked(q).kind_words) for q in ("What country is Tai Chi-tao from?", "In what state did the writer die?",
    ...  "What kind of university did he attend?", "Nugegoda >> place of birth", "What does smoking cause?",
    ...  "Which Python version removed distutils?")]
    [['country'], ['stat'], ['university'], ['birth', 'plac'], [], []]
    """
    toks = tokens(question)
    flags = name_tokens(question)
    names: list[tuple[str, ...]] = []
    run: list[str] = []
    for t, f in zip(toks + [""], flags + [False]):
        if f and t and not _CJK.match(t):  # Chinese has no case: its names are found as labels
            run.append(t)
            continue
        if run:
            names.append(tuple(run))
        run = []
    # "Guido van Rossum": a lower-case particle between two names joins them
    joined: list[tuple[str, ...]] = []
    i = 0
    while i < len(names):
        cur = names[i]
        while i + 1 < len(names) and _between(toks, cur, names[i + 1]) in ("van", "von", "de", "da", "of", "the"):
            nxt = names[i + 1]
            cur = cur + (_between(toks, cur, nxt),) + nxt
            i += 1
        joined.append(cur)
        i += 1
    if ">>" in question:
        # "Hello Love >> performer": the part before ">>" is the subject, a name however it
        # is capitalised (a question's first word is not taken for one by case)
        subject = tuple(t for t in tokens(question.split(">>", 1)[0]) if _meaningful(t))
        if subject and subject not in joined:
            joined = [subject] + [n for n in joined if not set(n) <= set(subject)]
    norm = " ".join(toks)
    lead = toks[:2]
    when = bool({"when", "year"} & set(lead)) or "what year" in norm or "which year" in norm \
        or any(w in question for w in _ZH_WHEN)
    count = "how many" in norm or "how much" in norm or any(w in question for w in _ZH_COUNT)
    content = {stem(t) for t in toks if t not in STOPWORDS and t not in ASK_WORDS and _meaningful(t)}
    if ">>" in question:
        relation = words(question.split(">>", 1)[1])
    else:
        relation = {stem(t) for t, f in zip(toks, flags) if not (f and not _CJK.match(t))
                    and t not in STOPWORDS and t not in ASK_WORDS and _meaningful(t)}
    return Asked(norm, frozenset(content), tuple(joined), when, count, _kind_words(question, toks, flags),
                 frozenset(relation))


def _kind_words(question: str, toks: list[str], flags: list[bool]) -> frozenset[str]:
    """The words naming the kind of answer asked for: in the "Subject >> relation" form, the
    relation's; else the common noun right after the first "what" / "which" ("what kind of"
    skipped), unless it is written as a name ("Which Python version": Python is what the
    question is about) or is a stopword ("What does smoking cause?": none)."""
    if ">>" in question:
        return frozenset(words(question.split(">>", 1)[1]))
    for i, t in enumerate(toks):
        if t in ("what", "which"):
            j = i + 1
            while j < len(toks) and (toks[j] in ("kind", "type", "sort") or toks[j] == "of"):
                j += 1
            if j < len(toks) and toks[j] not in STOPWORDS and not flags[j] and _meaningful(toks[j]) \
                    and not _CJK.match(toks[j]):
                return frozenset({stem(toks[j])})
            break
    return frozenset()


def _between(toks: list[str], a: tuple[str, ...], b: tuple[str, ...]) -> str:
    """The one token between two name runs of ``toks`` (by first occurrence), or ''."""
    n = len(toks)
    for i in range(n - len(a) + 1):
        if tuple(toks[i:i + len(a)]) == a:
            j = i + len(a)
            if j + 1 + len(b) <= n and tuple(toks[j + 1:j + 1 + len(b)]) == b:
                return toks[j]
    return ""


@dataclass(frozen=True)
class Candidate:
    """A unit as the ranking sees it: its sides' labels (subject first; arguments and modifier
    values that are nodes), its literal values, its predicate, the words of its predicate's
    family (the lexicon's members of its base: :meth:`kgservice.families.Lexicon.resolve`),
    whether a side is a node the question names (the entry step's named nodes and their
    synonyms: a Chinese label is anchored by an English question that names its synonym),
    and the retrieval's score."""

    id: str
    sides: tuple[str, ...]
    literals: tuple[str, ...] = ()
    predicate: str = ""
    family: tuple[str, ...] = ()
    named_sides: frozenset[int] = frozenset()
    score: float = 0.0
    synonym: bool = False  # a synonym unit ("咖啡 同义 coffee"): answers only "what else is X called"
    # the text the unit was extracted from (its document's lines; "" when no document states
    # it): breaks ties between units that answer alike by their own words (:func:`by_source`)
    source: str = ""
    # the sides that are a type a thing the question names belongs to, on a unit stating that
    # type's fact (*mutable sequence type [has] append method* when the question names *list*,
    # which [is a] mutable sequence type): the fact sinks to the named thing (DESIGN's belongs-to
    # closure), so the side anchors the unit as a named side does; kept apart from
    # ``named_sides``, which also say which names the entry step found (:func:`found_names`)
    inherited_sides: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Match:
    """How a candidate meets a question (:func:`match`). ``relation``: 1 when its predicate's
    words are the question's, 0.8 when only a member of its family is, else 0. ``anchor``: the
    positions of its sides the question names. ``open``: a side the question does not name.
    ``shared``: the question's content words the unit states; ``rest``: those of them outside
    its anchor sides (the question's words about what it asks, not about what it names)."""

    id: str
    relation: float
    anchor: tuple[int, ...]
    open: bool
    kind: bool  # a date for "when", a number for "how many"
    shared: frozenset[str] = field(default_factory=frozenset)
    score: float = 0.0
    rest: frozenset[str] = field(default_factory=frozenset)

    @property
    def related(self) -> bool:
        """Does the unit say something the question asks about its anchor: the question's
        relation, or a word of the question besides the anchor's own."""
        return self.relation > 0 or bool(self.rest)


# A predicate of only "by" or "from" (and a copula) still states a relation: "X by Y" names
# X's maker, "X from Y" its origin. The question's words that ask for each (as stems), and
# "where ... from" asks the origin too.
_BY_ASKS = frozenset(stem(w) for w in "author writer wrote written composer composed performer performed singer "
                     "sang director directed creator created maker made producer produced artist band".split())
_FROM_ASKS = frozenset(stem(w) for w in "born birthplace birth native origin hometown".split())


def _preposition_states(a: Asked, predicate: str) -> bool:
    """Does a predicate written as only "by" or "from" (after a copula) state what ``a`` asks?

    >>> _preposition_states(asked("Decade >> performer"), "by"), _preposition_states(asked("Where was Hans Edler from?"), "born in")
    (True, False)
    >>> _preposition_states(asked("In what city was Steven Blankaart born?"), "was from")
    True
    """
    toks = [t for t in tokens(predicate) if t not in ("is", "was", "are", "were")]
    if toks == ["by"]:
        return bool(a.relation_words & _BY_ASKS)
    if toks == ["from"]:
        return bool(a.relation_words & _FROM_ASKS) or _asks_from(a)
    return False


_COPULA = frozenset("is was are were".split())


def _noun_states(a: Asked, c: Candidate) -> bool:
    """A copula, a noun and "by" / "from" as the predicate: *Izgoy [is album by] Alisa*,
    *Hello Love [is single by] Hank Snow*, *Akinoshū Kenji [is wrestler from] Hiroshima* (a
    parse keeps the noun inside the predicate). The "by" / "from" states what
    :func:`_preposition_states` reads off a predicate of only that word; a participle before it
    ("was acquired by", "is written by") is a verb of its own and is read as one elsewhere.

    >>> u = Candidate("i", ("Izgoy", "Alisa"), predicate="is album by")
    >>> _noun_states(asked("Izgoy >> performer"), u), _noun_states(asked("Izgoy >> place of birth"), u)
    (True, False)
    >>> _noun_states(asked("Akinoshu Kenji >> place of birth"), Candidate("k", ("Akinoshū Kenji", "Hiroshima"),
    ...              predicate="is former wrestler from"))
    True
    >>> _noun_states(asked("Izgoy >> performer"), Candidate("r", ("Izgoy", "Real Records"), predicate="was acquired by"))
    False
    """
    toks = tokens(c.predicate)
    if len(toks) < 3 or toks[0] not in _COPULA or toks[-1] not in ("by", "from"):
        return False
    if any(t.endswith(("ed", "en")) or t in STOPWORDS for t in toks[1:-1] if t not in ("a", "an", "the")):
        return False
    return _preposition_states(a, toks[-1])


def _asks_from(a: Asked) -> bool:
    """"Where was Hans Edler from?", "Where is X from": the question asks an origin."""
    toks = a.text.split()
    return bool(toks) and toks[0] == "where" and "from" in toks[-2:]


# the words that ask where a thing is (as stems; "where" itself is a stopword: read off the text)
_WHERE_ASKS = frozenset(stem(w) for w in "located location situated country state county city province region "
                        "territorial administrative".split())


# the words of a question that asks only where a thing is ("located in the administrative
# territorial entity", "location", "What state is …")
_WHERE_ONLY = _WHERE_ASKS | frozenset(stem(w) for w in "administrative entity place".split())


def _asks_where(a: Asked) -> bool:
    """Does the question ask where a thing is: a place word in its relation or asked kind
    ("located in", "What *state* …"), or "where …"?"""
    return bool((a.relation_words | a.kind_words) & _WHERE_ASKS) or a.text.split()[:1] == ["where"]


def _place_states(a: Asked, c: Candidate, found: Sequence[frozenset[str]] = ()) -> bool:
    """Does a predicate of "in" after a copula and at most two nouns state where the unit's
    subject is? *Battle of Mine Creek [in] Kansas*, *Dodge City Regional Airport [is in]
    Kansas*, *Shringarpur [is village in] Maharashtra state*, *Pocahontas Mounds [is site in]
    Mississippi*: a parse or an LLM keeps the place's preposition as the whole predicate, or a
    copula's noun inside it. Only when the question asks where (:func:`_asks_where`) the thing
    is and nothing else: not where it was born or died ("At what location did Karel Purkyně
    die?" asks a verb's place, which *[was in] Austria-Hungary* does not state; ``found``: the
    names the entry step found, whose words a lower-case question writes among its relation
    words). A verb before "in" ("was released in", "played in") is a relation of its own, a
    stopword between ("is one of villages in") leaves the noun's subject unclear, and a date is
    no place.

    >>> u = Candidate("s", ("Shringarpur", "Maharashtra state"), predicate="is village in")
    >>> [_place_states(asked(q), u) for q in ("Shringarpur >> located in the administrative territorial entity",
    ...  "Which state is Shringarpur located?", "Where is Shringarpur?", "Shringarpur >> place of birth",
    ...  "Where was Shringarpur born?", "Shringarpur >> performer")]
    [True, True, True, False, False, False]
    >>> a, mine = asked("where is the battle of mine creek"), [frozenset({"battl", "mine", "creek"})]
    >>> [_place_states(a, Candidate("b", ("Battle of Mine Creek", x), predicate=p), mine) for p, x in (("in", "Kansas"),
    ...  ("is in", "Kansas"), ("occurred in", "Kansas"), ("is one of battles in", "Kansas"), ("in", "1864"))]
    [True, True, False, False, False]
    >>> [_place_states(asked(q), Candidate("k", ("Karel Purkyně", "Austria-Hungary"), predicate="was in"))
    ...  for q in ("At what location did Karel Purkyně die?", "What country released Han Vodka?",
    ...            "Karel Purkyně >> country")]
    [False, False, True]
    """
    named = {w for n in found for w in n}
    if not _asks_where(a) or not a.relation_words - named <= _WHERE_ONLY:
        return False
    toks = [t for t in tokens(c.predicate) if t not in ("a", "an", "the")]
    if not toks or toks[-1] != "in":
        return False
    mid = toks[1:-1] if toks[0] in _COPULA else toks[:-1]
    if len(mid) > 2 or any(t in STOPWORDS or t.endswith(("ed", "en")) for t in mid):
        return False
    return len(c.sides) > 1 and not any(_YEAR.search(x) for x in c.sides[1:] + c.literals)


def _qualifier_states(a: Asked, c: Candidate) -> bool:
    """Does a side the question names, written as that name, a comma and a place the question
    does not write ("Silverton, Colorado" for "Silverton"), state where the thing is, when the
    question asks where? The label's added place is the answer: *Emil Fischer [died in]
    Silverton, Colorado* says that Silverton is in Colorado, whatever its predicate.

    >>> u = Candidate("e", ("Emil Fischer", "Silverton, Colorado"), predicate="died in")
    >>> _qualifier_states(asked("Silverton >> located in the administrative territorial entity"), u)
    True
    >>> _qualifier_states(asked("Where is Silverton?"), u), _qualifier_states(asked("Who died in Silverton?"), u)
    (True, False)
    >>> _qualifier_states(asked("Where is Silverton, Colorado?"), u)  # the question writes the place already
    False
    >>> _qualifier_states(asked("Where did Emil Fischer die?"), u)  # the qualified side is not the name asked about
    False
    """
    if not _asks_where(a):
        return False
    names = name_stems(a)
    for side in c.sides:
        bare = bare_label(side)
        rest = side[len(bare):].strip()
        if not rest.startswith(","):
            continue
        named, place = words(bare), words(rest)
        if named and named in names and place and not place & a.words:
            return True
    return False


def _generic(member: str) -> bool:
    """A family member too common to say which relation a question asks: only stopwords ("is
    a", "has") or one CJK character ("是", "有").

    >>> [_generic(m) for m in ("is a", "has", "是", "有", "contains", "导致")]
    [True, True, True, True, False, False]
    """
    toks = tokens(member)
    return not toks or all(t in STOPWORDS for t in toks) or (len(member.strip()) == 1 and bool(_CJK.match(member)))


def _says(a: Asked, phrase: str, among: frozenset[str] | None = None) -> bool:
    """Does the question state this phrase: a CJK phrase as a substring of its text, else all
    of its content stems among the question's words (``among``: only these of them; so word
    order and inflection don't matter)."""
    if _CJK.search(phrase):
        # a member written around its object ("导致…死亡", "用…编写"; the lexicon's keys have
        # the ellipsis as "...") states its parts in order
        text, at = a.text.replace(" ", ""), 0
        for part in ("".join(tokens(p)) for p in _ELLIPSIS.split(phrase)):
            found = text.find(part, at)
            if found < 0:
                return False
            at = found + len(part)
        return True
    w = words(phrase)
    return bool(w) and w <= (a.words if among is None else among)


def _names_side(a: Asked, side: str, found: Sequence[frozenset[str]] = ()) -> bool:
    """Does the question name this side of a unit: state it (:func:`_says`); hold one of the
    question's names whole ("Silverton, Colorado" for "Silverton"); or, for a side of three
    words or more, more than half of them ("poor CPU-bound thread scaling" in "why do CPU-bound
    threads scale poorly"; not "Capital District" for "capital") — unless it is a look-alike of
    a name the question asks about (:func:`_look_alike`; ``found``: the names the entry step
    found, as stems, beside the question's own).

    >>> a = asked("where was the battle of mine creek fought")
    >>> mine = [frozenset({"battl", "mine", "creek"})]
    >>> _names_side(a, "Battle of Stoney Creek"), _names_side(a, "Battle of Stoney Creek", mine)
    (True, False)
    >>> _names_side(asked("why do CPU-bound threads scale poorly"), "poor CPU-bound thread scaling")
    True
    """
    w = words(side)
    if _part_of_name(a, w):
        return False
    if _says(a, side):
        return True
    if any(set(n) <= w for n in name_stems(a)):
        return True
    return len(w) >= 3 and not _CJK.search(side) and 2 * len(w & a.words) > len(w) \
        and not _look_alike(a, w, [*name_stems(a), *found])


def _part_of_name(a: Asked, side: set[str] | frozenset[str]) -> bool:
    """Is a side (its stems) words taken apart from a longer name the question writes, written
    nowhere else in the question? *European Union* is not what "European Trade Union
    Confederation >> applies to jurisdiction" names: its two words are the confederation's,
    with "Trade" between them, and the question names the confederation. A side that is a run
    of the name's words ("West Virginia" in "Johnnycake, West Virginia", "Python" in "Python
    3.0") is named by it.

    >>> a = asked("European Trade Union Confederation >> applies to jurisdiction")
    >>> [_part_of_name(a, words(s)) for s in ("European Union", "European Trade Union Confederation", "Trade Union")]
    [True, False, False]
    >>> b = asked("Which union did the European Trade Union Confederation join in Europe?")  # written outside the name too
    >>> _part_of_name(b, words("European Union"))
    False
    >>> [_part_of_name(asked(q), words(s)) for q, s in (("Johnnycake, West Virginia >> located in", "West Virginia"),
    ...  ("When was Python 3.0 released?", "Python"))]
    [False, False]
    """
    toks = [stem(t) for t in a.text.split() if t not in STOPWORDS and _meaningful(t)]
    for name in a.names:
        n = [stem(t) for t in name if t not in STOPWORDS and _meaningful(t)]
        if not side or not side < set(n):
            continue
        at = [i for i, w in enumerate(n) if w in side]
        if at[-1] - at[0] + 1 == len(at):
            continue  # a run of the name's words
        if all(toks.count(w) <= n.count(w) for w in side):
            return True
    return False


def _look_alike(a: Asked, side: set[str] | frozenset[str], names: Sequence[frozenset[str]]) -> bool:
    """Is a side (its stems) another thing named like one the question asks about: it shares
    words with the name, lacks a word of it the question writes, and has a word the question
    does not write — the name with a word swapped (*Battle of Stoney Creek* for "the battle of
    Mine Creek", *Kim Jong-il* for "Kim Jong-chul"). Most of its words are the question's, which
    is why it passed for a paraphrase of it; a paraphrase leaves out no word of the name.

    >>> a = asked("Kim Jong-chul >> father")
    >>> [_look_alike(a, words(s), name_stems(a)) for s in ("Kim Jong-il", "Kim Jong-chul", "Kim Jong-chul's school")]
    [True, False, False]
    """
    return any(side & n and (n - side) & a.words and side - a.words for n in names)


def name_stems(a: Asked) -> list[frozenset[str]]:
    """The question's names as sets of content stems (numbers alone are no name)."""
    out = []
    for name in a.names:
        st = frozenset(stem(t) for t in name if t not in STOPWORDS and _meaningful(t))
        if st and not all(t.isdigit() for t in st):
            out.append(st)
    return out


def _only_kind(a: Asked, side: str) -> bool:
    """Is this side written only in the words of the asked kind (:attr:`Asked.kind_words`)?

    >>> a = asked("What country is Tai Chi-tao from?")
    >>> _only_kind(a, "country"), _only_kind(a, "countries"), _only_kind(a, "Tai Chi-tao"), _only_kind(a, "China")
    (True, True, False, False)
    """
    w = words(side)
    return bool(w) and w <= a.kind_words


def _only_ask(side: str) -> bool:
    """Is this side written only in the words that say what kind of answer is wanted
    (:data:`ASK_WORDS`: "many", "year", "name")? A node "many" or "type" is no thing a question
    names ("How many glorps fit in a wibble?").

    >>> _only_ask("many"), _only_ask("types"), _only_ask("built-in type"), _only_ask("Seven")
    (True, True, False, False)
    """
    w = words(side)
    return bool(w) and w <= _ASK_STEMS


_ASK_STEMS = frozenset(stem(w) for w in ASK_WORDS)


def match(a: Asked, c: Candidate, found: Sequence[frozenset[str]] = ()) -> Match:
    """How well ``c`` answers ``a`` (module doc).

    >>> a = asked("What does smoking cause?")
    >>> m = match(a, Candidate("smk-001", ("smoking", "lung cancer"), predicate="causes", family=("导致", "cause")))
    >>> m.relation, m.anchor, m.open
    (1.0, (0,), True)
    >>> m = match(a, Candidate("smk-056", ("吸烟", "肺癌"), predicate="导致", family=("导致", "cause"),
    ...                        named_sides=frozenset({0})))
    >>> m.relation, m.anchor, m.open
    (0.8, (0,), True)
    >>> match(a, Candidate("smk-006", ("smoking", "tobacco use"), predicate="is a", family=("属于", "is a"))).relation
    0.0
    >>> match(asked("What causes lung cancer?"), Candidate("x", ("smoking", "lung cancer"), predicate="causes")).anchor
    (1,)

    The asked kind is no anchor, a title's words are no relation, a bare copula claims no
    member of its family, and the subject of "X >> relation" is a name however it is written:

    >>> match(asked("Nugegoda >> country"), Candidate("l", ("Latvia", "country"), predicate="is")).anchor
    ()
    >>> match(asked("Songs I Wrote with Amy >> producer"), Candidate("s", ("Sheeran", "the song"), predicate="wrote")).relation
    0.0
    >>> match(asked("Knott >> part of"), Candidate("k", ("Edward Knott", "English Jesuit"), predicate="was",
    ...                                            family=("is", "is a", "part of", "属于"))).relation
    0.0
    >>> match(asked("Silverton >> country"), Candidate("c", ("Silverton, Colorado", "United States"), predicate="in")).anchor
    (0,)

    A relation noun meets its predicate's words in any form ("author" / *wrote*):

    >>> match(asked("Dead Ernest >> author"), Candidate("d", ("Phoebe Atwood Taylor", "Dead Ernest"), predicate="wrote")).relation
    0.8

    A side of the words that ask the answer's kind ("many") is no anchor either:

    >>> match(asked("How many glorps fit in a wibble?"), Candidate("g", ("many", "Guam"), predicate="attracted to")).anchor
    ()

    A type the named thing belongs to anchors its own facts (``inherited_sides``), which the
    question does not name:

    >>> match(asked("What does a list have?"), Candidate("s", ("sequence type", "count method"), predicate="has",
    ...                                                inherited_sides=frozenset({0}))).anchor
    (0,)
    """
    relation = 0.0
    cjk = bool(_CJK.search(c.predicate))
    pred = set() if cjk else words(c.predicate)
    rel = a.relation_words
    if (pred and pred <= rel) or (cjk and _says(a, c.predicate)):
        relation = 1.0
    elif pred and len(pred & rel) * 2 >= len(pred) and len(pred) > 1:
        relation = 0.8  # "first released in" for "when was X released"
    elif not _generic(c.predicate) and any(_says(a, m, rel) for m in c.family if not _generic(m)):
        # a bare copula or "has" says only that its family holds, not which member: "Edward
        # Knott [was] English Jesuit" is class membership, not the "part of" a question asks
        relation = 0.8
    elif pred and any(pred & RELATION_NOUNS.get(w, frozenset()) for w in rel | ({"birthplac"} if _asks_from(a) else set())):
        relation = 0.8  # "Hello Love >> performer" / *performed by*; "composer" / *written by*
    elif _preposition_states(a, c.predicate):
        relation = 0.8  # "Decade >> performer" / *Decade [by] Neil Young*; "In what city was X born?" / *X [was from] Y*
    elif _noun_states(a, c):
        relation = 0.8  # "Izgoy >> performer" / *Izgoy [is album by] Alisa*
    elif _qualifier_states(a, c):
        relation = 0.8  # "Silverton >> located in" / *Emil Fischer [died in] Silverton, Colorado*
    # a side that is only the asked kind ("country" in "Latvia [is] country" for "What
    # country is Tai Chi-tao from?") is an instance of the answer's type, not the question's thing
    anchor = tuple(i for i, side in enumerate(c.sides)
                   if (i in c.named_sides or i in c.inherited_sides or _names_side(a, side, found))
                   and not _only_kind(a, side)
                   and not _only_ask(side))
    if relation == 0 and 0 in anchor and _place_states(a, c, found):
        relation = 0.8  # "Which state is Dodge City Regional Airport located?" / *… [is in] Kansas*
    open_ = len(anchor) < len(c.sides) or bool(c.literals)
    text = " ".join(c.sides + c.literals + (c.predicate,))
    shared = frozenset(words(text) & a.words)
    rest = shared - {w for i in anchor for w in words(c.sides[i])}
    kind = (a.when and any(_YEAR.search(x) for x in c.literals + c.sides[1:])) or \
        (a.count and any(_DIGIT.search(x) for x in c.literals))
    return Match(c.id, relation, anchor, open_, bool(kind), shared, rest=frozenset(rest))


def rank(question: str, candidates: Sequence[Candidate]) -> list[Match]:
    """The candidates best answer first (module doc): the relation counts most, then an
    anchor, then an open slot of the asked kind, then how much of the question the unit
    states (its share of the question's content words; weighing them by their idf over the
    graph changed one MuSiQue question and no demo one, so it was removed); the retrieval's
    own order breaks ties and orders the rest. A
    synonym unit ranks as an answer only when the question asks what else a thing is called.
    The relation counts half on a unit with no anchor: it states the asked relation of a thing
    the question does not name, which answers another question ("What state is KAGH-FM
    located?" / *CHIQ-FM [located in] Winnipeg*). Chosen on MuSiQue's GPT-3.5 graph, confirmed
    on its spaCy graph (scripts/eval/RESULTS.md, "The no-model floor on fresh graphs").
    A unit the anchor reaches only through a first hop (the second relation of a two-relation
    question) is not lifted: that rule helped where it was chosen (MuSiQue's GPT-3.5 graph) and
    nowhere held out, so it was removed (RESULTS.md, "First hops' relation words and the bridge").
    A relation the question states only inside a longer relation it states counts
    :data:`PART_OF_LONGER` of itself (:func:`_inside_longer`: 导致 inside 导致…死亡).
    A side that passes for a name the question asks about by most of its words but swaps one of
    the name's words for another (*Battle of Stoney Creek* for "the battle of mine creek", *Kim
    Jong-il* for "Kim Jong-chul") is another thing: no anchor (:func:`_look_alike`). Chosen on
    MuSiQue's GPT-3.5 graph, confirmed on its spaCy graph (RESULTS.md, "The answering unit ranked
    4th or lower: look-alike names, …").
    In "S >> relation", a unit whose predicate is the relation's participle ("located in") and
    whose subject the question does not name states the relation of another thing: its
    relation counts as on a unit with no anchor (:func:`_inverse`). In-sample: it moved one
    question of the GPT-3.5 graph, where it was chosen, and none of the spaCy graph.
    A predicate of "in" after a copula and at most two nouns states where its subject is when
    the question asks only where (:func:`_place_states`): chosen on the spaCy graph, no question
    of the GPT-3.5 graph (held out) moved.
    A unit anchored only by a type a named thing belongs to (``inherited_sides``: the type's fact
    sinks to the thing) is about the thing, but its relation counts as on a unit with no anchor:
    the type states it in general, and a statement of the thing itself (or of its narrower kind)
    overrides it, as a sub-class's own fact does its super-class's (*Python implementation [runs]
    Python source code* is true of CPython, but does not say which build of CPython runs without
    the GIL). In-sample: chosen on the demo (scripts/eval/RESULTS.md, "The belongs-to closure in
    the no-model answer").

    >>> cands = [Candidate("smk-014", ("smoking", "COPD", "coronary heart disease", "stroke"), predicate="causes",
    ...                    family=("导致", "cause"), score=3.0),
    ...          Candidate("smk-006", ("smoking", "tobacco use"), predicate="is a", family=("属于", "is a"), score=2.0),
    ...          Candidate("smk-015", ("smoking", "tuberculosis"), predicate="associated with", score=1.9),
    ...          Candidate("smk-001", ("smoking", "lung cancer"), predicate="causes", family=("导致", "cause"), score=1.8)]
    >>> [m.id for m in rank("What does smoking cause?", cands)]
    ['smk-014', 'smk-001', 'smk-006', 'smk-015']
    >>> coffee = [Candidate("n1", ("咖啡", "coffee"), predicate="同义", synonym=True, named_sides=frozenset({1}), score=2),
    ...           Candidate("n2", ("espresso", "coffee"), predicate="is a", score=1.5),
    ...           Candidate("n3", ("coffee", "caffeine"), predicate="contains", family=("的", "has"), score=1.0)]
    >>> [m.id for m in rank("What does coffee contain?", coffee)]
    ['n3', 'n2', 'n1']
    >>> radio = [Candidate("chiq", ("CHIQ-FM", "Winnipeg, Manitoba"), predicate="located in", score=2.0),
    ...          Candidate("kagh", ("KAGH-FM", "Crossett, Arkansas"), predicate="is licensed to serve", score=1.0)]
    >>> [m.id for m in rank("What state is KAGH-FM located?", radio)]
    ['kagh', 'chiq']
    """
    a = asked(question)
    top = max((c.score for c in candidates), default=0.0) or 1.0
    total = len(a.words) or 1
    alias = bool({"call", "aka", "known", "alia", "synonym", "name"} & {stem(t) for t in tokens(question)}) \
        or any(x in question for x in ("又称", "也称", "别名", "同义"))
    out = []
    shape: dict[str, float] = {}
    longer = _stated_members(a, candidates)
    found = found_names(candidates)
    for c in candidates:
        m = match(a, c, found)
        if m.relation > 0 and _inside_longer(c, longer):
            m = Match(m.id, PART_OF_LONGER * m.relation, m.anchor, m.open, m.kind, m.shared, rest=m.rest)
        share = len(m.shared) / total
        # the relation of the thing asked about; a type's fact (anchored only by an inherited side)
        # states it of the type, and the thing's own or its narrower kind's statement comes first
        own = 1.0 if set(m.anchor) - c.inherited_sides and not _inverse(question, a, c, m) else 0.5
        s = 2.0 * m.relation * own + 1.0 * bool(m.anchor) + 0.5 * (m.open and bool(m.anchor)) + 0.5 * m.kind + share
        if c.synonym and not alias:
            s = min(s, 1.0)  # a name for the anchor is not what it does
        shape[c.id] = round(s, 6)
        s += 0.25 * c.score / top  # the retrieval's order among equals
        out.append(Match(m.id, m.relation, m.anchor, m.open, m.kind, m.shared, round(s, 6), m.rest))
    order = {c.id: i for i, c in enumerate(candidates)}
    ranked = sorted(out, key=lambda m: (-m.score, order[m.id]))
    return by_source(a, ranked, shape, {c.id: c.source for c in candidates}, [*name_stems(a), *found])


def by_source(a: Asked, ranked: list[Match], shape: Mapping[str, float], source: Mapping[str, str],
              names: Sequence[frozenset[str]] = ()) -> list[Match]:
    """``ranked`` with each run of units that answer alike by their own words (equal ``shape``
    score: only the retrieval's order parts them) re-ordered by how many of the question's
    content words outside its names (``names``: the question's and the entry step's, as stems)
    their source text holds, the retrieval's order kept among equals. A unit is its sentence
    cut short: *Abraham Van Helsing [from] Dracula* and *Abraham Van Helsing [is] vampire
    hunter* both meet "What fictional work does Abraham Van Helsing exist in?" by the name
    alone, but the first was read from "… is a fictional character from the 1897 gothic horror
    novel Dracula". The name itself is not counted: a sentence that says "it" for the river
    ("… it joins the Atbarah River") states as much as one that repeats its name. No tie-break
    by the units' own shape (the subject named, a longer or shorter open side, a copula or not,
    the asked kind's vector) was right on ties in general (scripts/eval/RESULTS.md, "Ties, the
    pool and a name taken apart"). A unit with no source counts none; when no unit has one (a graph
    whose documents are not kept) the order is the retrieval's.

    >>> ms = [Match(i, 0.0, (0,), True, False, score=2.5 - k / 10) for k, i in enumerate("abc")]
    >>> src = {"a": "Van Helsing is a vampire hunter.", "c": "Van Helsing is a fictional character from Dracula."}
    >>> [m.id for m in by_source(asked("What fictional work is Van Helsing in?"), ms, dict.fromkeys("abc", 2.0), src)]
    ['c', 'a', 'b']
    >>> [m.id for m in by_source(asked("What fictional work is Van Helsing in?"), ms, {"a": 2.1, "b": 2.0, "c": 2.0}, src)]
    ['a', 'c', 'b']
    >>> a = asked("What river does Tekeze River turn into?")  # the name counts for nothing
    >>> src = {"a": "The Tekeze River rises in the Ethiopian Highlands.", "c": "After Sudan it joins the Atbarah River."}
    >>> [m.id for m in by_source(a, ms, dict.fromkeys("abc", 2.0), src, name_stems(a))]
    ['a', 'b', 'c']
    """
    if not any(source.values()):
        return ranked
    asks = a.words - {w for n in names for w in n}
    out: list[Match] = []
    i = 0
    while i < len(ranked):
        j = i
        while j + 1 < len(ranked) and shape.get(ranked[j + 1].id) == shape.get(ranked[i].id):
            j += 1
        run = ranked[i:j + 1]
        if len(run) > 1:
            held = {m.id: len(words(source.get(m.id, "")) & asks) for m in run}
            run = sorted(run, key=lambda m: -held[m.id])  # stable: the retrieval's order among equals
        out += run
        i = j + 1
    return out


def _inverse(question: str, a: Asked, c: Candidate, m: Match) -> bool:
    """Does the unit state the asked relation the other way round? In "S >> relation" (S is
    the subject, the relation's value is asked) a relation written as a participle ("located
    in", "educated at", "licensed to broadcast to") is said of its subject, so a unit whose
    predicate is that participle's words, anchored only on a side other than its subject, says
    that something else stands in the relation *to* S — *Iaeger [located in] West Virginia* for
    "Johnnycake, West Virginia >> located in the administrative territorial entity". Like a
    unit with no anchor, it states the relation of another thing. A noun relation says nothing
    of direction by position ("Alexander … >> author" is answered by *Judith Viorst [author of]
    Alexander …*; "performer" by *Hank Snow [performed] Hello Love*), nor does a question in
    words ("What causes lung cancer?").

    >>> q = "Johnnycake, West Virginia >> located in the administrative territorial entity"
    >>> a = asked(q)
    >>> [_inverse(q, a, u, match(a, u)) for u in (Candidate("i", ("Iaeger", "West Virginia"), predicate="located in"),
    ...  Candidate("j", ("Johnnycake", "McDowell County"), predicate="located in"))]
    [True, False]
    >>> [_inverse(q, asked(q), u, match(asked(q), u)) for q, u in (
    ...  ("Hello Love >> performer", Candidate("h", ("Hank Snow", "Hello Love"), predicate="performed")),
    ...  ("Brand >> author", Candidate("b", ("Henrik Ibsen", "Brand"), predicate="author of")))]
    [False, False]
    """
    if ">>" not in question or not m.anchor or 0 in m.anchor or m.relation <= 0 or _CJK.search(c.predicate):
        return False
    asked_toks = set(tokens(question.split(">>", 1)[1]))
    pred = [t for t in tokens(c.predicate) if t not in STOPWORDS]
    return bool(pred) and set(pred) <= asked_toks and any(t.endswith("ed") for t in pred)


def found_names(candidates: Sequence[Candidate]) -> list[frozenset[str]]:
    """The labels the entry step found for the question's names (the candidates' named sides),
    as stems: a question in lower case ("where was the battle of mine creek fought") writes no
    name by its capitals, and these say which thing it names.

    >>> [sorted(n) for n in found_names([Candidate("u", ("Battle of Mine Creek", "Kansas"), predicate="in",
    ...                                            named_sides=frozenset({0}))])]
    [['battl', 'creek', 'mine']]
    """
    out: list[frozenset[str]] = []
    for c in candidates:
        for i in c.named_sides:
            w = frozenset(words(c.sides[i]))
            if w and w not in out:
                out.append(w)
    return out


# the relation of a unit whose predicate the question states only inside a longer relation it
# states (导致 inside 导致…死亡) counts this share
PART_OF_LONGER = 0.5


def _parts(phrase: str) -> list[str]:
    """A CJK phrase's parts as the question's text writes them ("导致…死亡" -> 导致, 死亡)."""
    return [p for p in ("".join(tokens(x)) for x in _ELLIPSIS.split(phrase)) if p]


def _stated_members(a: Asked, candidates: Sequence[Candidate]) -> list[str]:
    """The family members of the candidates' predicates that the question states and that are
    longer than one part (a CJK member written around its object, or several content words)."""
    out: list[str] = []
    seen: set[str] = set()
    for c in candidates:
        for m in c.family:
            if m in seen:
                continue
            seen.add(m)
            long_ = len(_parts(m)) > 1 if _CJK.search(m) else len(words(m)) > 1
            if long_ and not _generic(m) and _says(a, m, a.relation_words):
                out.append(m)
    return out


def _inside_longer(c: Candidate, longer: list[str]) -> bool:
    """Does the question state ``c``'s relation (its predicate or a member of its family) only as
    a part of a longer relation of another family ("二手烟每年导致多少非吸烟者死亡？" states
    导致…死亡, so *二手烟 [导致] 肺癌* is not the asked relation; "How many deaths does smoking
    cause?" states *causes death of*), which the unit's own words do not complete (*tobacco
    [causes] 8 million deaths* does)?

    >>> kill = ["导致...死亡"]
    >>> _inside_longer(Candidate("a", ("二手烟", "肺癌"), predicate="导致", family=("导致", "causes")), kill)
    True
    >>> _inside_longer(Candidate("b", ("烟草", "800万人死亡"), predicate="导致", family=("导致", "causes")), kill)
    False
    >>> _inside_longer(Candidate("c", ("二手烟", "非吸烟者"), predicate="kills", family=("kills", "导致...死亡")), kill)
    False
    >>> death = ["causes death of"]
    >>> [_inside_longer(Candidate(i, ("smoking", x), predicate="causes", family=("导致", "causes")), death)
    ...  for i, x in (("d", "lung cancer"), ("e", "8 million deaths"))]
    [True, False]
    """
    text = "".join(tokens(" ".join((c.predicate,) + c.sides + c.literals)))
    text_words = words(" ".join((c.predicate,) + c.sides + c.literals))
    own = [m for m in {c.predicate, *c.family} if m and not _generic(m)]
    for member in longer:
        if member in c.family:
            continue
        if _CJK.search(member):
            parts = _parts(member)
            whole = "".join(parts)
            inside = any(_CJK.search(m) and (k := "".join(tokens(m))) and k != whole and any(k in p for p in parts)
                         for m in own)
            if inside and not all(p in text for p in parts):
                return True
        else:
            mw = words(member)
            inside = any(not _CJK.search(m) and words(m) and words(m) < mw for m in own)
            if inside and not mw <= text_words:
                return True
    return False


def family_words(members: Mapping[str, object], base_of: Callable[[object], str]) -> dict[str, tuple[str, ...]]:
    """Family base -> its member words, from the lexicon's member map (word -> info) and a
    function giving an info's base: the reverse of :meth:`kgservice.families.Lexicon.resolve`.

    >>> from kgservice.families import Lexicon
    >>> lex = Lexicon.load()
    >>> fam = family_words(lex.members, lambda i: i.base)
    >>> "causes" in fam["导致"] and "引起" in fam["导致"]
    True
    """
    out: dict[str, list[str]] = {}
    for word, info in members.items():
        out.setdefault(base_of(info), []).append(word)
    return {b: tuple(sorted(ws)) for b, ws in out.items()}


def stems_of(texts: Iterable[str]) -> set[str]:
    """Every content stem in the texts (:func:`words`).

    >>> sorted(stems_of(["Smoking causes lung cancer", "tobacco"]))
    ['cancer', 'caus', 'lung', 'smok', 'tobacco']
    """
    out: set[str] = set()
    for t in texts:
        out |= words(t)
    return out

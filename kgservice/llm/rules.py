"""The rule-based responder behind ``kgoffline/rules`` — a demo stand-in, not a model.

Deterministic rules that answer the four kgservice request kinds well enough for the demo
corpus and for tests, reading the JSON input object each request carries:

``extract`` (summary / detail / query)
    Splits the text into sentences and keeps those of the form ``X <predicate> Y`` where
    ``<predicate>`` is a member of the built-in predicate lexicon (``causes``, ``is a``,
    ``created by``, ``导致``, ``是`` ...): the earliest (then longest) lexicon member splits
    the sentence into subject and objects; objects are split on ``,`` / ``and`` / ``、`` /
    ``和``. Detail mode keeps ``in 1991`` / ``于1991年`` as ``()[year]``, ``according to X``
    / ``根据X`` as ``()[source]`` and modal words (``can``, ``may``, ``可能``) as
    ``()[modality]``; summary mode drops them. Anything else is left out — the rules
    never guess. Encyclopaedic sentences are read first (:func:`encyclopaedic`): "X is a 1952
    film directed by Y" gives ``X [directed by] Y`` and ``X [is a] film``, "X is a song by Y"
    ``X [song by] Y``, "X is the wife of Y" / "X is Y's son" ``X [wife of] Y`` / ``X [son of]
    Y``, "X, the son of king Y, ..." ``X [son of] Y``, "X is a town in the R region of C"
    ``X [located in] R, C``, "X (born ... in Y)" ``X [born in] Y``: the title entity gets the
    edge (the lexicon split would give ``1952 film directed by Y`` as one object, or nothing);
    so do "X is the seventh album of (rapper) Y" ``X [album by] Y``, "X is a label based in
    Y, which was founded by Z" ``X [based in] Y``, ``X [founded by] Z``, and "X is a fictional
    character in Y" ``X [character in] Y``. Asides after the opening name are read and taken
    out (:func:`_lead`): a parenthesis ("X (Japanese: ...) is a film ..."), "X, also known as Y,
    is ..." ``X [also known as] Y``, "X, situated in Y, is ..." ``X [located in] Y``; a person's
    years with places "X (15 March 1834, Wrocław – 5 April 1868, Prague)" give ``X [born in]
    Wrocław`` and ``X [died in] Prague`` (:func:`_life`). Each verb of a "by" tail keeps its own
    makers ("directed by Y and written by Z", "..., first released in 1957 by W"; "produced by
    one of its stars, Z" is Z), also after an adverb, "that was" or a date ("independently
    released by", "a novel that was published in 1944 by"); a description before a name is
    dropped ("German artist and producer Y" is Y; a lone adjective is no name). The newer
    shapes, for a subject that is a name: "X is a historic church / a public high school
    (located) in Y, Z" ``X [located in] Y, Z`` and ``X [is a] <kind>``; "X is a tributary of
    the R in Y" ``X [tributary of] R``; "X is a former goalkeeper for T1, T2" / "... who plays
    for T" ``X [played for | plays for] T``; "X is a politician from the P Party" ``X [member
    of] P Party``; "X was a battle that occurred on <date>, in Y" / "X took place ... in Y"
    ``X [took place in] Y``. A month or a demonym ("English") is no place, "on the R River" is
    near it. An "in" list keeps up to five places, and the
    first place after "along", "beside", "12 miles east of" ... is ``X [located near] Y``. A
    name followed by its acronym in parentheses gives ``{name} [also known as] {ACRONYM}``
    (:func:`acronym`) and is read without them. A sentence does not
    end after "Mr." or a middle initial before a name ("Harris W. Fawell"), nor after "Bros."
    when the firm's name goes on ("Warner Bros. Pictures"), and the section
    heading a chunk comes with, when it is a name, is whom a surname subject ("Fawell") or a
    sentence's "He" / "She" / "It" stands for (:func:`whole_name`).
    A wrong unit costs more than a missing one (it joins passages that have nothing in common),
    so the rules give none when the split does not read as the relation: "is" followed by no
    noun phrase ("is located on", "is owned by", "is automatic"; "is 3 miles west of Y" is
    ``[located near] Y``), a subject that is or opens with a pronoun or a demonstrative ("It"
    under a heading that is no name, "Its seat", "This woreda", "There") or an opening adverbial
    ("Because of this ..."), the rest of a sentence cut after "U.S."; objects stop at an
    adverbial or a clause, and a list after "is a ... of <Name>" is that name's
    (:func:`stands_for_no_name`, ``_reads_as_relation``, ``_objects``).
    Query mode finds lexicon predicates in the question and keeps the word
    runs left after removing question words, stop words and a short list of common verbs
    as the key nodes.
``drilldown``
    Coverage rules: a unit scores 3 per key node it touches (through the node's matches),
    2 for a key predicate's family, 1 per word it shares with the question besides the
    key nodes' own (up to 3) and 1 for touching a node already expanded; the relevant
    units are the touching ones with the top score (or at least 5); *enough* when every key node that exists
    in the graph is touched by a relevant unit and, if the question has predicates, one
    relevant unit is of a key predicate's family; otherwise next seeds are the nodes of
    the relevant units and the mode alternates. Drift is declared only when no unit
    touches a key node or an expanded seed.
``answer``
    Restates each given unit as one sentence citing its id (at most 8), so it can only be
    as right as the selected units; the short answer is the first unit's arguments. Written
    in the answer prompt's text format (:func:`answer_reply`), as a model is asked to write it.
``same_concept``
    Same when the labels are equal after case folding, removing punctuation, leading
    articles and plural ``s`` — and carry the same digits.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from kgservice.extraction.chunking import TITLE_ABBREVIATIONS
from kgservice.families import Lexicon
from kgservice.ids import normalise_label

# --- vocabulary ---------------------------------------------------------------------

EN_STOP = set("""
a an the of in on at to for from by with about into over under and or but not no nor so than then
what which who whom whose why how when where whether
is are was were be been being am do does did done doing have has had having
can could may might must shall should will would
it its he him his she her hers they them their theirs we us our you your i me my this that these those there here
any some each every all both either neither other another such many much more most few less least
one ones get gets got give gives gave make makes made take takes took tell show
also still now today currently first poorly well very really just only even ever according
without before after since during within year years
""".split())
EN_VERBS = set("""
create created creates begin began begun begins start started starts work works worked scale scales scaled
run runs ran install installs installed govern governs governed replace replaced removed remove removes
introduce stop stopped stops maintain maintained support supported kill kills killed die dies died
need needs mean means called call know known become became happen happens happened
""".split())
MODALS = {"can", "may", "might", "could", "often", "usually", "probably", "likely", "sometimes",
          "可能", "往往", "通常", "常常", "也许"}
AUX = {"is", "are", "was", "were", "be", "been", "has", "have", "had", "also", "which", "that", "will",
       "does", "do", "did", "both", "mainly", "directly"}
CJK_AUX = ("会", "也", "都", "还", "已经", "曾", "将", "被")
CJK_STOP = sorted({
    "什么时候", "从哪里", "有哪些", "为什么", "什么", "哪些", "哪个", "哪种", "哪里", "何时", "多少", "怎么", "怎样",
    "如何", "可以", "一个", "时候", "开始", "停止", "维护", "安装", "每年", "主要",
    "谁", "吗", "呢", "吧", "会", "是", "在", "的", "了", "和", "与", "及", "哪", "被", "由", "对", "把", "将", "能", "这", "那", "几",
}, key=len, reverse=True)
NO_SENTENCE_PRED = {"的", "即", "部分", "实例", "子类", "发布", "关联", "相关"}
NO_QUERY_PRED = NO_SENTENCE_PRED | {"是", "有", "是一个", "是一种"}
ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)
QUANTITY = re.compile(r"^(?:about|around|nearly|over|more than|less than|almost|approximately|roughly|"
                      r"约|大约|超过|近|将近)?\s*[\d][\d.,]*", re.I)
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
LATIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'+#.\-]*[A-Za-z0-9+#]|[A-Za-z0-9]")


@lru_cache(maxsize=1)
def _lexicon() -> Lexicon:
    return Lexicon.load()


def _member_pattern(members: list[str]) -> re.Pattern[str]:
    parts = []
    for m in sorted(members, key=len, reverse=True):
        esc = re.escape(m)
        if CJK.search(m):
            if m == "是":
                parts.append(r"(?<![但还就总于要可若只倒真不])是(?!否)")
            elif m == "有":
                parts.append(r"(?<![没所具拥含])有")
            else:
                parts.append(esc)
        else:
            parts.append(rf"(?<![\w\-]){esc}(?![\w\-])")
    return re.compile("|".join(parts), re.I)


@lru_cache(maxsize=2)
def _predicates(for_query: bool) -> re.Pattern[str]:
    skip = NO_QUERY_PRED if for_query else NO_SENTENCE_PRED
    return _member_pattern([m for m in _lexicon().members if m not in skip])


# --- entry point ----------------------------------------------------------------------

def respond(payload: dict[str, Any]) -> str:
    task = payload.get("task")
    if task == "extract":
        out = extract(payload.get("text", ""), payload.get("mode", "summary"), payload.get("section"))
    elif task == "drilldown":
        out = drilldown(payload)
    elif task == "answer":
        return answer_reply(answer(payload))
    elif task == "same_concept":
        out = same_concept(payload.get("new", ""), payload.get("existing", ""))
    else:
        out = {"error": f"the rule-based responder does not know task {task!r}"}
    return json.dumps(out, ensure_ascii=False)


# --- extraction ---------------------------------------------------------------------------

_SENT_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；])|\n+")
_MD = re.compile(r"^\s*(?:[-*+>]\s+|\d+[.)]\s+)")


# A full stop after these ends no sentence when a name follows ("Mr. Cool", "St. Louis"); after
# "Jr." / "Inc." only when the sentence goes on in lower case ("Sammy Davis Jr. was ...").
_TITLE_ABBR = re.compile(rf"(?:^|\s)(?:{TITLE_ABBREVIATIONS}|[A-Z])\.$")
_TRAILING_ABBR = re.compile(r"(?:^|\s)(?:Jr|Sr|Inc|Ltd|Co|Corp|Bros|approx|ca|c|e\.g|i\.e)\.$")


def _ends_sentence(before: str, after: str) -> bool:
    """Does the full stop ending ``before`` end a sentence, ``after`` being what follows?
    Not after a title or a middle initial followed by a name ("Harris W. Fawell", "A. J.
    Cronin", but "World War I." does end one), nor after "Jr." / "Inc." going on in lower case,
    nor after "Bros." when the firm's name goes on ("Warner Bros. Pictures"; "Warner Bros. The
    film ..." is a new sentence).

    >>> _ends_sentence("distributed by Warner Bros.", "Pictures."), _ends_sentence("released by Warner Bros.", "The film won.")
    (False, True)
    """
    if m := _TITLE_ABBR.search(before):
        initial = len(m.group(0).strip()) == 2
        return initial and (m.group(0).strip() == "I." or not after[:1].isupper())
    if not _TRAILING_ABBR.search(before):
        return True
    if after[:1].islower():
        return False
    first = after.split()[0].strip(".,;:!?") if after.split() else ""
    return not (before.endswith("Bros.") and first[:1].isupper() and first.lower() not in EN_STOP)


def sentences(text: str) -> list[str]:
    """Sentences of a text (Markdown headings and list markers dropped).

    >>> sentences("The Oddventures of Mr. Cool is an album. Harris W. Fawell was born in 1929.")
    ['The Oddventures of Mr. Cool is an album.', 'Harris W. Fawell was born in 1929.']
    >>> sentences("It was adapted from A. J. Cronin's novel. It is set in World War I. It won.")
    ["It was adapted from A. J. Cronin's novel.", 'It is set in World War I.', 'It won.']
    """
    out = []
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        line = _MD.sub("", line).replace("**", "").replace("__", "").replace("`", "")
        cur = ""
        for s in _SENT_END.split(line):
            s = s.strip()
            if not s:
                continue
            if cur and not _ends_sentence(cur, s):
                cur = f"{cur} {s}"
                continue
            if cur:
                out.append(cur)
            cur = s
        if cur:
            out.append(cur)
    return out


def _strip_end(s: str) -> str:
    return s.strip().rstrip(".!?。！？；;:：,，").strip()


def _clean_label(s: str) -> str:
    s = s.strip().strip("\"'“”‘’()（）").strip()
    return ARTICLE.sub("", s).strip()


def _split_list(s: str) -> list[str]:
    parts = re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+and\s+|\s*[、，]\s*|(?<=[\u3400-\u9fff])[和与及](?=[\u3400-\u9fff])", s)
    return [p for p in (x.strip() for x in parts) if p]


def _words(s: str) -> int:
    return len(s.split()) if not CJK.search(s) else max(1, len(s) // 3)


# words that stand for something named elsewhere: never a node of their own
_PRONOUN = {"it", "its", "he", "him", "his", "she", "her", "hers", "they", "them", "their", "theirs", "we", "us",
            "our", "you", "your", "i", "me", "my", "this", "these", "those", "that", "there", "which", "who",
            "whom", "whose", "a", "an", "the", "such"}
_COPULAS = {"is", "are", "was", "were"}
# a word that starts an adverbial or a clause, not an object ("..., after the English Wikipedia")
_CLAUSE_WORD = re.compile(r"^(?:after|before|since|during|until|while|when|where|whereas|although|though|because|"
                          r"which|who|whom|whose|that|including|with|without|from|by|near|as|for|"
                          r"named|called|known|located|followed|making|being|then|also|but)\b")


# "is current coach of Goyang Daekyo WFC": a role of a named thing with its article left out
_ROLE_OF = re.compile(r"^(?![a-z]+(?:ed|ly|ing)\b|(?:also|now|still|currently|often|located|known|home|part)\b)"
                      r"[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}\s+of\s+(?:the\s+)?[A-Z]")


_DIRECTION_WORDS = {f"{d}{e}" for d in ("north", "south", "east", "west", "central", "northeast", "northwest",
                                        "southeast", "southwest") for e in ("", "ern")}
# a sentence's opening adverbial or conjunction left on the subject ("Because of this Ashgabat has ...")
_OPENER = {"because", "but", "since", "in", "on", "at", "after", "before", "during", "when", "while", "although",
           "though", "if", "as", "situated", "located", "unlike", "despite", "with", "for", "from", "by",
           "originally", "however", "today", "also", "and", "or", "so", "yet", "then", "thus", "hence", "via"}


def stands_for_no_name(label: str) -> bool:
    """Is a label a pronoun, a bare determiner, or a phrase one opens ("It", "The", "Its
    administrative center", "This woreda", "One of their mounds")? It names nothing by itself:
    as a node it would join every passage that writes it."""
    words = label.lower().split()
    return bool(words) and (label.lower() in _PRONOUN or words[0] in _PRONOUN - {"a", "an", "the"}
                            or (len(words) > 1 and words[0] in {"one", "some", "many", "each", "all", "most", "both"}
                                and words[1] == "of"))


def _reads_as_relation(subj_raw: str, pred: str, obj: str) -> bool:
    """Does ``subject <predicate> object`` read as the predicate's relation? Not when the
    predicate is written capitalised inside a name ("All You Need Is Love"), or when a copula ("is",
    "was": the "is a" family) is followed by what is no noun phrase: a participle, an adverb,
    a direction ("is located on", "is followed by", "is currently", "is west of": "Eckelson is
    west of Sanborn" is no "is a")."""
    if pred[:1].isupper() and subj_raw.strip() and not CJK.search(pred):
        return False
    if pred.lower().strip() in _COPULAS:
        first = obj.split()[0] if obj.split() else ""
        return bool(first) and (first.lower() in {"a", "an", "the"} or first[:1].isupper() or bool(CJK.match(first))
                                or bool(_ROLE_OF.match(obj)) or bool(re.match(r"[a-z]+://", first)))
    return True


def _objects(pred: str, obj: str) -> list[str]:
    """The objects a lexicon split's tail lists, up to where an adverbial or a clause starts
    ("..., after the English Wikipedia", "..., which ...", "..., named after ..."), a colon,
    or an unclosed parenthesis; the asides in parentheses left out. After an "is a" whose
    first object names a place or a work in an "of" ("county seat of Ford County, Kansas,
    United States", "sister publication of Adweek, Billboard"), the names that follow are that
    place's or that work's list, not further things the subject is: only the first is kept."""
    obj = re.split(r"\s*:(?=\s|$)", re.sub(r"\s*\([^()]*\)", "", obj))[0]
    obj = obj.split("(")[0]
    out: list[str] = []
    for part in _split_list(obj):
        # a verb's own preposition may open its first object ("added to the National Register")
        if _CLAUSE_WORD.match(part) or (out and re.match(r"(?:in|on|at|into|to)\b", part)):
            break
        out.append(part)
    if len(out) > 1 and _lexicon().resolve(pred.strip()).base == _lexicon().resolve("is a").base \
            and re.search(r"\s(?:of|in)\s+(?:the\s+)?[\"“]?[A-Z]", out[0]):
        out = out[:1]
    return out


def parse_sentence(sentence: str, mode: str) -> dict[str, Any] | None:
    s = _strip_end(sentence)
    mods: list[dict[str, str]] = []
    m = re.match(r"(?i)according to (?:the )?(.+?),\s*(.+)$", s) or re.match(r"根据(.+?)[，,]\s*(.+)$", s)
    if m:
        mods.append({"slot": "source", "node": _clean_label(m.group(1))})
        s = m.group(2)
    pm = _predicates(False).search(s)
    if pm is None:
        return None
    if pm.group(0).lower() in {"is", "are", "was", "were"}:  # "X is connected to Y": the relation after the copula
        after = _predicates(False).match(s, pm.end() + len(s[pm.end():]) - len(s[pm.end():].lstrip()))
        if after is not None and after.group(0).lower() not in {"is", "are", "was", "were"}:
            pm = after
    subj_raw, pred, obj_raw = s[:pm.start()], s[pm.start():pm.end()], s[pm.end():]
    # subject: asides in parentheses ("X (born 1964) is ...") and trailing auxiliaries / modals go;
    # modals are kept as modality in detail mode
    words = re.sub(r"\s*[(（][^()（）]*[)）]", "", subj_raw).split()
    while words and words[-1].lower() in AUX | MODALS:
        w = words.pop()
        if w.lower() in MODALS:
            mods.append({"slot": "modality", "literal": w.lower()})
    subj = " ".join(words)
    for aux in sorted(set(CJK_AUX) | {m for m in MODALS if CJK.search(m)}, key=len, reverse=True):
        if subj.endswith(aux):
            if aux in MODALS:
                mods.append({"slot": "modality", "literal": aux})
            subj = subj[: -len(aux)]
    subj = _clean_label(subj)
    # objects: trailing source / year
    obj = obj_raw.strip()
    m = re.search(r"(?i),?\s+according to (?:the )?(.+)$", obj)
    if m:
        mods.append({"slot": "source", "node": _clean_label(m.group(1))})
        obj = obj[: m.start()]
    m = re.search(r"(?i)\s+in ((?:1[89]|20)\d\d)$", obj) or re.search(r"[于在]((?:1[89]|20)\d\d)年$", obj)
    if m:
        mods.append({"slot": "year", "literal": m.group(1)})
        obj = obj[: m.start()]
    if pred == "是" and obj.endswith("的"):
        return None  # 是…的 is emphasis, not "is a"
    if not _reads_as_relation(s[:pm.start()], pred, obj):
        return None
    args = []
    for part in _objects(pred, obj):
        label = _clean_label(part)
        if not label:
            continue
        if _words(label) >= 8:  # the extraction check refuses a copied clause of 8+ words
            return None
        args.append({"literal": label} if QUANTITY.match(label) else {"node": label})
    if subj in {"这", "那", "它", "他", "她", "我们", "他们", "这些", "那些"} or subj.lower() in _PRONOUN:
        return None
    if re.search(r"\s(?:is|are|was|were)\s", f" {subj} "):  # a verb of its own: "Nature Physics was first"
        return None
    if not subj or not args or _words(subj) > 6 or re.search(r"[,，;；:：]", subj):
        return None
    unit: dict[str, Any] = {"subject": subj, "predicate": pred.strip(), "args": args, "mods": []}
    if mode == "detail":
        unit["mods"] = mods
    return unit


# --- encyclopaedic shapes ----------------------------------------------------------------------

_NAME = r"[A-Z0-9\"'“][^,;:()]*?"
_KIN = ("wife|husband|son|daughter|father|mother|brother|sister|widow|widower|spouse|child|grandson|"
        "granddaughter|grandfather|grandmother|nephew|niece|cousin|uncle|aunt|stepson|stepdaughter|consort")
_TITLES = re.compile(r"^(?:(?:the )?(?:king|queen|emperor|empress|prince|princess|president|pharaoh|sultan|tsar|"
                     r"duke|duchess|count|countess|lord|lady|pope|saint|st\.?|sir|chief|general)\s+)+", re.I)
_BY_VERBS = ("directed|written|produced|composed|performed|sung|recorded|created|developed|designed|published|"
             "founded|owned|released|illustrated|edited|narrated|hosted|played|built|invented|co-written|"
             "co-directed|co-produced|authored|painted|sculpted|distributed|operated|manufactured|organized|"
             "organised|sponsored|commissioned|presented|starring|initiated|led|conceived|coined|discovered|"
             "formed|established|translated|arranged|adapted")
_COPULA = r"\s+(?:is|was|are|were|has been|had been)\s+"
_KIND = r"(?:an?|the)\s+(?P<kind>[^,;:()]*?)"
# "X is a 1952 American film noir directed by Y", "X was a song written and recorded by Y"
# (also "an extended play, independently released by Y", "a novel that was published in 1944 by Y")
_WHEN = r"(?:\s+(?:in|on)\s+(?:[\w,]+\s+){0,2}?\d{4})?"
_KIND_BY = re.compile(rf"^(?P<x>{_NAME}){_COPULA}{_KIND}\s*,?\s+(?:(?:that|which)\s+(?:was|were|is)\s+)?(?:[a-z]+ly\s+)?"
                      rf"(?P<verb>(?:{_BY_VERBS})(?:\s+and\s+(?:{_BY_VERBS}))?)(?:\s+[a-z]+ly)?{_WHEN}\s+by\s+(?P<y>.+)$")
# "... directed by Y and written by Z", "..., first released in April 1957 by W": each verb its own makers
_NEXT_BY = re.compile(rf"(?:,\s*|\s+)(?:and\s+)?(?:was\s+|were\s+)?(?:first\s+|later\s+|originally\s+|also\s+)?"
                      rf"(?P<verb>{_BY_VERBS}){_WHEN}\s+by\s+")
# "X is a song by Y", "X is a novel by Y"
_NOUN_BY = re.compile(rf"^(?P<x>{_NAME}){_COPULA}{_KIND}\s+by\s+(?P<y>.+)$")
# "X is the seventh studio album of Filipino rap artist Y": a work "of" its maker
_WORKS = ("album|single|song|film|novel|book|EP|episode|opera|play|poem|painting|symphony|musical|mixtape|"
          "soundtrack|game|series|sitcom|comic|manga|sculpture|ballet|cantata|concerto|sonata")
# what a "<noun> by Y" names the maker of ("a live EP by Iron Maiden"); not "an attempt by", "a process by"
_BY_NOUNS = (f"{_WORKS}|ballad|cycle|track|anthem|hymn|suite|work|piece|composition|collection|memoir|biography|essay|"
             "story|documentary|comedy|drama|thriller|show|programme|program|recording|remix|duet|cover|oratorio|"
             "mass|requiem|march|waltz|overture|rhapsody|study|portrait|statue|mural|fresco|photograph|installation|"
             "novella|anthology|trilogy|sequel|magazine|journal|newspaper|cartoon|speech|lecture|letter|report|"
             "treatise|libretto|screenplay|script|record|LP|release|compilation|video|music video|sketch|drawing|"
             "print|engraving|etching|tapestry|building|design|poster|typeface|novelette|serial|miniseries|project|map|"
             "advertisement|campaign|model|translation|adaptation|edition|font|opera|production|staging")
_WORK_OF = re.compile(rf"^(?P<x>{_NAME}){_COPULA}(?:the|an?)\s+(?P<kind>[^,;:()]*?\b(?:{_WORKS}))\s+of\s+(?P<y>.+)$")
# "X is a record label based in Y, Z, which was founded by A and B"
_BASED = re.compile(rf"^(?P<x>{_NAME}){_COPULA}{_KIND}\s+(?:based|headquartered)\s+in\s+(?P<y>.+)$")
_FOUNDED = re.compile(r",?\s+(?:which|that|and)\s+(?:was|were|is|has been)\s+(?P<verb>founded|formed|established|"
                      r"created|started|owned)\s+by\s+(?P<y>.+)$")
# "X is/was the wife of (king) Y", "X was the eldest son of Y"
_KIN_OF = re.compile(rf"^(?P<x>{_NAME}){_COPULA}(?:the|an?)\s+(?:[a-z]+\s+)??(?P<kin>{_KIN})\s+of\s+(?P<y>.+)$", re.I)
# "X is/was Y's wife"
_KIN_POSS = re.compile(rf"^(?P<x>{_NAME}){_COPULA}(?P<y>{_NAME})['’]s?\s+(?:[a-z]+\s+)??(?P<kin>{_KIN})$")
# "..., X, the wife of Y, ..." / "X, son of king Y, ...": an appositive anywhere in the sentence
_KIN_APPOS = re.compile(rf"(?P<x>(?:[A-Z][\w.'’-]*\s+)*[A-Z][\w.'’-]*),\s+(?:the\s+)?(?:[a-z]+\s+)??"
                        rf"(?P<kin>{_KIN})\s+of\s+(?P<y>[^,;:()]+?)\s*(?:,|;|\(|$)")
# "X is a village in the Hiran region of Somalia", "X is a town located in Y"
_IN_PLACE = re.compile(rf"^(?P<x>{_NAME}){_COPULA}(?:an?|the)\s+(?:[\w-]+\s+){{0,4}}?(?:village|town|city|municipality|"
                       rf"commune|suburb|district|county|province|region|neighbourhood|neighborhood|hamlet|island|"
                       rf"river|lake|mountain|parish|settlement|community|locality|state|capital)"
                       rf"(?:\s+(?:located|situated|lying))?\s+(?:in|of|on)\s+(?P<y>.+)$")
# "Abraham Van Helsing is a fictional character from the 1897 gothic horror novel "Dracula""
_CHARACTER = re.compile(rf"^(?P<x>{_NAME}){_COPULA}(?:an?|the)\s+(?P<kind>(?:[\w-]+\s+){{0,3}}?character)\s+"
                        rf"(?:from|in|of)\s+(?P<y>.+)$")
# "X is a registered historic building in Atwater, Ohio", "X is a Local Government Area in Katsina
# State, Nigeria", "X is a secondary school (grades 9-12) located in the city of Greenfield, Indiana":
# things that stand somewhere, "in" only (no preposition among the words before the noun)
_SITES = ("building|house|church|chapel|school|college|university|site|area|museum|station|airport|park|bridge|"
          "stadium|arena|castle|palace|fort|temple|cathedral|monastery|abbey|mosque|synagogue|dam|reservoir|"
          "forest|valley|hill|bay|beach|creek|stream|canal|borough|township|ward|quarter|place|hospital|hotel|"
          "library|theatre|theater|cemetery|farm|mansion|lighthouse|mall|square|street|road|neighbourhood|"
          "neighborhood|prison|tower|monument|memorial|zoo|garden|gardens|reserve|peninsula|desert|glacier|"
          "volcano|waterfall|falls|plantation|mill|mine|port|harbour|harbor|headland|archipelago")
_SITE_IN = re.compile(rf"^(?P<x>{_NAME}){_COPULA}(?:an?|the)\s+(?P<kind>(?:(?!(?:in|of|at|on|for|from|by|to|with|"
                      rf"and|that|which)\b)[\w'’-]+\s+){{0,5}}?(?i:{_SITES}))(?:\s+(?:located|situated|lying))?"
                      rf"\s+in\s+(?P<y>.+)$")
# "X is a tributary of the Limpopo River in Beitbridge District and Gwanda District, Zimbabwe"
_TRIBUTARY = re.compile(rf"^(?P<x>{_NAME}){_COPULA}(?:an?|the)\s+(?:[a-z-]+\s+){{0,2}}?(?:tributary|distributary)\s+"
                        r"of\s+(?:the\s+)?(?P<r>[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*)*)(?:\s+(?:in|within)\s+(?P<y>.+))?$")
# "X is a former football goalkeeper for Chelsea, the St. Louis Stars ...", "X is an American former
# outfielder in Major League Baseball who played for the Houston Astros"
_PLAYER = ("player|footballer|goalkeeper|goaltender|defender|midfielder|forward|striker|winger|outfielder|"
           "infielder|pitcher|catcher|shortstop|quarterback|linebacker|cricketer|batsman|bowler|fullback")
_PLAYS_FOR = re.compile(rf"^(?P<x>{_NAME}){_COPULA}(?:an?|the)\s+(?P<kind>[^;:()]*?\b(?:{_PLAYER}))"
                        r"(?:\s+(?:in|of)\s+(?:the\s+)?[A-Z][^;:(),]*?)?(?:,?\s+who\s+(?:has\s+)?(?:played|plays)"
                        r"(?:\s+as\s+an?\s+[a-z]+)?)?\s+for\s+(?P<y>.+)$")
# "X is a Mexican surgeon politician from the National Action Party"
_PARTY = re.compile(rf"^(?P<x>{_NAME}){_COPULA}(?:an?|the)\s+[^;:()]*?\b(?:politician|member|leader|candidate|senator|"
                    r"representative|deputy|legislator|activist)\s+(?:from|of|for)\s+(?:the\s+)?"
                    r"(?P<y>(?:[A-Z][\w'’-]*\s+){1,5}Party)\b")
# "X was a battle that occurred on October 25, 1864, in Kansas", "X took place between ... 1984, in
# Thessaloniki, Greece", "X is an event that is scheduled to take place from 4 to 20 February 2022, in Beijing"
_EVENT = re.compile(rf"^(?P<x>{_NAME})(?:{_COPULA}(?:an?|the)\s+[^;:()]*?\s+(?:that|which)\s+(?:was|is|were)?\s*|\s+)"
                    r"(?:occurred|took place|was held|were held|is held|is scheduled to take place|was fought)\b(?P<rest>.*)$")
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
# "X is located in Y, Z": the places it is in; "X is (located) three miles (5 km) east of Y, in Z, W":
# where it lies near, and the places the rest says it is in
_LOCATED_IN = re.compile(rf"^(?P<x>{_NAME}){_COPULA}(?:located|situated|lying)\s+(?:in|within)\s+(?P<y>.+)$")
_DIRECTION_OF = re.compile(rf"^(?P<x>{_NAME}){_COPULA}(?:located\s+|situated\s+)?(?:about\s+|approximately\s+|some\s+)?"
                           r"(?:[\w.,-]+\s+(?:nautical\s+)?(?:miles?|mi|km|kilometres?|kilometers?)\s+(?:\([^()]*\)\s+)?)?"
                           r"(?:north|south|east|west|northeast|northwest|southeast|southwest)(?:ern)?\s+of\s+(?:the\s+)?"
                           r"(?P<y>.+)$")
# "X (born 6 March 1982 in Windhoek, South-West Africa) is ...", "X was born in 1962 in Y, Z"
_BORN = re.compile(rf"^(?P<x>{_NAME})\s*(?:\((?:[^()]*?;\s*)?born\s+|{_COPULA}born\s+)(?:[^()]*?\s)?in\s+"
                   rf"(?P<y>(?!\d)[^()]+?)(?:\)|$)")
# the places an "in" list names ("a community in the Canadian province of Nova Scotia, located in the
# Lunenburg Municipal District in Lunenburg County": four), up to where it says what the place is
# near, along or beside ("on the shore of the LaHave River", "18 miles south of Des Moines"):
# the first place after that is where it lies near
_PLACES = 5
_NEAR = re.compile(r"(?<!\bthe),?\s+(?:located\s+|situated\s+|lying\s+)?(?:along|beside|atop|near|between|upstream from|"
                   r"downstream from|across the river from|at the (?:entrance to|mouth of|foot of|confluence of)|"
                   r"on the (?:\w+\s+)?(?:shores?|banks?|coast|edge) of|on the (?=(?:[A-Z][\w'’-]*\s+){1,3}(?:River|Lake|Sea|Bay|Ocean|Creek|Canal|Gulf|Strait|Channel)\b)|(?:about\s+)?(?:\d[\d.,]*\s*(?:miles?|mi|km|"
                   r"kilometres?|kilometers?)\s+)?(?:north|south|east|west|northeast|northwest|southeast|southwest)(?:ern)?"
                   r"\s+of)\b")
_CAPS = re.compile(r"(?:[A-Z][\w.'’-]*)(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][\w.'’-]*)*")
# an object ends where a clause or a list of places and dates starts
_OBJECT_END = re.compile(r"\s*(?:,|;|\(|\s+(?:and|who|which|that|in|on|at|from|for|with|about|after|"
                         r"starring|featuring|released|based)\s+)")


def _object(text: str) -> str:
    """The first object of a tail ("Don Medford and starring Oliver Reed, Candice Bergen" ->
    "Don Medford"), its title words ("king") dropped so it is named as other sentences name it."""
    cut = _OBJECT_END.search(text)
    obj = _clean_label(text[:cut.start()] if cut else text)
    if m := re.search(r"(?:^|\s)(?i:leader|president|chairman|premier|minister|king|queen|emperor|empress|prince|"
                      r"princess|duke|general|senator|governor|pharaoh|sultan|tsar)\s+(?P<n>(?:[A-Z][\w.'’-]*\s+)*"
                      r"[A-Z][\w.'’-]*)$", obj):
        return m.group("n")  # "former North Korean Supreme Leader Kim Jong-il" -> Kim Jong-il
    return _TITLES.sub("", obj).strip()


def _kind(text: str) -> str:
    """What a thing is, without the clause a lazy match leaves on it ("basketball player who
    was", "locomotive which was", "leading sport in Israel and is", "comedy film made", "nature
    preserve owned and"): a relative or a second verb ends it, then a trailing participle,
    adverb or conjunction goes."""
    k = re.split(r"\s+(?:who|which|that|whose|to be|and is|and was|and has)\b", _clean_label(text))[0]
    while (t := re.sub(r"\s+(?:[a-z]+ed|[a-z]+ly|made|built|run|known|and|or|also|then)$", "", k)) != k and t:
        k = t
    return k


def _persons(text: str) -> list[str]:
    """The names a "by" tail lists ("Y and Z", "Y, Z and W"), up to where a clause starts
    ("Y writing as Z", "Y to produce ..."); a part that is no name ("one of its stars") is
    left out."""
    cut = re.search(r"\s*(?:;|\(|,\s+(?=[a-z])|\s+(?:and\s+)?(?:who|which|that|in|on|at|from|for|with|about|"
                    r"after|starring|featuring|released|based|writing\s+as|under|as|to\s+[a-z]+)\s+)", text)
    head = text[:cut.start()] if cut else text
    names = []
    for part in (_clean_label(p) for p in _split_list(head) if p.strip()):
        n = re.sub(r"(?:\s+(?!(?:of|de|the|von|van|da|di|du|del|der|y)\b)[a-z][\w-]*)+$", "", part)
        if n != part and len(n.split()) == 1:
            continue  # "German artist" / "American singer-songwriter": a description, no name
        names.append(_TITLES.sub("", _described(n)).strip())
    names = [n for n in names if re.search(r"[A-Z]", n)]
    return [n for n in names if n[:1].isupper() or n[:1].isdigit()][:4]


def _by_chain(verb: str, tail: str) -> list[tuple[str, list[str]]]:
    """Each verb of a "by" tail with its makers: "Steven Spielberg and written by Robert Rodat"
    after "directed" -> directed: Steven Spielberg; written: Robert Rodat (not two directors)."""
    out, cur = [], verb
    while (m := _NEXT_BY.search(tail)) is not None:
        out.append((cur, _persons(tail[:m.start()])))
        cur, tail = m.group("verb"), tail[m.end():]
    out.append((cur, _persons(tail)))
    return out


def _described(label: str) -> str:
    """A name written after its description keeps the name ("Filipino rap artist Francis
    Magalona" -> Francis Magalona, "Stone Sour frontman Corey Taylor" -> Corey Taylor);
    a label ending in a common word is kept whole ("Ottoman admiral")."""
    m = re.search(r"(?:^|\s)(?!(?:of|de|du|des|la|le|von|van|der|den|da|di|del|y|and|the)\s)[a-z][\w-]*\s+"
                  r"(?P<name>(?:[A-Z][\w.'’-]*\s+)*[A-Z][\w.'’-]*)$", label)
    return m.group("name") if m else label


def _places(x: str, tail: str, add: Any) -> None:
    """``x [located in]`` the places an "in" tail lists, up to a clause or to where it says
    what the place is near, and ``x [located near]`` the first place after that (no month is a
    place: "(re)opened in November 2006")."""

    def place(p: str) -> bool:
        return (p.lower() != "the" and len(p.strip(".")) > 1 and not re.fullmatch(_MONTHS, p.split()[0])
                and not re.fullmatch(r"[A-Z][a-z]+(?:ish|ese|ian)", p))

    y = re.split(rf"\s*[;(]|\.(?=[A-Z][a-z]+\s)|\s+(?:and|which|that|with|including)\s+[a-z]|\s+(?:as|during|for|to|when|"
                 rf"after|before|under|until|since|where|dating|listed)\s|\s+(?:{_BY_VERBS})\s+by\s|\s+[a-z]+ing\s|"
                 rf",?\s+(?:an?\s+)?(?:left\s+|right\s+)?tributary\b|,\s+(?!located|situated)[a-z]+ed\s", tail)[0]
    near = _NEAR.search(y)
    inside = y[:near.start()] if near else y
    add(x, "located in", [p for p in _CAPS.findall(inside) if place(p)][:_PLACES])
    if near:
        add(x, "located near", [p for p in _CAPS.findall(y[near.end():]) if place(p)][:1])


# the aside a title entity's name is followed by before its verb: "X, also known as Y, is ...",
# "X, situated in New Delhi, is ...", "X, organized by FIDE and ..., took place ..."
_ASIDE = re.compile(rf"^(?P<x>{_NAME}),\s+(?P<aside>(?:also|originally|officially|commonly|formerly|sometimes|"
                    r"better|often|now|published|released|first|organi[sz]ed|situated|located|based|founded|"
                    r"established|built|nicknamed|known|or)\b[^;:]*?),\s+(?=(?:is|was|are|were|has been|had been|"
                    r"took place|occurred|lies)\b)")
_ASIDE_BY = re.compile(rf"^(?:first\s+)?(?P<verb>organi[sz]ed|founded|established|built|published|released){_WHEN}\s+by\s+(?P<y>.+)$")
_LIFE_END = re.compile(r"\d{3,4}\s*(?:,\s*|\s+in\s+)(?P<place>[A-Z][^()]*)$")
# a person's years and places, "X (15 March 1834, Wrocław – 5 April 1868, Prague)", "X (born March 12,
# 1909, St Louis, Missouri, died October 8, 1973, Los Angeles, California)"
_LIFE = re.compile(rf"^(?P<x>{_NAME})\s*\((?P<life>[^()]*\d{{3,4}}[^()]*)\)")


def _life(x: str, life: str, add: Any) -> None:
    """``x [born in]`` and ``x [died in]`` the places a parenthesis of years gives after each
    year ("1838 or 1839 in Dresden, Saxony – September 23, 1898 in Silverton, Colorado"); a
    parenthesis with no dash and no "born" ("(2010, Columbia Pictures)") gives nothing."""
    parts = re.split(r"\s*[–—]\s*|\s+-\s+|(?<=\d)-\s*(?=\d)|[,;]\s*died\s+", life, maxsplit=1)
    born = re.match(r"^\s*born\s+(?!in\s)(.*)$", parts[0])
    if len(parts) < 2 and not born:
        return
    for pred, part in (("born in", born.group(1) if born else parts[0]), ("died in", parts[1] if len(parts) > 1 else "")):
        if (m := _LIFE_END.search(part.strip())) is not None:
            add(x, pred, [p for p in _CAPS.findall(re.split(r"\s+(?:on|and)\s+", m.group("place"))[0])
                          if not re.fullmatch(_MONTHS, p.split()[0])][:3])


def _is_name(x: str) -> bool:
    """Does a subject read as a name ("Bubye River", "26th Chess Olympiad"), not a common noun
    ("The events", "the site")? The newer shapes give units of names only."""
    words = _clean_label(x).split()
    joining = {"of", "the", "de", "du", "des", "la", "le", "von", "van", "der", "den", "da", "di", "del", "y", "a",
               "in", "and", "or", "on", "for", "at", "an", "es", "el", "&"}
    return bool(words) and (words[0][:1].isupper() or words[0][:1].isdigit()) and \
        all(w[:1].isupper() or w[:1].isdigit() or w in joining or not w[:1].isalpha() for w in words)


def _lead(s: str, add: Any) -> str:
    """The sentence with the asides after its opening name taken out (a parenthesis, a dash
    before "is", ", also known as Y,"), so the shapes below see "X is ..."; the asides' own
    facts go to ``add``: the years' places (:func:`_life`), ``X [also known as] Y``, ``X
    [located in]`` where it is "situated in", ``X [organized by] Y``."""
    if (m := _LIFE.match(s)) and _is_name(m.group("x")):
        _life(m.group("x").strip(), m.group("life"), add)
    while (t := re.sub(r"\s*\([^()]*\)", "", s)) != s:
        s = t
    s = re.sub(rf"^(?P<x>{_NAME})\s+[-–—]\s+(?=(?:is|was)\s)", r"\g<x> ", s)
    if (m := _ASIDE.match(s)) and _is_name(m.group("x")):
        x, aside = m.group("x"), m.group("aside")
        for k in re.finditer(r"\bknown\s+as\s+(?P<y>[^,]+)", aside):
            names = re.split(r"\s+(?:and|or)\s+(?=the\s|as\s|[\"“])", k.group("y"))
            names = [_clean_label(re.split(r"\s+(?!(?:of|de|the|von|van|da|di|del|y)\b)[a-z]", n)[0]) for n in names]
            add(x, "also known as", [n for n in names if n[:1].isupper()])
        if p := re.match(r"^(?:situated|located|based)\s+in\s+(?P<y>.+)$", aside):
            _places(x, p.group("y"), add)
        if b := _ASIDE_BY.match(aside):
            add(x, f"{b.group('verb')} by", _persons(b.group("y")))
        s = x + " " + s[m.end():]
    return s


def encyclopaedic(sentence: str) -> list[dict[str, Any]]:
    """Units of the appositive and possessive shapes of encyclopaedic text, title entity
    first; none when the sentence has no such shape.

    >>> [(u["subject"], u["predicate"], [a["node"] for a in u["args"]])
    ...  for u in encyclopaedic("The Hunting Party is a 1971 American western film directed by Don Medford.")]
    [('Hunting Party', 'directed by', ['Don Medford']), ('Hunting Party', 'is a', ['1971 American western film'])]
    >>> [a["node"] for a in encyclopaedic("Privilege is a 1967 film directed by Peter Watkins and starring Paul Jones.")[0]["args"]]
    ['Peter Watkins']
    >>> [(u["predicate"], [a["node"] for a in u["args"]]) for u in encyclopaedic("Hello Love is a song by Jim Reeves.")]
    [('song by', ['Jim Reeves']), ('is a', ['song'])]
    >>> [(u["subject"], u["predicate"], u["args"][0]["node"]) for u in encyclopaedic("Maria was the wife of King Ferdinand I.")]
    [('Maria', 'wife of', 'Ferdinand I')]
    >>> [(u["subject"], u["predicate"], u["args"][0]["node"]) for u in encyclopaedic("Edward was Henry's eldest son.")]
    [('Edward', 'son of', 'Henry')]
    >>> [(u["subject"], u["predicate"], u["args"][0]["node"])
    ...  for u in encyclopaedic("In 1502, Arthur, son of king Henry VII, died at Ludlow.")]
    [('Arthur', 'son of', 'Henry VII')]
    >>> [(u["predicate"], [a["node"] for a in u["args"]]) for u in encyclopaedic("Ceelmakoile is a town in the central Hiran region of Somalia.")]
    [('located in', ['Hiran', 'Somalia'])]
    >>> [(u["subject"], u["predicate"], [a["node"] for a in u["args"]])
    ...  for u in encyclopaedic("Gisvi Isaque (born 6 March 1982 in Windhoek, South-West Africa) is a footballer.")]
    [('Gisvi Isaque', 'born in', ['Windhoek', 'South-West Africa'])]
    >>> encyclopaedic("Smoking causes lung cancer.")
    []
    """
    whole = _strip_end(sentence)
    out: list[dict[str, Any]] = []

    def add(x: str, pred: str, ys: list[str]) -> None:
        x = _clean_label(re.sub(r"\s+(?:or|and)$", "", x.strip()))
        args = [{"node": y} for y in ys if y and _words(y) <= 8 and y.lower() != x.lower()]
        if x and args and _words(x) <= 8 and x.lower() not in {"it", "he", "she", "they", "this", "that"}:
            out.append({"subject": x, "predicate": pred, "args": args, "mods": []})

    s = _lead(whole, add)

    if m := _KIND_BY.match(s):
        kind, _, maker = _kind(m.group("kind")).partition(" by ")  # "a studio album by Alisa released by Z"
        if maker and (p := re.search(r"\s(?P<v>[a-z]+ed|made|built|written|sung|run)\b", kind)):
            add(m.group("x"), f"{p.group('v')} by", _persons(maker))  # "a vodka distilled in ... France by Y"
            kind = _kind(kind[:p.start()])
        elif maker and kind.split() and re.fullmatch(_BY_NOUNS, kind.split()[-1]):
            add(m.group("x"), f"{kind.split()[-1]} by", _persons(maker))
        for verb, makers in _by_chain(m.group("verb").split()[0], m.group("y")):
            add(m.group("x"), f"{verb} by", makers)
        add(m.group("x"), "is a", [kind])
    elif m := _CHARACTER.match(s):
        work = re.split(r"\s+by\s+", re.sub(r"[\"“”]", "", m.group("y")))[0]  # "the ... stories by Doyle"
        add(m.group("x"), "character in", [_clean_label(_described(_object(work)))])
        add(m.group("x"), "is a", [_kind(m.group("kind"))])
    elif m := _NOUN_BY.match(s):
        kind = _clean_label(m.group("kind"))
        noun = kind.split()[-1] if kind else ""
        if re.fullmatch(r"[a-z]+(?:ed|en)|made|built|run|held|led|won|sung|written|broadcast|drawn|shown|sold|taught",
                        noun) and len(kind.split()) > 1:
            add(m.group("x"), f"{noun} by", _persons(m.group("y")))  # "a captured steamship acquired by Y"
            add(m.group("x"), "is a", [_kind(kind.rsplit(" ", 1)[0])])
        elif noun and re.fullmatch(_BY_NOUNS, noun):
            add(m.group("x"), f"{noun} by", _persons(m.group("y")))
            add(m.group("x"), "is a", [_kind(kind)])
    elif m := _WORK_OF.match(s):
        kind = _kind(m.group("kind"))
        add(m.group("x"), f"{kind.split()[-1].lower()} by", _persons(m.group("y")))
        add(m.group("x"), "is a", [kind])
    elif m := _BASED.match(s):
        y = m.group("y")
        founded = _FOUNDED.search(y)
        places = _CAPS.findall(re.split(r"\s*[;(]|\s+(?:and|which|that|with)\s+[a-z]", y[:founded.start()] if founded else y)[0])
        add(m.group("x"), "based in", places[:2])
        add(m.group("x"), "is a", [_kind(m.group("kind"))])
        if founded:
            add(m.group("x"), f"{founded.group('verb')} by", _persons(founded.group("y")))
    elif m := _KIN_OF.match(s):
        add(m.group("x"), f"{m.group('kin').lower()} of", [_object(m.group("y"))])
    elif m := _KIN_POSS.match(s):
        add(m.group("x"), f"{m.group('kin').lower()} of", [_object(m.group("y"))])
    elif (m := _IN_PLACE.match(s) or _LOCATED_IN.match(s)) and _clean_label(m.group("x"))[:1].isupper():
        y = m.group("y")  # "a city on the Fulda River" / "on the shore of Lake Ontario": near; "on the east coast of": in
        on = s[:m.start("y")].endswith(" on ") and not re.match(r"the\s+(?:\w+\s+)?(?:coast|edge)\s+of\s", y)
        _places(m.group("x"), " on " + y if on else y, add)
    elif (m := _TRIBUTARY.match(s)) and _is_name(m.group("x")):
        add(m.group("x"), "tributary of", [m.group("r")])
        if m.group("y"):
            _places(m.group("x"), m.group("y"), add)
    elif (m := _PLAYS_FOR.match(s)) and _is_name(m.group("x")):
        teams = re.split(r"\s*[;(]|\s+(?:of|in|from|since|until|during|between|before|after|where|when|who|as)\s+", m.group("y"))[0]
        past = "was" in m.group(0).split()[:8] or "former" in m.group("kind") or re.search(r"\bplayed\s", m.group(0))
        add(m.group("x"), "played for" if past else "plays for",
            [n for n in (_clean_label(p) for p in _split_list(teams)) if n[:1].isupper()][:5])
    elif (m := _PARTY.match(s)) and _is_name(m.group("x")):
        add(m.group("x"), "member of", [m.group("y").strip()])
    elif (m := _SITE_IN.match(s)) and _is_name(m.group("x")):
        _places(m.group("x"), m.group("y"), add)
        if out:
            add(m.group("x"), "is a", [_kind(m.group("kind"))])
        if b := re.search(rf"\s(?P<verb>{_BY_VERBS})\s+by\s+(?P<y>.+)$", m.group("y")):
            add(m.group("x"), f"{b.group('verb')} by", _persons(b.group("y")))
    elif (m := _EVENT.match(s)) and _is_name(m.group("x")) and (w := re.match(rf",?(?:\s+(?:on|between|from|during|in)\s+[^;]*?\d{{4}})?,?\s+in\s+"
                                                   rf"(?!(?:{_MONTHS})\b|\d)(?=(?:the\s+)?[A-Z])", m.group("rest"))):
        _places(m.group("x"), m.group("rest")[w.end():], add)
        for u in out:
            if u["predicate"] == "located in":
                u["predicate"] = "took place in"
    elif m := _DIRECTION_OF.match(s):
        near, _, rest = m.group("y").partition(",")
        add(m.group("x"), "located near", [p for p in _CAPS.findall(near) if p.lower() not in {"the"}][:1])
        if r := re.match(r"\s*(?:in|within)\s+(.+)$", rest):
            _places(m.group("x"), r.group(1), add)
    if not any(u["predicate"] == "born in" for u in out) and (m := _BORN.match(whole)):
        add(re.sub(r"\s*\(.*$", "", m.group("x")), "born in",
            [p for p in _CAPS.findall(re.split(r"\s+(?:on|and|to)\s+|,\s+(?:the|an?)\s+|,\s+[a-z]", m.group("y"))[0])
             if not re.fullmatch(_MONTHS, p.split()[0])][:3])
    for m in _KIN_APPOS.finditer(s):
        if not out:
            x = re.sub(r"^(?:In|On|At|By|After|Before|During)\s+\S+\s*", "", m.group("x")).strip()
            add(x.split(", ")[-1], f"{m.group('kin').lower()} of", [_object(m.group("y"))])
    return out


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.M)
_NAME_WORD = re.compile(r"^(?:[A-Z][\w'’.-]*|[A-Z]\.|\d[\w.-]*)$")


def title_name(title: str | None) -> list[str]:
    """The words of the name a title gives, if it is one: its words up to a comma or a
    parenthesis ("Harris W. Fawell", "The Green Years (film)" -> The Green Years, "West
    Chicago, Illinois" -> West Chicago), each capitalised but for a joining "of", "the", "de"
    ...; none for a heading that is no name ("Coffee and tea", "How to install")."""
    head = re.split(r"\s*[,(（:：]", (title or "").strip())[0]
    words = head.split()
    if not words or not _NAME_WORD.match(words[0]):
        return []
    joining = {"of", "the", "de", "du", "des", "la", "le", "von", "van", "der", "den", "da", "di", "del", "y", "a", "in"}
    return words if all(_NAME_WORD.match(w) or w in joining for w in words) else []


_HONORIFIC = re.compile(r"^(?:professor|prof\.?|doctor|dr\.?|sir|dame|lord|lady|mr\.?|mrs\.?|ms\.?)\s+", re.I)


def whole_name(label: str, name: list[str]) -> str:
    """The title's whole name for a label that is its last words standing for it ("Fawell",
    "Taylor" -> Harris W. Fawell, Corey Taylor), for the name after an honorific ("Professor
    Abraham Van Helsing"), or for "he" / "she" when the title is a name; else the label. Only when every word before the label's is a name word (never
    "Hungary" for "Kingdom of Hungary")."""
    if not name:
        return label
    if label.lower() in {"he", "she"} or _HONORIFIC.sub("", label).split() == name:
        return _clean_label(" ".join(name))
    words = label.split()
    k = len(words)
    if (0 < k < len(name) and words == name[-k:] and _NAME_WORD.match(words[0])
            and all(_NAME_WORD.match(w) for w in name[:-k])):
        return _clean_label(" ".join(name))
    return label


_ACRONYM = re.compile(r"(?P<name>(?:[A-Z][\w.'’&-]*\s+(?:(?:of|for|and|the|de|on|in|&)\s+)*)*[A-Z][\w.'’-]*)"
                      r"\s+\((?P<acr>[A-Z][A-Za-z0-9&.-]{1,9})\)")


def acronym(sentence: str) -> tuple[str, list[dict[str, Any]]]:
    """A name followed by its acronym in parentheses: the sentence without the parentheses (so
    the name can be its subject) and the unit ``{name} [also known as] {ACRONYM}``, when the
    acronym's capitals are the initials of the name's capitalised words (a word in capitals
    gives all its letters: "DC Extended Universe (DCEU)"; an article before the name dropped);
    else the sentence as it was and no unit.

    >>> acronym("The Washington Institute for Near East Policy (WINEP) is a think tank.")
    ('The Washington Institute for Near East Policy is a think tank.', [{'subject': 'Washington Institute for Near East Policy', 'predicate': 'also known as', 'args': [{'node': 'WINEP'}], 'mods': []}])
    >>> acronym("Paris (France) is a city."), acronym("Gisvi Isaque (born 1982) is a footballer.")[1]
    (('Paris (France) is a city.', []), [])
    """
    for m in _ACRONYM.finditer(sentence):
        acr = "".join(c for c in m.group("acr") if c.isupper())
        words = m.group("name").split()
        while words:
            initials = "".join(w if w.isupper() and w.isalpha() else w[0] for w in words if w[0].isupper())
            if words[0][:1].isupper() and initials == acr and len(acr) >= 2:
                full = re.sub(r"['’]s$", "", _clean_label(" ".join(words)))
                unit = {"subject": full, "predicate": "also known as", "args": [{"node": m.group("acr")}], "mods": []}
                return sentence[:m.end("name")] + sentence[m.end():], [unit]
            words = words[1:]
    return sentence, []


def extract(text: str, mode: str, title: str | None = None) -> dict[str, Any]:
    """Units of a text; ``title`` (the section heading a chunk starts under; the text's first
    heading when not given) names the entity the text is about, whose surname or "he" / "she"
    / "it" a sentence's subject may be (:func:`whole_name`; "Hence it is connected to Y")."""
    if mode == "query":
        return extract_query(text)
    if title is None and (h := _HEADING.search(text)):
        title = h.group(1)
    name = title_name(title)
    units, seen = [], set()
    prev = ""
    for sent in sentences(text):
        # the rest of a sentence the splitter cut, going on in lower case: after "U.S." or a
        # line that breaks mid-phrase ("... New Hampshire and northern" / "northern part of ...")
        fragment = sent[:1].islower() and bool(
            re.search(r"(?:^|\s)(?:[A-Z]\.){2,}$", prev)
            or (prev.split() and prev.split()[-1].lower() in EN_STOP | _DIRECTION_WORDS))
        prev = sent
        # the next word in lower case, whatever re.I: "It Follows is a film" names the title, no pronoun
        if name and (m := re.match(r"(?:(?:Hence|Thus|Today|Now|Later|Also|However),?\s+)?(?:he|she|it)\s+(?=(?-i:[a-z]))",
                                   sent, re.I)):
            sent = " ".join(name) + " " + sent[m.end():]
        sent, alias = acronym(sent)
        found = [] if fragment else encyclopaedic(sent)
        if not found and not fragment:
            unit = parse_sentence(sent, mode)
            found = [unit] if unit is not None else []
        for unit in found + alias:
            unit["subject"] = whole_name(unit["subject"], name)
            unit["args"] = [a for a in unit["args"] if not stands_for_no_name(a.get("node") or "")]
            named = unit["subject"].split() == _clean_label(" ".join(name)).split()
            opener = unit["subject"].split()[0].lower() in _OPENER if unit["subject"].split() else False
            if not unit["args"] or ((stands_for_no_name(unit["subject"]) or opener or "(" in unit["subject"])
                                    and not named):
                continue  # "Its seat", "This woreda": named elsewhere (a title "Their Eyes ..." names itself)
            key = json.dumps(unit, sort_keys=True, ensure_ascii=False)
            if key not in seen:  # summary and detail both merge a fact stated twice
                seen.add(key)
                units.append(unit)
    return {"units": units, "mentions": []}


def extract_query(question: str) -> dict[str, Any]:
    q = _strip_end(question)
    preds = [(m.start(), m.end(), m.group(0)) for m in _predicates(True).finditer(q)]
    cut = [False] * len(q)
    for a, b, _ in preds:
        for i in range(a, b):
            cut[i] = True
    for m in LATIN_WORD.finditer(q):
        if m.group(0).lower() in EN_STOP | EN_VERBS:
            for i in range(m.start(), m.end()):
                cut[i] = True
    for m in re.finditer(r"[\u3400-\u9fff\uf900-\ufaff]+", q):
        run, base, i = m.group(0), m.start(), 0
        while i < len(run):
            hit = next((w for w in CJK_STOP if run.startswith(w, i)), None)
            if hit:
                for j in range(i, i + len(hit)):
                    cut[base + j] = True
                i += len(hit)
            else:
                i += 1
    for i, ch in enumerate(q):
        if not (ch.isalnum() or ch in " -+#.'" or CJK.match(ch)):
            cut[i] = True
    nodes: list[str] = []
    i = 0
    while i < len(q):
        if cut[i]:
            i += 1
            continue
        j = i
        while j < len(q) and not cut[j]:
            j += 1
        label = _clean_label(q[i:j].strip(" .'-"))
        if label and normalise_label(label) not in {normalise_label(n) for n in nodes}:
            nodes.append(label)
        i = j
    units = []
    if nodes:
        for _, _, p in preds:
            args = [{"node": n} for n in nodes[1:2]] or [{"literal": "?"}]
            units.append({"subject": nodes[0], "predicate": p, "args": args, "mods": []})
    return {"units": units, "mentions": nodes}


# --- drill-down judge -----------------------------------------------------------------------

def _tokens(text: str) -> set[str]:
    out = {w.lower() for w in LATIN_WORD.findall(text) if len(w) >= 3 and w.lower() not in EN_STOP}
    out |= set(re.findall(r"[\u3400-\u9fff\uf900-\ufaff]{2,}", text))
    return out


_HEAD = re.compile(r"^\{(?P<subject>.*?)\}\s*\[(?P<predicate>.*?)\]\s*(?P<rest>.*)$")


def _read_unit(text: str) -> dict[str, Any]:
    """What a unit as the prompts show it says (no escapes: a reader's text, not the parser's):
    its node ids (``{...}`` labels), its predicate's family, and its words without brackets."""
    first, *rows = text.splitlines()
    m = _HEAD.match(first.strip())
    labels = re.findall(r"\{([^{}]*)\}", text)
    words = re.sub(r"[{}\[\]]", "", first)
    for row in rows:
        r = re.match(r"\s*\(\)\[(.*?)\]\s*(.*)$", row)
        if r:
            words += f"; {r.group(1)}: {re.sub(r'^[({]|[)}]$', '', r.group(2).strip())}"
    from kgservice.ids import node_id

    return {"nodes": [node_id(x) for x in labels if x.strip()],
            "family": _lexicon().resolve(m.group("predicate")).base if m else None, "text": words}


def drilldown(p: dict[str, Any]) -> dict[str, Any]:
    key_nodes = p.get("key_nodes") or []
    key_fams = {_lexicon().resolve(k if isinstance(k, str) else k.get("predicate", "")).base
                for k in p.get("key_predicates") or []}
    expanded = set(p.get("expanded") or [])
    for u in p.get("units") or []:  # nodes and family read off the unit's text
        u.update({k: v for k, v in _read_unit(u.get("unit", "")).items() if k != "text"})
    matches_of = {k.get("id") or normalise_label(k.get("label", "")): set(k.get("matches") or []) for k in key_nodes}
    all_matches = set().union(*matches_of.values()) if matches_of else set()
    key_tok = _tokens(" ".join(str(k.get("label", "")) for k in key_nodes if k.get("matches")))
    qtok = _tokens(p.get("question", "")) - key_tok
    scored = []
    for pos, u in enumerate(p.get("units") or []):
        nodes = set(u.get("nodes") or [])
        keys_touched = sum(1 for m in matches_of.values() if nodes & m)
        touch_exp = bool(nodes & expanded)
        fam = u.get("family") in key_fams
        overlap = min(3, len(_tokens(u.get("unit", "")) & qtok))
        score = 3 * keys_touched + 2 * fam + overlap + touch_exp
        if (keys_touched or touch_exp) and score >= 3:
            scored.append((-score, pos, u))
    scored.sort(key=lambda t: (t[0], t[1]))
    top = -scored[0][0] if scored else 0
    relevant = [u for s, _, u in scored if -s >= min(top, 5)][:10]
    present = {k: m for k, m in matches_of.items() if m}
    covered = {k for k, m in present.items() if any(set(u.get("nodes") or []) & m for u in relevant)}
    fam_ok = not key_fams or any(u.get("family") in key_fams for u in relevant)
    enough = bool(relevant) and bool(present) and covered == set(present) and fam_ok
    next_seeds: list[str] = []
    if not enough:
        for u in relevant:
            for n in u.get("nodes") or []:
                if n not in expanded and not n.startswith("lit:") and n not in next_seeds:
                    next_seeds.append(n)
    units = p.get("units") or []
    drift = bool(units) and not any(set(u.get("nodes") or []) & (all_matches | expanded) for u in units)
    missing = sorted(set(present) - covered)
    reason = (f"{len(relevant)} relevant; key nodes covered: {sorted(covered) or 'none'}"
              + (f"; not covered: {missing}" if missing else "")
              + ("" if fam_ok else "; no unit of a key predicate's family"))
    return {
        "relevant": [u["id"] for u in relevant],
        "enough": enough,
        "next_seeds": next_seeds[:5],
        "mode": "spread" if p.get("mode") == "directed" else "directed",
        "drift": drift,
        "rephrase": None,
        "reason": reason,
    }


# --- answer ------------------------------------------------------------------------------------

def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def answer(p: dict[str, Any]) -> dict[str, Any]:
    from kgservice.notation import parse_units

    sentences_out, short = [], ""
    for item in (p.get("units") or [])[:8]:
        try:
            unit = parse_units(item["unit"], _lexicon())[0]
        except Exception:  # a value with a bracket inside (prompts carry no escapes): its words as shown
            sentences_out.append({"text": _read_unit(item["unit"])["text"].strip() + ".", "cites": [item["id"]]})
            continue
        args = [a.node or a.literal or "" for a in unit.args]
        text = f"{unit.subject} {unit.predicate} {_join(args)}"
        short = short or (_join(args) if not sentences_out else "")
        mods = [f"{m.slot}: {m.value.node or m.value.literal or '#' + str(m.value.unit)}" for m in unit.mods]
        if mods:
            text += f" ({'; '.join(mods)})"
        sentences_out.append({"text": text + ".", "cites": [item["id"]]})
    return {"found": bool(sentences_out), "answer": short, "sentences": sentences_out}


def answer_reply(out: dict[str, Any]) -> str:
    """The answer written as the answer prompt asks (kgservice.answer.reply): the short answer
    on line 1 (the first sentence's words when no unit gave one), then one sentence per line
    ending with its unit ids in brackets; ``NOT FOUND`` when nothing was selected."""
    if not out["found"]:
        return "NOT FOUND"
    sentences = out["sentences"]
    short = out["answer"] or sentences[0]["text"].rstrip(".")
    return "\n".join([short] + [f"{s['text']} [{', '.join(s['cites'])}]" for s in sentences])


# --- same concept ------------------------------------------------------------------------------

def _concept_key(label: str) -> tuple[str, tuple[str, ...]]:
    s = ARTICLE.sub("", normalise_label(label))
    words = [re.sub(r"(?<=[a-z]{3})(?:es|s)$", "", w) for w in re.split(r"[\s\-_/.,]+", s) if w]
    return "".join(words), tuple(re.findall(r"\d+", s))


def same_concept(new: str, existing: str) -> dict[str, Any]:
    a, b = _concept_key(new), _concept_key(existing)
    same = a == b
    return {"same": same, "reason": "same words up to case, punctuation and plural" if same
            else ("different numbers" if a[1] != b[1] else "different words")}

"""The grounded answer (DESIGN §4.5, invariant 3): only from the hit units, citing their ids.

:func:`validate_answer` is the gate every answer passes before it is shown. Its purpose is
facts, not vocabulary: no name, number, date or claim that the cited units do not state.
It rejects an answer when

* a sentence cites no unit, or cites an id that is not among the hit units;
* a sentence states a number that none of its cited units contains;
* a sentence writes a name (a capitalised word inside the sentence: a person, place, title
  or month) that none of its cited units contains;
* a sentence negates ("not", "never", "no") where none of its cited units does;
* any other word of a sentence (3+ letters) is in none of its cited units — their labels,
  the labels of their ≡ classes, their predicate and the other members of its family, their
  literals and slots, compared by base form ("used" meets "uses") — nor in the question, nor
  among the connecting words every sentence needs (:data:`CONNECTING`: pronouns,
  prepositions, conjunctions, comparison and conclusion words); or two adjacent CJK
  characters (or more than a third of them) are in none of the cited units nor the question.

So a model may answer in the question's words ("How much snow does Seattle *get*"), with
"his" and "because", and may state the comparison the cited units support ("so A brought
*more* snow than B"); it may not add a name, a number, a negation or a descriptive word
("diabetes", "particularly") the units do not have. The answer prompt states this rule in
the same words. It is a lexical heuristic, not a proof of entailment: it catches an added
name, place or claim, not a subtle rewording. A rejected answer is sent back to the model
once per repair attempt; if it stays invalid the result is "not in the graph", with the
reasons kept for ``--trace``. Answers (valid or not) are cached in the ``decision`` cache.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kgservice.answer.reply import REPAIR_ASK, AnswerOut, CitedSentence, parse_reply  # noqa: F401 (the reply's shape, re-exported)
from kgservice.caches import decision_key
from kgservice.drilldown.collect import unit_dep_nodes
from kgservice.ids import normalise_label
from kgservice.llm import LLM, LLMOutputError, load_prompt
from kgservice.model import Unit

if TYPE_CHECKING:
    from kgservice.caches import Caches
    from kgservice.families import Lexicon
    from kgservice.stores.base import GraphStore

PROMPT_FILE = "answer_v4.md"
NOT_IN_GRAPH_EN = "The graph has no information that answers this question."
NOT_IN_GRAPH_ZH = "图中没有能回答这个问题的信息。"
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_NUM = re.compile(r"\d+(?:[.,]\d+)*")
_LATIN = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ][A-Za-zÀ-ÖØ-öø-ÿ'’\-]*")
# words every sentence may use whatever the units say: they connect, refer, compare or
# conclude, and state no fact of their own (negations are judged apart: NEGATIONS)
CONNECTING = frozenset("""
a an the this that these those there here it its itself they them their theirs themselves he him his himself
she her hers herself we us our you your one ones who whom whose which what whatever where when why how
of in on at to for from by with about into onto upon over under between among through during before after
since until till toward towards via per within across along around against beside besides beyond near
and or but so yet because as than then while whereas although though also too both either each all any some
other another such same different respectively together
is are was were be been being am do does did done have has had having can will would
more most less least fewer greater larger smaller higher lower bigger longer shorter earlier later older younger
newer heavier lighter compared comparison difference than therefore thus hence
according include includes including included known called named graph unit units fact facts states stated
state says say given listed mentioned
""".split())
NEGATIONS = frozenset("not no never none nor neither cannot without".split())
CJK_GLUE = set("的了是在和与及或也都会而并其中这那些个种有被由从对于以为等所以因为比更多少")


@dataclass
class Answer:
    found: bool
    text: str
    sentences: list[dict[str, Any]] = field(default_factory=list)
    cited: list[str] = field(default_factory=list)
    short_answer: str = ""  # the model's short answer (AnswerOut.answer), "" when not found
    rejected: list[str] = field(default_factory=list)  # validator problems, when the answer was refused
    cached: bool = False
    llm_called: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def not_in_graph(question: str) -> str:
    return NOT_IN_GRAPH_ZH if _CJK.search(question) else NOT_IN_GRAPH_EN


# --- vocabulary of a unit -----------------------------------------------------------------------

def unit_vocabulary(unit: Unit, store: Any, lexicon: Any) -> list[str]:
    """Every string a sentence citing this unit may draw its words from."""
    from kgservice.notation.serializer import format_unit

    out = [format_unit(unit, with_id=False), unit.predicate, unit.family]
    out += [m for m, info in lexicon.members.items() if info.base == unit.family]
    nodes = [n for n in unit_dep_nodes(unit) if not n.startswith("lit:")]
    syn = {s for n in nodes for s in store.synonym_class(n)}
    out += [n.label for n in store.get_nodes(sorted(syn))]
    return out


def _runs(positions: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for i in positions:
        if out and out[-1][-1] == i - 1:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def _words(text: str) -> list[str]:
    return _LATIN.findall(text)


def sentence_problems(text: str, cited_vocab: Sequence[str], question: str = "",
                      languages: tuple[str, ...] = ("en",)) -> list[str]:
    """What a sentence states that its cited units (``cited_vocab``: their strings, from
    :func:`unit_vocabulary`) do not; the question's own words are allowed (see the module doc).

    >>> vocab = ["{January 1950} [brought] (57.2 in of snow)", "{1916 snow event} [left] (29 in of snow)"]
    >>> sentence_problems("So January 1950 brought more snow than the 1916 snow event.", vocab)
    []
    >>> sentence_problems("January 1950 brought 60 in of snow in Seattle, particularly in the hills.", vocab)
    ["number '60' is in none of the cited units", "name 'Seattle' is in none of the cited units", 'words not in the cited units: particularly, hills']
    >>> sentence_problems("January 1950 did not bring 57.2 in of snow.", vocab)
    ['the cited units state no negation: not']
    """
    from kgservice.families.lemma import lemma, lemma_words

    blob = normalise_label(" \n ".join(cited_vocab))
    known = set(lemma_words(re.sub(r"[^\w\s'’-]", " ", blob), languages))
    asked = set(lemma_words(re.sub(r"[^\w\s'’-]", " ", normalise_label(question)), languages))
    problems = []
    for num in _NUM.findall(text):
        if num not in blob:
            problems.append(f"number {num!r} is in none of the cited units")
    names: list[str] = []
    negations: list[str] = []
    missing: list[str] = []
    for i, raw in enumerate(_words(text)):
        w = raw.lower().strip("'’-")
        in_units = w in blob or lemma(w, languages) in known
        if w in NEGATIONS or w.endswith("n't"):
            if not any(n in known for n in NEGATIONS) and "n't" not in blob:
                negations.append(w)
            continue
        if i > 0 and raw[:1].isupper():
            if not in_units and raw not in names:
                names.append(raw)
            continue
        if len(w) < 3 or w in CONNECTING or in_units or w in asked or lemma(w, languages) in asked:
            continue
        if w not in missing:
            missing.append(w)
    if names:
        problems.append(f"name{'s' if len(names) > 1 else ''} {', '.join(repr(n) for n in names[:4])} "
                        f"{'are' if len(names) > 1 else 'is'} in none of the cited units")
    if negations:
        problems.append(f"the cited units state no negation: {', '.join(negations[:3])}")
    if missing:
        problems.append(f"words not in the cited units: {', '.join(missing[:6])}")
    cjk = [i for i, ch in enumerate(text) if _CJK.match(ch) and ch not in CJK_GLUE]
    if cjk:
        covered: set[int] = set()
        q = normalise_label(question)
        pieces = {v for v in (normalise_label(x) for x in cited_vocab) if _CJK.search(v)}
        pieces |= set(re.findall(r"[\u3400-\u9fff\uf900-\ufaff]{2,}", blob))
        pieces |= {q[k:k + 2] for k in range(len(q) - 1) if _CJK.match(q[k]) and _CJK.match(q[k + 1])}
        for piece in pieces:
            for m in re.finditer(re.escape(piece), text):
                covered.update(range(m.start(), m.end()))
        uncovered = [i for i in cjk if i not in covered]
        runs = [r for r in _runs(uncovered) if len(r) >= 2]
        if runs or len(uncovered) * 3 > len(cjk):
            problems.append("text not in the cited units: " + "、".join(text[r[0]:r[-1] + 1] for r in runs[:4] or [uncovered]))
    return problems


def validate_answer(out: AnswerOut, units: dict[str, Unit], vocab: dict[str, list[str]], question: str = "",
                    languages: tuple[str, ...] = ("en",)) -> list[str]:
    """Problems that make an answer unacceptable (empty list = valid)."""
    if not out.found:
        return []
    if not out.sentences:
        return ["found is true but there are no sentences"]
    problems = []
    for i, s in enumerate(out.sentences, start=1):
        if not s.text.strip():
            problems.append(f"sentence {i} is empty")
            continue
        if not s.cites:
            problems.append(f"sentence {i} cites no unit")
            continue
        stray = [c for c in s.cites if c not in units]
        if stray:
            problems.append(f"sentence {i} cites {', '.join(stray)}, not among the hit units")
            continue
        for p in sentence_problems(s.text, [v for c in s.cites for v in vocab[c]], question, languages):
            problems.append(f"sentence {i}: {p}")
    if problems or not out.answer.strip():  # a reply without the short answer keeps its sentences
        return problems
    cited = dict.fromkeys(c for s in out.sentences for c in s.cites)
    for p in sentence_problems(out.answer, [v for c in cited for v in vocab[c]], question, languages):
        problems.append(f"answer: {p}")
    return problems


# --- the answer step ----------------------------------------------------------------------------

def answer_messages(question: str, units: Sequence[Unit]) -> list[dict[str, str]]:
    from kgservice.notation.serializer import format_unit

    payload = {"task": "answer", "question": question,
               "units": [{"id": u.id, "unit": format_unit(u, with_id=False, escape=False)} for u in units]}
    return [
        {"role": "system", "content": load_prompt("kgservice.answer", PROMPT_FILE).render()},
        {"role": "user", "content": json.dumps(payload, ensure_ascii=False)},
    ]


def render(out: AnswerOut) -> str:
    return " ".join(f"{s.text.strip()} [{', '.join(s.cites)}]" for s in out.sentences)


def chain_sentence(chain: Sequence[Unit]) -> dict[str, Any]:
    """One sentence stating a causal chain hop by hop in the units' own words (subject,
    predicate, object), citing every unit of it: grounded by construction."""
    hops = [" ".join(x for x in (u.subject, u.predicate, u.args[0].node or u.args[0].literal or "") if x)
            for u in chain]
    return {"text": "; ".join(hops) + ".", "cites": [u.id for u in chain]}


def cite_chains(answer: Answer, chains: Sequence[Sequence[Unit]]) -> Answer:
    """A found answer to a causal question cites each chain it rests on down to the end: a
    chain some of whose units no sentence cites is stated in one more sentence of its own."""
    if not answer.found:
        return answer
    for chain in chains:
        cited = {c for s in answer.sentences for c in s["cites"]}
        if chain and not {u.id for u in chain} <= cited:
            s = chain_sentence(chain)
            answer.sentences.append(s)
            answer.text = f"{answer.text} {s['text']} [{', '.join(s['cites'])}]".strip()
    answer.cited = sorted({c for s in answer.sentences for c in s["cites"]})
    return answer


def grounded_answer(store: GraphStore, lexicon: Lexicon, llm: LLM, caches: Caches, question: str, units: Sequence[Unit],
                    key_ids: Sequence[str], on_stream: Callable[[str, dict[str, Any]], None] | None = None) -> Answer:
    """The checked answer. With ``on_stream`` a model call streams its reply, and the callback
    gets the events of :mod:`kgservice.answer.streaming` (text and citations as they arrive, the
    check's verdict on each attempt) before this returns; a cached answer streams nothing."""
    if not units:
        return Answer(found=False, text=not_in_graph(question), rejected=[])
    messages = answer_messages(question, units)
    key = decision_key("answer", llm.model, messages)
    hit = caches.get("decision", key)
    if hit is not None:
        return Answer(**{**hit, "cached": True, "llm_called": False})
    by_id = {u.id: u for u in units}
    vocab = {u.id: unit_vocabulary(u, store, lexicon) for u in units}

    def validate(out: AnswerOut) -> None:
        problems = validate_answer(out, by_id, vocab, question, lexicon.languages)
        if problems:
            raise ValueError("; ".join(problems))

    try:
        sink = None
        if on_stream is not None:
            from kgservice.answer.streaming import AnswerStream

            sink = AnswerStream(on_stream, by_id)
        out = llm.complete_json(messages, AnswerOut, "answer", validate=validate, stream=sink, parse=parse_reply,
                                repair_prompt=REPAIR_ASK)
        if out.found:
            result = Answer(found=True, text=render(out), sentences=[s.model_dump() for s in out.sentences],
                            cited=sorted({c for s in out.sentences for c in s.cites}), short_answer=out.answer.strip())
        else:
            result = Answer(found=False, text=not_in_graph(question))
    except LLMOutputError as exc:
        result = Answer(found=False, text=not_in_graph(question), rejected=exc.problems)
    result.llm_called = True
    deps = {n for u in units for n in unit_dep_nodes(u)} | set(key_ids)
    caches.put("decision", key, {k: v for k, v in result.to_dict().items() if k not in ("cached", "llm_called")}, deps)
    return result

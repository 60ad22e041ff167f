"""The answer when no model is configured: the top grounded units, as sentences, cited.

Out of the box the model is ``kgoffline/scripted``, which has no recorded response for a new
question. Failing every first question with "no recorded response" tells a newcomer nothing
about the graph; answering from the no-LLM retrieval (:mod:`kgservice.expansion.retrieve`)
does, and says plainly that no model wrote the answer and how to configure one. Only the
unconfigured default falls back: a model chosen explicitly (``--llm``, ``KG_LLM_MODEL``, the
config file) keeps failing loudly, so a missing recording is never hidden.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kgservice.answer.floor import NONE, NOTHING_RULE, TOP, VECTOR, Relevance, about_first, listed, relevance
from kgservice.answer.shape import Candidate, Match, family_words, rank
from kgservice.config import DEFAULT_LLM_MODEL
from kgservice.lifecycle.model import cut_lines
from kgservice.answer.graph_words import concept_lacking, known_in

if TYPE_CHECKING:
    from kgservice.model import Unit
    from kgservice.parts import Parts
    from kgservice.stores.base import GraphStore

NO_MODEL_NOTE = (f"no model configured ({DEFAULT_LLM_MODEL} has no recorded response): this answer lists the "
                 "best-matching units of the graph, not a model's answer; set KG_LLM_MODEL (or --llm, or "
                 "llm_model in the config file) to a litellm model, or kgoffline/rules for the offline stand-in")
TOP_UNITS = 3
# at most this many units of the named things' narrower kinds join the answer's pool (:func:`narrower_units`)
NARROWER_UNITS = 40
# at most this many units of the types the named things belong to count as theirs (:func:`inherited_units`)
INHERITED_UNITS = 40
BELONGS_TO = "belongs_to"  # the family class of is a / subclass of / part of (Unit.kind)
_MARKUP = re.compile(r"[{}\[\]]")
# when the floor's stranger-word rule leaves a question to the answer (:func:`kgservice.answer.floor.stranger_read`):
# the no-model answer's narrowings — none: on the MuSiQue graphs and the rules case they were
# not designed on they saved no answerable question and let an off-topic one through on the demo
# and the spaCy graph (scripts/eval/RESULTS.md, "One stranger-word signal") — and the cosine above
# which the odd word's vector meets a node (the model-backed ask's entry threshold, AskParams)
NO_MODEL_NARROWING: frozenset[str] = frozenset()
ODD_WORD_THRESHOLD = 0.6


def unit_sentence(unit: Unit) -> str:
    """A unit's subject, predicate and arguments, without the notation's brackets, as one sentence."""
    from kgservice.notation.serializer import format_value

    args = [" ".join(_MARKUP.sub(" ", format_value(a)).split()) for a in unit.args]
    listed = args[0] if len(args) == 1 else ", ".join(args[:-1]) + " and " + args[-1]
    text = f"{unit.subject} {unit.predicate} {listed}"
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def retrieval_only_units(retrieve: Callable[[str], Any], store: GraphStore, question: str,
                         top: int = TOP_UNITS) -> list[Unit]:
    """The ``top`` best units of the no-LLM retrieval (``retrieve``: the question to a ranking
    with ``units``, ``entry`` and ``lexical``), in the retrieval's order, read from ``store``;
    none when the question names no node and none of its words is in a unit.

    The retrieval always ranks something (the question's nearest node vectors), so "What is
    the capital of France?" over a graph about Python got three Monty Python units as its
    answer and "not in the graph" never showed. A vector neighbour alone is too weak to claim
    the question is about the graph — the rule the drill-down's entry fallback keeps
    (:func:`kgservice.pipeline.asking.entry_fallback`). The no-model answer ranks further
    (:func:`answer_units`)."""
    found = retrieve(question)
    if not found.entry.named and not found.lexical:
        return []
    ranked = [u.id for u in found.units[:top]]
    by_id = {u.id: u for u in store.get_units(ranked)}
    return [by_id[i] for i in ranked if i in by_id]


@dataclass
class AnswerUnits:
    """The no-model answer: its units, the answering ones first, and how strongly the graph
    answers the question (:class:`kgservice.answer.floor.Relevance`; ``units`` is empty when
    it is "none")."""

    units: list[Unit]
    relevance: Relevance
    matches: list[Match] = field(default_factory=list)
    candidates: dict[str, Candidate] = field(default_factory=dict)  # the ranked pool, by unit id


def odd_word_meets(parts: Parts, threshold: float = ODD_WORD_THRESHOLD) -> Callable[[str], bool]:
    """Does a word's vector meet a node's above ``threshold`` (the floor's ``VECTOR`` narrowing)?"""
    return lambda word: bool(parts.vectors.search(parts.embedder.embed([word])[0], top_k=1, threshold=threshold))


def answer_units(parts: Parts, question: str, top: int = TOP_UNITS, retrieval: Any = None,
                 judge: int = TOP, narrow: frozenset[str] = NO_MODEL_NARROWING,
                 threshold: float = ODD_WORD_THRESHOLD,
                 sources: Callable[[list[Unit]], Mapping[str, str]] | None = None) -> AnswerUnits:
    """The ``top`` units that best answer the question among the no-LLM retrieval's pool
    (:func:`kgservice.answer.shape.rank`), and the relevance floor's verdict on the ``judge``
    best (:func:`kgservice.answer.floor.relevance`), those it rests on first
    (:func:`kgservice.answer.floor.about_first`), less those that share nothing with the question
    (:func:`kgservice.answer.floor.listed`): none ("not in the graph") gives no units.

    The model-backed path reads the verdict before spending a call
    (:func:`kgservice.pipeline.asking.not_in_graph_before_call`: some of its rules, and the
    ``candidates`` it rests on). ``retrieval``: the default retrieval of ``question`` when the caller has it.
    ``narrow``, ``threshold``: when the stranger-word rule leaves the question to the answer
    (:func:`kgservice.answer.floor.stranger_read`; the model-backed path passes its own).
    ``sources``: the pool's units to the text each was extracted from, which breaks the
    ranking's ties (:func:`kgservice.answer.shape.by_source`); by default the lines of the
    documents stating them (:func:`unit_sources`)."""
    if retrieval is None:
        from kgservice.expansion.retrieve import retrieve

        retrieval = retrieve(parts, question)
    found = retrieval
    if not found.entry.named and not found.lexical:
        # nothing named, no word shared: only vector neighbours, too weak to claim the question
        # is about the graph (the rule of the drill-down's entry fallback)
        return AnswerUnits([], Relevance(NONE, (), "the question names nothing in the graph", NOTHING_RULE))
    units = parts.store.get_units([u.id for u in found.units])
    units += parts.store.get_units(narrower_units(parts.store, found.entry.named, {u.id for u in units}))
    inherited = inherited_units(parts.store, found.entry.named)
    have = {u.id for u in units}
    units += parts.store.get_units([uid for uid in inherited if uid not in have])
    source = sources(units) if sources is not None else unit_sources(parts.store, [u.id for u in units])
    cands, scores = candidates(parts, found, units, source, inherited), {u.id: u.score for u in found.units}
    cands.sort(key=lambda c: -scores.get(c.id, 0.0))
    by_cand = {c.id: c for c in cands}
    units_ix, labels = parts.lexical_units.index(), parts.entry_finder.index()
    # ranked and judged as the entry step read it: "olimpics" is the graph's *olympics* (read
    # once, by the retrieval's entry step; a caller's entry result without it is read here)
    question = found.entry.read or parts.entry_finder.read(question)
    ranked = rank(question, cands)
    rel = relevance(question, ranked, by_cand, known_in(units_ix),
                    lambda name: bool(concept_lacking(name, parts.store, units_ix, labels)[1]), top=judge,
                    narrow=narrow, meets=odd_word_meets(parts, threshold) if VECTOR in narrow else None)
    if not rel.found:
        return AnswerUnits([], rel, ranked, by_cand)
    ranked = about_first(ranked, rel, judge)
    by_id = {u.id: u for u in units}
    return AnswerUnits([by_id[m.id] for m in listed(ranked, top, rel.other_things)], rel, ranked, by_cand)


def narrower_units(store: GraphStore, named: list[str], have: set[str], limit: int = NARROWER_UNITS) -> list[str]:
    """The units about a narrower kind of a thing the question names (a derived node: *free-threaded
    CPython* [narrows] *CPython*) that the retrieval's pool lacks, at most ``limit``.

    A narrower kind is about the thing it narrows (the directed expansion lets it inherit its
    base's facts), but spreading does not walk the narrows edge, so its own units score only
    what their other nodes have: "Which build of CPython runs without the GIL, and in which
    version was it introduced?" ranked *free-threaded CPython [introduced in] Python 3.13*
    73rd, outside the pool of 40 the answer ranks. They join the pool below every retrieved unit;
    the answer-shaped ranking decides whether they answer."""
    out: list[str] = []
    for node in named:
        for derived in store.narrowed_by(node):
            ids = store.subject_mentions(derived)
            ends = store.superseded_end(ids) if ids else {}  # a superseded fact is no longer the kind's
            for uid in ids:
                if uid not in have and uid not in out and ends.get(uid, [uid]) == [uid]:
                    out.append(uid)
                    if len(out) >= limit:
                        return out
    return out


def inherited_units(store: GraphStore, named: list[str], limit: int = INHERITED_UNITS) -> dict[str, str]:
    """The units stating a fact of a type a thing the question names belongs to (its belongs-to
    ancestors, nearest first, and their synonyms; the named things' synonyms' too), at most ``limit``: unit id -> that type's node.

    DESIGN's belongs-to closure: facts on a super-class sink to its sub-classes and members
    (the directed expansion's "inherited from", :mod:`kgservice.expansion.directed`). The answer
    read them as facts about the type only: "What methods and operations does a list get from
    the types it belongs to?" ranked *mutable sequence type [has] append method* 11th, anchored
    on nothing the question names, below *list [is a] mutable sequence type* and two other units
    about *list* that name no method. These units count their type as the named thing
    (:attr:`kgservice.answer.shape.Candidate.inherited_sides`) and those the retrieval's pool
    lacks join it below every retrieved unit, as :func:`narrower_units` do; the answer-shaped
    ranking decides whether they answer. The walk is the store's closure (its depth bound);
    ``limit`` bounds how many facts one question inherits, as it bounds the narrower kinds', so
    a type many things belong to ("city", "film") lends at most that many. A fact a later unit
    superseded is not lent (the directed expansion reads supersession chains' ends too). A type the question
    names itself is not inherited from: its units are the question's own. The type's own
    belongs-to units are the closure's edges, not facts it carries (what *mutable sequence type
    [subclass of] sequence type* lends a list is the next type, whose facts the walk already
    reaches): counted as the named thing's, each step of the hierarchy outranked the facts it
    passes down (they meet "belongs" in the question as the asked relation), so they are left
    as they were ranked. In-sample: this exclusion was chosen on the demo question above;
    scripts/eval/RESULTS.md, "The belongs-to closure in the no-model answer", has both forms."""
    own = {m for node in named for m in store.synonym_class(node)}  # ≡ merge: a synonym is the thing itself
    depth: dict[str, int] = {}
    for node in sorted(own):
        for anc, d in store.belongs_to_ancestors(node).items():
            if anc not in own and d < depth.get(anc, d + 1):
                depth[anc] = d
    lent: dict[str, str] = {}  # unit id -> the type's node it is read under (the first, nearest)
    for anc in sorted(depth, key=lambda n: (depth[n], n)):
        for syn in store.synonym_class(anc):
            if syn not in own:
                for uid in store.subject_mentions(syn):
                    lent.setdefault(uid, syn)
    ids = list(lent)
    out: dict[str, str] = {}
    for i in range(0, len(ids), limit):  # a bounded batch at a time: two reads each, whatever the types
        batch = ids[i:i + limit]
        ends = store.superseded_end(batch)  # a superseded fact is no longer the type's
        for u in store.get_units([uid for uid in batch if ends.get(uid, [uid]) == [uid]]):
            if u.kind != BELONGS_TO:
                out[u.id] = lent[u.id]
                if len(out) >= limit:
                    return out
    return out


def unit_sources(store: GraphStore, ids: list[str]) -> dict[str, str]:
    """Each unit's source: the lines of every document stating it, as its
    :meth:`~kgservice.lifecycle.model.DocumentRecord.snippet` cuts them but whole (two store
    reads, a third for texts not yet split: :func:`kgservice.lifecycle.rows.source_documents`
    never reads the original files and unpacks a text once per version); none for a unit no
    document states or whose lines were not kept."""
    from kgservice.lifecycle.rows import source_documents

    stated = store.stated_by(ids)
    wanted = sorted({d for ds in stated.values() for d in ds})
    if not wanted:
        return {}
    docs, rows = source_documents(store, wanted)
    out: dict[str, str] = {}
    for uid, ds in stated.items():
        said: list[str] = []
        for doc_id in ds:
            d = docs.get(doc_id)
            lines = d.unit_lines.get(uid) if d is not None else None
            if d is None or not lines:
                continue
            said.append(cut_lines(rows.get(doc_id, ()), lines))
        if said:
            out[uid] = "\n".join(said)
    return out


def candidates(parts: Parts, found: Any, units: list[Unit], source: Mapping[str, str] | None = None,
               inherited: Mapping[str, str] | None = None) -> list[Candidate]:
    """The retrieval's pool as :class:`kgservice.answer.shape.Candidate`: each unit's sides
    (subject, node arguments, node modifiers), literals, predicate, family words, which sides
    are nodes the question names (the entry step's named nodes and their synonyms), which side
    is the type whose fact the unit states (``inherited``, unit id -> that type's node:
    :func:`inherited_units`), and its source text (``source``, by unit id: :func:`unit_sources`)."""
    store = parts.store
    named: set[str] = set()
    for n in found.entry.named:
        named.add(n)
        named.update(store.synonym_class(n))
    scores = {u.id: u.score for u in found.units}
    family = _family_words(parts.lexicon)
    out = []
    for u in units:
        values = list(u.args) + [m.value for m in u.mods]
        sides = [(u.subject_id, u.subject)] + [(v.node_ref, v.node) for v in values if v.node]
        lits = tuple(v.literal for v in values if v.literal)
        out.append(Candidate(u.id, tuple(label for _, label in sides), lits, u.predicate, family.get(u.family, ()),
                             frozenset(i for i, (nid, _) in enumerate(sides) if nid in named),
                             scores.get(u.id, 0.0), u.kind == "synonym", (source or {}).get(u.id, ""),
                             frozenset(i for i, (nid, _) in enumerate(sides)
                                       if inherited and nid == inherited.get(u.id) and nid not in named)))
    return out


def _family_words(lexicon: Any) -> dict[str, tuple[str, ...]]:
    """Each family's words, built once per lexicon: a process serving several workspaces holds one
    lexicon per knowledge base, and asks alternate between them, so one remembered lexicon was
    rebuilt on nearly every ask. Kept by ``id`` beside a weak reference, since a new lexicon can
    reuse a freed one's ``id`` (a Lexicon is an unhashable dataclass, so no weak-keyed dict)."""
    held = _FAMILIES.get(id(lexicon))
    if held is not None and held[0]() is lexicon:
        return held[1]
    if len(_FAMILIES) >= _FAMILIES_KEPT:
        _FAMILIES.clear()
    value = family_words(lexicon.members, _base_of)
    _FAMILIES[id(lexicon)] = (weakref.ref(lexicon), value)
    return value


def _base_of(info: Any) -> str:
    """A lexicon member's family base (:class:`kgservice.families.Lexicon`'s member info)."""
    return str(info.base)


_FAMILIES: dict[int, tuple[weakref.ref[Any], dict[str, tuple[str, ...]]]] = {}
_FAMILIES_KEPT = 256  # lexicons: far above the workspaces one process serves

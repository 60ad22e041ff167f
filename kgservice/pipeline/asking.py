"""The query pipeline of DESIGN §4: ``ask(parts, question)``.

1. key nodes — the question through the ingest extraction path (LLM, ``key_nodes`` cache);
2. vector entry — per key node, top-k over Qdrant above a cosine threshold (``topk`` cache);
   a key node that is already a node searches with its stored vector (one id, one vector);
3. + 4. expansion and drill-down rounds (:mod:`kgservice.drilldown`; ``activation`` and
   ``decision`` caches);
5. the grounded answer (:mod:`kgservice.answer`), or "not in the graph".

LLM calls happen only in steps 1, 4 and 5 (invariant 4); with every cache warm a repeated
question makes none (and does not even import litellm).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kgservice.config import DEFAULT_MAX_ROUNDS
from kgservice.errors import InvalidArgument
from kgservice.caches import ANY_INGEST, cache_key
from kgservice.drilldown import DrillParams, QueryState, drill_down
from kgservice.drilldown.loop import RoundRecord
from kgservice.expansion.spread import service_params
from kgservice.extraction.extract import KeyQuery, extract_key_query, extract_prompt
from kgservice.ids import normalise_label
from kgservice.llm import LLM
from kgservice.stores import causal

if TYPE_CHECKING:
    from kgservice.caches import Caches
    from kgservice.model import Unit
    from kgservice.parts import Parts


@dataclass
class AskParams:
    max_rounds: int = DEFAULT_MAX_ROUNDS
    max_units: int = 40
    top_k: int = 5
    threshold: float = 0.6  # cosine; the default embedder scores right vs wrong ≈ 0.77 vs 0.49
    spread_nodes: int = 8
    max_drifts: int = 1

    def __post_init__(self) -> None:
        # checked here, not only in DrillParams: without a model the drill-down never runs, and a
        # bad value must not pass silently there either
        for name, value, low, high in (("max_rounds", self.max_rounds, 1, 10), ("max_units", self.max_units, 1, 500)):
            if not low <= value <= high:
                raise InvalidArgument(f"{name} (--{name.replace('_', '-')}) must be {low}..{high}, got {value}")
        if self.top_k < 1:
            raise InvalidArgument(f"top_k (--top-k) must be at least 1, got {self.top_k}")


@dataclass
class AskResult:
    question: str
    found: bool
    answer: str
    sentences: list[dict[str, Any]]
    cited: list[str]
    hit_units: list[dict[str, str]]
    key_nodes: list[dict[str, Any]]
    key_predicates: list[dict[str, str]]
    entries: list[dict[str, Any]]
    rounds: list[dict[str, Any]]
    stop_reason: str
    rejected: list[str]
    llm: dict[str, Any]
    caches: dict[str, Any]
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    # the answer in a few words ("Eddie Vedder"), as the model wrote it beside its sentences:
    # what a gold answer is compared to; "" when not found or no model wrote one
    short_answer: str = ""
    # each cited unit's documents: {unit, doc, lines, snippet, ref ("doc:lines")} (kgservice.answer.sources)
    sources: list[dict[str, Any]] = field(default_factory=list)
    # the store's change-log version the answer reflects (at least); None when none was read
    as_of_version: int | None = None
    # True: a cached answer of an older store version (as_of_version), or a background refresh's
    # answer not yet kept whole, given to a server request without a bookmark while this server
    # catches up (docs/jobs-and-caches.md)
    stale: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --- step 1 -----------------------------------------------------------------------------------

def key_nodes_step(parts: Parts, llm: LLM, caches: Caches, question: str,
                   feedback: str | None = None) -> tuple[KeyQuery, dict[str, list[str]], bool]:
    """(key query, ≡ class of each key node that exists, from cache?)."""
    key = cache_key("key_nodes", normalise_label(question), feedback, extract_prompt().tag, llm.model)
    hit = caches.get("key_nodes", key)
    if hit is not None:
        return KeyQuery.from_dict(hit["key"]), {k: list(v) for k, v in hit["classes"].items()}, True
    kq = extract_key_query(llm, parts.lexicon, question, feedback=feedback)
    existing = {n.id for n in parts.store.get_nodes(kq.node_ids)}
    classes = {nid: parts.store.synonym_class(nid) for nid in kq.node_ids if nid in existing}
    deps = set(kq.node_ids) | {m for c in classes.values() for m in c}
    caches.put("key_nodes", key, {"key": kq.to_dict(), "classes": classes}, deps or {ANY_INGEST})
    return kq, classes, False


def reread_after_ingest(caches: Caches, question: str, llm: LLM, kq: KeyQuery, classes: dict[str, list[str]]) -> None:
    """A question answered "not in the graph" is read again after the next ingest, whatever it
    touched: its key nodes' entry (step 1) then also depends on :data:`ANY_INGEST`. Its other
    steps depend on the nodes they saw, and an ingest elsewhere may hold the answer under
    other words; a found answer keeps its narrower dependencies."""
    key = cache_key("key_nodes", normalise_label(question), None, extract_prompt().tag, llm.model)
    deps = caches.deps_of("key_nodes", key)
    if deps and ANY_INGEST not in deps:
        caches.put("key_nodes", key, {"key": kq.to_dict(), "classes": classes}, deps | {ANY_INGEST})


# --- step 2 -----------------------------------------------------------------------------------

def entry_step(parts: Parts, caches: Caches, kq: KeyQuery, top_k: int, threshold: float) -> list[dict[str, Any]]:
    out = []
    for n in kq.nodes:
        nid, label = n["id"], n["label"]
        key = cache_key("topk", nid, top_k, round(threshold, 4), parts.embedder.name, parts.settings.vector_collection)
        hits = caches.get("topk", key)
        cached = hits is not None
        if hits is None:
            stored = parts.vectors.get_vectors([nid])
            qvec = stored[nid] if nid in stored else parts.embedder.embed([label])[0]
            found = parts.vectors.search(qvec, top_k=top_k, threshold=threshold)
            alive = {x.id for x in parts.store.get_nodes([h[0] for h in found])}
            hits = [[h, round(float(s), 4)] for h, s in found if h in alive]
            bar = threshold if len(found) < top_k else max(threshold, float(found[-1][1]))
            caches.put("topk", key, hits, {nid} | {h for h, _ in hits}, qvec=qvec, bar=bar)
        out.append({"key": nid, "label": label, "hits": [(h, s) for h, s in hits], "cached": cached})
    return out


def build_state(kq: KeyQuery, classes: dict[str, list[str]], entries: list[dict[str, Any]]) -> QueryState:
    """Seeds: every entry hit, weighted by its cosine (a key node that is a node: 1.0).
    Matches (what "covering a key node" means): its ≡ class when the key node is a node —
    identity beats similarity — else its vector hits."""
    matches: dict[str, list[str]] = {}
    seeds: dict[str, float] = {}
    for e in entries:
        exact = e["key"] in classes
        m = set(classes.get(e["key"], []))
        if exact:
            seeds[e["key"]] = 1.0
        for h, s in e["hits"]:
            if not exact:
                m.add(h)
            seeds[h] = max(seeds.get(h, 0.0), float(s))
        matches[e["key"]] = sorted(m)
    return QueryState(key=kq, matches=matches, seeds=seeds)


def missing_key_entities(parts: Parts, kq: KeyQuery, classes: dict[str, list[str]]) -> list[str]:
    """Key nodes that name something the graph does not have although it has related
    concepts ("Python 4" when only "Python" is a node): the relevance floor's rule
    (:func:`kgservice.answer.floor.lacking`) on the concepts the model read. Answering from
    the related concepts would state their facts as this one's; the question is answered
    "not in the graph" instead, whatever else in it matches. One line per such key.
    "average annual snowfall" is no node, but a unit's predicate says exactly that, and the
    drill-down finds it."""
    from kgservice.answer.graph_words import concept_lacking

    out = []
    for n in kq.nodes:
        if n["id"] in classes:
            continue
        nodes, odd = concept_lacking(n["label"], parts.store, parts.lexical_units.index(), parts.entry_finder.index())
        if odd:
            out.append(f"{n['label']!r} is not in the graph: it has {', '.join(repr(x) for x in nodes[:3])}, "
                       f"but nothing that is {' '.join(odd)!r}")
    return out


def names_not_in_graph(parts: Parts, question: str) -> str | None:
    """The relevance floor's name rule on the question, before any call: a name the graph
    lacks ("What is the capital of Mars?") needs no model to refuse
    (:func:`kgservice.answer.graph_words.names_missing`, the rule of the no-model answer)."""
    from kgservice.answer.graph_words import names_missing

    gone = names_missing(question, parts.store, parts.lexical_units.index(), parts.entry_finder.index())
    return f"the graph has nothing about {', '.join(repr(g) for g in gone)}" if gone else None


def not_in_graph_before_call(parts: Parts, question: str, threshold: float = AskParams.threshold) -> str | None:
    """What the model-backed path refuses before its first call, with the reason: the floor's
    name rule (:func:`names_not_in_graph`), and its stranger-word verdict on the no-model
    answer's units (:func:`kgservice.answer.floor.stranger_word`: a question that writes no
    name, whose best units are only a partial match and that holds a word the graph never uses
    in any form) where a model could not read the question onto the graph either: "Who created
    the zorblatt?" over a graph whose node *creator* meets only "created".

    A model reads what the floor's words cannot, so the verdict is left to it when (both
    narrowings of :func:`kgservice.answer.floor.stranger_read`, the one signal the no-model answer
    reads with the narrowings it takes)

    * a unit the verdict rests on is about a node the question names (its anchor is an entry
      node of the question): the odd word may be how the question asks the relation ("What does
      smoking *provoke*?": the no-model answer lists *smoking causes lung cancer* and still says
      "not in the graph"; a model maps *provoke* to *causes*); or
    * the odd word meets a node's vector above the entry threshold (``threshold``, the ask's
      own), as the model's entry step would ("cigarettes" meets *smoking* at 0.82).

    Not the floor's other verdicts: "no unit is about a thing the question names" reads only
    the lexical retrieval's best units, and "the question names nothing in the graph" leaves out
    the vector entry: the model path answers questions both refuse ("What do cigarettes lead
    to?"). Measured in scripts/eval/RESULTS.md, "The model path's floor before the first call".
    The retrieval runs only when the question holds a word the graph never uses (most do not)."""
    from kgservice.answer.floor import NAMED, STRANGER_RULE, VECTOR, stranger_word
    from kgservice.answer.graph_words import known_in
    from kgservice.answer.retrieval_only import answer_units
    from kgservice.answer.shape import asked

    refused = names_not_in_graph(parts, question)
    if refused is not None:
        return refused
    if not stranger_word(asked(question), known_in(parts.lexical_units.index())):
        return None  # the verdict below cannot be the stranger-word one
    got = answer_units(parts, question, narrow=frozenset({NAMED, VECTOR}), threshold=threshold)
    return got.relevance.reason if got.relevance.rule == STRANGER_RULE else None


def entry_fallback(parts: Parts, question: str, kq: KeyQuery) -> QueryState | None:
    """When the key-node step found no key node at all: the no-LLM entry step
    (:mod:`kgservice.entry`) — nodes named in the question become the key nodes, and every
    entry node (named or vector hit) a seed weighted by specificity. None if nothing is named:
    a vector hit alone is too weak to claim the question is about the graph."""
    found = parts.entry_finder.find(question)
    named = [n for n in found.nodes if n.named is not None]
    if not named:
        return None
    key = KeyQuery(nodes=[{"label": n.label, "id": n.node} for n in named], predicates=kq.predicates)
    matches = {n.node: parts.store.synonym_class(n.node) for n in named}
    return QueryState(key=key, matches=matches, seeds=found.seeds)


# --- the whole query ------------------------------------------------------------------------------

CLEARED_NOTE = "the store changed without a cache invalidation (another process?): caches cleared"


def _front_key(question: str, trace: bool, params: AskParams, model: str | None) -> str:
    return cache_key("ask", question, trace, asdict(params), model)


def ask_from_front(parts: Parts, question: str, trace: bool = False, *, params: AskParams | None = None,
                   llm: LLM | None = None) -> AskResult | None:
    """The result :func:`ask` would return from the caches' in-memory front, if it can be
    had without waiting on I/O or a lock (see :meth:`Caches.front_peek`); else None. A server
    calls it on its event loop before handing an ``ask`` to a worker thread: a cached answer
    then costs no thread hop."""
    question = question.strip()
    if not question:
        return None
    params = params or AskParams()
    t0 = time.perf_counter()
    model = getattr(llm, "model", None) if llm is not None else parts.settings.llm_model
    key = _front_key(question, trace, params, model)
    front = parts.caches.front_peek(key)
    if front is None and causal.stale_allowed():
        got = parts.caches.stale_peek(key, _refresher(parts, key, question, trace, params, llm or parts.llm))
        if got is not None:
            return replace(got[0], stale=True, as_of_version=got[1], seconds=round(time.perf_counter() - t0, 3))
    return None if front is None else replace(front, seconds=round(time.perf_counter() - t0, 3))


def _refresher(parts: Parts, key: str, question: str, trace: bool, params: AskParams, llm: LLM) -> Callable[[], None]:
    """The background refresh behind a stale reply (:meth:`Caches.front_stale`): the same ask,
    computed the ordinary way at the new version (it replays the change log and brings the
    derived indexes up to date on the way), until the front holds its result; a second pass when
    the first made model calls (a result that made calls is not kept whole; the second is served
    from the entries the first stored). Runs in its own thread, so it sees no request's
    bookmark and never accepts a stale reply itself. The configured model gets a client of its
    own, so a request's usage counts never include a refresh's calls.

    A pass whose result the front did not keep (it made calls, or the version moved while it
    ran) still leaves that result as the stale reply for the question
    (:meth:`Caches.keep_refreshed`, its bound counted from the pass's start): under a steady
    stream of other processes' changes that touch the question's nodes no pass is ever kept
    whole, and the stale replies would otherwise run out ``stale_seconds`` after the first
    change. The kept copy says it made no model call (a reply given from it makes none)."""
    from kgservice.llm.client import Usage

    def refresh() -> None:
        client = parts.new_llm() if llm.model == parts.settings.llm_model else llm
        for _ in range(2):
            mark = parts.caches.refresh_mark()
            result = ask_with_llm(parts, question, trace, params=params, llm=client)
            if parts.caches.front_fresh(key):
                return
            if CLEARED_NOTE not in result.notes:  # that note is the pass's own, as in front_put
                kept = replace(copy.deepcopy(result), llm=Usage().to_dict())
                parts.caches.keep_refreshed(key, kept, result.as_of_version,
                                            {c: v["hits"] for c, v in result.caches.items()}, mark)

    return refresh


def ask(parts: Parts, question: str, trace: bool = False, *, params: AskParams | None = None,
        llm: LLM | None = None, on_round: Callable[[dict[str, Any]], None] | None = None,
        on_stream: Callable[[str, dict[str, Any]], None] | None = None) -> AskResult:
    """:func:`ask_with_llm`; when no model is configured and the default one has no recorded
    response, the retrieval-only answer (:mod:`kgservice.answer.retrieval_only`) instead.

    That case is decided from the settings first (:func:`kgservice.llm.check.calls_no_model`),
    so it never takes the model path to find out; only a default with recordings to replay
    tries them, and falls back when this question has none."""
    from kgservice.llm.check import no_model_configured
    from kgservice.llm import LLMProviderError
    from kgservice.llm.check import calls_no_model

    if not question.strip():
        raise InvalidArgument("empty question")
    model = llm.model if llm is not None else parts.settings.llm_model
    if calls_no_model(parts.settings, model):
        return retrieval_only_ask(parts, question.strip())
    unconfigured = no_model_configured(parts.settings, model)
    if unconfigured and names_not_in_graph(parts, question.strip()):
        return retrieval_only_ask(parts, question.strip())  # the same verdict, said as the no-model answer says it
    try:
        return ask_with_llm(parts, question, trace, params=params, llm=llm, on_round=on_round, on_stream=on_stream)
    except LLMProviderError:
        if not unconfigured:
            raise
        return retrieval_only_ask(parts, question.strip())


def retrieval_only_ask(parts: Parts, question: str) -> AskResult:
    """The units that best answer the question as cited sentences, marked "no model
    configured", with how strong the match is; "not in the graph" below the relevance floor
    (:func:`kgservice.answer.retrieval_only.answer_units`)."""
    from kgservice.answer import not_in_graph
    from kgservice.answer.retrieval_only import NO_MODEL_NOTE, answer_units, unit_sentence
    from kgservice.notation.serializer import format_unit

    t0 = time.perf_counter()
    found = answer_units(parts, question)
    units = found.units
    sentences = [{"text": unit_sentence(u), "cites": [u.id]} for u in units]
    text = " ".join(f"{s['text']} [{s['cites'][0]}]" for s in sentences) or not_in_graph(question)
    return AskResult(
        question=question, found=bool(units), answer=text, sentences=sentences, cited=[u.id for u in units],
        hit_units=[{"id": u.id, "unit": format_unit(u, with_id=False)} for u in units], key_nodes=[],
        key_predicates=[], entries=[], rounds=[], rejected=[],
        stop_reason=f"no model configured: retrieval only, {found.relevance.label} ({found.relevance.reason})",
        llm={"calls": 0, "total_tokens": 0, "model": None}, caches={},
        seconds=round(time.perf_counter() - t0, 3), notes=[NO_MODEL_NOTE], sources=_sources(parts, [u.id for u in units]))


def _sources(parts: Parts, cited: list[str]) -> list[dict[str, Any]]:
    from kgservice.answer.sources import cited_sources

    return cited_sources(parts, cited)


def ask_with_llm(parts: Parts, question: str, trace: bool = False, *, params: AskParams | None = None,
                 llm: LLM | None = None, on_round: Callable[[dict[str, Any]], None] | None = None,
                 on_stream: Callable[[str, dict[str, Any]], None] | None = None) -> AskResult:
    """Answer a question from the graph. ``trace`` adds the units' text to every round record.

    ``on_round`` is called with each drill-down round's record (the same dict that ends up in
    ``rounds``) as soon as the round is done, so a server can stream rounds while the next one
    runs. A result served whole from the caches' in-memory front (same question, parameters
    and model, same store version, computed before with no LLM call) replays its rounds
    through ``on_round`` too."""
    from kgservice.answer import cite_chains, grounded_answer, not_in_graph
    from kgservice.notation.serializer import format_unit

    question = question.strip()
    if not question:
        raise InvalidArgument("empty question")
    params = params or AskParams()
    llm = llm or parts.llm
    caches = parts.caches
    t0 = time.perf_counter()
    notes = []
    front_key = _front_key(question, trace, params, getattr(llm, "model", None))
    if causal.stale_allowed():  # before the replay: a stale reply waits for no catch-up
        got = caches.front_stale(front_key, _refresher(parts, front_key, question, trace, params, llm))
        if got is not None:
            if on_round is not None:
                for d in got[0].rounds:
                    on_round(d)
            return replace(got[0], stale=True, as_of_version=got[1], seconds=round(time.perf_counter() - t0, 3))
    cleared = caches.sync_store()
    if cleared:
        notes.append(CLEARED_NOTE)
    observed = caches.observed_version()
    front = caches.front_get(front_key)
    if front is not None:
        if on_round is not None:
            for d in front.rounds:
                on_round(d)
        return replace(front, seconds=round(time.perf_counter() - t0, 3))
    usage0, cache0 = llm.usage.snapshot(), caches.session_counts()

    refused = not_in_graph_before_call(parts, question, params.threshold)
    classes: dict[str, list[str]]
    if refused is not None:  # the no-model answer's verdict (a name or a word the graph lacks): no call
        kq, classes, entries = KeyQuery(nodes=[], predicates=[]), {}, []
        state = QueryState(key=kq, matches={}, seeds={})
        notes.append(f"not in the graph, decided before any model call: {refused}")
    else:
        kq, classes, _ = key_nodes_step(parts, llm, caches, question)
        entries = entry_step(parts, caches, kq, params.top_k, params.threshold)
        state = build_state(kq, classes, entries)
    if not state.seeds and refused is None:
        # no key node (or none that matched a node): the nodes the question names, found
        # without the model, still let the drill-down look before "not in the graph"
        fallback = entry_fallback(parts, question, kq)
        if fallback is not None:
            state = fallback
            entries.append({"key": "(entry step)", "label": question, "cached": False,
                            "hits": [(n, round(w, 4)) for n, w in fallback.seeds.items()]})
            notes.append(("the key-node step found no key node" if not kq.nodes else
                          "no key node matched a node") + "; entry nodes named in the question were used")

    def restart(feedback: str) -> QueryState:
        k2, c2, _ = key_nodes_step(parts, llm, caches, question, feedback)
        e2 = entry_step(parts, caches, k2, params.top_k, params.threshold)
        entries.extend(e2)
        return build_state(k2, c2, e2)

    missing = [refused] if refused is not None else missing_key_entities(parts, kq, classes)
    rounds: list[dict[str, Any]] = []
    relevant = []
    chains: list[list[Unit]] = []
    if missing:
        stop = "; ".join(missing)
    elif state.seeds:
        def round_done(r: RoundRecord, units: dict[str, Unit]) -> None:
            d = r.to_dict()
            if trace:
                d["units_text"] = {uid: format_unit(units[uid], with_id=False) for uid in r.new_units if uid in units}
            rounds.append(d)
            if on_round is not None:
                on_round(d)

        dd = drill_down(parts.store, service_params(parts.settings, parts.lexicon), llm, caches, question, state,
                        DrillParams(params.max_rounds, params.max_units, params.spread_nodes, params.max_drifts),
                        restart=restart, on_round=round_done)
        relevant, stop, state, chains = dd.relevant, dd.stop_reason, dd.state, dd.chains
    else:
        stop = "no key node matched an entry node" if kq.nodes else "no key nodes in the question"
    ans = cite_chains(grounded_answer(parts.store, parts.lexicon, llm, caches, question, relevant, state.key.node_ids,
                                      on_stream=on_stream), chains)
    if not ans.found and not relevant:
        ans.text = not_in_graph(question)
    if not ans.found:
        reread_after_ingest(caches, question, llm, kq, classes)
    cache1 = caches.session_counts()
    cache_delta = {c: {k: cache1[c][k] - cache0[c][k] for k in ("hits", "misses")} for c in cache1}
    result = AskResult(
        question=question, found=ans.found, answer=ans.text, short_answer=ans.short_answer if ans.found else "",
        sentences=ans.sentences, cited=ans.cited, hit_units=[{"id": u.id, "unit": format_unit(u, with_id=False)} for u in relevant],
        key_nodes=state.key_nodes_payload(), key_predicates=state.key.predicates,
        entries=[{**e, "hits": [list(h) for h in e["hits"]]} for e in entries], rounds=rounds, stop_reason=stop,
        rejected=ans.rejected, llm=llm.usage.since(usage0).to_dict(), caches=cache_delta,
        seconds=round(time.perf_counter() - t0, 3), notes=notes, sources=_sources(parts, list(ans.cited)),
        as_of_version=observed,
    )
    # kept whole when made from the caches alone; not when they were just cleared (that note is
    # this request's own). The entry step's note is kept with it: the same caches give it again
    if result.llm.get("calls", 0) == 0 and not cleared:
        caches.front_put(front_key, copy.deepcopy(result), {c: v["hits"] for c, v in cache_delta.items()})
    return result

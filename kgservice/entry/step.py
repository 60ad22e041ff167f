"""The entry step: question -> weighted seed nodes, without an LLM.

Names first: every question n-gram that is a node label (:class:`LabelIndex`, longest spans
kept) is a seed, including a label the question writes differently (a possessive, a plural, a
label's trailing qualifier: :meth:`LabelIndex.spans`) and a longer label that holds a name the
question writes but no label is ("Hayek" -> *Friedrich Hayek*: :meth:`LabelIndex.partial`). The question's vector adds the nearest entry nodes (Qdrant) at a lower
weight. Both are weighted by specificity (:func:`specificity`: a node few units mention is
a better seed than a hub). Measured on MuSiQue (scripts/eval/RESULTS.md): the whole-question
vector alone finds the nodes of a third of the gold passages; names find most of them.

One step for every caller: ``kg search``, ``kg ask`` when the LLM key-node step finds nothing,
the server, and the eval harness (``KnowledgeBase.entry``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from immutables import Map

from kgservice.caches.untracked import settle
from kgservice.entry.match import (STOPWORDS, LabelIndex, Span, bare_label, disambiguated, fuse_entries, key_of,
                                  singular, specificity, tokens)
from kgservice.entry.spelling import respelled
from kgservice.model import NodeKind
from kgservice.stores.versioned import FedIndex


@dataclass(frozen=True)
class EntryParams:
    top_k: int = 10  # vector hits asked for
    threshold: float = 0.5  # cosine floor for a vector hit (default embedder: right ≈ 0.77, wrong ≈ 0.49)
    vector_weight: float = 0.5  # a vector hit weighs its cosine times this; a named node weighs 1
    use_vectors: bool = True
    # a node named by lower-case words ("president", "country") when the question also names
    # something written like a name; 0 drops them (the MuSiQue eval's choice: +3 R@2). A question
    # with no name-like span at all ("what does smoking cause?") weighs every named node fully.
    common_weight: float = 0.0
    # a node whose label holds a name the question writes but no label is ("Hayek" ->
    # Friedrich Hayek: LabelIndex.partial) weighs this times its specificity; 0 turns it off
    partial_weight: float = 1.0
    # a node of the question's name with a disambiguator ("Silverton" -> Silverton, Colorado:
    # LabelIndex._namesakes), beside the node of that exact name, weighs this; 0 turns it off
    namesake_weight: float = 1.0


@dataclass
class EntryNode:
    node: str
    label: str
    weight: float  # the seed weight (0..1, best seed 1)
    mentions: int  # units that mention the node (subject or context)
    named: str | None = None  # the question words that name it
    cosine: float | None = None  # its vector similarity to the question, if a vector hit


@dataclass
class EntryResult:
    question: str
    nodes: list[EntryNode] = field(default_factory=list)  # best first
    # nodes the question names in lower-case words beside a name ("the composer of
    # Aschenbrodel"), weighed at ``common_weight`` (0: not among the nodes): a later step that
    # meets them again (retrieval's lexical seeds) can weigh them alike
    common: list[str] = field(default_factory=list)
    # the question as the entry step read it (:meth:`EntryFinder.read`): a later step that ranks
    # or judges the question so read takes it from here, not by reading the question again
    read: str = ""

    @property
    def seeds(self) -> dict[str, float]:
        return {n.node: n.weight for n in self.nodes}

    @property
    def named(self) -> list[str]:
        return [n.node for n in self.nodes if n.named is not None]

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "nodes": [asdict(n) for n in self.nodes], "common": self.common}


@dataclass
class _Labels:
    """What the entry step keeps of a store's nodes at one version: the label index, node id ->
    label, and (once retrieval asked for it) the inverse map of names held in labels."""

    index: LabelIndex
    labels: Mapping[str, str]  # a persistent map: a patch shares the labels it does not change
    held: Any = None


class EntryFinder:
    """Holds the label index of a store and its node id -> label map: built once, then patched
    from the store's change log (:class:`kgservice.stores.versioned.FedIndex`: the nodes each
    change touched are read again), so a relabel shows on the next question and another
    process's ingest costs this one the nodes it touched, not a scan of every node."""

    def __init__(self, store: Any, embed: Callable[[list[str]], Any] | None = None, vectors: Any = None,
                 params: EntryParams = EntryParams(), word_uses: Callable[[str], int] | None = None):
        """``word_uses``: how many units use a word in any form (its stem), asked only of a long
        question word no label uses (:mod:`kgservice.entry.spelling`); without it only the labels'
        words say whether the question writes a word of the graph."""
        self.store, self.embed, self.vectors, self.params = store, embed, vectors, params
        self.word_uses = word_uses
        self._derived: FedIndex[_Labels] = FedIndex(store, self._build, self._patch)
        self._held_lock = threading.Lock()

    def _build(self) -> _Labels:
        nodes = [(n.id, n.label) for n in self.store.iter_nodes() if n.kind != NodeKind.LITERAL]
        labels = Map(nodes)
        settle(labels)  # out of the cyclic collector's work: it holds strings only
        return _Labels(LabelIndex.build(nodes), labels)

    def _patch(self, state: _Labels, changes: list[Any]) -> _Labels:
        touched = sorted({n for c in changes for n in c.touched})
        if not touched:
            return state
        now: dict[str, str | None] = dict.fromkeys(touched)
        now.update((n.id, n.label) for n in self.store.get_nodes(touched) if n.kind != NodeKind.LITERAL)
        labels = state.labels.mutate()  # type: ignore[attr-defined]
        for nid, label in now.items():
            if label is None:
                labels.pop(nid, None)
            elif labels.get(nid) != label:  # an unchanged entry left alone: no trie node copied for it
                labels[nid] = label
        after = labels.finish()
        settle(after)
        index = state.index.patched(state.labels, now)
        held = state.held.patched(index, state.labels, after, touched) if state.held is not None else None
        return _Labels(index, after, held)

    def holders(self) -> Any:
        """The inverse map of the current label index (:class:`kgservice.expansion.holders.Holders`):
        built on first use (only retrieval's lexical hop reads it), then patched with the index."""
        state = self._derived.get()
        if state.held is None:
            from kgservice.expansion.holders import Holders

            with self._held_lock:
                if state.held is None:
                    state.held = Holders.build(state.index, state.labels)
        return state.held

    def index(self) -> LabelIndex:
        return self._derived.get().index


    def read(self, question: str) -> str:
        """The question as the entry step reads it: a word no label uses, one letter from one
        that labels do, read as that word ("olimpics" -> *olympics*: :mod:`kgservice.entry.spelling`).
        The no-model answer ranks and judges the question so read (:attr:`EntryResult.read`:
        :meth:`find` reads it once for both)."""
        return self._respelt(question, self._derived.get().index)

    def _respelt(self, question: str, index: LabelIndex) -> str:
        vocab, uses = index.vocab, self.word_uses
        return respelled(question, lambda w: vocab.get(w, 0),
                         own=lambda w: max(vocab.get(singular(w), 0), uses(w) if uses is not None else 0))

    def find(self, question: str, qvec: Any = None, params: EntryParams | None = None,
             hits: Sequence[tuple[str, float]] | None = None) -> EntryResult:
        """Seeds for a question. ``qvec``: its vector when the caller has one already;
        ``hits``: the vector store's answer for it, best first, when the caller searched already
        with at least ``top_k`` results and no higher threshold (retrieval asks once for both)."""
        p = params or self.params
        state = self._derived.get()
        index, labels = state.index, state.labels
        # misspellings read as the graph's words (:meth:`read`); the vectors read it as written
        read = self._respelt(question, index)
        toks = tokens(read)
        spans: list[Span] = _namesakes_asked(index.spans(read), labels, toks, p.namesake_weight > 0)
        if p.partial_weight > 0:
            spans += index.partial(read, spans)
        named = {s.node: " ".join(toks[s.start:s.end]) for s in spans}
        has_name = any(s.name for s in spans)
        lexical: dict[str, float] = {}
        common: set[str] = set()
        for s in spans:
            w = (p.partial_weight if s.partial else p.namesake_weight if s.namesake else 1.0) \
                if s.name or not has_name else p.common_weight
            lexical[s.node] = max(lexical.get(s.node, 0.0), w)
            if not s.name and has_name:
                common.add(s.node)
        common -= {s.node for s in spans if s.name}
        named = {n: t for n, t in named.items() if lexical[n] > 0}
        cos: dict[str, float] = {}
        if p.use_vectors and hits is not None:
            cos = {h: float(s) for h, s in list(hits)[: p.top_k] if s >= p.threshold and h in labels}
        elif p.use_vectors and self.vectors is not None and (qvec is not None or self.embed is not None):
            if qvec is None and self.embed is not None:  # the condition above: one of the two is there
                qvec = self.embed([question])[0]
            cos = {h: float(s) for h, s in self.vectors.search(qvec, top_k=p.top_k, threshold=p.threshold)
                   if h in labels}
        counts = self.store.mention_counts(sorted(set(named) | set(cos)))
        spec = {n: specificity(m) for n, m in counts.items()}
        # a namesake never outweighs the node the question names exactly: rarer, it would by
        # specificity alone (West Virginia, United States over West Virginia)
        for s in spans:
            if s.namesake and lexical.get(s.node, 0.0) > 0:
                beside = [spec[o.node] for o in spans if not o.namesake and (o.start, o.end) == (s.start, s.end)]
                if beside and spec[s.node] > 0:
                    lexical[s.node] = min(lexical[s.node], max(beside) / spec[s.node])
        weights = fuse_entries(lexical, cos, spec, p.vector_weight)
        nodes = [EntryNode(n, labels.get(n, n), round(w, 6), counts[n], named.get(n), cos.get(n))
                 for n, w in weights.items()]
        # a node whose label is the whole text is what was asked for: it ranks first, above a
        # rarer node the vectors find (a cross-language synonym weighs its cosine times a
        # higher specificity and can outweigh a frequent exact name); the seed weights stay
        whole = key_of(toks)
        exact = {n for n in named if key_of(tokens(labels.get(n, n))) == whole}
        nodes.sort(key=lambda e: (e.node not in exact, -e.weight, e.node))
        return EntryResult(question, nodes, sorted(common), read)


def _namesakes_asked(spans: list[Span], labels: Mapping[str, str], toks: list[str], keep: bool) -> list[Span]:
    """``spans`` with the namesakes (:meth:`LabelIndex._namesakes`) narrowed to those whose
    qualifier the question writes ("the film Big Eyes" -> *Big Eyes (film)*, not *Big Eyes
    (band)*) when any does, all of them otherwise; none when ``keep`` is false, nor any whose
    label is no name plus a disambiguator (:func:`disambiguated`: "Germany (1.1%" is a fragment).

    >>> spans = [Span(3, 5, "b"), Span(3, 5, "bf", True, namesake=True), Span(3, 5, "bb", True, namesake=True)]
    >>> labels = {"b": "Big Eyes", "bf": "Big Eyes (film)", "bb": "Big Eyes (band)"}
    >>> [s.node for s in _namesakes_asked(spans, labels, tokens("Who directed the film Big Eyes?"), True)]
    ['b', 'bf']
    >>> [s.node for s in _namesakes_asked(spans, labels, tokens("Who is Big Eyes?"), True)]
    ['b', 'bf', 'bb']
    >>> [s.node for s in _namesakes_asked(spans, labels, tokens("Who is Big Eyes?"), False)]
    ['b']
    >>> labels["bb"] = "Big Eyes (1.1%"
    >>> [s.node for s in _namesakes_asked(spans, labels, tokens("Who is Big Eyes?"), True)]
    ['b', 'bf']
    """
    asked = set(toks) - STOPWORDS
    told: set[tuple[int, int]] = set()
    said: dict[str, bool] = {}
    spans = [s for s in spans if not s.namesake or (keep and disambiguated(labels.get(s.node, s.node)))]
    for s in spans:
        if s.namesake:
            label = labels.get(s.node, s.node)
            qualifier = set(tokens(label)) - set(tokens(bare_label(label)))
            said[s.node] = bool(qualifier & asked)
            if said[s.node]:
                told.add((s.start, s.end))
    return [s for s in spans if not s.namesake or said[s.node] or (s.start, s.end) not in told]


def entry_nodes(store: Any, question: str, embed: Callable[[list[str]], Any] | None = None, vectors: Any = None,
                params: EntryParams = EntryParams()) -> EntryResult:
    """One-off convenience (builds the label index each call; hold an :class:`EntryFinder` to reuse it)."""
    return EntryFinder(store, embed, vectors, params).find(question)


__all__: Sequence[str] = ("EntryFinder", "EntryNode", "EntryParams", "EntryResult", "entry_nodes")

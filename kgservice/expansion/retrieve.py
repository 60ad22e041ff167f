"""The project's no-LLM retrieval: question -> ranked units (``parts.retrieve``; the answer with no
model configured cites its best units; the LLM drill-down of ``kg ask`` has its own entry step).

1. entry nodes from the question (:mod:`kgservice.entry`: names + vectors, by specificity);
   plus lexical seeds: the nodes of the unit whose own text best matches the question's
   words (BM25, :mod:`kgservice.expansion.lexical`), weighted by their specificity — that
   unit is often the edge out of the named entity that the question's other words describe,
   so its other node is the next hop's bridge;
2. spreading activation from them with the service's parameters (hub damping and seed
   backflow from the lexicon, :meth:`KnowledgeBase.spread_params`), for one hop
   (``spread_hops``): steps 5 and 6 take the second hop along the question's words;
3. fusion of the node energies with the question's vector similarity to the nodes
   (:func:`kgservice.expansion.fusion.fuse_scores`, weight ``dense_weight``): the embedder's
   opinion for nodes the graph reached weakly or not at all, which matters most on a sparse
   graph; a high weight lets vector neighbours crowd out the graph's own hops;
4. units of the best nodes, each scored by the sum of its nodes' fused scores, superseded
   units replaced by their terminal units;
5. the lexical hop (:func:`lexical_hop`; off by default, ``hop_weight``): the best lexical
   unit's other node is the next hop's
   bridge, but the graph often writes that entity differently elsewhere ("Shringarpur [located
   in] *Maharashtra state*" vs the units about *Maharashtra*; "*English Lake District*" vs
   *Lake District*), so spreading never reaches its own units. The names inside the bridge's
   label find them; the one whose text best matches the question and the bridge joins the
   pool at ``hop_weight`` × the best unit's score. The other way round, a short form to the longer labels that
   hold it (*Prague* -> *Prague astronomical clock*), takes the inverse map
   (:mod:`kgservice.expansion.holders`), for a name few labels hold (``hop_holders``);
6. the bridge hop (:func:`bridge_hop`): a hop from the pool's best units by the graph's
   energy alone (:func:`graph_ranked`), whose non-seed nodes are the bridges spreading
   reached (the first hop's other ends; a node-vector neighbour of the question is no hop
   out of its entities, and ranked with the fusion its units would crowd the best ten).
   A second-hop unit scores only its bridge's weak energy (a fraction of a seed's, after hub
   damping), so the other units of the question's named entities outrank it; the one unit of a bridge that
   best matches the question's *residual* words (:func:`residual`: the question less the
   words of the units the bridges came from) joins at ``bridge_weight`` × the best unit's
   score. The first hop has used its words ("Bubye River", "located"); what is left
   ("waterfall") is what the next hop is about. Matching the whole question instead re-finds
   the first hop's entities in the bridges' units. The bridges include the names inside their labels, as in step 5
   ("Harris W. Fawell [is a graduate of] *West Chicago High School*" -> West Chicago).

Scores order units; they never make a fact (invariant 2). The eval (scripts/eval/) measures
this function end to end; every figure that decided a step or a default is in
scripts/eval/RESULTS.md (its current-state section says which steps earn their place on
which sets), not here.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kgservice.errors import InvalidArgument
from kgservice.entry import EntryResult
from kgservice.entry.match import specificity, tokens
from kgservice.expansion.fusion import fuse_scores, scaled
from kgservice.expansion.holders import name_holders
from kgservice.expansion.lexical import unit_text
from kgservice.expansion.spread import service_params, spread_activation
from kgservice.ids import is_literal_id
from kgservice.model import Unit
from kgservice.stores.changelog import request_scope

if TYPE_CHECKING:
    from kgservice.parts import Parts


@dataclass(frozen=True)
class RetrieveParams:
    # weight of the node-vector similarity in the fusion; chosen from a grid of 0-0.3 by the
    # eval's rule (scripts/eval/RESULTS.md): lower loses the sparse graphs' vector help,
    # higher lets vector neighbours outrank the graph's hops
    dense_weight: float = 0.1
    # nearest nodes to the question asked of the vector store; units are collected from the
    # top_nodes best nodes; max_units is the pool returned, and the eval ranks passages by it.
    # All three checked by the rule against 15 / 60, 15 / 50 and 20 / 100 / 200
    # (scripts/eval/RESULTS.md): each stands; a larger pool sums more units of the question's
    # own entities per passage, which outranks the next hop
    dense_top_k: int = 30
    top_nodes: int = 30
    max_units: int = 40
    # lexical seeds (module doc, step 1): the nodes of this many best BM25 units join the seeds
    # at this weight times their specificity (a named node weighs at most 1); 0 turns it off.
    # First chosen (1.5) on half of the MuSiQue questions; 1.0 by the rule once retrieval
    # spread undamped (a heavier lexical seed outweighs the named entity; scripts/eval/RESULTS.md)
    lexical_weight: float = 1.0
    lexical_units: int = 1
    # a lexical seed node the question names in lower-case words beside a name ("the composer
    # of Aschenbrodel": a type word of the answer, whose other units crowd the pool), which the
    # entry step weighs at its ``common_weight`` (0) and so dropped, weighs this times its
    # lexical weight; chosen on two eval sets (scripts/eval/RESULTS.md: dropping it or keeping
    # it whole each cost one set); 0 drops it again, 1 keeps it whole
    lexical_common: float = 0.5
    # lexical hop (module doc, step 5): its unit joins the pool at this fraction of the best
    # unit's score (0.5 when on, chosen on the even half from {0.25, 0.5, 1.0}). Off by
    # default: by leave-one-set-out it does not earn its place (with δ 0.5 it changes one
    # question of the spaCy-graph set, for the worse, and moved a held-out set by at most a
    # point; scripts/eval/RESULTS.md, "Retrieval components re-decided with δ 0.5"); it helps a
    # graph whose extractor writes one entity several ways
    hop_weight: float = 0.0
    # bridge hop (module doc, step 6): the bridges are the non-seed nodes of this many best
    # units of the pool; its unit joins at this fraction of the best unit's score; 0 turns it
    # off. The weight: 0.5 at first (the lexical hop's); 1.0 by the rule
    # (scripts/eval/RESULTS.md: the lighter weight lost a set and gained none)
    bridge_units: int = 10
    bridge_weight: float = 1.0
    # the bridge hop's best units ranked by the graph's energy alone (module doc, step 6);
    # False ranks them by the fused scores, node-vector neighbours included
    bridge_graph: bool = True
    # the lexical hop also follows the labels that hold a bridge name (module doc, step 5),
    # for names at most this many labels hold; 0 turns it off
    hop_holders: int = 5
    # spreading's hop count K for retrieval (module doc, step 2); None takes the service's K
    # (settings ``max_hops``, 3, which ``kg expand --mode spread`` and ``kg.spread`` use). One
    # hop: the lexical and bridge hops (steps 5, 6) take the second hop by the question's
    # words, and energy spread further only adds the seeds' neighbours' neighbours, which
    # crowd the pool (chosen by the rule; scripts/eval/RESULTS.md)
    spread_hops: int | None = 1
    # hub damping δ for retrieval (docs/spreading.md); None takes the service's (the lexicon's
    # 0.5, which ``kg expand --mode spread`` and ``kg.spread`` use); 0: a hub passes its full
    # energy down each row. The service's δ by leave-one-set-out on graphs built with the bare
    # copula read as class membership (scripts/eval/RESULTS.md, "Spreading defaults re-decided"):
    # a class node ("country", "author") no longer hands a seed's whole energy to every member.
    # Undamped (0) was chosen on the graphs built before that reading
    degree_damping: float | None = None
    # "after_graph" ranks the units none of whose nodes spreading reached (the fusion brought
    # them alone) after every unit it reached (:func:`unit_scores`); "copied" (the default) lets
    # a vector neighbour's units outrank them. After the graph keeps most of the fusion's R@5
    # and none of its R@2 losses when the fusion is added alone, and meets PPR on every graph,
    # but against copied it loses one question of the spaCy-graph set at top 5, so by
    # leave-one-set-out copied stays (scripts/eval/RESULTS.md, "The node-vector fusion against
    # the graph's second passage")
    dense_units: str = "copied"

    def __post_init__(self) -> None:
        if self.lexical_weight < 0 or self.lexical_units < 0:
            raise InvalidArgument(f"lexical_weight and lexical_units must be >= 0, got {self.lexical_weight}, "
                             f"{self.lexical_units}")
        if self.hop_weight < 0:
            raise InvalidArgument(f"hop_weight must be >= 0, got {self.hop_weight}")
        if self.bridge_units < 0 or self.bridge_weight < 0:
            raise InvalidArgument(f"bridge_units and bridge_weight must be >= 0, got {self.bridge_units}, {self.bridge_weight}")
        if self.hop_holders < 0:
            raise InvalidArgument(f"hop_holders must be >= 0, got {self.hop_holders}")
        if self.degree_damping is not None and not 0 <= self.degree_damping <= 2:
            raise InvalidArgument(f"degree_damping must be 0..2 or None (the service's), got {self.degree_damping}")
        if self.dense_units not in ("copied", "after_graph"):
            raise InvalidArgument(f"dense_units must be copied or after_graph, got {self.dense_units!r}")
        if self.spread_hops is not None and not 1 <= self.spread_hops <= 10:
            raise InvalidArgument(f"spread_hops must be 1..10 or None (the service's K), got {self.spread_hops}")


@dataclass
class RetrievedUnit:
    id: str
    score: float
    nodes: list[str]


@dataclass
class Retrieval:
    question: str
    entry: EntryResult
    lexical: dict[str, float] = field(default_factory=dict)  # lexical seed units -> BM25
    seeds: dict[str, float] = field(default_factory=dict)  # what spreading started from
    hop: list[str] = field(default_factory=list)  # the lexical hop's unit (step 5), if any
    bridge: list[str] = field(default_factory=list)  # the bridge hop's unit (step 6), if any
    node_scores: dict[str, float] = field(default_factory=dict)
    units: list[RetrievedUnit] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "entry": self.entry.to_dict(), "lexical": self.lexical,
                "seeds": self.seeds, "hop": self.hop, "bridge": self.bridge,
                "units": [u.__dict__ for u in self.units], "seconds": round(self.seconds, 4)}


def retrieve(parts: Parts, question: str, params: RetrieveParams | None = None, qvec: Any = None) -> Retrieval:
    # the label index and the BM25 index are each checked against the store's change-log
    # version (kgservice.stores.versioned): one read serves the whole call
    with request_scope():
        return _retrieve(parts, question, params, qvec)


def _retrieve(parts: Parts, question: str, params: RetrieveParams | None, qvec: Any) -> Retrieval:
    p = params or RetrieveParams()
    t0 = time.perf_counter()
    if qvec is None:
        qvec = parts.embedder.embed([question])[0]
    # one vector search serves the entry step (its top_k above its threshold) and the fusion
    ep = parts.entry_finder.params
    hits = parts.vectors.search(qvec, top_k=max(p.dense_top_k if p.dense_weight else 0, ep.top_k), threshold=0.0)
    entry = parts.entry_finder.find(question, qvec, None, hits)
    seeds, lexical = lexical_seeds(parts, question, entry.seeds, p, entry.common)
    spread = service_params(parts.settings, parts.lexicon, max_hops=p.spread_hops or 0)  # 0: the service's K
    if p.degree_damping is not None:
        spread = replace(spread, degree_damping=p.degree_damping)
    energy = spread_activation(parts.store, seeds, spread).energy if seeds else {}
    dense = {n: s for n, s in hits[: p.dense_top_k]} if p.dense_weight else {}
    graph = {n: e for n, e in energy.items() if not is_literal_id(n)}
    scores = fuse_scores(graph, dense, p.dense_weight) if dense else fuse_scores(graph, {}, 0.0)
    # the key is a total order (node ids differ): the same list as sorting them all
    best = top_items(scores, p.top_nodes)
    store = parts.store
    found: dict[str, set[str]] = {}
    near = store.mentions_of([n for n, _ in best])
    for n, uids in near.items():
        for uid in uids:
            found.setdefault(uid, set()).add(n)
    pool = terminal_pool(found, store.superseded_end(list(found)) if found else {})
    scored = unit_scores(pool, scores, graph, p.dense_units)
    top = max(scored.values()) if scored else 0.0
    bridge: list[str] = []
    if p.bridge_weight and p.bridge_units and scored:
        source = (graph_ranked(pool, graph) if p.bridge_graph else {}) or scored
        bridge = bridge_hop(parts, question, source, seeds, p.bridge_units, near)
    hop = lexical_hop(parts, question, lexical, entry.seeds, p.hop_holders) if p.hop_weight and lexical and scored else []
    for uids, weight in ((bridge, p.bridge_weight), (hop, p.hop_weight)):
        for unit in store.get_units(uids):
            pool.setdefault(unit.id, set()).update(
                n for n in [unit.subject_id] + unit.context_node_ids() if not is_literal_id(n))
            scored[unit.id] = max(scored.get(unit.id, 0.0), weight * top)
    # the pool holds every unit of the best nodes (thousands around a hub): rank, then describe the few kept
    ranked = top_items(scored, p.max_units)
    return Retrieval(question, entry, lexical, seeds, hop, bridge, dict(best),
                     [RetrievedUnit(u, round(s, 9), sorted(pool[u])) for u, s in ranked], time.perf_counter() - t0)


def top_items(scores: Mapping[str, float], k: int) -> list[tuple[str, float]]:
    """The ``k`` best (id, score) pairs, best first, ties by id: exactly
    ``heapq.nsmallest(k, scores.items(), key=lambda kv: (-kv[1], kv[0]))`` (the same pairs, the
    same floats, the same order; scores are never NaN), without a Python key call per item.
    Why: retrieval takes the best of every unit of its best nodes, thousands around a hub on a
    large graph (the slow tail of the 51k-node graph's questions: scripts/eval/RESULTS.md), and
    most of them tie (a node's units score alike). The k-th best score comes from the floats
    alone; the items above it are sorted, and those tied with it give the smallest ids.

    >>> s = {"c": 1.0, "a": 1.0, "b": 2.0, "d": 0.5, "e": 1.0}
    >>> top_items(s, 3), top_items(s, 1), top_items(s, 0), top_items({}, 2)
    ([('b', 2.0), ('a', 1.0), ('c', 1.0)], [('b', 2.0)], [], [])
    >>> top_items(s, 9) == sorted(s.items(), key=lambda kv: (-kv[1], kv[0]))
    True
    """
    if k <= 0 or not scores:
        return []
    if len(scores) <= k:
        return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    kth = heapq.nlargest(k, scores.values())[-1]
    above = sorted(((u, s) for u, s in scores.items() if s > kth), key=lambda kv: (-kv[1], kv[0]))
    # ids differ, so the pairs compare by id alone
    return above + heapq.nsmallest(k - len(above), [(u, s) for u, s in scores.items() if s == kth])


def terminal_pool(found: dict[str, set[str]], ends: Mapping[str, list[str]]) -> dict[str, set[str]]:
    """Each found unit's nodes moved to its terminal units (``ends``: :meth:`superseded_end`;
    a unit it leaves out, or maps to itself, stays): the union of the nodes of every found
    unit a terminal unit stands for. Reuses ``found``'s sets (the caller drops it); only the
    few superseded units are moved, not every unit copied into a new map.

    >>> found = {"u1": {"a"}, "old": {"b"}, "u2": {"c"}, "older": {"d"}}
    >>> pool = terminal_pool(found, {"u1": ["u1"], "old": ["u2"], "u2": ["u2"], "older": ["u3", "u4"]})
    >>> sorted((u, sorted(nodes)) for u, nodes in pool.items())
    [('u1', ['a']), ('u2', ['b', 'c']), ('u3', ['d']), ('u4', ['d'])]
    """
    moved = [uid for uid, ts in ends.items() if not (len(ts) == 1 and ts[0] == uid) and uid in found]
    pool = found
    for uid in moved:
        nodes = pool.pop(uid)
        for t in ends[uid]:
            pool.setdefault(t, set()).update(nodes)
    return pool


def unit_scores(pool: dict[str, set[str]], scores: dict[str, float], graph: dict[str, float],
                mode: str = "copied") -> dict[str, float]:
    """Each pool unit scored by the sum of its nodes' fused scores (module doc, step 4);
    ``mode`` "after_graph" (``RetrieveParams.dense_units``) then scales a unit none of whose
    nodes has ``graph`` energy (the node-vector fusion brought it alone) by 1e-6, so it ranks
    after every unit spreading reached and no passage of such units outranks one the graph
    found. Copied to each unit, a vector neighbour's similarity adds up over its units: a
    film's eleven cast and crew units outweigh the graph's one unit of the next hop once a
    passage's units are summed (scripts/eval/RESULTS.md, "The node-vector fusion against the
    graph's second passage").

    >>> pool = {"u1": {"a", "v"}, "u2": {"v"}, "u3": {"a"}}
    >>> unit_scores(pool, {"a": 1.0, "v": 0.3}, {"a": 1.0})
    {'u1': 1.3, 'u2': 0.3, 'u3': 1.0}
    >>> s = unit_scores(pool, {"a": 1.0, "v": 0.3}, {"a": 1.0}, "after_graph")
    >>> s["u1"], s["u3"], 0 < s["u2"] < 1e-6
    (1.3, 1.0, True)
    """
    # exact (:func:`exact_sum`), so a unit's score does not depend on its set's iteration order (hash seed);
    # most units have one of the best nodes (its one term inlined: thousands per question near a hub)
    out: dict[str, float] = {}
    for uid, nodes in pool.items():
        if len(nodes) == 1:
            for n in nodes:
                out[uid] = scores[n] + 0.0  # exact_sum of one term
        else:
            out[uid] = exact_sum([scores[n] for n in nodes])
    if mode == "after_graph":
        out = {uid: v if any(graph.get(n, 0.0) > 0 for n in pool[uid]) else v * 1e-6 for uid, v in out.items()}
    return out


def exact_sum(xs: list[float]) -> float:
    """``math.fsum(xs)`` (the correctly rounded sum, whatever the order), without its call for
    one or two terms, most units' count: one term is itself, and one IEEE addition of two is
    already correctly rounded (round half to even, as fsum), so the result is the same float.

    >>> exact_sum([]), exact_sum([0.3]), exact_sum([0.1, 0.2]) == math.fsum([0.1, 0.2])
    (0.0, 0.3, True)
    >>> exact_sum([0.1, 0.2, 0.3]) == math.fsum([0.1, 0.2, 0.3]) != (0.1 + 0.2) + 0.3
    True
    """
    n = len(xs)
    if n == 1:
        return xs[0] + 0.0  # fsum([-0.0]) is 0.0
    if n == 2:
        return xs[0] + xs[1]
    return math.fsum(xs)


def lexical_seeds(parts: Parts, question: str, seeds: dict[str, float], p: RetrieveParams,
                  common: Sequence[str] = ()) -> tuple[dict[str, float], dict[str, float]]:
    """The entry seeds plus the nodes of the best-matching units (their terminal units when
    superseded), each at ``lexical_weight * bm25 / best bm25 * specificity``, times
    ``lexical_common`` for the entry step's ``common`` nodes; a node that is both keeps the
    larger weight. Returns (seeds, {lexical unit: bm25})."""
    if not p.lexical_weight or not p.lexical_units:
        return dict(seeds), {}
    hits = parts.lexical_units.index().top(question, p.lexical_units)
    if not hits:
        return dict(seeds), {}
    store, best = parts.store, hits[0][1]
    ends = store.superseded_end([u for u, _ in hits])
    out = dict(seeds)
    named = [(score, [n for unit in store.get_units(ends.get(uid, [uid])) for n, _ in _node_labels(unit)])
             for uid, score in hits]
    counts = store.mention_counts([n for _, nodes in named for n in nodes])
    for score, nodes in named:
        for n in nodes:
            w = p.lexical_weight * score / best * specificity(counts[n]) * (p.lexical_common if n in common else 1.0)
            if w > out.get(n, 0.0):
                out[n] = round(w, 6)
    return out, {u: round(s, 6) for u, s in hits}


def _node_labels(unit: Unit) -> list[tuple[str, str]]:
    """(node id, label) of every node the unit mentions, subject first, literals left out."""
    ends = [(unit.subject_id, unit.subject)] + [
        (v.node_ref, v.node) for v in list(unit.args) + [m.value for m in unit.mods] if v.node and v.node_ref]
    return [(n, label) for n, label in ends if not is_literal_id(n)]


def lexical_hop(parts: Parts, question: str, lexical: dict[str, float], seeds: dict[str, float],
                holders: int = 0) -> list[str]:
    """The unit one hop past the lexical seeds' bridge (module doc, step 5), as a one-item list
    (empty when there is none).

    The bridge is every node of the lexical units that is not an entry seed (the question's
    own entities); the candidates are the units of every node named inside a bridge label
    (:meth:`kgservice.entry.match.LabelIndex.names_within`: the same entity in its other
    surface forms) and, with ``holders``, of the nodes whose labels hold one of those names
    when at most ``holders`` labels do (:mod:`kgservice.expansion.holders`: "Fist Power
    [released in] *Hong Kong*" -> *British Hong Kong*, which the graph never connects to
    it), less the lexical units and the units that lead back to the seeds; the best is the
    one with the highest BM25 against the question plus the bridge labels (the question says
    which relation of the bridge it wants: "who was in charge of the state where ..."), its
    terminal unit when superseded."""
    store, index = parts.store, parts.entry_finder.index()
    units = store.get_units(list(lexical))
    labels: list[str] = []
    back: set[str] = set()
    for unit in units:
        for nid, label in _node_labels(unit):
            if nid in seeds:
                back.add(nid)
            elif label not in labels:
                labels.append(label)
    names = sorted({n for label in labels for n in index.names_within(label)})
    if holders and names:
        held = name_holders(store, parts.entry_finder).of(names, holders)
        names = sorted(set(names).union(n for n in held if n not in seeds))
    cands: set[str] = set()
    near = store.mentions_of(names + sorted(back))
    for n in names:
        cands.update(near[n])
    for n in back:
        cands.difference_update(near[n])
    cands.difference_update(lexical)
    if not cands:
        return []
    found = parts.lexical_units.index().best_of(" ".join([question] + labels), cands)
    if found is None:
        return []
    best = found[0]
    return store.superseded_end([best]).get(best, [best])[:1]


def graph_ranked(pool: dict[str, set[str]], graph: dict[str, float]) -> dict[str, float]:
    """The pool's units scored by the graph's energy alone (each unit the sum of its nodes'
    energies, scaled as the fusion scales them), those with none left out: what the bridge
    hop ranks its source units by (module doc, step 6). The bridges are the first hop out of
    the seeds, which only the graph takes; a node-vector neighbour of the question is not
    connected to its entities, and with the fused scores its units crowd the best ten
    (MuSiQue "the waterfall in the country where the Bubye River is found": *the waterfall*,
    *most famous waterfall* ... push the Zimbabwe units out), so the hop would start from
    them and its bridge would change with the fusion weight.

    >>> graph_ranked({"u1": {"a", "b"}, "u2": {"c"}, "u3": {"b"}}, {"a": 2.0, "b": 1.0})
    {'u1': 1.5, 'u3': 0.5}
    """
    g = scaled(graph)
    out: dict[str, float] = {}
    for uid, nodes in pool.items():
        if len(nodes) == 1:  # most units (as in :func:`unit_scores`): exact_sum of one term or none
            for n in nodes:
                s = g.get(n, 0.0) + 0.0
        else:
            s = exact_sum([g[n] for n in nodes if n in g])
        if s > 0:
            out[uid] = s
    return out  # in the pool's order: the bridge hop takes its best by a total order (:func:`top_items`)


def residual(question: str, units: list[Unit]) -> str:
    """The question's words that none of ``units`` states (module doc: what the next hop is
    about once those units made the first).

    >>> from kgservice.model import Value
    >>> u = Unit(id="u", subject="Bubye River", predicate="located in", family="located_in", kind="content",
    ...          args=(Value(node="Zimbabwe"),))
    >>> residual("What is the waterfall in the country where the Bubye River is located?", [u])
    'what is the waterfall the country where the is'
    """
    used = {t for unit in units for t in tokens(unit_text(unit))}
    return " ".join(t for t in tokens(question) if t not in used)


def bridge_hop(parts: Parts, question: str, scored: dict[str, float], seeds: dict[str, float],
               units: int, known: Mapping[str, list[str]] | None = None) -> list[str]:
    """The unit one hop past the pool's best ``units`` (module doc, step 6), as a one-item
    list (empty when there is none).

    The bridges are those units' nodes that are not seeds of the spreading (the question's
    entities and the lexical seeds), and the nodes named inside their labels (the same entity
    in its other surface forms: :meth:`kgservice.entry.match.LabelIndex.names_within`, as in
    :func:`lexical_hop`); the candidates are the bridges' other units, less those
    best units and every unit that mentions a seed (it leads back, and already scores its
    seed's weight); the best is the one with the highest BM25 against the question's residual
    words (:func:`residual`), its terminal unit when superseded. ``known``: nodes' mentions
    this call read already (:func:`_retrieve`'s best nodes, the seeds among them), not read again."""
    store, index = parts.store, parts.entry_finder.index()
    top = [u for u, _ in top_items(scored, units)]
    tops = store.get_units(top)
    ends = [(unit.subject_id, unit.subject) for unit in tops] + [  # a node value has both its id and its label
        (v.node_ref, v.node) for unit in tops for v in list(unit.args) + [m.value for m in unit.mods]
        if v.node and v.node_ref]
    bridges = list(dict.fromkeys(n for n, _ in ends if not is_literal_id(n) and n not in seeds))
    # the same entities in their other surface forms, as the lexical hop finds them
    labels = {n: label for n, label in ends if n in bridges}
    bridges = list(dict.fromkeys(bridges + [a for n in bridges for a in index.names_within(labels[n]) if a not in seeds]))
    if not bridges:
        return []
    known = known or {}
    near = dict(known)
    unread = [n for n in bridges + sorted(seeds) if n not in known]
    if unread:
        near.update(store.mentions_of(unread))
    cands = {u for n in bridges for u in near[n]}
    for n in seeds:
        cands.difference_update(near[n])
    cands.difference_update(top)
    found = parts.lexical_units.index().best_of(residual(question, tops), cands) if cands else None
    if found is None:
        return []
    best = found[0]
    return store.superseded_end([best]).get(best, [best])[:1]

"""The project's no-LLM retrieval: question -> ranked units (the pool the drill-down sees).

1. entry nodes from the question (:mod:`kgservice.entry`: names + vectors, by specificity);
2. spreading activation from them with the service's parameters (hub damping and seed
   backflow from the lexicon, :meth:`KnowledgeBase.spread_params`);
3. fusion of the node energies with the question's vector similarity to the nodes
   (:func:`kgservice.expansion.fusion.fuse_scores`): the embedder's opinion for nodes the
   graph reached weakly or not at all;
4. units of the best nodes, each scored by the sum of its nodes' fused scores, superseded
   units replaced by their terminal units.

Scores order units; they never make a fact (invariant 2). The eval (scripts/eval/) measures
this function end to end on MuSiQue.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kgservice.entry import EntryResult
from kgservice.expansion.fusion import fuse_scores
from kgservice.expansion.spread import spread_activation
from kgservice.ids import is_literal_id

if TYPE_CHECKING:
    from kgservice.service import KnowledgeBase


@dataclass(frozen=True)
class RetrieveParams:
    dense_weight: float = 0.15  # weight of the node-vector similarity in the fusion (eval: 0.15 > 0 > 0.3 for R@5)
    dense_top_k: int = 30  # nearest nodes to the question asked of the vector store
    top_nodes: int = 30  # units are collected from this many best nodes
    max_units: int = 40  # the pool size returned


@dataclass
class RetrievedUnit:
    id: str
    score: float
    nodes: list[str]


@dataclass
class Retrieval:
    question: str
    entry: EntryResult
    node_scores: dict[str, float] = field(default_factory=dict)
    units: list[RetrievedUnit] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "entry": self.entry.to_dict(),
                "units": [u.__dict__ for u in self.units], "seconds": round(self.seconds, 4)}


def retrieve(kb: KnowledgeBase, question: str, params: RetrieveParams | None = None, qvec: Any = None) -> Retrieval:
    p = params or RetrieveParams()
    t0 = time.perf_counter()
    if qvec is None:
        qvec = kb.embedder.embed([question])[0]
    entry = kb.entry(question, qvec)
    energy = spread_activation(kb.store, entry.seeds, kb.spread_params()).energy if entry.seeds else {}
    dense = {n: s for n, s in kb.vectors.search(qvec, top_k=p.dense_top_k, threshold=0.0)} if p.dense_weight else {}
    graph = {n: e for n, e in energy.items() if not is_literal_id(n)}
    scores = fuse_scores(graph, dense, p.dense_weight) if dense else fuse_scores(graph, {}, 0.0)
    best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[: p.top_nodes]
    store = kb.store
    found: dict[str, set[str]] = {}
    for n, _ in best:
        for uid in store.subject_mentions(n) + store.context_mentions(n):
            found.setdefault(uid, set()).add(n)
    ends = store.superseded_end(sorted(found)) if found else {}
    pool: dict[str, set[str]] = {}
    for uid, nodes in found.items():
        for t in ends.get(uid, [uid]):
            pool.setdefault(t, set()).update(nodes)
    ranked = sorted(((uid, sum(scores[n] for n in nodes), sorted(nodes)) for uid, nodes in pool.items()),
                    key=lambda x: (-x[1], x[0]))[: p.max_units]
    return Retrieval(question, entry, dict(best), [RetrievedUnit(u, round(s, 9), ns) for u, s, ns in ranked],
                     time.perf_counter() - t0)

"""The ranking methods compared by the eval. Each takes (context, question, entry seeds) and
returns passage scores; the baselines (dense passages, networkx PPR) run on the same graph and
the same entry nodes as the project's own methods."""

from __future__ import annotations

from collections.abc import Mapping

import networkx as nx

from kgservice.expansion import SpreadParams, expand_directed, spread_activation
from kgservice.families import SPREAD_KINDS

from scripts.eval.harness import Context, dense_scores, fuse, rank_passages, unit_passages_scores


def dense(ctx: Context, qid: str, seeds: Mapping[str, float]) -> dict[str, float]:
    return dense_scores(ctx, qid)


def _graph(ctx: Context) -> nx.Graph:
    if ctx.nx_graph is None:
        g = nx.Graph()
        for nodes in ctx.passage_nodes.values():
            g.add_nodes_from(nodes)
        units = ctx.kb.store.get_units(list(ctx.unit_passages))
        for u in units:
            for n in u.context_node_ids():
                if not n.startswith("lit:") and n != u.subject_id:
                    w = g.get_edge_data(u.subject_id, n, {}).get("weight", 0.0)
                    g.add_edge(u.subject_id, n, weight=w + 1.0)
        ctx.nx_graph = g
    return ctx.nx_graph


def pagerank(g: nx.Graph, personalization: Mapping[str, float], alpha: float = 0.5,
             tol: float = 1e-8, max_iter: int = 200) -> dict[str, float]:
    """Personalized PageRank by power iteration over the networkx graph's edges in numpy
    (networkx's own fast path needs scipy, which the project does not depend on; the tests
    check this against networkx's pure-Python pagerank). Dangling nodes jump to the
    personalization vector, as in networkx."""
    import numpy as np

    nodes = list(g)
    ix = {n: i for i, n in enumerate(nodes)}
    src, dst, w = [], [], []
    for a, b, d in g.edges(data=True):
        wt = float(d.get("weight", 1.0))
        src += [ix[a], ix[b]]
        dst += [ix[b], ix[a]]
        w += [wt, wt]
    src_a, dst_a, w_a = np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64), np.array(w)
    out_w = np.bincount(src_a, weights=w_a, minlength=len(nodes))
    p = np.zeros(len(nodes))
    for n, v in personalization.items():
        p[ix[n]] = v
    p /= p.sum()
    x = p.copy()
    dangling = out_w == 0
    coef = np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, out_w))
    for _ in range(max_iter):
        prev = x
        flow = np.bincount(dst_a, weights=(prev * coef)[src_a] * w_a, minlength=len(nodes))
        x = alpha * (flow + prev[dangling].sum() * p) + (1 - alpha) * p
        if np.abs(x - prev).sum() < len(nodes) * tol:
            break
    return dict(zip(nodes, x.tolist()))


def ppr(ctx: Context, qid: str, seeds: Mapping[str, float], alpha: float = 0.5) -> dict[str, float]:
    """HippoRAG-style: personalized PageRank (damping 0.5) from the entry nodes weighted as the
    entry step weighs them; passage = sum of its nodes' probabilities. No synonym edges."""
    g = _graph(ctx)
    pers = {n: w for n, w in seeds.items() if n in g}
    if not pers:
        return {}
    return rank_passages(ctx, pagerank(g, pers, alpha))


def directed(ctx: Context, qid: str, seeds: Mapping[str, float]) -> dict[str, float]:
    """Directed expansion per seed; a passage scores the weights of the seeds that reach one of
    its units (plus a hair per unit, to break ties)."""
    out: dict[str, float] = {}
    for seed, w in seeds.items():
        res = expand_directed(ctx.kb.store, [seed])
        hit: dict[str, int] = {}
        for uid in res.units:
            for pid in ctx.unit_passages.get(uid, ()):
                hit[pid] = hit.get(pid, 0) + 1
        for pid, n in hit.items():
            out[pid] = out.get(pid, 0.0) + w + 1e-3 * n
    return out


def spread_params(ctx: Context, **kw: object) -> SpreadParams:
    tau = {k: ctx.kb.lexicon.tau_of(k) for k in SPREAD_KINDS}
    return SpreadParams(tau=tau, **kw)  # type: ignore[arg-type]


def spread(ctx: Context, qid: str, seeds: Mapping[str, float], **kw: object) -> dict[str, float]:
    res = spread_activation(ctx.kb.store, dict(seeds), spread_params(ctx, **kw))
    return rank_passages(ctx, res.energy)


def fused(ctx: Context, qid: str, seeds: Mapping[str, float], weight: float = 0.5, **kw: object) -> dict[str, float]:
    return fuse(spread(ctx, qid, seeds, **kw), dense_scores(ctx, qid), weight)


def project(ctx: Context, qid: str, seeds: Mapping[str, float], **kw: object) -> dict[str, float]:
    """The project's own no-LLM retrieval, end to end (``KnowledgeBase.retrieve``: its entry step,
    spreading with the lexicon's defaults, fusion with node-vector similarity), with the shipped
    defaults unless ``kw`` changes one; a passage scores the sum of its retrieved units' scores.
    The pool is the shipped one (``RetrieveParams.max_units``, 40: what ``kb.retrieve(question)``
    returns and the no-model answer cites from), so the table measures the retrieval as it
    ships; until 2026-12-05 the eval asked for 200 units, a pool the library never returns by
    default (scripts/eval/RESULTS.md, last section).
    ``seeds`` is ignored: it finds its own."""
    from kgservice.expansion.retrieve import RetrieveParams, retrieve

    q = next(x for x in ctx.ds.questions if x.id == qid)
    res = retrieve(ctx.kb, q.question, RetrieveParams(**kw), qvec=ctx.qvecs[qid])  # type: ignore[arg-type]
    return unit_passages_scores(ctx, res.units)

"""Run the retrieval eval: ``python scripts/eval/run.py [--musique DIR | --data FILE] [--limit N] [--slice]``.

Prints Recall@2 / @5 per method side by side (overall, per hop count and per question type),
the entry step's coverage of gold passages, and one latency figure: the per-question time of
the project's own retrieval end to end (``KnowledgeBase.retrieve``, with and without the
question's embedding). ``--json FILE`` writes all of it plus every question's ranking and its
entry nodes.

Environment: ``KG_EVAL_DIR`` is where built sets are cached (the ingested store per set and
embedder, keyed by the passages' triples; passage vectors keyed by the passages' text alone;
default ``~/.cache/kgservice/eval``); ``KG_EVAL_MUSIQUE`` is the MuSiQue folder (default
``../shared/eval/musique`` beside the checkout).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripts.eval import methods as M  # noqa: E402
from scripts.eval.dataset import MUSIQUE_DIR, load, load_musique, subset  # noqa: E402
from scripts.eval.defaults_rule import FULL  # noqa: E402
from scripts.eval.harness import (MISS_KINDS, Context, build, evaluate, format_table, miss_reason,  # noqa: E402
                                  miss_table, ordered, unit_passages_scores)
from scripts.eval.metrics import percentile  # noqa: E402

from kgservice.entry import EntryParams  # noqa: E402


def seeds_for(ctx: Context, names_only: bool = False) -> dict[str, dict[str, float]]:
    p = EntryParams(use_vectors=not names_only)
    return {q.id: ctx.finder.find(q.question, ctx.qvecs[q.id], p).seeds for q in ctx.ds.questions}


def coverage(ctx: Context, seeds: dict[str, dict[str, float]]) -> float:
    """% of gold passages that mention at least one entry node of their question."""
    missed, tot = uncovered(ctx, seeds)
    return 100.0 * (tot - missed) / max(1, tot)


def uncovered(ctx: Context, seeds: dict[str, dict[str, float]]) -> tuple[int, int]:
    """(gold passages that mention no entry node of their question, gold passages)."""
    missed = tot = 0
    for q in ctx.ds.questions:
        for g in q.gold:
            tot += 1
            missed += not (ctx.passage_nodes.get(g, set()) & set(seeds[q.id]))
    return missed, tot




def standard_methods(weight: float = 0.1) -> dict[str, object]:
    """The rows of the table: baselines, the project's pieces, and its full retrieval."""
    from scripts.eval.harness import dense_scores, fuse

    return {
        "dense passages (default embedder)": M.dense,
        "HippoRAG-style PPR (networkx)": M.ppr,
        "directed expansion": M.directed,
        "spreading, DESIGN defaults (no damping, seed backflow)": lambda c, q, s: M.spread(c, q, s),
        "spreading, lexicon defaults (damping 0.5, no backflow)": lambda c, q, s: M.spread(
            c, q, s, degree_damping=c.kb.spread_params().degree_damping, seed_backflow=c.kb.spread_params().seed_backflow),
        # spreading alone with the parameters the full retrieval spreads with (RetrieveParams:
        # the service's δ 0.5, one hop, the lexicon's no-backflow), passages ranked by their
        # nodes' energy: what the retrieval's other steps must beat (until 2026-12-06 the
        # retrieval spread undamped: the row "(δ=0, K=1, no backflow)" of older result files)
        "spreading, the retrieval's parameters (δ=0.5, K=1, no backflow)": lambda c, q, s: M.spread(
            c, q, s, degree_damping=c.kb.spread_params().degree_damping, max_hops=1,
            seed_backflow=c.kb.spread_params().seed_backflow),
        "kgservice retrieval, no lexical seeds (entry + spread + node-vector fusion)": lambda c, q, s: M.project(
            c, q, s, lexical_weight=0.0),
        "kgservice retrieval, with the lexical hop (hop_weight 0.5, off by default)": lambda c, q, s: M.project(
            c, q, s, hop_weight=0.5),
        "kgservice retrieval, no bridge hop (entry + lexical seeds + spread + node-vector fusion)":
            lambda c, q, s: M.project(c, q, s, bridge_weight=0.0),
        FULL: M.project,
        f"PPR + dense passages fused (w={weight})": lambda c, q, s: fuse(M.ppr(c, q, s), dense_scores(c, q), weight),
        f"kgservice retrieval + dense passages fused (w={weight})": lambda c, q, s: fuse(
            M.project(c, q, s), dense_scores(c, q), weight),
    }


def with_spread(fn, **spread: object):
    """``fn`` run with the retrieval's spreading parameters replaced in part (backflow, ε, τ;
    δ and K are the retrieval's own ``degree_damping`` and ``spread_hops``). The retrieval reads
    them from :func:`kgservice.expansion.spread.service_params` as its module imported it, so
    the row swaps that name in :mod:`kgservice.expansion.retrieve` for the call and puts it
    back. (Until 2026-12-06 the row swapped ``kb.spread_params``, which the retrieval stopped
    reading in e03913f: those rows measured the shipped retrieval.)"""
    from dataclasses import replace

    import kgservice.expansion.retrieve as retrieval

    def run_with(c: Context, q: str, s: dict[str, float]) -> dict[str, float]:
        original = retrieval.service_params
        retrieval.service_params = lambda *a, **kw: replace(original(*a, **kw), **spread)  # type: ignore[assignment]
        try:
            return fn(c, q, s)  # type: ignore[operator,no-any-return]
        finally:
            retrieval.service_params = original
    return run_with


def ablations() -> dict[str, object]:
    """One row per default changed alone, on the full retrieval: hub damping δ, seed backflow,
    K, ε, the node-vector fusion weight, the lexical seeds (their weight, their units and the
    entry step's common words among them), the lexical hop (its weight
    and the label holders it follows), the bridge hop (and the ranking its source units
    come from), how many best nodes give their units and nearest nodes join the fusion, and the
    pool's size.
    ``defaults_rule.py`` reads them from two sets' ``--json``."""
    rows: dict[str, object] = {}
    for d in (0.0, 0.25, 0.5, 1.0):
        rows[f"ablation: δ={d}"] = lambda c, q, s, d=d: M.project(c, q, s, degree_damping=d)
    rows["ablation: δ=0, seed backflow"] = with_spread(lambda c, q, s: M.project(c, q, s, degree_damping=0.0),
                                                      seed_backflow=True)
    for k in (2, 3, 4):
        rows[f"ablation: K={k}"] = lambda c, q, s, k=k: M.project(c, q, s, spread_hops=k)
    for e in (0.02, 0.1):
        rows[f"ablation: ε={e}"] = with_spread(M.project, epsilon=e)
    for w in (0.0, 0.05, 0.075, 0.1, 0.125, 0.15, 0.175, 0.2, 0.3):
        rows[f"ablation: node-vector fusion weight {w}"] = lambda c, q, s, w=w: M.project(c, q, s, dense_weight=w)
    for w in (0.0, 0.25, 1.0):
        rows[f"ablation: lexical seeds' entry common words at {w}"] = lambda c, q, s, w=w: M.project(c, q, s, lexical_common=w)
    for w in (0.75, 1.0, 1.5, 2.0):
        rows[f"ablation: lexical seed weight {w}"] = lambda c, q, s, w=w: M.project(c, q, s, lexical_weight=w)
    for n in (2, 3):
        rows[f"ablation: lexical seeds from {n} units"] = lambda c, q, s, n=n: M.project(c, q, s, lexical_units=n)
    for w in (0.25, 1.0):
        rows[f"ablation: lexical hop weight {w}"] = lambda c, q, s, w=w: M.project(c, q, s, hop_weight=w)
    rows["ablation: no lexical seeds, no lexical hop"] = lambda c, q, s: M.project(c, q, s, lexical_weight=0.0,
                                                                                   hop_weight=0.0)
    for b in (5, 15, 20):
        rows[f"ablation: bridge hop from {b} units"] = lambda c, q, s, b=b: M.project(c, q, s, bridge_units=b)
    for w in (0.25, 0.5, 0.75, 1.0):
        rows[f"ablation: bridge hop weight {w}"] = lambda c, q, s, w=w: M.project(c, q, s, bridge_weight=w)
    rows["ablation: bridge hop from the fused ranking (node-vector neighbours included)"] = lambda c, q, s: M.project(
        c, q, s, bridge_graph=False)
    for n in (15, 50):
        rows[f"ablation: units from the {n} best nodes"] = lambda c, q, s, n=n: M.project(c, q, s, top_nodes=n)
    for n in (15, 60):
        rows[f"ablation: {n} nearest nodes in the fusion"] = lambda c, q, s, n=n: M.project(c, q, s, dense_top_k=n)
    for n in (20, 100, 200):
        rows[f"ablation: a pool of {n} units"] = lambda c, q, s, n=n: M.project(c, q, s, max_units=n)
    for h in (0, 20):
        rows[f"ablation: lexical hop label holders {h}"] = lambda c, q, s, h=h: M.project(c, q, s, hop_holders=h)
    rows["ablation: δ=0, no lexical hop"] = lambda c, q, s: M.project(c, q, s, hop_weight=0.0, degree_damping=0.0)
    rows["ablation: δ=0.5, no lexical hop"] = lambda c, q, s: M.project(c, q, s, hop_weight=0.0, degree_damping=0.5)
    rows.update(tau_ablations())
    rows.update(component_rows())
    rows.update(ppr_fusion_rows())
    return rows


GRAPH_ONLY = "kgservice retrieval, graph only (entry + spread, units of the best nodes)"


def node_sum_passages(ctx: Context, res: Any) -> dict[str, float]:
    """Passages of the retrieval's pool scored as the spreading rows score them: the sum over the
    *distinct* nodes of its retrieved units of their fused scores (``Retrieval.node_scores``),
    not the sum of its units' scores (a passage of three units about the question's entity
    counts that entity once); a pool unit with no scored node (the bridge or lexical hop's)
    adds its own score once.

    >>> from types import SimpleNamespace as NS
    >>> ctx = NS(unit_passages={"u1": ["p"], "u2": ["p"], "u3": ["q"]})
    >>> res = NS(node_scores={"a": 2.0, "b": 1.0}, units=[NS(id="u1", score=3.0, nodes=["a", "b"]),
    ...          NS(id="u2", score=2.0, nodes=["a"]), NS(id="u3", score=0.5, nodes=["c"])])
    >>> node_sum_passages(ctx, res)
    {'p': 3.0, 'q': 0.5}
    """
    nodes: dict[str, set[str]] = {}
    extra: dict[str, float] = {}
    for u in res.units:
        scored = [n for n in u.nodes if n in res.node_scores]
        for pid in ctx.unit_passages.get(u.id, ()):
            if scored:
                nodes.setdefault(pid, set()).update(scored)
            else:
                extra[pid] = extra.get(pid, 0.0) + u.score
    out = {pid: sum(res.node_scores[n] for n in sorted(ns)) for pid, ns in nodes.items()}
    for pid, s in extra.items():
        out[pid] = out.get(pid, 0.0) + s
    return out


def project_node_sums(c: Context, qid: str, s: dict[str, float], **kw: object) -> dict[str, float]:
    """The full retrieval, its pool's passages ranked by :func:`node_sum_passages`."""
    from kgservice.expansion.retrieve import RetrieveParams, retrieve

    q = next(x for x in c.ds.questions if x.id == qid)
    return node_sum_passages(c, retrieve(c.kb, q.question, RetrieveParams(**kw), qvec=c.qvecs[qid]))  # type: ignore[arg-type]


def repeat_damped_passages(ctx: Context, units: Any, scores: dict[str, float], extra: set[str],
                           power: float, whole: frozenset[str] | set[str] = frozenset()) -> dict[str, float]:
    """Passages of the retrieval's pool scored between the two ways above: each node of a
    passage's units counts its fused score times (the number of the passage's pool units that
    mention it) ** ``power``. 1 is the sum of its units' scores (the kg rows); 0 counts each
    node once (:func:`node_sum_passages`, but with every node of the units, not only the best
    30); 0.5 lets a passage's seventh unit about the same entity add less than its first. A
    unit in ``extra`` (the bridge or lexical hop's, scored from the best unit, not its nodes)
    adds its own score once. A node in ``whole`` (the spreading's seeds, in the rows that keep
    them) counts every repeat, whatever ``power``.

    >>> from types import SimpleNamespace as NS
    >>> ctx = NS(unit_passages={"u1": ["p"], "u2": ["p"], "u3": ["p"], "u4": ["q"], "h": ["q"]})
    >>> units = [NS(id="u1", score=1.5, nodes=["a", "b"]), NS(id="u2", score=1.5, nodes=["a", "c"]),
    ...          NS(id="u3", score=1.0, nodes=["a"]), NS(id="u4", score=1.2, nodes=["d"]), NS(id="h", score=2.0, nodes=["x"])]
    >>> s = {"a": 1.0, "b": 0.5, "c": 0.5, "d": 1.2}
    >>> repeat_damped_passages(ctx, units, s, {"h"}, 1.0)   # the units' sums: p 1.5 + 1.5 + 1.0
    {'p': 4.0, 'q': 3.2}
    >>> {k: round(v, 6) for k, v in repeat_damped_passages(ctx, units, s, {"h"}, 0.0).items()}   # a once, b, c
    {'p': 2.0, 'q': 3.2}
    >>> round(repeat_damped_passages(ctx, units, s, {"h"}, 0.5)["p"], 4)   # a × √3
    2.7321
    >>> repeat_damped_passages(ctx, units, s, {"h"}, 0.0, {"a"})["p"]   # the seed a thrice, b, c once
    4.0
    """
    counts: dict[str, dict[str, int]] = {}
    for u in units:
        if u.id not in extra:
            for pid in ctx.unit_passages.get(u.id, ()):
                c = counts.setdefault(pid, {})
                for n in u.nodes:
                    c[n] = c.get(n, 0) + 1
    # unit by unit, each node's score times count ** (power - 1), rounded as the retrieval
    # rounds a unit's score: power 1 is then exactly the units' sums, ties included
    out: dict[str, float] = {}
    for u in units:
        for pid in ctx.unit_passages.get(u.id, ()):
            v = u.score if u.id in extra else round(math.fsum(
                scores.get(n, 0.0) * (1.0 if n in whole else counts[pid][n] ** (power - 1)) for n in u.nodes), 9)
            out[pid] = out.get(pid, 0.0) + v
    return out


def project_repeat_damped(c: Context, qid: str, s: dict[str, float], power: float = 0.5,
                          **kw: object) -> dict[str, float]:
    """The full retrieval (``kw`` as :func:`methods.project`), its pool's passages ranked by
    :func:`repeat_damped_passages` over the call's fused node scores (:func:`retrieve_seen`)."""
    res, seen = retrieve_seen(c, qid, **kw)
    return repeat_damped_passages(c, res.units, seen["scores"], set(res.bridge) | set(res.hop), power)


def retrieve_seen(c: Context, qid: str, **kw: object) -> tuple[Any, dict[str, Any]]:
    """The retrieval (``kw`` as :func:`methods.project`) and what its unit scoring saw: the
    pool (unit -> its nodes, the hops' units added after), the fused node scores and the graph's
    energies, read by wrapping :func:`kgservice.expansion.retrieve.unit_scores` for the call."""
    import kgservice.expansion.retrieve as retrieval

    original = retrieval.unit_scores
    seen: dict[str, Any] = {"pool": {}, "scores": {}, "graph": {}}

    def spy(pool, scores, graph, mode="copied"):  # type: ignore[no-untyped-def]
        seen.update(pool=pool, scores=scores, graph=graph)
        return original(pool, scores, graph, mode)
    retrieval.unit_scores = spy  # type: ignore[assignment]
    try:
        q = next(x for x in c.ds.questions if x.id == qid)
        res = retrieval.retrieve(c.kb, q.question, retrieval.RetrieveParams(**kw), qvec=c.qvecs[qid])  # type: ignore[arg-type]
    finally:
        retrieval.unit_scores = original
    return res, seen


def capped_passages(ctx: Context, units: Any, reached: set[str], below: int = 2,
                    base: dict[str, float] | None = None) -> dict[str, float]:
    """Passages scored by the sum of their units (as the kg rows), except that a passage none
    of whose units the graph reached (the node-vector fusion brought them alone) cannot pass
    the graph's ``below``-th passage: it is held just under it when it would rank above. A
    passage-level form of "the fusion's units after the graph's" that leaves the fusion-only
    passages free below the graph's second (where its R@5 gains are). ``base`` (passage ->
    score) replaces the units' sums, for a cap over another passage scoring.

    >>> from types import SimpleNamespace as NS
    >>> ctx = NS(unit_passages={"g1": ["p"], "g2": ["q"], "f1": ["v"], "f2": ["v"], "f3": ["w"]})
    >>> units = [NS(id="g1", score=3.0), NS(id="g2", score=1.0), NS(id="f1", score=0.8), NS(id="f2", score=0.8),
    ...          NS(id="f3", score=0.5)]
    >>> s = capped_passages(ctx, units, {"g1", "g2"})
    >>> sorted(s, key=lambda p: -s[p]), s["v"] < s["q"], s["w"]
    (['p', 'q', 'v', 'w'], True, 0.5)
    >>> capped_passages(ctx, units, {"g1", "g2"}, base={"p": 3.0, "q": 1.0, "v": 2.0})["v"] < 1.0
    True
    """
    scores: dict[str, float] = {}
    graph: set[str] = set()
    for u in units:
        for pid in ctx.unit_passages.get(u.id, ()):
            scores[pid] = scores.get(pid, 0.0) + u.score
            if u.id in reached:
                graph.add(pid)
    if base is not None:
        scores = dict(base)
        graph &= set(scores)
    ranked = sorted((scores[p] for p in graph), reverse=True)
    if not ranked:
        return scores
    cap = ranked[min(below, len(ranked)) - 1]
    return {p: (min(v, cap * (1 - 1e-9)) if p not in graph else v) for p, v in scores.items()}


def project_capped(c: Context, qid: str, s: dict[str, float], **kw: object) -> dict[str, float]:
    """The retrieval (``kw`` as :func:`methods.project`), its passages ranked by
    :func:`capped_passages`; a unit is reached when one of its nodes has spreading energy
    (read from :func:`kgservice.expansion.retrieve.unit_scores`, wrapped for the call) or it
    is the bridge or lexical hop's (a hop from what the graph reached)."""
    res, seen = retrieve_seen(c, qid, **kw)
    pool, graph = seen["pool"], seen["graph"]
    reached = {u.id for u in res.units if any(graph.get(n, 0.0) > 0 for n in pool.get(u.id, ()))}
    return capped_passages(c, res.units, reached | set(res.bridge) | set(res.hop))


def shared_passages(ctx: Context, units: Any, scores: dict[str, float], extra: set[str],
                    whole: frozenset[str] | set[str] = frozenset()) -> dict[str, float]:
    """Passages of the retrieval's pool scored by their units' sums, with each node not in
    ``whole`` (the seeds) weighing its fused score divided by the number of the pool's units
    that mention it: a node's energy shared among its units, a degree normalisation in the pool
    (PPR hands a node's mass on divided by its degree; a passage of seven units about one
    neighbour of the seed then weighs that neighbour once in all). A unit in ``extra`` (the
    bridge or lexical hop's) adds its own score.

    >>> from types import SimpleNamespace as NS
    >>> ctx = NS(unit_passages={"u1": ["p"], "u2": ["p"], "u3": ["q"], "h": ["q"]})
    >>> units = [NS(id="u1", score=1.5, nodes=["s", "b"]), NS(id="u2", score=1.5, nodes=["s", "b"]),
    ...          NS(id="u3", score=1.5, nodes=["s", "c"]), NS(id="h", score=0.2, nodes=["x"])]
    >>> shared_passages(ctx, units, {"s": 1.0, "b": 0.5, "c": 0.5}, {"h"}, {"s"})   # b halved per unit
    {'p': 2.5, 'q': 1.7}
    """
    counts: dict[str, int] = {}
    for u in units:
        if u.id not in extra:
            for n in u.nodes:
                counts[n] = counts.get(n, 0) + 1
    out: dict[str, float] = {}
    for u in units:
        v = u.score if u.id in extra else round(math.fsum(
            scores.get(n, 0.0) / (1 if n in whole else counts[n]) for n in u.nodes), 9)
        for pid in ctx.unit_passages.get(u.id, ()):
            out[pid] = out.get(pid, 0.0) + v
    return out


def entry_reached(c: Context, res: Any, **kw: object) -> set[str]:
    """The pool units of ``res`` (a retrieval run with ``kw``) one of whose nodes the entry
    seeds' own spreading reaches: the spreading the retrieval does, from the entry step's
    seeds alone (no lexical seeds), with its parameters (one hop, the service's δ unless ``kw``
    sets one). What the question's named entities reach, not a lexical seed or the fusion."""
    from dataclasses import replace

    from kgservice.expansion.retrieve import RetrieveParams
    from kgservice.expansion.spread import service_params, spread_activation

    p = RetrieveParams(**kw)  # type: ignore[arg-type]
    parts = c.kb.parts
    sp = service_params(parts.settings, parts.lexicon, max_hops=p.spread_hops or 0)
    if p.degree_damping is not None:
        sp = replace(sp, degree_damping=p.degree_damping)
    seeds = dict(res.entry.seeds)
    energy = spread_activation(parts.store, seeds, sp).energy if seeds else {}
    return {u.id for u in res.units if any(energy.get(n, 0.0) > 0 for n in u.nodes)}


def project_pool_scored(c: Context, qid: str, s: dict[str, float], scoring: str, **kw: object) -> dict[str, float]:
    """The retrieval (``kw`` as :func:`methods.project`), its pool's passages scored by
    ``scoring``: "non-seed once" (:func:`repeat_damped_passages` at power 0 with the seeds'
    repeats kept: a passage counts each other node once, as PPR's passages do), "shared"
    (:func:`shared_passages`), "entry cap" (:func:`capped_passages` with the units the entry
    seeds' spreading reached, :func:`entry_reached`: a passage only a lexical seed or the fusion
    brought is held below the named entities' second), "entry cap, bridge reached" (the same,
    the bridge hop's unit counted as reached, as the fusion cap counts it) or "non-seed once,
    entry cap" (both)."""
    res, seen = retrieve_seen(c, qid, **kw)
    extra, seeds = set(res.bridge) | set(res.hop), set(res.seeds)
    if scoring == "shared":
        return shared_passages(c, res.units, seen["scores"], extra, seeds)
    once = repeat_damped_passages(c, res.units, seen["scores"], extra, 0.0, seeds) if "once" in scoring else None
    if scoring == "non-seed once":
        return once or {}
    reached = entry_reached(c, res, **kw) | (extra if "bridge reached" in scoring else set())
    return capped_passages(c, res.units, reached, base=once)


def anchored_lexical(c: Context, q: str, s: dict[str, float], **kw: object) -> dict[str, float]:
    """The retrieval (``kw`` as :func:`methods.project`) with its lexical seeds taken only when
    the lexical unit holds a node the entry seeds' own spreading reaches (an entry seed or a
    node one hop out, with the retrieval's spreading parameters); otherwise the entry seeds
    alone. A lexical unit the question's named entities do not reach is most often another
    entity's unit that shares the question's common words ("Oklahoma City Spirit" for "the
    city where the performers of Brother were formed"): its seeds' passages then take the
    second place from the bridge's. :func:`kgservice.expansion.retrieve.lexical_seeds` wrapped
    for the call."""
    from dataclasses import replace

    import kgservice.expansion.retrieve as retrieval
    from kgservice.expansion.spread import service_params, spread_activation

    original = retrieval.lexical_seeds
    p = retrieval.RetrieveParams(**kw)  # type: ignore[arg-type]

    def gated(parts, question, seeds, params, common=()):  # type: ignore[no-untyped-def]
        out, lexical = original(parts, question, seeds, params, common)
        if not lexical or not seeds:
            return out, lexical
        sp = service_params(parts.settings, parts.lexicon, max_hops=p.spread_hops or 0)
        if p.degree_damping is not None:
            sp = replace(sp, degree_damping=p.degree_damping)
        energy = spread_activation(parts.store, dict(seeds), sp).energy
        units = parts.store.get_units(list(lexical))
        if any(energy.get(n, 0.0) > 0 for u in units for n in [u.subject_id] + u.context_node_ids()):
            return out, lexical
        return dict(seeds), {}
    retrieval.lexical_seeds = gated  # type: ignore[assignment]
    try:
        return M.project(c, q, s, **kw)
    finally:
        retrieval.lexical_seeds = original


# the passage scorings the losses to PPR point to ("The questions kg full loses at top 2 …",
# scripts/eval/RESULTS.md), each over the shipped pool
POOL_SCORINGS = {
    "ablation: passages: a non-seed node once per passage (seeds' repeats kept)": "non-seed once",
    "ablation: passages: a non-seed node's score shared among the pool units that mention it": "shared",
    "ablation: a passage the entry seeds' spreading did not reach below their second": "entry cap",
    "ablation: a passage the entry seeds' spreading did not reach below their second, the bridge hop's counted reached":
        "entry cap, bridge reached",
    "ablation: passages: a non-seed node once, and the entry-reached cap": "non-seed once, entry cap",
}


def graph_sized_pool(c: Context) -> int:
    """A pool sized by the graph: the square root of its units (131 on MuSiQue's 17k-unit GPT
    graph, 49 on the 2.4k-unit rules graph), at least 20."""
    return max(20, round(math.sqrt(c.build_info.get("units") or 1600)))


def component_rows() -> dict[str, object]:
    """What lies between spreading alone and the full retrieval, one component at a time: the
    retrieval with the graph alone (entry seeds, spreading, the units of the best nodes: a
    passage scores the sum of its units), then that with each of the lexical seeds, the
    node-vector fusion and the bridge hop added alone; and two ways of ranking that the
    spreading rows differ by: passages by their distinct nodes' scores
    (:func:`node_sum_passages`) and a pool sized by the graph (:func:`graph_sized_pool`)."""
    bare = {"lexical_weight": 0.0, "dense_weight": 0.0, "bridge_weight": 0.0}
    return {
        GRAPH_ONLY: lambda c, q, s: M.project(c, q, s, **bare),
        "kgservice retrieval, graph only + lexical seeds": lambda c, q, s: M.project(c, q, s, **{**bare, "lexical_weight": 1.0}),
        "kgservice retrieval, graph only + node-vector fusion": lambda c, q, s: M.project(c, q, s, **{**bare, "dense_weight": 0.1}),
        "kgservice retrieval, graph only + bridge hop": lambda c, q, s: M.project(c, q, s, **{**bare, "bridge_weight": 1.0}),
        "kgservice retrieval, graph only, passages by node sums": lambda c, q, s: project_node_sums(c, q, s, **bare),
        "ablation: passages by node sums": project_node_sums,
        # a node's repeats within a passage counted by a power of their number (1: the units' sums)
        "ablation: passages by units, a node's repeats counted ^1 (check: the shipped row)": lambda c, q, s: project_repeat_damped(
            c, q, s, 1.0),
        "ablation: passages by units, a node's repeats counted ^0.5": project_repeat_damped,
        "ablation: passages by units, a node's repeats counted ^0": lambda c, q, s: project_repeat_damped(c, q, s, 0.0),
        "kgservice retrieval, graph only, a node's repeats counted ^0.5": lambda c, q, s: project_repeat_damped(
            c, q, s, 0.5, **bare),
        # a passage the fusion brought alone cannot pass the graph's second passage (capped_passages)
        "ablation: a fusion-only passage below the graph's second": project_capped,
        "kgservice retrieval, graph only + node-vector fusion, a fusion-only passage below the graph's second": lambda c, q, s: project_capped(
            c, q, s, **{**bare, "dense_weight": 0.1}),
        **{name: (lambda c, q, s, how=how: project_pool_scored(c, q, s, how)) for name, how in POOL_SCORINGS.items()},
        "ablation: lexical seeds only from a unit the entry seeds' spreading reaches": anchored_lexical,
        "ablation: a pool sized by the graph (√units)": lambda c, q, s: M.project(c, q, s, max_units=graph_sized_pool(c)),
        "ablation: a pool sized by the graph, passages by node sums": lambda c, q, s: project_node_sums(
            c, q, s, max_units=graph_sized_pool(c)),
        "ablation: node-vector fusion on the nodes spreading reached only": fusion_reached_only,
        # how a node's node-vector similarity reaches its units: copied to each (shipped), shared
        # among them (fusion_shared), or copied with the units spreading did not reach ranked
        # after those it did (RetrieveParams.dense_units "after_graph")
        "kgservice retrieval, graph only + node-vector fusion shared among a node's units": lambda c, q, s: fusion_shared(
            c, q, s, **{**bare, "dense_weight": 0.1}),
        "kgservice retrieval, graph only + node-vector fusion, its units after the graph's": lambda c, q, s: M.project(
            c, q, s, **{**bare, "dense_weight": 0.1, "dense_units": "after_graph"}),
        "ablation: node-vector fusion shared among a node's units": fusion_shared,
        "ablation: units the graph did not reach ranked after those it did": lambda c, q, s: M.project(
            c, q, s, dense_units="after_graph"),
        "ablation: fusion shared among a node's units, with the lexical hop": lambda c, q, s: fusion_shared(
            c, q, s, hop_weight=0.5),
        "ablation: units the graph did not reach after those it did, with the lexical hop": lambda c, q, s: M.project(
            c, q, s, dense_units="after_graph", hop_weight=0.5),
    }


def scaled_sum(a: dict[str, float], b: dict[str, float], weight: float) -> dict[str, float]:
    """Two passage scorings each divided by its own maximum (so each lies in [0, 1] for the
    question; both are non-negative) and added, ``b`` times ``weight``, over the union of their
    passages (a passage one of them does not score counts 0 there).

    >>> scaled_sum({"p": 4.0, "q": 2.0}, {"q": 0.2, "r": 0.1}, 0.5)
    {'p': 1.0, 'q': 1.0, 'r': 0.25}
    >>> scaled_sum({}, {"r": 0.1}, 0.5)
    {'r': 0.5}
    """
    ma, mb = max(a.values(), default=0.0), max(b.values(), default=0.0)
    out = {p: v / ma for p, v in a.items()} if ma > 0 else {}
    if mb > 0:
        for p, v in b.items():
            out[p] = out.get(p, 0.0) + weight * v / mb
    return out


def reciprocal_ranks(a: dict[str, float], b: dict[str, float], k: int = 60) -> dict[str, float]:
    """Reciprocal-rank fusion of two passage scorings: a passage scores the sum of
    1 / (k + its rank) in each ranking that holds it (ranks from 1, ties broken by passage id as
    :func:`harness.ordered` breaks them).

    >>> r = reciprocal_ranks({"p": 2.0, "q": 1.0}, {"q": 0.3, "r": 0.2}, k=1)
    >>> {p: round(v, 4) for p, v in r.items()}
    {'p': 0.5, 'q': 0.8333, 'r': 0.3333}
    """
    out: dict[str, float] = {}
    for scores in (a, b):
        for i, p in enumerate(ordered(scores)):
            out[p] = out.get(p, 0.0) + 1.0 / (k + i + 1)
    return out


def _memo(c: Context, qid: str, key: str, fn: Any) -> Any:
    """One computation per (context, question, key), kept on the context (:attr:`Context.memo`):
    the fusion rows share kg full's retrieval and the two PPR runs."""
    if (qid, key) not in c.memo:
        c.memo[qid, key] = fn()
    return c.memo[qid, key]


def _kg_and_seeds(c: Context, qid: str) -> tuple[dict[str, float], dict[str, float]]:
    """kg full's passage scores (the shipped row's) and the seeds its spreading started from
    (entry seeds and lexical seeds, with the retrieval's weights)."""
    from kgservice.expansion.retrieve import RetrieveParams, retrieve

    def run() -> tuple[dict[str, float], dict[str, float]]:
        q = next(x for x in c.ds.questions if x.id == qid)
        res = retrieve(c.kb, q.question, RetrieveParams(), qvec=c.qvecs[qid])
        return unit_passages_scores(c, res.units), dict(res.seeds)
    return _memo(c, qid, "kg", run)  # type: ignore[no-any-return]


def _ppr(c: Context, qid: str, s: dict[str, float], own_seeds: bool) -> dict[str, float]:
    """PPR's passage scores (the baseline row's: damping 0.5, passage = sum of its nodes'
    probabilities), personalised from the entry step's nodes (HippoRAG's way, the baseline) or
    from kg full's own seeds (entry + lexical seeds, kg's weights)."""
    if not own_seeds:
        return _memo(c, qid, "ppr", lambda: M.ppr(c, qid, s))  # type: ignore[no-any-return]
    return _memo(c, qid, "ppr-kg-seeds", lambda: M.ppr(c, qid, _kg_and_seeds(c, qid)[1]))  # type: ignore[no-any-return]


# PPR's passage scores as a component of kg full (issue 39 line 5): a grid of six rows (the
# sixth, over kg's pool alone, added after the first five were read: PPR only reorders what the
# library returns, as a component inside ``retrieve`` would)
PPR_FUSIONS: dict[str, tuple[str, float, bool]] = {
    "ablation: PPR fused: kg full + 0.25 × PPR (each ÷ its max)": ("sum", 0.25, False),
    "ablation: PPR fused: kg full + 0.5 × PPR (each ÷ its max)": ("sum", 0.5, False),
    "ablation: PPR fused: reciprocal ranks of kg full and PPR (k 60)": ("rrf", 60, False),
    "ablation: PPR fused: kg full + 0.25 × PPR from kg's seeds (each ÷ its max)": ("sum", 0.25, True),
    "ablation: PPR fused: kg full + 0.5 × PPR from kg's seeds (each ÷ its max)": ("sum", 0.5, True),
    "ablation: PPR fused: kg full + 0.5 × PPR from kg's seeds, kg's pool only (each ÷ its max)": ("pool", 0.5, True),
}


def ppr_fused(c: Context, qid: str, s: dict[str, float], how: str, weight: float, own_seeds: bool) -> dict[str, float]:
    """kg full's passages fused with PPR's (:data:`PPR_FUSIONS`): over the union of both, so a
    passage PPR ranks and kg's pool of 40 lacks can enter ("sum", "rrf"), or over kg's
    passages alone, PPR scaled by its maximum among them ("pool")."""
    kg = _kg_and_seeds(c, qid)[0]
    pr = _ppr(c, qid, s, own_seeds)
    if how == "pool":
        return scaled_sum(kg, {p: v for p, v in pr.items() if p in kg}, weight)
    return scaled_sum(kg, pr, weight) if how == "sum" else reciprocal_ranks(kg, pr, int(weight))


def ppr_fusion_rows() -> dict[str, object]:
    return {name: (lambda c, q, s, spec=spec: ppr_fused(c, q, s, *spec)) for name, spec in PPR_FUSIONS.items()}


def fusion_shared(c: Context, q: str, s: dict[str, float], **kw: object) -> dict[str, float]:
    """The retrieval (``kw`` as :func:`methods.project`) with each node's node-vector part (its
    fused score less its scaled energy) shared among its units in the pool, its energy counted
    for each: a node's vector similarity counted once however many units it has.
    :func:`kgservice.expansion.retrieve.unit_scores` swapped for the call.

    >>> shared_scores({"u1": {"a", "v"}, "u2": {"v"}, "u3": {"a"}}, {"a": 1.0, "v": 0.3}, {"a": 2.0})
    {'u1': 1.15, 'u2': 0.15, 'u3': 1.0}
    """
    import kgservice.expansion.retrieve as retrieval

    original = retrieval.unit_scores
    retrieval.unit_scores = lambda pool, scores, graph, mode="copied": shared_scores(pool, scores, graph)  # type: ignore[assignment]
    try:
        return M.project(c, q, s, **kw)
    finally:
        retrieval.unit_scores = original


def shared_scores(pool: dict[str, set[str]], scores: dict[str, float], graph: dict[str, float]) -> dict[str, float]:
    """Unit scores with each node's node-vector part shared among its units (:func:`fusion_shared`);
    ``graph`` is raw energy, scaled here as the fusion scales it."""
    from kgservice.expansion.fusion import scaled

    g = scaled(graph)
    counts: dict[str, int] = {}
    for nodes in pool.values():
        for n in nodes:
            counts[n] = counts.get(n, 0) + 1
    return {u: math.fsum(g.get(n, 0.0) + (scores[n] - g.get(n, 0.0)) / counts[n] for n in nodes) for u, nodes in pool.items()}


def fusion_reached_only(c: Context, q: str, s: dict[str, float]) -> dict[str, float]:
    """The full retrieval with the node-vector similarity fused into the nodes spreading reached
    only (it re-orders them; a vector neighbour the graph did not reach brings no units): the
    fusion's name in :mod:`kgservice.expansion.retrieve` swapped for the call."""
    import kgservice.expansion.retrieve as retrieval

    original = retrieval.fuse_scores

    def reached(graph, dense, weight):  # type: ignore[no-untyped-def]
        return original(graph, {n: v for n, v in dense.items() if n in graph}, weight)
    retrieval.fuse_scores = reached  # type: ignore[assignment]
    try:
        return M.project(c, q, s)
    finally:
        retrieval.fuse_scores = original


# τ settings tried against the lexicon's (synonym 0.9, belongs_to 0.7, of 0.5, content 0.3,
# related_to 0.2): one kind changed, or every kind alike
TAU_ROWS: dict[str, dict[str, float]] = {
    "belongs_to=0.3": {"belongs_to": 0.3}, "belongs_to=0.5": {"belongs_to": 0.5},
    "content=0.5": {"content": 0.5}, "content=0.7": {"content": 0.7}, "of=0.3": {"of": 0.3},
    "related_to=0": {"related_to": 0.0}, "all 0.5": {k: 0.5 for k in ("synonym", "belongs_to", "of", "content", "related_to")},
}


def tau_ablations() -> dict[str, object]:
    """The full retrieval with the spreading τ of some kinds changed (:data:`TAU_ROWS`), the
    rest the built-in lexicon's (the eval's knowledge bases have no user overrides)."""
    from kgservice.stores.spreading import default_tau

    rows: dict[str, object] = {}
    for name, change in TAU_ROWS.items():
        rows[f"ablation: τ {name}"] = with_spread(M.project, tau={**default_tau(), **change})
    return rows


def with_entry(fn, **entry: object):
    """``fn`` run with the knowledge base's entry parameters replaced in part (the full retrieval
    reads them from ``kb.entry_finder.params``); put back after the call."""
    from dataclasses import replace

    def run_with(c: Context, q: str, s: dict[str, float]) -> dict[str, float]:
        finder = c.kb.entry_finder
        original = finder.params
        finder.params = replace(original, **entry)
        try:
            return fn(c, q, s)  # type: ignore[operator]
        finally:
            finder.params = original
    return run_with


def copula_ablations() -> dict[str, object]:
    """The full retrieval with belongs_to edges read from a bare copula spreading another way
    (``scripts/eval/copula.py``: as a content edge, hub-damped, or not at all); the store
    keeps the reading."""
    from scripts.eval.copula import MODES, patched

    def row(mode: str):
        def run_with(c: Context, q: str, s: dict[str, float]) -> dict[str, float]:
            with patched(c.kb.store, mode):
                return M.project(c, q, s)
        return run_with
    return {f"ablation: bare-copula edges {m}": row(m) for m in MODES}


def entry_ablations() -> dict[str, object]:
    """The full retrieval with one entry default changed: no partial names (a name held inside
    a longer label), and the vector hits' cosine floor."""
    rows: dict[str, object] = {"ablation: entry, no partial names": with_entry(M.project, partial_weight=0.0),
                               "ablation: entry, partial names at 0.5": with_entry(M.project, partial_weight=0.5)}
    for t in (0.3, 0.35, 0.4, 0.45, 0.5, 0.6):
        rows[f"ablation: entry, vector threshold {t}"] = with_entry(M.project, threshold=t)
    return rows


#: the clocks every latency part is read on: wall time; this process's CPU time, every thread's
#: (``time.process_time``: the figure of every run before 2026-12-07 20:00, kept); the calling
#: thread's CPU time alone (``time.thread_time``). Right after the question's embedding
#: OpenBLAS's idle threads spin for some milliseconds, and process CPU counts that spinning as
#: the retrieval's (RESULTS.md, "Retrieval latency on the 51k-node real-corpus graph" and "The
#: latency column's CPU"). The retrieval itself was measured to run on its caller's thread
#: alone when the vector store's search pool has one thread (a shard of up to two segments,
#: every eval graph's up to the 51k-node one); a larger shard's pool searches on its own threads,
#: and the caller's thread CPU leaves the search out (:func:`line_clock`).
CLOCKS = ("wall", "process_cpu", "thread_cpu")


def search_pool(kb: Any) -> int | None:
    """The threads of the vector store's search pool, as its shard's config records them
    (qdrant-edge's ``max_search_threads``, ``kgservice/vectors/edge_store.py``); None when the
    store is not the embedded edge store or its config cannot be read (not known)."""
    path = getattr(kb.vectors, "shard_path", None)
    try:
        return int(json.loads((Path(path) / "edge_config.json").read_text())["max_search_threads"])
    except (TypeError, OSError, KeyError, ValueError):
        return None


def line_clock(pool: int | None) -> str:
    """The clock the issue's "p95 <= 10 ms without the embedding" line reads: the caller's
    thread CPU when the vector search runs on the caller (a pool of one thread; measured, RESULTS.md
    "The latency column's CPU"), else process CPU, which then also counts OpenBLAS's spinning
    after the embedding (run with ``OPENBLAS_NUM_THREADS=1`` to leave it out).

    >>> line_clock(1), line_clock(2), line_clock(None)
    ('thread_cpu', 'process_cpu', 'process_cpu')
    """
    return "thread_cpu" if pool == 1 else "process_cpu"


def _now() -> tuple[float, float, float]:
    return time.perf_counter(), time.process_time(), time.thread_time()


def timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, dict[str, float]]:
    """``fn(*args, **kwargs)`` and the ms it took on each of :data:`CLOCKS`."""
    a = _now()
    out = fn(*args, **kwargs)
    b = _now()
    return out, {c: 1000 * (y - x) for c, x, y in zip(CLOCKS, a, b)}


def end_to_end_latency(ctx: Context, repeat: int = 3) -> dict[str, dict[str, tuple[float, float]]]:
    """``KnowledgeBase.retrieve`` per question, in two parts (embedding the question; the rest:
    entry step, lexical seeds, spreading, fusion, units, lexical hop, bridge hop; "total" is their
    sum), next to the same retrieval with the lexical hop (off by default), without lexical seeds, without the
    bridge hop, undamped (δ 0, the default before 2026-12-07) and with the units the fusion
    brought alone ranked after the graph's (``dense_units`` "after_graph"), and the PPR baseline
    from the same entry nodes, all alternating per question.
    Each is timed ``repeat`` times per question and the fastest kept (as timeit does): on a
    shared machine the slower runs measure the other processes. Returns, per clock of
    :data:`CLOCKS` (wall time; this process's CPU, every thread's; the calling thread's CPU,
    without the embedding and "total", whose BLAS work runs on other threads) and per part,
    (p50, p95) in ms."""
    from kgservice.expansion.retrieve import RetrieveParams, retrieve

    ctx.kb.retrieve(ctx.ds.questions[0].question)  # warm-up: label index, unit index, model
    seeds = {q.id: ctx.finder.find(q.question, ctx.qvecs[q.id]).seeds for q in ctx.ds.questions}
    no_lex = RetrieveParams(lexical_weight=0.0)
    with_hop = RetrieveParams(hop_weight=0.5)
    no_bridge = RetrieveParams(bridge_weight=0.0)
    undamped = RetrieveParams(degree_damping=0.0)
    after = RetrieveParams(dense_units="after_graph")
    names = ("question embedding", "retrieval", "total", "retrieval, with the lexical hop", "retrieval, no lexical seeds",
             "retrieval, no bridge hop", "retrieval, δ 0 (undamped)", "retrieval, fusion-only units after the graph's",
             "PPR baseline")
    # the embedding's own work runs on OpenBLAS's threads too: on the caller's thread alone it
    # (and "total") would under-count, so the thread clock leaves both out
    kept = {c: [k for k in names if c != "thread_cpu" or k not in ("question embedding", "total")] for c in CLOCKS}
    parts: dict[str, dict[str, list[float]]] = {c: {k: [] for k in kept[c]} for c in CLOCKS}
    for q in ctx.ds.questions:
        best = {c: {k: float("inf") for k in kept[c]} for c in parts}
        for r in range(repeat):
            # the retrievals rotate which runs first: the first after the embedder pays for
            # the caches the model evicted
            t: dict[str, dict[str, float]] = {}
            vecs, t["question embedding"] = timed(ctx.kb.embedder.embed, [q.question])
            qvec = vecs[0]
            order = [("retrieval", None), ("retrieval, with the lexical hop", with_hop), ("retrieval, no lexical seeds", no_lex),
                     ("retrieval, no bridge hop", no_bridge), ("retrieval, δ 0 (undamped)", undamped),
                     ("retrieval, fusion-only units after the graph's", after)]
            for name, params in order[r % len(order):] + order[: r % len(order)]:
                _, t[name] = timed(retrieve, ctx.kb, q.question, params, qvec=qvec)
            _, t["PPR baseline"] = timed(M.ppr, ctx, q.id, seeds[q.id])
            for c in CLOCKS:
                ms = {k: v[c] for k, v in t.items()}
                ms["total"] = ms["question embedding"] + ms["retrieval"]
                for k in kept[c]:
                    best[c][k] = min(best[c][k], ms[k])
        for c in parts:
            for k in kept[c]:
                parts[c][k].append(best[c][k])
    return {c: {k: (percentile(v, 50), percentile(v, 95)) for k, v in d.items()} for c, d in parts.items()}


CLOCK_LABELS = {"wall": "wall", "process_cpu": "process CPU (every thread)", "thread_cpu": "thread CPU (the caller's)"}


def print_latency(timing: dict[str, dict[str, tuple[float, float]]], repeat: int, pool: int | None) -> None:
    print(f"per question, fastest of {repeat} (ms, p50 / p95; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores):")
    for c, parts in timing.items():
        print(f"  {CLOCK_LABELS.get(c, c)}: " + ", ".join(f"{k} {v[0]:.1f} / {v[1]:.1f}" for k, v in parts.items()))
    if line_clock(pool) == "thread_cpu":
        why = ("the vector search runs on the caller (a search pool of one thread); process CPU also counts the BLAS "
               "threads still spinning after the question's embedding, which the retrieval does not use")
    else:
        why = (f"the vector store's search pool has {pool or 'an unknown number of'} threads, so the caller's thread CPU "
               "would leave the search out; process CPU counts OpenBLAS's spinning after the embedding unless "
               "OPENBLAS_NUM_THREADS=1")
    print(f"  the <= 10 ms line (issue 39) reads {CLOCK_LABELS[line_clock(pool)]}, \"retrieval\" p95: {why} "
          "(scripts/eval/RESULTS.md, \"The latency column's CPU\")")


def run(ctx: Context, methods: dict[str, object], seeds: dict[str, dict[str, float]]) -> tuple[dict, dict]:
    runs: dict[str, dict[str, list[str]]] = {}
    lat: dict[str, list[float]] = {}
    for name, fn in methods.items():
        runs[name], lat[name] = {}, []
        for q in ctx.ds.questions:
            t0 = time.perf_counter()
            scores = fn(ctx, q.id, seeds[q.id])  # type: ignore[operator]
            lat[name].append(1000 * (time.perf_counter() - t0))
            runs[name][q.id] = ordered(scores)[:10]
    return runs, lat


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, help="a dataset in the generic shape (scripts/eval/dataset.py)")
    ap.add_argument("--musique", type=Path, nargs="?", const=MUSIQUE_DIR, help="the HippoRAG MuSiQue files")
    ap.add_argument("--limit", type=int, help="first N questions only")
    ap.add_argument("--slice", action="store_true", help="only the passages the chosen questions list")
    ap.add_argument("--embedder", default="default")
    ap.add_argument("--json", type=Path, help="write the table as JSON here")
    ap.add_argument("--grid", action="store_true", help="also print the spreading-parameter grid")
    ap.add_argument("--ablations", action="store_true", help="also the full retrieval with each default changed alone")
    ap.add_argument("--fusion-weight", type=float, default=0.1, help="dense weight in the fused rows")
    ap.add_argument("--only", help="comma-separated substrings of method names to run")
    ap.add_argument("--half", choices=("even", "odd"),
                    help="only the even- or odd-numbered questions (0-based): choose settings on one half, check on the other")
    ap.add_argument("--repeat", type=int, default=3, help="latency: timed runs per question, fastest kept (0: skip)")
    ap.add_argument("--latency-only", action="store_true", help="skip the recall table, time kb.retrieve only")
    a = ap.parse_args(argv)
    if a.data and a.musique:
        print("--data and --musique name two sets: give one", file=sys.stderr)
        return 2
    if a.repeat < 0:
        print(f"--repeat must be 0 (no latency) or more, got {a.repeat}", file=sys.stderr)
        return 2
    try:
        ds = subset(load(a.data), a.limit, a.slice) if a.data else load_musique(a.musique or MUSIQUE_DIR, a.limit, a.slice)
    except FileNotFoundError as exc:
        hint = "" if a.data else " (--musique DIR or KG_EVAL_MUSIQUE names the folder of the MuSiQue files)"
        print(f"no such file: {exc.filename}{hint}", file=sys.stderr)
        return 2
    except ValueError as exc:  # DatasetError (names its file), json.JSONDecodeError
        src = str(a.data or a.musique or MUSIQUE_DIR)
        print(str(exc) if src in str(exc) else f"{src}: {exc}", file=sys.stderr)
        return 2
    ctx = build(ds, a.embedder)
    if a.half:  # after build: the cached ingest is keyed by the whole dataset
        ctx.ds.questions = [q for i, q in enumerate(ctx.ds.questions) if i % 2 == (a.half == "odd")]
    if a.latency_only:
        timing = end_to_end_latency(ctx, a.repeat)
        print_latency(timing, a.repeat, search_pool(ctx.kb))
        return 0
    seeds = seeds_for(ctx)
    names = seeds_for(ctx, names_only=True)
    print(f"{ds.name}: {len(ds.questions)} questions, {len(ds.passages)} passages, {ctx.build_info}")
    miss, tot = uncovered(ctx, seeds)
    print(f"entry coverage of gold passages: names {coverage(ctx, names):.1f} %, names + vectors {coverage(ctx, seeds):.1f} %"
          f" ({miss} of {tot} gold passages have no entry node)")
    methods = standard_methods(a.fusion_weight)
    if a.grid:
        for d in (0.0, 0.5, 0.75, 1.0):
            for bf in (True, False):
                methods[f"grid spread d={d} backflow={bf}"] = (
                    lambda c, q, s, d=d, bf=bf: M.spread(c, q, s, degree_damping=d, seed_backflow=bf))
    if a.ablations:
        methods.update(ablations())
        methods.update(entry_ablations())
        methods.update(copula_ablations())
    if a.only:
        methods = {k: v for k, v in methods.items() if any(o in k for o in a.only.split(","))}
    runs, lat = run(ctx, methods, seeds)
    table = evaluate(ctx, runs)
    print(format_table(table))
    print()
    print(format_table(table, by="types"))
    misses = miss_reasons(ctx)
    print()
    print(format_misses(misses))
    timing = end_to_end_latency(ctx, a.repeat) if a.repeat else {}
    if timing:
        print_latency(timing, a.repeat, search_pool(ctx.kb))
    if a.json:
        doc = report(ctx, table, runs, seeds, names, timing)
        if timing:
            doc["latency_line_clock"] = line_clock(search_pool(ctx.kb))
        doc["misses"] = misses
        a.json.write_text(json.dumps(doc, indent=1, ensure_ascii=False))
    return 0


def miss_reasons(ctx: Context) -> dict[str, dict[str, int]]:
    """Where each gold passage stands for the full retrieval (``harness.miss_reason``), per
    question type: what spreading started from (entry nodes plus lexical seeds) and which
    passages the units of its pool (the shipped size, as the full retrieval's row) came from."""
    from kgservice.expansion.retrieve import RetrieveParams, retrieve

    rows = []
    for q in ctx.ds.questions:
        res = retrieve(ctx.kb, q.question, RetrieveParams(), qvec=ctx.qvecs[q.id])
        rank = {pid: i + 1 for i, pid in enumerate(ordered(unit_passages_scores(ctx, res.units)))}
        rows += [(q.kind, miss_reason(rank.get(g), ctx.passage_nodes.get(g, set()), res.seeds)) for g in q.gold]
    return miss_table(rows)


def format_misses(misses: dict[str, dict[str, int]]) -> str:
    head = "| gold passages (full retrieval) | " + " | ".join(MISS_KINDS) + " |"
    lines = [head, "|" + "---|" * (1 + len(MISS_KINDS))]
    for kind, counts in misses.items():
        lines.append(f"| {kind} (n={sum(counts.values())}) | " + " | ".join(str(counts[k]) for k in MISS_KINDS) + " |")
    return "\n".join(lines)


def report(ctx: Context, table: dict, runs: dict, seeds: dict, names: dict, timing: dict) -> dict:
    """The ``--json`` document: the table, the build, coverage, latency, and per question its
    gold passages, entry nodes and each method's top 10."""
    miss, tot = uncovered(ctx, seeds)
    return {
        "set": ctx.ds.name, "questions": len(ctx.ds.questions), "passages": len(ctx.ds.passages),
        "build": ctx.build_info, "table": table,
        "entry_coverage": {"names_pct": coverage(ctx, names), "names_vectors_pct": coverage(ctx, seeds),
                           "gold_without_entry": miss, "gold": tot},
        "latency_ms": timing,
        "per_question": [
            {"id": q.id, "type": q.kind, "hops": q.hop_count, "gold": q.gold, "entry": seeds[q.id],
             "gold_without_entry": [g for g in q.gold if not (ctx.passage_nodes.get(g, set()) & set(seeds[q.id]))],
             "rankings": {m: r[q.id] for m, r in runs.items()}}
            for q in ctx.ds.questions],
    }


if __name__ == "__main__":
    raise SystemExit(main())

"""Fusing a graph ranking with a dense similarity ranking (scores only order; invariant 2).

Both score maps are scaled to [0, 1] before they are mixed — graph scores by their maximum
(activation energy has no fixed scale), dense scores min-max over the items given (cosines of
one embedder crowd a narrow band) — and the result is ``graph + weight * dense``. An item
missing from one map scores 0 there.
"""

from __future__ import annotations

from collections.abc import Mapping


def scaled(scores: Mapping[str, float], minmax: bool = False) -> dict[str, float]:
    """Scores divided by the largest (``minmax``: shifted by the smallest first).

    >>> scaled({"a": 2.0, "b": 1.0})
    {'a': 1.0, 'b': 0.5}
    >>> scaled({"a": 0.9, "b": 0.5, "c": 0.7}, minmax=True)
    {'a': 1.0, 'b': 0.0, 'c': 0.5}
    >>> scaled({})
    {}
    """
    if not scores:
        return {}
    lo = min(scores.values()) if minmax else 0.0
    span = max(scores.values()) - lo
    if span <= 0:
        return {k: (1.0 if v > 0 or minmax else 0.0) for k, v in scores.items()}
    return {k: round((v - lo) / span, 12) for k, v in scores.items()}


def fuse_scores(graph: Mapping[str, float], dense: Mapping[str, float], weight: float) -> dict[str, float]:
    """``scaled(graph) + weight * scaled(dense, minmax=True)`` over the union of the keys.

    >>> fuse_scores({"a": 4.0, "b": 2.0}, {"b": 0.8, "c": 0.6, "a": 0.4}, weight=1.0)
    {'a': 1.0, 'b': 1.5, 'c': 0.5}
    >>> fuse_scores({"a": 1.0}, {}, weight=0.5)
    {'a': 1.0}
    """
    g = scaled(graph)
    d = scaled(dense, minmax=True)
    return {k: g.get(k, 0.0) + weight * d.get(k, 0.0) for k in sorted(set(g) | set(d))}

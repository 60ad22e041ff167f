"""Passage recall@k (HippoRAG's metric), per-hop breakdown and latency percentiles: pure functions."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def recall_at(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    """Fraction of the gold passages among the top-k ranked ones.

    >>> recall_at(["a", "x", "b"], ["a", "b"], 2), recall_at(["a", "x", "b"], ["a", "b"], 5)
    (0.5, 1.0)
    """
    g = set(gold)
    if not g:
        raise ValueError("a question with no gold passage has no recall")
    return len(g & set(ranked[:k])) / len(g)


def mean_recall(runs: Mapping[str, Sequence[str]], gold: Mapping[str, Sequence[str]], k: int) -> float:
    """Mean recall@k over the questions, in percent (every gold question counts; one missing from
    ``runs`` scores 0)."""
    if not gold:
        return 0.0
    return 100.0 * sum(recall_at(runs.get(q, []), g, k) for q, g in gold.items()) / len(gold)


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100).

    >>> percentile([5, 1, 4, 2, 3], 50), percentile(list(range(1, 101)), 95)
    (3, 95)
    """
    if not values:
        return float("nan")
    s = sorted(values)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)]

"""How belongs_to edges read from a bare copula spread, as an eval variant of the embedded
store's spreading step (not a product setting).

A unit ``{X} [is] {Y}`` (or "was", "are", "is a", ..., with no "type of" / "kind of" / "member
of" wording) is read as class membership, belongs_to, which the families and ``kg expand --mode
causal`` rely on. In spreading, belongs_to passes τ 0.7 both ways, so on an encyclopaedic
graph a class node that hundreds of units name by a bare copula ("professional boxer",
"country") takes 0.7 of a seed's energy and hands it to every member. The variants here change
only how those copula edges *spread*, never what the store holds:

* ``content``: as an ordinary predicate edge: forward only (X → Y), at the content family's τ;
* ``damped``: both ways at belongs_to's τ, each node's share divided by the square root of its
  copula rows (hub damping on these rows alone: a class named by 400 copulas passes 1/20);
* ``off``: not walked (a reference point, not a candidate: the families need the reading).

:func:`patched` swaps the store's ``spread_step`` for the duration of a call, as
``run.with_entry`` swaps the entry parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from kgservice.families.lexicon import COPULAS
from kgservice.ids import is_literal_id, normalise_label
from kgservice.stores.embedded.graph import _SPREAD_OUT, BIDIRECTIONAL
from kgservice.stores.spreading import hop_share

MODES = ("content", "damped", "off")
_ARTICLES = ("a", "an", "the")


def bare_copula(predicate: str) -> bool:
    """A predicate that is a copula, an article at most after it.

    >>> [bare_copula(p) for p in ("is", "Was", "is a", "is an", "are the", "是")]
    [True, True, True, True, True, True]
    >>> [bare_copula(p) for p in ("is a type of", "kind of", "member of", "is part of", "isa")]
    [False, False, False, False, False]
    """
    words = normalise_label(predicate).split()
    if len(words) == 2 and words[1] in _ARTICLES:
        words = words[:1]
    return len(words) == 1 and words[0] in COPULAS


def copula_units(store: Any) -> frozenset[str]:
    """The ids of the store's live belongs_to units whose predicate is a bare copula."""
    s = store.s
    return frozenset(u for u, rec in s.units.items() if rec[4] == "belongs_to" and bare_copula(rec[2]))


def step(store: Any, copulas: frozenset[str], mode: str) -> Callable[..., dict[str, float]]:
    """The embedded store's spreading step (``EmbeddedStore.spread_step``) with the copula
    edges moved out of belongs_to and spread as ``mode`` says; every other edge as shipped."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    s = store.s

    def spread_step(frontier: Mapping[str, float], tau: Mapping[str, float], max_fanout: int | None = None,
                    degree_damping: float = 0.0) -> dict[str, float]:
        if max_fanout is not None:  # the store's fan-out cap, on the store's own degree
            frontier = {n: e for n, e in frontier.items() if store._spread_degree(n) <= max_fanout}
        sup, kinds = s.superseded_by, s.kinds
        incoming: dict[str, float] = {}
        for n in sorted(frontier):
            if n not in kinds:
                continue
            e = frontier[n]
            rows: list[tuple[float, set[str]]] = []
            cop_out: set[str] = set()
            cop_in: set[str] = set()
            for kind in sorted(_SPREAD_OUT):
                t = tau.get(kind, 0.0)
                if t <= 0:
                    continue
                nbrs: set[str] = set()
                for _, dst, u in s.out[kind].get(n, ()):
                    if sup.get(u):
                        continue
                    (cop_out if u in copulas else nbrs).add(dst)
                if kind in BIDIRECTIONAL:
                    for src, _, u in s.inn[kind].get(n, ()):
                        if sup.get(u):
                            continue
                        (cop_in if u in copulas else nbrs).add(src)
                rows.append((t, nbrs))
            if mode == "content":
                rows.append((tau.get("content", 0.0), cop_out))
            elif mode == "damped":
                both = {m for m in cop_out | cop_in if not is_literal_id(m)}
                if both:
                    rows.append((tau.get("belongs_to", 0.0) / len(both) ** 0.5, both))
            rows = [(t, {m for m in ms if not is_literal_id(m)}) for t, ms in rows]
            if degree_damping:  # as the store: (e / max(1, d) ** δ) * τ, d = this hop's rows
                e = hop_share(e, sum(len(ms) for _, ms in rows), degree_damping)
            for t, ms in rows:
                for m in ms:
                    incoming[m] = incoming.get(m, 0.0) + e * t
        return incoming

    return spread_step


@contextmanager
def patched(store: Any, mode: str) -> Iterator[None]:
    """The store spreads copula edges as ``mode`` says inside the block."""
    copulas = getattr(store, "_eval_copulas", None)
    if copulas is None:
        copulas = store._eval_copulas = copula_units(store)
    store.spread_step = step(store, copulas, mode)
    try:
        yield
    finally:
        del store.spread_step

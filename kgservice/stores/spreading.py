"""The spreading-activation formula, shared by every Python spreading path.

One hop: a frontier node with energy ``e`` and ``d`` relation rows this hop passes
``(e / max(1, d) ** δ) * τ[kind]`` along each row (docs/spreading.md). The Cypher step
(``procedures/spread_step.cypher``) and the plugin (``Spreading.java``) write the same
expression in the same order, so an energy right at ε lands on the same side of it on
every backend. τ comes from the lexicon (``families/lexicon.json``) and nowhere else.
"""

from __future__ import annotations

from functools import lru_cache
from types import MappingProxyType
from collections.abc import Mapping

from kgservice.families.lexicon import SPREAD_KINDS, Lexicon


def hop_share(energy: float, rows: int, degree_damping: float) -> float:
    """What a node passes along each of its ``rows`` this hop, before τ: ``e / max(1, d) ** δ``.

    >>> hop_share(1.0, 4, 0.5), hop_share(0.8, 0, 1.0), hop_share(0.8, 7, 0.0)
    (0.5, 0.8, 0.8)
    """
    if not degree_damping:
        return energy
    return energy / max(1, rows) ** degree_damping


@lru_cache(maxsize=1)
def _built_in_tau() -> Mapping[str, float]:
    lex = Lexicon.load()
    return MappingProxyType({k: lex.tau_of(k) for k in SPREAD_KINDS})


def default_tau() -> dict[str, float]:
    """τ of the spreading kinds in the built-in lexicon, for library callers that pass none.

    >>> default_tau()["belongs_to"]
    0.7
    """
    return dict(_built_in_tau())

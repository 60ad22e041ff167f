"""Causal chains (DESIGN §4, step 3: 导致-family edges followed cause → effect).

From a seed, walk the live edges of the 导致 family (causes, leads to, 引起 …) downstream,
hop by hop, up to ``max_hops`` (default 3): no LLM picks the hops. Supersession is honoured
twice: a superseded unit's edge is not live (the store never returns it), and a node
replaced by a newer node continues from its replacement. A node's ≡ class counts as the
node (吸烟 ≡ smoking: smoking's effects are 吸烟's). Paths never revisit a node, so cycles
end a chain. An effect stated as a value (``{December 2008 snow event} [caused]
(widespread difficulties)``: the extraction prompt makes anonymous things literals) is a hop
like any other and ends its chain, since a value is no unit's subject: ``kg expand … --mode
causal`` shows what the cause led to however the text wrote the effect, and only concepts
carry a chain on. Each chain comes back with its hop path (unit ids), so an answer can cite
every step.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from kgservice.errors import InvalidArgument
from kgservice.ids import LITERAL_PREFIX, is_literal_id

CAUSAL_FAMILY = "导致"
MAX_CHAINS = 200  # a bound on the paths kept, for a node with a causal fan-out of hundreds


@dataclass(frozen=True)
class CausalHop:
    src: str  # the cause node the edge leaves (a ≡ member / replacement of the previous effect)
    dst: str  # the effect
    unit: str  # the unit stating it


@dataclass
class CausalChain:
    hops: list[CausalHop]

    @property
    def end(self) -> str:
        return self.hops[-1].dst

    @property
    def units(self) -> list[str]:
        return [h.unit for h in self.hops]


@dataclass
class CausalResult:
    seed: str
    chains: list[CausalChain] = field(default_factory=list)  # maximal paths, longest first
    truncated: bool = False

    @property
    def units(self) -> list[str]:
        return sorted({u for c in self.chains for u in c.units})

    @property
    def ends(self) -> list[str]:
        """The final effects: where the maximal chains stop."""
        return sorted({c.end for c in self.chains})

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "ends": self.ends, "truncated": self.truncated,
                "chains": [[asdict(h) for h in c.hops] for c in self.chains]}


def chain_text(seed: str, hops: list[tuple[str, str]]) -> str:
    """One causal chain on a line, ``seed -#u1-> effect -#u2-> end``: the form the CLI and the
    MCP expand tool print, so both read alike. ``hops`` is (effect, unit) per hop; an effect
    that is a value is written as the notation writes values, in parentheses.

    >>> chain_text("december 2008 snow event", [("lit:widespread difficulties", "u-bb61")])
    'december 2008 snow event -#u-bb61-> (widespread difficulties)'
    """
    return seed + "".join(f" -#{unit}-> {_effect(dst)}" for dst, unit in hops)


def _effect(node: str) -> str:
    return f"({node[len(LITERAL_PREFIX):]})" if is_literal_id(node) else node


def _aliases(store: Any, node: str) -> list[str]:
    """The node, what replaces it (node supersession), and the ≡ classes of both."""
    focus = [node] + [e for e in store.node_superseded_end(node) if e != node]
    out: list[str] = []
    for f in focus:
        for m in store.synonym_class(f):
            if m not in out:
                out.append(m)
    return out


def causal_chains(store: Any, seed: str, max_hops: int = 3, family: str = CAUSAL_FAMILY) -> CausalResult:
    if not 1 <= max_hops <= 10:
        raise InvalidArgument(f"max_hops must be 1..10, got {max_hops}")
    res = CausalResult(seed)
    alias_cache: dict[str, list[str]] = {}

    def aliases(n: str) -> list[str]:
        if is_literal_id(n):
            return []  # a value ends its chain: nothing leaves it, nothing else is it
        if n not in alias_cache:
            alias_cache[n] = _aliases(store, n)
        return alias_cache[n]

    # frontier: (path so far, nodes on it) ; one store call per hop for the whole frontier
    frontier: list[tuple[list[CausalHop], set[str], str]] = [([], set(aliases(seed)), seed)]
    for _ in range(max_hops):
        sources = sorted({a for _, _, end in frontier for a in aliases(end)})
        edges: dict[str, list[tuple[str, str]]] = {}
        for src, dst, unit in store.causal_step(sources, family):
            edges.setdefault(src, []).append((dst, unit))
        nxt = []
        for path, seen, end in frontier:
            grew = False
            for a in aliases(end):
                for dst, unit in edges.get(a, ()):
                    if dst in seen:
                        continue
                    grew = True
                    nxt.append((path + [CausalHop(a, dst, unit)], seen | {dst} | set(aliases(dst)), dst))
            if not grew and path:
                res.chains.append(CausalChain(path))
        if len(nxt) > MAX_CHAINS:
            nxt, res.truncated = nxt[:MAX_CHAINS], True
        frontier = nxt
        if not frontier:
            break
    res.chains.extend(CausalChain(path) for path, _, _ in frontier if path)
    res.chains.sort(key=lambda c: (-len(c.hops), [(h.src, h.dst, h.unit) for h in c.hops]))
    return res

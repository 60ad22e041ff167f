"""The drill-down loop of DESIGN §4.4.

Each round: expand from the seeds without the LLM (directed, spread or both) and admit the
best new units into the pool (hard cap ``max_units``); then one LLM judgement over the pool
— relevant units, enough?, next seeds and mode, drift. The loop stops when

* the judge says enough, or every key node found in the graph is covered by a relevant
  unit and (if the question has predicates) a relevant unit is of a key predicate's family,
  and the judge names no next seed and no unit is held back;
* the last round added no relevant unit, there are no new seeds, or the pool is full;
* the round cap ``max_rounds`` is reached.

Drift sends the question back to step 4.1 (re-extraction with feedback) at most
``max_drifts`` times. Every round is recorded for ``kg ask --trace``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from kgservice.config import DEFAULT_MAX_ROUNDS
from kgservice.errors import InvalidArgument
from kgservice.drilldown.collect import (
    Candidate,
    directed_candidates,
    score,
    spread_candidates,
    unit_nodes,
    words,
)
from kgservice.drilldown.judge import judge, judge_messages
from kgservice.expansion.causal import CAUSAL_FAMILY, CausalChain
from kgservice.extraction.extract import KeyQuery
from kgservice.ids import node_id, normalise_label
from kgservice.model import Unit

if TYPE_CHECKING:
    from kgservice.caches import Caches
    from kgservice.expansion.spread import SpreadParams
    from kgservice.llm import LLM
    from kgservice.stores.base import GraphStore


@dataclass
class QueryState:
    key: KeyQuery
    matches: dict[str, list[str]]  # key node id -> graph nodes it matched (exact, ≡ class, vector hits)
    seeds: dict[str, float]  # entry node -> weight (cosine similarity)

    def key_nodes_payload(self) -> list[dict[str, Any]]:
        return [{"label": n["label"], "id": n["id"], "matches": self.matches.get(n["id"], [])} for n in self.key.nodes]

    @property
    def all_matches(self) -> set[str]:
        return {m for ms in self.matches.values() for m in ms}


@dataclass
class DrillParams:
    max_rounds: int = DEFAULT_MAX_ROUNDS
    max_units: int = 40
    spread_nodes: int = 8
    max_drifts: int = 1

    def __post_init__(self) -> None:
        if not 1 <= self.max_rounds <= 10:
            raise InvalidArgument(f"max_rounds must be 1..10, got {self.max_rounds}")
        if not 1 <= self.max_units <= 500:
            raise InvalidArgument(f"max_units must be 1..500, got {self.max_units}")


@dataclass
class RoundRecord:
    round: int
    mode: str
    seeds: dict[str, float]
    new_units: list[str]
    dropped_over_cap: int
    pool: int
    activation_cached: bool | None = None
    causal: list[list[str]] = field(default_factory=list)  # causal chains walked (unit ids per chain)
    decision: dict[str, Any] = field(default_factory=dict)
    decision_cached: bool = False
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class DrillResult:
    relevant: list[Unit]
    pool: list[Unit]
    rounds: list[RoundRecord]
    stop_reason: str
    state: QueryState
    # the causal chains the answer rests on (a causal question): every unit of each, in chain order
    chains: list[list[Unit]] = field(default_factory=list)


def initial_mode(key: KeyQuery) -> str:
    """Query predicates bias the traversal: a causal question also spreads along
    cause -> effect chains; a related-to question spreads; anything else is directed."""
    kinds = key.kinds
    if "content" in kinds:
        return "both"
    if kinds and kinds <= {"related_to"}:
        return "spread"
    return "directed"


def causal_candidates(store: Any, state: QueryState, seeds: dict[str, float],
                      cands: dict[str, Candidate]) -> list[CausalChain]:
    """A causal question ("what does X lead to in the end?"): walk the 导致 chains downstream
    from the key nodes found in the graph (:func:`kgservice.expansion.causal.causal_chains`,
    3 hops, live units only) and offer every unit on them, with its place in the chain — the
    hops are followed by the graph, not picked one by one by the LLM. Returns the chains."""
    from kgservice.expansion.causal import causal_chains

    starts = [n for n in dict.fromkeys(m for ms in state.matches.values() for m in ms) if n in seeds]
    walked: list[CausalChain] = []
    units: dict[str, tuple[float, str]] = {}
    for start in starts:
        res = causal_chains(store, start)
        for chain in res.chains:
            walked.append(chain)
            path = " -> ".join([chain.hops[0].src] + [h.dst for h in chain.hops])
            for i, h in enumerate(chain.hops, 1):
                units.setdefault(h.unit, (seeds[start], f"causal chain hop {i}: {path}"))
    stored = {u.id: u for u in store.get_units(sorted(units))}
    for uid, (w, why) in units.items():
        if uid in stored:
            c = cands.get(uid)
            if c is None:
                cands[uid] = Candidate(stored[uid], w, [why])
            elif why not in c.why:
                c.why.append(why)
    return walked


# what a question says when it asks where a causal chain ends, not just for the next effect:
# "what does X lead to", "… in the end", "X 最终导致什么"; "what does X cause?" asks for one hop
LEADS_TO = frozenset({"lead to", "leads to", "led to", "lead", "result in", "results in", "end up in"})
END_WORDS = ("in the end", "eventually", "ultimately", "finally", "最终", "最后", "到头来")


def asks_for_chain_end(question: str, predicates: list[dict[str, str]]) -> bool:
    """Whether a causal question asks what something leads to, so the answer needs every hop
    of the chain down to its end (the judge may stop at the first)."""
    q = normalise_label(question)
    return (any(normalise_label(p.get("predicate", "")) in LEADS_TO for p in predicates)
            or any(w in q for w in END_WORDS))


# what one judge request shows: the units judged relevant so far, then at most MAX_SHOWN new
# ones, and at most HUB_CAP of those per node, so a hub's many units ("Pearl Jam" and its
# twelve members) are not resent whole every round; the rest wait for the next round
HUB_CAP = 5
MAX_SHOWN = 15
BRIDGE = 1.0  # score bonus of a unit whose other node links it to another key concept's units
# a unit held back for a later round must touch a key concept's node (or state its relation
# with words of the question): a hub's unrelated units are dropped, not shown round after round
HELD_FLOOR = 2.0


def bridge_bonus(cands: list[Candidate], matches: dict[str, list[str]]) -> None:
    """Raise the score of units that join two key concepts through a node they share
    ("{Brother} [lyrics written by] {Eddie Vedder}" and "{Eddie Vedder} [founding member of]
    {Pearl Jam}" for "what does the lyricist of Brother play in Pearl Jam?"): the hop a
    multi-hop question needs ranks above a hub's other units."""
    key_of: dict[str, set[str]] = {}
    for key, nodes in matches.items():
        for n in nodes:
            key_of.setdefault(n, set()).add(key)
    touches: list[tuple[set[str], list[str]]] = []
    via: dict[str, set[str]] = {}  # a non-key node -> the key concepts of the units mentioning it
    for c in cands:
        nodes = unit_nodes(c.unit)
        keys = {k for n in nodes for k in key_of.get(n, ())}
        others = [n for n in nodes if n not in key_of]
        touches.append((keys, others))
        for n in others:
            via.setdefault(n, set()).update(keys)
    for c, (keys, others) in zip(cands, touches):
        if keys and any(via[n] - keys for n in others):
            c.score += BRIDGE


def shown_units(fresh: list[Candidate], room: int, must: set[str] = frozenset(),  # type: ignore[assignment]
                uncapped: set[str] = frozenset()  # type: ignore[assignment]
                ) -> tuple[list[Candidate], list[Candidate], int, dict[str, int]]:
    """Which candidates (best first) this round shows the judge, and so admits to the pool:
    (shown, held for the next round, dropped, held count per crowded node). At most
    :data:`MAX_SHOWN` a round and :data:`HUB_CAP` per node, ``room`` in all (the pool's cap);
    units of ``must`` (a causal chain) are shown whatever the caps, and the nodes of
    ``uncapped`` (the seeds the judge asked for) are no crowd. One that does not fit is held if
    it scores :data:`HELD_FLOOR`, else dropped, like one beyond the room.

    >>> from kgservice.model import Unit, Value
    >>> def c(i, obj): return Candidate(Unit(id=f"u{i}", subject="Pearl Jam", predicate="has member", family="x",
    ...                                      kind="content", args=(Value(node=obj),)), 1.0, score=3.0)
    >>> shown, held, dropped, by = shown_units([c(i, f"m{i}") for i in range(8)], room=40)
    >>> [x.unit.id for x in shown], [x.unit.id for x in held], dropped, by
    (['u0', 'u1', 'u2', 'u3', 'u4'], ['u5', 'u6', 'u7'], 0, {'pearl jam': 3})
    >>> [len(x) if isinstance(x, list) else x for x in shown_units([c(i, f"m{i}") for i in range(8)], room=2)]
    [2, 0, 6, {}]
    """
    per_node: dict[str, int] = {}
    shown: list[Candidate] = []
    held: list[Candidate] = []
    held_by: dict[str, int] = {}
    dropped = 0
    for c in fresh:
        nodes = unit_nodes(c.unit)
        crowded = [n for n in nodes if per_node.get(n, 0) >= HUB_CAP and n not in uncapped]
        if c.unit.id not in must and len(shown) >= room:
            dropped += 1
            continue
        if c.unit.id not in must and (crowded or len(shown) >= MAX_SHOWN):
            if c.score < HELD_FLOOR:
                dropped += 1
                continue
            held.append(c)
            n = (crowded or nodes)[0]
            held_by[n] = held_by.get(n, 0) + 1
            continue
        shown.append(c)
        for n in nodes:
            per_node[n] = per_node.get(n, 0) + 1
    return shown, held, dropped, held_by


def covered(relevant: list[Unit], state: QueryState) -> bool:
    present = {k: set(m) for k, m in state.matches.items() if m}
    if not present or not relevant:
        return False
    for m in present.values():
        if not any(set(unit_nodes(u)) & m for u in relevant):
            return False
    fams = state.key.families
    return not fams or any(u.family in fams for u in relevant)


def drill_down(store: GraphStore, spread_params: SpreadParams, llm: LLM, caches: Caches, question: str, state: QueryState, params: DrillParams,
               restart: Callable[[str], QueryState] | None = None,
               on_round: Callable[[RoundRecord, dict[str, Unit]], None] | None = None) -> DrillResult:
    """The drill-down rounds. ``on_round(record, units)`` is called once per round as soon as
    the round's record is final (after its decision and any drift note), with the units the
    round admitted by id, so a caller can report rounds while the next one runs."""
    emitted: set[int] = set()

    def finished(rec: RoundRecord) -> None:
        if on_round is not None and rec.round not in emitted:
            emitted.add(rec.round)
            on_round(rec, {uid: pool[uid].unit for uid in rec.new_units if uid in pool})

    mode = initial_mode(state.key)
    whole_chains = asks_for_chain_end(question, state.key.predicates)
    seeds = dict(state.seeds)
    expanded: set[str] = set()
    pool: dict[str, Candidate] = {}
    held: list[Candidate] = []  # reached but held back from the judge (a crowded node, a full round)
    relevant: list[str] = []
    used_chains: list[list[str]] = []
    rounds: list[RoundRecord] = []
    drifts = 0
    stop = ""
    for r in range(1, params.max_rounds + 1):
        qwords = words(question) | words(" ".join(n["label"] for n in state.key.nodes))
        cands: dict[str, Candidate] = {}
        act_cached = None
        if seeds and mode in ("directed", "both"):
            cands.update(directed_candidates(store, seeds))
        if seeds and mode in ("spread", "both"):
            spread, act_cached = spread_candidates(store, spread_params, caches, seeds, params.spread_nodes)
            for uid, c in spread.items():
                if uid not in cands or c.weight > cands[uid].weight:
                    cands[uid] = c
        chains: list[list[str]] = []
        if r == 1 and CAUSAL_FAMILY in state.key.families:
            walked = causal_candidates(store, state, seeds, cands)
            chains = [c.units for c in walked]
        held_ids = {c.unit.id for c in held}
        new = [c for uid, c in cands.items() if uid not in pool and uid not in held_ids]
        for c in new:
            c.score = score(c, state.all_matches, state.key.families, qwords)
        bridge_bonus(new + held, state.matches)
        # this round's units first (what the judge asked for), then those held back before
        fresh = sorted(new, key=lambda c: (-c.score, c.unit.id)) + sorted(held, key=lambda c: (-c.score, c.unit.id))
        must = {u for chain in chains for u in chain}  # a causal chain is shown whole
        # the nodes the judge asked to search from are not crowds: their units are what it wants
        asked = set(seeds) if r > 1 else set()
        admitted, held, dropped, held_by = shown_units(fresh, max(0, params.max_units - len(pool)), must, asked)
        for c in admitted:
            pool[c.unit.id] = c
        expanded |= set(seeds)
        rec = RoundRecord(round=r, mode=mode, seeds={k: round(v, 4) for k, v in sorted(seeds.items())},
                          new_units=[c.unit.id for c in admitted], dropped_over_cap=dropped,
                          pool=len(pool), activation_cached=act_cached, causal=chains)
        rounds.append(rec)
        if not pool:
            stop = "no units reached from the entry nodes"
            finished(rec)
            break
        units = [pool[uid].unit for uid in relevant if uid in pool] + [c.unit for c in admitted]
        messages = judge_messages(question, state.key_nodes_payload(), state.key.predicates, mode, expanded, units,
                                  held_by)
        decision, cached = judge(llm, caches, messages, units, state.key.node_ids + sorted(state.all_matches))
        rec.decision, rec.decision_cached = decision.model_dump(), cached
        before = len(relevant)
        for rid in decision.relevant:
            if rid in pool and rid not in relevant:
                relevant.append(rid)
        # a chain the judge found relevant counts whole: what the cause leads to is its end,
        # so every hop down to the end is relevant (and the answer cites them all)
        for chain in rec.causal if whole_chains else ():
            if set(chain) & set(relevant) and all(u in pool for u in chain):
                relevant.extend(u for u in chain if u not in relevant)
                used_chains.append(chain)
        grew = len(relevant) > before
        if decision.drift and restart is not None and drifts < params.max_drifts:
            drifts += 1
            labels = ", ".join(n["label"] for n in state.key.nodes) or "none"
            reread = restart(f"key concepts [{labels}] led to units about other things"
                             + (f"; the question may be about: {decision.rephrase}" if decision.rephrase else ""))
            if set(reread.key.node_ids) != set(state.key.node_ids) and reread.seeds:
                rec.note = f"drift: key nodes re-extracted -> {', '.join(reread.key.node_ids)}"
                state, seeds, mode = reread, dict(reread.seeds), initial_mode(reread.key)
                held = []  # they were reached from the misread concepts
                finished(rec)
                continue
            rec.note = "drift declared, but re-extraction gave the same key nodes"
        finished(rec)
        rel_units = [pool[rid].unit for rid in relevant]
        if decision.enough:
            stop = "judge: enough"
            break
        # the coverage rule stands in for a judge that says neither "enough" nor where to go on;
        # a judge asking for more (the city is found, its figure is not) is followed, and units
        # held back are shown first
        if covered(rel_units, state) and not decision.next_seeds and not held:
            stop = "every key node covered and a key predicate lands on a relevant unit"
            break
        if r > 1 and not grew:
            stop = "last round added nothing that answers"
            break
        nxt = [n for n in dict.fromkeys(node_id(s) for s in decision.next_seeds) if n not in expanded]
        nxt = [n.id for n in store.get_nodes(nxt)][:5]
        if not nxt and not held:
            stop = "no new seeds"
            break
        if r == params.max_rounds:
            stop = f"round cap ({params.max_rounds})"
            break
        if len(pool) >= params.max_units:
            stop = f"unit cap ({params.max_units})"
            break
        seeds, mode = {n: 1.0 for n in nxt}, decision.mode
    rel = [pool[rid].unit for rid in relevant if rid in pool]
    used = [[pool[u].unit for u in c] for c in used_chains if all(u in relevant for u in c)]
    ordered_pool = [c.unit for c in sorted(pool.values(), key=lambda c: (-c.score, c.unit.id))]
    return DrillResult(relevant=rel, pool=ordered_pool, rounds=rounds, stop_reason=stop or "round cap", state=state,
                       chains=used)

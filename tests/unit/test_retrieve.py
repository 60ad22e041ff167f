"""The no-LLM retrieval (kb.retrieve): BM25 over the stored unit text, and the lexical seeds it
adds to the entry step's seeds, worked out by hand on a small embedded store."""

from __future__ import annotations

import doctest
import math

import pytest

from kgservice.expansion import lexical
from kgservice.expansion.lexical import UnitIndex
from kgservice.expansion.retrieve import RetrieveParams

UNITS = """\
#u1 {Brother} [performed by] {Pearl Jam}
#u2 {Pearl Jam} [formed in] {Seattle}
#u3 {Seattle} [has] {heavy snowfall}
#u4 {Portland} [has] {mild weather}
#u5 {Seattle} [is a] {city}
"""
QUESTION = "What is the snowfall in the city where the performers of Brother were formed?"
W = 1.0  # the lexical seeds' shipped weight (chosen in scripts/eval/RESULTS.md; checked below)


def test_doctests():
    result = doctest.testmod(lexical)
    assert result.attempted > 0 and result.failed == 0


def test_bm25_by_hand():
    ix = UnitIndex.build([("a", "snow snow rain"), ("b", "snow"), ("c", "sun")])
    n, avg = 3, (3 + 1 + 1) / 3
    idf = math.log(1 + (n - 2 + 0.5) / (2 + 0.5))  # "snow" is in 2 of 3 units

    def bm(tf: int, length: int) -> float:
        return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avg))

    assert ix.scores("The snow?") == pytest.approx({"a": bm(2, 3), "b": bm(1, 1)})
    assert ix.top("snow", 1) == [("b", pytest.approx(bm(1, 1)))]  # the short unit wins (length normalisation)
    assert ix.scores("Schnee") == {}


def test_patches_of_one_index_in_any_order_stay_apart():
    """A patch extends the row lists it shares with the index it came from; a second patch of that
    same older index (a fork) must not write over the first one's rows, and neither may change it.
    Each result is compared with a build of the units it should hold, worked out by hand."""
    texts = {"u1": "snow in Seattle", "u2": "rain in Portland", "u3": "sun in Phoenix",
             "u4": "snow in Portland", "u5": "heavy rain in Seattle", "u6": "hail in Denver"}

    def built(ids: list[str]) -> UnitIndex:
        return UnitIndex.build((u, texts[u]) for u in ids)

    def same(a: UnitIndex, b: UnitIndex) -> None:
        assert a.contents() == b.contents() and (a.n, a.total) == (b.n, b.total)
        for q in ("snow", "rain Seattle", "Portland", "hail", "sun in Phoenix"):
            assert a.top(q, 6) == b.top(q, 6)
            assert a.best_of(q, texts) == b.best_of(q, texts)

    base = built(["u1", "u2", "u3"])
    first = base.patched(["u1"], [("u4", texts["u4"])])  # the newest: grows the shared rows in place
    fork = base.patched(["u2"], [("u5", texts["u5"]), ("u6", texts["u6"])])  # the same base again
    after_first = first.patched(["u3"], [("u1", texts["u1"])])
    same(base, built(["u1", "u2", "u3"]))
    same(first, built(["u2", "u3", "u4"]))
    same(fork, built(["u1", "u3", "u5", "u6"]))
    same(after_first, built(["u1", "u2", "u4"]))


@pytest.fixture
def kb(bare_kb):
    """kb.retrieve on each graph backend (Neo4j skips without a server, fails under CI)."""
    bare_kb.ingest_notation(UNITS)
    return bare_kb


def spec(m: int) -> float:
    return 1 / (1 + math.log(m))


def test_lexical_seeds_join_the_entry_seeds(kb):
    off = kb.retrieve(QUESTION, lexical_weight=0)
    on = kb.retrieve(QUESTION)
    assert RetrieveParams().lexical_weight == W
    assert off.lexical == {} and "seattle" not in off.seeds
    # "snowfall" is only in u3 (and "city" in u5, "formed" in u2: u3 and its rare word win)
    assert list(on.lexical) == ["u3"]
    # u3's nodes join at W * specificity; seattle is mentioned by u2, u3, u5 and the snowfall node by u3 only
    assert on.seeds["seattle"] == pytest.approx(W * spec(3), abs=1e-6)
    assert on.seeds["heavy snowfall"] == pytest.approx(W, abs=1e-6)
    assert {n: w for n, w in on.seeds.items() if n in off.seeds} == off.seeds  # entry seeds untouched (max)
    assert on.to_dict()["lexical"] == on.lexical
    rank = [u.id for u in on.units]
    assert "u3" in rank and ("u3" not in [u.id for u in off.units] or
                             rank.index("u3") <= [u.id for u in off.units].index("u3"))


def test_lexical_seeds_keep_the_entry_steps_common_words_out(kb):
    """A node the question names in lower-case words beside a name is dropped by the entry step
    (``common_weight`` 0); the lexical seeds weigh it at ``lexical_common`` (0.5) times their
    weight. "city" is in u5, the best BM25 unit for this question."""
    q = "Which city is Seattle?"
    assert kb.entry(q).common == ["city"] and "city" not in kb.entry(q).seeds
    assert list(kb.retrieve(q).lexical) == ["u5"]
    assert kb.retrieve(q).seeds["city"] == pytest.approx(0.5 * W, abs=1e-6)
    assert kb.retrieve(q, lexical_common=1.0).seeds["city"] == pytest.approx(W, abs=1e-6)
    assert "city" not in kb.retrieve(q, lexical_common=0).seeds
    # a question that writes no name weighs its common words fully, in both steps
    assert kb.entry("which city?").common == [] and kb.retrieve("which city?").seeds["city"] == pytest.approx(W, abs=1e-6)


def test_lexical_index_follows_the_store(kb):
    assert kb.retrieve("Which city has mild weather?").lexical == {"u4": pytest.approx(
        kb.lexical_units.index().scores("Which city has mild weather?")["u4"], abs=1e-6)}
    kb.ingest_notation("#u6 {Portland} [has] {mild weather with drizzle and drizzle}")
    assert "u6" in kb.lexical_units.index().ids  # rebuilt: the change-log version moved


def test_bad_params():
    with pytest.raises(ValueError, match="lexical_weight"):
        RetrieveParams(lexical_weight=-1)
    with pytest.raises(ValueError, match="spread_hops"):
        RetrieveParams(spread_hops=0)
    with pytest.raises(ValueError, match="degree_damping"):
        RetrieveParams(degree_damping=-0.5)


def test_spreading_takes_one_hop_unless_asked(kb):
    """Retrieval spreads one hop (its lexical and bridge hops take the second); ``spread_hops``
    None takes the service's K (settings ``max_hops``, 3), as ``kg expand --mode spread`` does."""
    only_graph = dict(lexical_weight=0, dense_weight=0, hop_weight=0, bridge_weight=0)
    one = kb.retrieve("Who performed Brother?", **only_graph)
    assert set(one.node_scores) == {"brother", "pearl jam"}
    three = kb.retrieve("Who performed Brother?", spread_hops=None, **only_graph)
    assert kb.settings.max_hops == 3 and {"seattle", "city", "heavy snowfall"} <= set(three.node_scores)
    assert three.node_scores["pearl jam"] == pytest.approx(one.node_scores["pearl jam"], rel=0.5)


def test_hub_damping_is_the_services(kb):
    """Retrieval spreads with the service's hub damping δ (``degree_damping`` None: the
    lexicon's 0.5, which ``kg expand --mode spread`` uses); 0 spreads undamped. Seattle passes
    energy forward on two rows (u3, u5), so what it passes on to the city is divided by 2^δ:
    √2 less when damped."""
    only_graph = dict(lexical_weight=0, dense_weight=0, hop_weight=0, bridge_weight=0, spread_hops=None)
    service = kb.spread_params().degree_damping
    assert service == 0.5
    damped = kb.retrieve("Who performed Brother?", **only_graph)
    assert damped.node_scores == kb.retrieve("Who performed Brother?", degree_damping=service, **only_graph).node_scores
    plain = kb.retrieve("Who performed Brother?", degree_damping=0.0, **only_graph)

    def ratio(r):
        return r.node_scores["city"] / r.node_scores["seattle"]

    assert ratio(plain) == pytest.approx(ratio(damped) * 2 ** service)


def test_top_breaks_ties_by_unit_id():
    ix = UnitIndex.build([("b", "x"), ("a", "x"), ("c", "x y"), ("d", "z")])
    assert [u for u, _ in ix.top("x", 1)] == ["a"]  # a and b score alike; c is longer
    assert [u for u, _ in ix.top("x", 5)] == ["a", "b", "c"]
    assert ix.top("x", 0) == []


def test_top_is_the_best_of_every_units_scores():
    """``top`` ranks the rows sharing a word without an array of every unit: the same units and
    the same floats as the k best of :meth:`UnitIndex.scores` (ties by unit id), repeated words,
    ties and units sharing no word included."""
    import random

    rng = random.Random(7)
    words = ["snow", "rain", "sun", "wind", "fog", "hail", "ice", "heat"]
    ix = UnitIndex.build([(f"u{i:03d}", " ".join(rng.choices(words, k=rng.randint(1, 6)))) for i in range(300)]
                         + [("z", "nothing alike"), ("y", "snow rain")])
    for q in ["snow", "rain and fog", "snow snow hail heat", "wind ice sun rain", "nothing", "absent"]:
        every = sorted(ix.scores(q).items(), key=lambda kv: (-kv[1], kv[0]))
        for k in (1, 3, 10, 400):
            assert ix.top(q, k) == every[:k]


def test_bridge_hop_reads_no_node_twice(kb, monkeypatch):
    """The mentions retrieval read for its best nodes serve the bridge hop (``known``): it asks
    the store only for the others, and finds the same unit as when it reads them all."""
    from kgservice.expansion.retrieve import bridge_hop

    kb.ingest_notation(BRIDGE)
    seeds = {"bubye river": 1.0}
    known = kb.store.mentions_of(["bubye river"])
    asked: list[list[str]] = []
    real = type(kb.store).mentions_of

    def spy(self, ids):
        asked.append(list(ids))
        return real(self, ids)

    monkeypatch.setattr(type(kb.store), "mentions_of", spy)
    assert bridge_hop(kb, BRIDGE_QUESTION, {"b1": 1.0, "b6": 0.5}, seeds, 1) == ["b2"]
    assert "bubye river" in asked[-1]
    assert bridge_hop(kb, BRIDGE_QUESTION, {"b1": 1.0, "b6": 0.5}, seeds, 1, known) == ["b2"]
    assert "bubye river" not in asked[-1] and asked[-1]


def test_entry_from_hits_the_caller_searched_already(kb):
    """retrieve searches the vectors once for the entry step and the fusion: the entry step
    given those hits finds what it finds when it searches itself."""
    qvec = kb.embedder.embed(["Pearl Jam"])[0]
    own = kb.entry("Pearl Jam", qvec)
    given = kb.entry("Pearl Jam", qvec, hits=kb.vectors.search(qvec, top_k=30, threshold=0.0))
    assert any(n.cosine for n in own.nodes)  # a vector hit is part of it (the label itself)
    assert given.to_dict() == own.to_dict()


# the lexical hop (retrieve step 5): the bridge "Maharashtra state" is the same entity as the
# node "Maharashtra", which nothing in the graph connects to it or to Shringarpur
HOP = """\
#h1 {Shringarpur} [located in] {Maharashtra state}
#h2 {Maharashtra} [governed by] {Prithviraj Chavan}
#h3 {Maharashtra} [has] {Mumbai}
#h5 {Goa} [governed by] {Manohar Parrikar}
"""
HOP_QUESTION = "Who governed the state where Shringarpur is located?"


@pytest.fixture
def hop_kb(kb):
    kb.ingest_notation(HOP)
    return kb


def test_lexical_hop_reaches_the_bridge_written_differently(hop_kb):
    off = hop_kb.retrieve(HOP_QUESTION)  # off by default (scripts/eval/RESULTS.md)
    on = hop_kb.retrieve(HOP_QUESTION, hop_weight=0.5)
    assert list(on.lexical) == ["h1"]  # shringarpur + located + state
    assert off.hop == [] and "maharashtra" not in off.node_scores  # spreading never reaches it
    before = {u.id: u.score for u in off.units}
    assert before.get("h2", 0.0) == 0.0  # (the hash embedder's node-vector fusion may add it at 0)
    # candidates: the units of maharashtra state (h1: the lexical unit itself) and of maharashtra
    # (h2, h3); h2 also matches "governed"
    assert on.hop == ["h2"] and on.to_dict()["hop"] == ["h2"]
    scores = {u.id: u.score for u in on.units}
    assert scores["h2"] == pytest.approx(0.5 * max(scores.values()), abs=1e-6)
    assert next(u for u in on.units if u.id == "h2").nodes == ["maharashtra", "prithviraj chavan"]
    assert {u: s for u, s in scores.items() if u != "h2"} == {u: s for u, s in before.items() if u != "h2"}  # the rest unchanged
    assert hop_kb.retrieve(HOP_QUESTION, lexical_weight=0, hop_weight=0.5).hop == []  # no lexical unit, no hop


def test_lexical_hop_skips_units_leading_back_to_the_question(hop_kb):
    from kgservice.expansion.retrieve import lexical_hop

    hop_kb.ingest_notation("#h4 {Maharashtra} [governed from] {Shringarpur}")
    seeds = {"shringarpur": 1.0}
    # h4 matches better (governed + shringarpur) but leads back to the seed; h1 is the lexical unit
    assert lexical_hop(hop_kb, HOP_QUESTION, {"h1": 1.0}, seeds) == ["h2"]
    assert lexical_hop(hop_kb, HOP_QUESTION, {"h1": 1.0}, {}) == ["h4"]  # no seed: nothing leads back
    assert lexical_hop(hop_kb, "Who governed it?", {"h5": 1.0}, {"goa": 1.0}) == []  # no other unit names the bridge


def test_bad_hop_weight():
    with pytest.raises(ValueError, match="hop_weight"):
        RetrieveParams(hop_weight=-0.5)


# the bridge hop (retrieve step 6): from the pool's best unit b1 the bridge is Zimbabwe; of its
# other units the question's residual words (b1 used "Bubye River" and "located") pick b2
BRIDGE = """\
#b1 {Bubye River} [located in] {Zimbabwe}
#b2 {Zimbabwe} [has waterfall] {Victoria Falls}
#b3 {Zimbabwe} [has capital] {Harare}
#b5 {Zimbabwe} [located in] {Southern Africa}
#b6 {Bubye River} [flows into] {Zimbabwe}
#b7 {Zimbabwe} [has river basin of] {Bubye}
"""
BRIDGE_QUESTION = "What is the waterfall in the country where the Bubye River is located?"


def test_bridge_hop_follows_the_residual_words(kb):
    from kgservice.expansion.retrieve import bridge_hop, residual

    kb.ingest_notation(BRIDGE)
    b1 = kb.store.get_units(["b1"])
    assert "waterfall" in residual(BRIDGE_QUESTION, b1).split() and "located" not in residual(BRIDGE_QUESTION, b1)
    # the whole question would pick b7 (the first hop's words "Bubye" and "river" again)
    assert kb.lexical_units.index().best_of(BRIDGE_QUESTION, ["b2", "b3", "b5", "b7"])[0] == "b7"
    # b6 mentions the seed (it leads back), b1 is the best unit itself: neither is a candidate
    assert bridge_hop(kb, BRIDGE_QUESTION, {"b1": 1.0, "b6": 0.5}, {"bubye river": 1.0}, 1) == ["b2"]
    assert bridge_hop(kb, BRIDGE_QUESTION, {"b1": 1.0}, {"bubye river": 1.0, "zimbabwe": 1.0}, 1) == []  # no bridge
    assert bridge_hop(kb, "Who knows?", {"b1": 1.0}, {"bubye river": 1.0}, 1) == []  # no residual word matches


def test_bridge_hop_in_retrieve(kb):
    kb.ingest_notation(BRIDGE)
    on, off = kb.retrieve(BRIDGE_QUESTION), kb.retrieve(BRIDGE_QUESTION, bridge_weight=0)
    assert off.bridge == [] and off.to_dict()["bridge"] == []
    assert on.to_dict()["bridge"] == on.bridge and len(on.bridge) <= 1
    if on.bridge:  # it joins at bridge_weight times the best unit's score (or keeps its own, if higher)
        scores = {u.id: u.score for u in on.units}
        assert scores[on.bridge[0]] >= RetrieveParams().bridge_weight * max(scores.values()) - 1e-6
    with pytest.raises(ValueError, match="bridge_units"):
        RetrieveParams(bridge_units=-1)


def test_bridge_hop_reaches_the_bridge_written_differently(hop_kb):
    """The bridge "Maharashtra state" of the best unit h1 names the node maharashtra, whose
    units nothing connects to it; its unit h2 matches the residual word "governed"."""
    from kgservice.expansion.retrieve import bridge_hop

    assert bridge_hop(hop_kb, HOP_QUESTION, {"h1": 1.0}, {"shringarpur": 1.0}, 1) == ["h2"]
    # without the names inside the label only h1 itself would be a candidate
    assert hop_kb.store.mentions("maharashtra state") == ["h1"]


# the label holders (kgservice/expansion/holders.py): the lexical hop's bridge "Hong Kong" is
# written "British Hong Kong" where the question's relation ("taken by the British") is stated,
# and nothing in the graph connects the two forms; "Hong Kong" sits inside the longer label
HOLD = """\
#f1 {Fist Power} [released in] {Hong Kong}
#f2 {British Hong Kong} [taken by] {British Empire}
#f4 {Hong Kong} [has] {skyscrapers}
"""
HOLD_QUESTION = "When was the country that produced Fist Power taken by the British?"


def test_doctests_holders():
    from kgservice.expansion import holders, retrieve

    for mod in (holders, retrieve):
        result = doctest.testmod(mod)
        assert result.attempted > 0 and result.failed == 0


def test_lexical_hop_follows_the_labels_holding_the_bridge_name(kb):
    from kgservice.expansion.retrieve import lexical_hop

    kb.ingest_notation(HOLD)
    seeds = {"fist power": 1.0}
    # the names inside "Hong Kong" are hong kong alone: its other unit f4 is all there is
    assert lexical_hop(kb, HOLD_QUESTION, {"f1": 1.0}, seeds) == ["f4"]
    # british hong kong holds it, so its unit f2 is a candidate, and it matches "taken", "British"
    assert lexical_hop(kb, HOLD_QUESTION, {"f1": 1.0}, seeds, holders=5) == ["f2"]
    # a second holder: a name two labels hold is followed with holders >= 2 only
    kb.ingest_notation("#f5 {Hong Kong theatres} [show] {films}")
    assert lexical_hop(kb, HOLD_QUESTION, {"f1": 1.0}, seeds, holders=1) == ["f4"]
    assert lexical_hop(kb, HOLD_QUESTION, {"f1": 1.0}, seeds, holders=2) == ["f2"]
    # a holder that is a seed is the question's own entity, not the bridge's other form
    assert lexical_hop(kb, HOLD_QUESTION, {"f1": 1.0}, {**seeds, "british hong kong": 1.0}, holders=5) == ["f4"]


def test_label_holders_follow_the_store(kb):
    from kgservice.expansion.holders import name_holders

    kb.ingest_notation(HOLD)
    holders = name_holders(kb.store, kb.entry_finder)
    assert holders is name_holders(kb.store, kb.entry_finder)  # one map per entry finder
    assert holders.of(["hong kong"], 5) == ["british hong kong"]
    kb.ingest_notation("#f5 {Hong Kong theatres} [show] {films}")  # the change-log version moves: rebuilt
    assert holders.of(["hong kong"], 5) == ["british hong kong", "hong kong theatres"]
    assert holders.of(["hong kong"], 1) == [] and holders.of(["nowhere"], 5) == []
    with pytest.raises(ValueError, match="hop_holders"):
        RetrieveParams(hop_holders=-1)


def test_bridge_hop_starts_from_the_graph_ranking(kb, monkeypatch):
    """The bridge hop's source units are ranked by the graph's energy alone: every one of them
    mentions a node spreading reached, whatever the node-vector fusion adds to the pool."""
    from kgservice.expansion import retrieve as R
    from kgservice.expansion.spread import spread_activation

    kb.ingest_notation(BRIDGE + "#x1 {waterfall country} [is] {somewhere else}\n")
    seen: list[dict[str, float]] = []
    real = R.bridge_hop

    def spy(kb_, question, scored, seeds, units, *known):
        seen.append(dict(scored))
        return real(kb_, question, scored, seeds, units, *known)

    monkeypatch.setattr(R, "bridge_hop", spy)
    on = kb.retrieve(BRIDGE_QUESTION, dense_weight=1.0)
    graph_source = seen.pop()
    off = kb.retrieve(BRIDGE_QUESTION, dense_weight=1.0, bridge_graph=False)
    fused_source = seen.pop()
    energy = spread_activation(kb.store, on.seeds, kb.spread_params()).energy
    reached = {u.id for u in kb.store.get_units(list(graph_source))
               if any(energy.get(n, 0.0) > 0 for n in [u.subject_id] + u.context_node_ids())}
    assert graph_source and set(graph_source) == reached  # only units the graph reached
    assert set(graph_source) <= set(fused_source)
    assert "x1" in fused_source and "x1" not in graph_source  # the node-vector neighbour's unit
    assert {u.id: u.score for u in off.units}.get("x1") == {u.id: u.score for u in on.units}.get("x1")  # same pool


def test_units_the_fusion_brought_alone_rank_after_the_graphs(kb):
    """dense_units="after_graph": a unit none of whose nodes spreading reached (here the
    node-vector neighbour *waterfall country* of x1, x2, x3, which no unit connects to the
    question's Bubye River) ranks after every unit spreading reached; with the default
    ("copied") the fusion's weight 1.0 puts it among them. Reached is worked out from
    spreading's own energy, not from the retrieval's scores."""
    from dataclasses import replace

    from kgservice.expansion.spread import spread_activation

    kb.ingest_notation(BRIDGE + "".join(f"#x{i} {{waterfall country}} [has] {{fact {i}}}\n" for i in (1, 2, 3)))
    copied = kb.retrieve(BRIDGE_QUESTION, dense_weight=1.0, bridge_weight=0)
    after = kb.retrieve(BRIDGE_QUESTION, dense_weight=1.0, bridge_weight=0, dense_units="after_graph")
    # the retrieval spreads one hop (RetrieveParams.spread_hops)
    energy = spread_activation(kb.store, after.seeds, replace(kb.spread_params(), max_hops=1)).energy

    def reached(units):
        return [any(energy.get(n, 0.0) > 0 for n in u.nodes) for u in units]
    assert copied.seeds == after.seeds and {u.id for u in copied.units} == {u.id for u in after.units}
    flags = reached(after.units)
    assert True in flags and False in flags and {u.id for u, f in zip(after.units, flags) if not f} >= {"x1", "x2", "x3"}
    assert flags == sorted(flags, reverse=True)  # every reached unit first
    assert reached(copied.units) != flags  # the fused scores put a fusion-only unit above a reached one
    with pytest.raises(ValueError, match="dense_units"):
        RetrieveParams(dense_units="shared")


def test_the_slow_tails_shortcuts_give_the_same_output():
    """The per-unit steps made cheaper for the large graph's slow questions (top_items,
    terminal_pool, one-node units scored inline, best_of without sorting its candidates)
    return exactly what the plain forms return: the same pairs, the same floats, the same
    order, on random pools with many ties (a node's units score alike) and superseded units."""
    import heapq
    import random

    from kgservice.expansion import retrieve as r
    from kgservice.expansion.fusion import scaled

    rng = random.Random(11)
    for trial in range(200):
        nodes = [f"n{i}" for i in range(rng.randint(1, 12))]
        scores = {n: rng.choice([0.0, 0.25, 0.5, 1.0, rng.random()]) for n in nodes}
        graph = {n: rng.random() * 3 for n in nodes if rng.random() < 0.7}
        found = {f"u{rng.randrange(10 ** 6):06d}": set(rng.sample(nodes, rng.choice([1, 1, 1, 2, 3][:len(nodes)])))
                 for _ in range(rng.randint(0, 300))}
        # a superseded unit's terminals: units found themselves or not (never superseded), or
        # none (a cycle); the rest map to themselves, or are left out as a store may leave them
        kept = [u for u in found if rng.random() < 0.9]
        others = sorted(set(found) - set(kept))
        terminals = kept + [f"t{i}" for i in range(3)]
        ends = {u: [u] for u in kept if rng.random() < 0.8}
        ends.update({u: sorted(rng.sample(terminals, min(len(terminals), rng.randint(0, 2)))) for u in others})
        plain: dict[str, set[str]] = {}
        for uid, ns in found.items():
            for t in ends.get(uid, [uid]):
                plain.setdefault(t, set()).update(ns)
        pool = r.terminal_pool({u: set(ns) for u, ns in found.items()}, ends)
        assert pool == plain
        got = r.unit_scores(pool, scores, graph)
        assert got == {u: math.fsum(scores[n] for n in ns) for u, ns in pool.items()}
        g = scaled(graph)
        sums = {u: math.fsum(g[n] for n in ns if n in g) for u, ns in pool.items()}
        assert r.graph_ranked(pool, graph) == {u: s for u, s in sums.items() if s > 0}
        for k in (0, 1, 3, 10, 40, 400):
            want = heapq.nsmallest(k, got.items(), key=lambda kv: (-kv[1], kv[0]))
            assert r.top_items(got, k) == want, (trial, k)


def test_best_of_is_the_best_of_the_sorted_candidates():
    """``best_of`` picks the best candidate without sorting them: the same unit and float as
    the first maximum over the candidates in id order (the smallest id among ties)."""
    import random

    rng = random.Random(5)
    words = ["snow", "rain", "sun", "wind", "fog"]
    ix = UnitIndex.build([(f"u{i:03d}", " ".join(rng.choices(words, k=rng.randint(1, 4)))) for i in range(200)])
    every = [f"u{i:03d}" for i in range(200)]
    for q in ["snow", "rain fog", "sun sun wind", "hail", "fog snow rain"]:
        scores = ix.scores(q)
        for _ in range(30):
            cands = rng.sample(every, rng.randint(1, 60)) + ["absent"]
            scored = sorted((u, scores.get(u, 0.0)) for u in cands if u != "absent")
            best = max(s for _, s in scored)
            want = next((u, s) for u, s in scored if s == best) if best > 0 else None
            assert ix.best_of(q, cands) == want

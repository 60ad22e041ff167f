"""The kg.* procedures a Neo4j Browser user calls answer as the CLI does, on the demo graph:
a node named by its label (any case / width), `kg.spread` with the service's parameters, or
with the seeds alone, gives `kg expand --mode spread`'s energies, `kg.causalChain` gives `kg expand --mode causal`'s chains.
Needs the real server from scripts/test (it always loads the plugin)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kgservice.notation import parse_file, parse_units
from tests.neo4j_helpers import wipe_all

pytestmark = pytest.mark.neo4j

DEMO = Path(__file__).resolve().parents[2] / "demo" / "units"
SEEDS = ["Python", "吸烟", "CPython", "GIL", "ＧＩＬ", "reference cycle"]
VALUE_EFFECTS = """\
#v1 {cold snap} [caused] {December 2008 snow event}
#v2 {December 2008 snow event} [caused] (widespread difficulties)
"""


@pytest.fixture(scope="module")
def demo_kb(tmp_path_factory, neo4j_connection):
    from kgservice.config import Settings
    from kgservice.service import KnowledgeBase

    wipe_all(neo4j_connection)
    k = KnowledgeBase(Settings(data_dir=tmp_path_factory.mktemp("kg"), embedder="hash:64", vector_backend="edge",
                               backend="neo4j", neo4j_uri=os.environ["KG_TEST_NEO4J_URI"],
                               neo4j_user=os.environ.get("KG_NEO4J_USER", "neo4j"),
                               neo4j_password=os.environ.get("NEO4J_PASSWORD")))
    for f in sorted(DEMO.glob("*.units")):
        k.ingest_units(parse_file(f, k.lexicon), embed=False)
    # chains ending at an effect stated as a value (a capable model's q5 unit), apart from the demo
    k.ingest_units(parse_units(VALUE_EFFECTS, k.lexicon, doc="values.units"), embed=False)
    yield k
    k.close()
    wipe_all(neo4j_connection)


def cypher(kb, query: str, **params) -> list[dict]:
    store = kb.store
    with store.driver.session(database=store.database) as s:
        return [r.data() for r in s.run(query, params)]


def test_procedures_take_a_label_as_the_cli_does(demo_kb):
    store = demo_kb.store
    assert [r["node"] for r in cypher(demo_kb, "CALL kg.synonymClass('Smoking')")] == store.synonym_class("smoking")
    assert "吸烟" in store.synonym_class("smoking")
    assert [r["node"] for r in cypher(demo_kb, "CALL kg.synonymClass('ＧＩＬ')")] == store.synonym_class("gil")
    by_label = cypher(demo_kb, "CALL kg.expand(['CPython', 'SMOKING'])")
    assert by_label and by_label == cypher(demo_kb, "CALL kg.expand(['cpython', 'smoking'])")
    # a text naming no node answers as an unknown id always did: with itself
    assert cypher(demo_kb, "CALL kg.synonymClass('No Such Node')") == [{"node": "No Such Node"}]


@pytest.mark.parametrize("seed", SEEDS)
def test_kg_spread_gives_kg_expand_spread(demo_kb, seed):
    p = demo_kb.spread_params()
    cli = demo_kb.expand(seed, "spread", limit=10_000)
    rows = cypher(demo_kb, "CALL kg.spread($seeds, null, $eps, $k, $fanout, $fire, $delta, $backflow)",
                  seeds={seed: 1.0}, eps=p.epsilon, k=p.max_hops, fanout=p.max_fanout or 0, fire=p.max_fire or 0,
                  delta=p.degree_damping, backflow=p.seed_backflow)
    got = {r["node"]: r["energy"] for r in rows}
    want = dict(cli.ranked())
    assert len(want) > 1 and got.keys() == want.keys()
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_kg_spread_with_the_seeds_alone_gives_kg_expand_spread(demo_kb, seed):
    # what a Browser user types first (docs/browser-guide.md): no parameters but the
    # seeds, against `kg expand SEED --mode spread` on the default settings. The procedure's
    # defaults are the lexicon's, as KnowledgeBase.spread_params()'s are
    p = demo_kb.spread_params()
    assert (p.degree_damping, p.seed_backflow) == (0.5, False)  # the lexicon's spread block: not the library's
    got = {r["node"]: r["energy"] for r in cypher(demo_kb, "CALL kg.spread($seeds)", seeds={seed: 1.0})}
    want = dict(demo_kb.expand(seed, "spread", limit=10_000).ranked())
    assert len(want) > 1 and got == pytest.approx(want, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", ["吸烟", "Reference Cycle", "GIL", "debate over PEP 572", "CPython", "cold snap",
                                  "December 2008 snow event"])
def test_kg_causal_chain_gives_kg_expand_causal(demo_kb, seed):
    for hops in (1, 3):
        res = demo_kb.expand(seed, "causal", max_hops=hops)
        [r] = res.results
        rows = cypher(demo_kb, "CALL kg.causalChain($node, $hops)", node=seed, hops=hops)
        assert [row["units"] for row in rows] == [c.units for c in r.chains]
        assert [row["end"] for row in rows] == [c.end for c in r.chains]
        assert [row["nodes"][1:] for row in rows] == [[h.dst for h in c.hops] for c in r.chains]
        assert all(row["seed"] == r.seed for row in rows)
    # the demo's chains: GIL -impl-041-> serialized bytecode execution -impl-042-> poor CPU-bound
    # thread scaling -> …
    cold = cypher(demo_kb, "CALL kg.causalChain('Cold snap')")
    assert [(row["units"], row["end"]) for row in cold] == [(["v1", "v2"], "lit:widespread difficulties")]
    gil = cypher(demo_kb, "CALL kg.causalChain('gil')")
    assert ["impl-041", "impl-042"] in [row["units"][:2] for row in gil]

"""The eval's bare-copula spreading variants (scripts/eval/copula.py) on a hand-made graph, the
energies worked out by hand from τ (belongs_to 0.7, content 0.3, the built-in lexicon's)."""

from __future__ import annotations

import doctest

import pytest

from kgservice.config import Settings
from kgservice.service import KnowledgeBase
from kgservice.stores.spreading import default_tau
from scripts.eval import copula

NOTATION = "\n".join([
    "{Ann} [is] {boxer}",          # bare copula -> belongs_to
    "{Bob} [is] {boxer}",
    "{Cid} [was] {boxer}",
    "{Ann} [born in] {Rome}",      # content
    "{Ann} [member of] {club}",    # belongs_to, not a bare copula
])


@pytest.fixture()
def store(tmp_path):
    kb = KnowledgeBase(Settings(data_dir=tmp_path / "kg"))
    kb.ingest_notation(NOTATION, embed=False)
    yield kb.store
    kb.close()


def test_doctests():
    assert doctest.testmod(copula).failed == 0


def test_copula_units_are_the_bare_copulas(store):
    preds = sorted(store.s.units[u][2] for u in copula.copula_units(store))
    assert preds == ["is", "is", "was"]


def _energies(store, mode):
    frontier = {"ann": 1.0, "boxer": 1.0}
    got = copula.step(store, copula.copula_units(store), mode)(frontier, default_tau())
    return {n: round(e, 4) for n, e in got.items()}


def test_shipped_step_spreads_the_copula_at_belongs_to_tau(store):
    # the store's own step: Ann -> boxer 0.7, club 0.7, Rome 0.3; boxer -> Ann, Bob, Cid 0.7 each
    got = {n: round(e, 4) for n, e in store.spread_step({"ann": 1.0, "boxer": 1.0}, default_tau()).items()}
    assert got == {"boxer": 0.7, "club": 0.7, "rome": 0.3, "ann": 0.7, "bob": 0.7, "cid": 0.7}


def test_content_mode_walks_the_copula_forward_at_content_tau(store):
    # Ann -> boxer 0.3 (forward, content τ); boxer passes nothing back over copulas;
    # "member of" keeps belongs_to's 0.7 both ways (club), born in 0.3
    assert _energies(store, "content") == {"boxer": 0.3, "club": 0.7, "rome": 0.3}


def test_damped_mode_divides_by_the_square_root_of_copula_rows(store):
    # Ann has 1 copula row: boxer 0.7; boxer has 3: each member 0.7 / sqrt(3) = 0.4041
    assert _energies(store, "damped") == {"boxer": 0.7, "club": 0.7, "rome": 0.3,
                                          "ann": 0.4041, "bob": 0.4041, "cid": 0.4041}


def test_off_mode_and_the_store_keeps_the_reading(store):
    assert _energies(store, "off") == {"club": 0.7, "rome": 0.3}
    with copula.patched(store, "off"):
        pass
    # the patch is gone and the units are still belongs_to
    assert store.spread_step({"cid": 1.0}, default_tau()) == {"boxer": 0.7}
    assert {store.s.units[u][4] for u in copula.copula_units(store)} == {"belongs_to"}


def test_variants_take_the_retrievals_degree_damping_and_fanout_cap(store):
    # δ 0.5 (the retrieval's): a node's energy is divided by sqrt(its rows this hop) before τ.
    # content mode: Ann has 3 rows (club, Rome, boxer moved to content) -> 1 / sqrt(3) = 0.5774;
    # boxer's copula rows go nowhere in content mode, so it passes nothing
    step = copula.step(store, copula.copula_units(store), "content")
    got = {n: round(e, 4) for n, e in step({"ann": 1.0, "boxer": 1.0}, default_tau(), degree_damping=0.5).items()}
    assert got == {"boxer": 0.1732, "club": 0.4041, "rome": 0.1732}
    # off mode: Ann keeps 2 rows (club, Rome) -> 1 / sqrt(2)
    step = copula.step(store, copula.copula_units(store), "off")
    got = {n: round(e, 4) for n, e in step({"ann": 1.0}, default_tau(), degree_damping=0.5).items()}
    assert got == {"club": 0.495, "rome": 0.2121}
    # the fan-out cap reads the store's own degree (Ann 3, boxer 3): a cap of 2 spreads nothing
    assert step({"ann": 1.0, "boxer": 1.0}, default_tau(), max_fanout=2) == {}

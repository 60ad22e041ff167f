"""Directed expansion through a store's prefetching reader (Neo4j: one `directed_expand`
query per expansion) must equal directed expansion composed from the single-purpose
procedures, and equal the embedded store's answer — on the hand-written graph and on a
seeded random graph with synonym cycles, belongs-to diamonds, supersession chains at node
and unit level, narrowings, modifier rows and literals."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kgservice.expansion import expand_directed
from kgservice.notation import parse_units
from kgservice.stores.base import GraphStore
from kgservice.stores.embedded import EmbeddedStore
from tests.contract.corpus import SMALL


class ProceduresOnly:
    """The store, with directed expansion forced through one call per procedure."""

    def __init__(self, store: GraphStore) -> None:
        self._store = store

    def directed_reads(self, seeds: object) -> GraphStore:
        return self._store


def random_graph(seed: int, n_nodes: int = 60, n_units: int = 260) -> str:
    rng = random.Random(seed)
    node = [f"n{i}" for i in range(n_nodes)]
    hubs = node[:4]
    kinds = ["同义", "属于", "has", "related to", "causes", "replaced by", "narrows", "uses"]
    lines: list[str] = []
    written: list[int] = []
    for u in range(n_units):
        kind = rng.choices(kinds, weights=[1, 3, 3, 2, 6, 1, 1, 4])[0]
        s = rng.choice(hubs) if rng.random() < 0.3 else rng.choice(node)
        o = rng.choice(hubs) if rng.random() < 0.3 else rng.choice(node)
        if s == o:
            continue
        if kind == "replaced by" and node.index(s) > node.index(o):
            s, o = o, s  # node-level supersession stays acyclic; synonyms and taxonomy may cycle
        lines.append(f"#u{u} {{{s}}} [{kind}] {{{o}}}")
        if written and rng.random() < 0.12:
            lines.append(f"    ()[supersedes] #u{rng.choice(written)}")
        written.append(u)
        if rng.random() < 0.2:
            lines.append(f"    ()[source] {{{rng.choice(node)}}}")
        if rng.random() < 0.1:
            lines.append("    ()[confidence] (high)")
    return "\n".join(lines) + "\n"


def _seed_sets(store: GraphStore) -> list[list[str]]:
    ids = sorted(n.id for n in store.iter_nodes())
    rng = random.Random(3)
    return [[i] for i in ids] + [["not a node"], ["not a node", ids[0]]] + [rng.sample(ids, 3) for _ in range(10)]


def _check(store: GraphStore, text: str, lexicon, tmp_path: Path) -> None:
    units = parse_units(text, lexicon, doc="graph.units")
    store.ingest(units)
    with EmbeddedStore(tmp_path / "reference") as ref:
        ref.ingest(units)
        checked = 0
        for seeds in _seed_sets(store):
            got = expand_directed(store, seeds).to_dict()
            assert got == expand_directed(ProceduresOnly(store), seeds).to_dict(), seeds  # type: ignore[arg-type]
            assert got == expand_directed(ref, seeds).to_dict(), seeds
            checked += bool(got["units"])
        assert checked > 10  # the graph really has facts to find


def test_prefetch_matches_procedures_small(store, lexicon, tmp_path):
    _check(store, SMALL, lexicon, tmp_path)


@pytest.mark.parametrize("seed", [1, 2])
def test_prefetch_matches_procedures_random_graph(store, lexicon, tmp_path, seed):
    _check(store, random_graph(seed), lexicon, tmp_path)

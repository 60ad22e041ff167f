"""Store folders that a killed ``kg restore --replace`` / ``kg doctor --salvage`` left beside the
embedded store are removed when the store next opens; one whose builder still runs is kept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kgservice.notation import parse_units
from kgservice.families.lexicon import Lexicon
from kgservice.stores.embedded import EmbeddedStore


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_killed_rebuild_leftovers_are_removed_on_open(tmp_path: Path):
    graph = tmp_path / "graph"
    store = EmbeddedStore(graph)
    store.ingest(parse_units("#a1 {tea} [has] {caffeine}\n", Lexicon.load(), doc="t.units"))
    store.close()
    dead = tmp_path / f"graph.building-{_dead_pid()}-1700000000"
    (dead / "sub").mkdir(parents=True)
    (dead / "graph.journal").write_bytes(b"partial")
    live = tmp_path / f"graph.building-{os.getpid()}-1700000001"
    live.mkdir()
    reopened = EmbeddedStore(graph)
    try:
        assert not dead.exists()
        assert live.exists()  # its builder (this process) may still be writing it
        assert [u.id for u in reopened.iter_units()] == ["a1"]  # the store itself is untouched
    finally:
        reopened.close()

"""Embedded store persistence: survives reopen, atomic snapshot, two writers don't clobber."""

from __future__ import annotations

import multiprocessing as mp
import pickle

import pytest

from kgservice.families import Lexicon
from kgservice.notation import parse_units
from kgservice.stores.base import StoreError
from kgservice.stores.embedded import EmbeddedStore


def test_reopen_sees_everything(tmp_path, lexicon):
    s = EmbeddedStore(tmp_path)
    s.ingest(parse_units("#a {x} [has] {y}\n#b {y} [is a] {z}\n", lexicon))
    again = EmbeddedStore(tmp_path)
    assert again.counts()["units"] == 2
    assert again.belongs_to_ancestors("y") == {"z": 1}


def test_failed_persist_keeps_disk_and_memory_as_before(tmp_path, lexicon, monkeypatch):
    s = EmbeddedStore(tmp_path)
    s.ingest(parse_units("#a {x} [has] {y}\n", lexicon))

    def boom(*a, **k):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(pickle, "dump", boom)
    with pytest.raises(OSError, match="disk full"):
        s.ingest(parse_units("#b {p} [has] {q}\n", lexicon))
    monkeypatch.undo()
    assert s.counts()["units"] == 1 and s.get_units(["b"]) == []
    assert EmbeddedStore(tmp_path).counts()["units"] == 1
    assert not (tmp_path / "graph.tmp").exists()


def test_corrupt_snapshot_is_reported_not_replaced(tmp_path):
    (tmp_path / "graph.pkl").write_bytes(b"not a pickle")
    with pytest.raises(StoreError, match="cannot read embedded store snapshot"):
        EmbeddedStore(tmp_path)
    assert (tmp_path / "graph.pkl").read_bytes() == b"not a pickle"


def _writer(path: str, prefix: str, n: int) -> None:
    lex = Lexicon.load()
    store = EmbeddedStore(path)
    for i in range(n):
        store.ingest(parse_units(f"#{prefix}{i} {{{prefix} {i}}} [has] {{shared}}\n", lex))


def test_two_processes_writing_lose_nothing(tmp_path):
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), p, 15)) for p in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    store = EmbeddedStore(tmp_path)
    assert store.counts()["units"] == 30
    assert len(store.context_mentions("shared")) == 30

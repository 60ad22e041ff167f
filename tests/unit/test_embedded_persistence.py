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


def test_duplicate_aliases_survive_reopen_compaction_and_other_writers(tmp_path, lexicon):
    """Merged duplicates are remembered in the journal record of the batch that merged them
    (even a batch that added nothing), replayed on open, carried by compaction and by
    rebuild_indexes, and seen by another writer on the same directory."""
    from kgservice.stores.embedded.recovery import read_intact

    s = EmbeddedStore(tmp_path)
    s.ingest(parse_units("#a {smoking} [causes] {lung cancer}\n", lexicon))
    assert s.ingest(parse_units("#b {Smoking} [leads to] {lung cancer}\n", lexicon)).duplicates == {"b": "a"}
    assert EmbeddedStore(tmp_path).aliases() == {"b": "a"}  # journal replay (the batch added no unit)
    assert read_intact(tmp_path)[3] == {"b": "a"}  # kg doctor --salvage reads them from the journal
    other = EmbeddedStore(tmp_path)
    s.ingest(parse_units("#d {x} [has] {y}\n#e {x} [has] {y}\n", lexicon))  # merged within one batch
    other.ingest(parse_units("#c {smoking} [causes] {lung disease}\n    ()[supersedes] #e\n", lexicon))
    assert other.superseded_end(["d"]) == {"d": ["c"]}
    s.compact()
    again = EmbeddedStore(tmp_path)
    assert again.aliases() == {"b": "a", "e": "d"}
    assert read_intact(tmp_path)[3] == {"b": "a", "e": "d"}  # from the snapshot
    again.rebuild_indexes()
    assert EmbeddedStore(tmp_path).aliases(["b", "e", "zz"]) == {"b": "a", "e": "d"}
    r = again.ingest(parse_units("#c2 {smoking} [causes] {lung disease}\n    ()[supersedes] #b\n", lexicon))
    assert r.units_added == 1 and again.superseded_end(["a"]) == {"a": ["c2"]}

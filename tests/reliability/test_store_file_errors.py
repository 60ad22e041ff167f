"""An OS failure on one of the embedded store's own files (its lock, snapshot, journal, the
directories a restore swaps) or the qdrant-edge vector store's files: the command exits 1 with
one line that names the file and says what to do, and nothing is half-written.

The tests run as root here, where permissions do not stop a read or a write, so the failures
are made another way: a directory where a file is expected (the OS refuses to open it as a
file for anyone), or an ``os`` function of the module that uses the file replaced in-process
(a full disk, a rename that fails)."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgservice.cli.app import app
from kgservice.vectors.base import VectorStoreDiskFull, VectorStoreError, file_failure

UNITS = "#t1 {tea} [contains] {caffeine}\n#t2 {coffee} [contains] {caffeine}\n"
MORE = "#m1 {cocoa} [contains] {theobromine}\n"


def kg(data_dir: Path, *args: str):
    return CliRunner().invoke(app, ["--data-dir", str(data_dir), "--embedder", "hash:64", *args],
                              env={"KG_VECTOR_BACKEND": "edge"})


def error_lines(r) -> list[str]:
    return [ln for ln in r.stderr.splitlines() if ln.strip()]


def units_of(data_dir: Path) -> int:
    r = kg(data_dir, "stats", "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["units"]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    d = tmp_path / "kg"
    (tmp_path / "t.units").write_text(UNITS, "utf-8")
    (tmp_path / "more.units").write_text(MORE, "utf-8")
    r = kg(d, "ingest", str(tmp_path / "t.units"))
    assert r.exit_code == 0, r.output
    return d


def test_an_unusable_lock_file_refuses_the_write_naming_it(store: Path, tmp_path: Path):
    (store / "graph" / ".lock").unlink(missing_ok=True)
    (store / "graph" / ".lock").mkdir()
    journal = (store / "graph" / "graph.journal").read_bytes()
    r = kg(store, "ingest", str(tmp_path / "more.units"))
    assert r.exit_code == 1, r.output
    assert "internal error" not in r.output and "Traceback" not in r.output
    lines = error_lines(r)
    assert len(lines) == 1, lines
    assert f"{store / 'graph' / '.lock'}" in lines[0] and "nothing was changed" in lines[0]
    assert "writable" in lines[0]
    assert (store / "graph" / "graph.journal").read_bytes() == journal  # nothing half-written
    assert units_of(store) == 2  # reads do not need the lock


@pytest.mark.parametrize("name", ["graph.pkl", "graph.journal"])
def test_an_unreadable_store_file_is_named(store: Path, name: str):
    """A snapshot or journal that cannot be opened (here: a directory in its place) is not
    mistaken for a missing one (which would start an empty store over it)."""
    graph = store / "graph"
    target = graph / name
    if target.exists():
        target.rename(graph / f"{name}.aside")
    target.mkdir()
    r = kg(store, "stats")
    assert r.exit_code == 1, r.output
    assert "internal error" not in r.output and "Traceback" not in r.output
    lines = error_lines(r)
    assert len(lines) == 1, lines
    assert f"cannot read the embedded store's {target}" in lines[0] and "nothing was changed" in lines[0]
    target.rmdir()
    if (graph / f"{name}.aside").exists():
        (graph / f"{name}.aside").rename(target)
    assert units_of(store) == 2


def test_an_unusable_vector_lock_file_is_named_and_the_units_stay(store: Path, tmp_path: Path):
    lock = store / "qdrant" / "kg_nodes.lock"
    lock.unlink()
    lock.mkdir()
    r = kg(store, "ingest", str(tmp_path / "more.units"))
    assert r.exit_code == 1, r.output
    assert "internal error" not in r.output and "Traceback" not in r.output
    msg = " ".join(r.stderr.split())
    assert f"vector store: cannot open the vector store's lock file {lock}" in msg
    assert "writable" in msg and "kg doctor --repair" in msg
    assert units_of(store) == 3  # the graph batch landed before the vectors failed
    lock.rmdir()
    assert kg(store, "doctor", "--repair").exit_code == 0
    assert kg(store, "doctor").exit_code == 0


def test_a_full_disk_under_the_vector_store_is_the_disk_full_error(store: Path, tmp_path: Path, monkeypatch):
    """The first write since a flush creates the shard's marker file; on a full disk that fails
    with ENOSPC: the disk-full error (free space, then repair), not the internal-error line."""
    from kgservice.vectors import edge_store

    real_open = os.open

    def full(path, flags, *a):
        if str(path).endswith(".unflushed"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real_open(path, flags, *a)

    monkeypatch.setattr(edge_store.os, "open", full)
    r = kg(store, "ingest", str(tmp_path / "more.units"))
    assert r.exit_code == 1, r.output
    assert "internal error" not in r.output and "Traceback" not in r.output
    msg = " ".join(r.stderr.split())
    assert "kg_nodes.unflushed" in msg and "No space left on device" in msg and "Free space" in msg
    assert "kg doctor --repair" in msg
    monkeypatch.undo()
    assert units_of(store) == 3
    assert kg(store, "doctor", "--repair").exit_code == 0


def test_qdrant_edge_own_io_failures_carry_their_number():
    full = file_failure("/d/qdrant/kg_nodes", Exception("Service runtime error: flush failed (os error 28)"),
                        "cannot flush the vector store")
    assert isinstance(full, VectorStoreDiskFull) and "No space left on device" in str(full)
    ro = file_failure("/d/qdrant/kg_nodes", Exception("Failed to open mmap storage: Read-only file system "
                                                      "(os error 30)"), "cannot open the vector store")
    assert type(ro) is VectorStoreError and "/d/qdrant/kg_nodes: Read-only file system" in str(ro)


def test_a_swap_that_fails_halfway_is_finished_by_the_next_open(store: Path, tmp_path: Path, monkeypatch):
    """kg restore --replace: the old store moved aside, then moving the new one in fails. The
    command names the store and says the next open finishes; the next command does."""
    from kgservice.stores.embedded import recovery

    dump = tmp_path / "d.jsonl"
    assert kg(store, "ingest", str(tmp_path / "more.units")).exit_code == 0
    assert kg(store, "dump", str(dump)).exit_code == 0
    real_rename = os.rename

    def second_fails(src, dst):
        if ".building-" in str(src):
            raise OSError(errno.EIO, os.strerror(errno.EIO), str(src))
        return real_rename(src, dst)

    monkeypatch.setattr(recovery.os, "rename", second_fails)
    r = kg(store, "restore", str(dump), "--replace", "--yes", "--no-embed")
    assert r.exit_code == 1, r.output
    assert "internal error" not in r.output and "Traceback" not in r.output
    msg = " ".join(r.stderr.split())
    assert f"cannot write {store / 'graph'}" in msg and "moves it into place" in msg
    monkeypatch.undo()
    assert units_of(store) == 3  # the next open moved the complete new store in
    assert not list(store.glob("graph.building-*"))
    assert kg(store, "doctor").exit_code == 0

"""The indexes built from a whole store (the entry step's label index, retrieval's BM25 unit
index; kgservice/stores/versioned.py) follow the store's change-log version, on both backends:
every logged change reaches them (patched from the log, rebuilt when it cannot say), a retrieve
reads the version once, and an index built or patched while a batch was landing is never kept
as if it covered that batch."""

from __future__ import annotations

import threading

import pytest

from kgservice.notation import parse_units
from kgservice.stores.versioned import VersionedIndex

UNITS = """\
#u1 {Brother} [performed by] {Pearl Jam}
#u2 {Pearl Jam} [formed in] {Seattle}
#u3 {Seattle} [has] {heavy snowfall}
#u4 {Portland} [has] {mild weather}
"""


@pytest.fixture
def kb(bare_kb):
    bare_kb.ingest_notation(UNITS)
    return bare_kb


def named(kb, question: str) -> list[str]:
    return kb.entry(question, use_vectors=False).named


def test_a_relabel_reaches_the_label_index(kb):
    """Counts do not move on a relabel; the change-log version does."""
    assert named(kb, "Where was Pearl Jam formed?") == ["pearl jam"]
    assert named(kb, "What falls in the Emerald City?") == []
    assert kb.store.relabel_nodes({"seattle": "Emerald City"}) == 1
    assert named(kb, "What falls in the Emerald City?") == ["seattle"]
    assert "seattle" in kb.retrieve("What falls in the Emerald City?").entry.named


def test_a_relabel_reaches_the_served_graph_json(kb, tmp_path):
    from kgservice.server.graphify_tools import GraphMirror

    mirror = GraphMirror(kb, tmp_path / "out" / "graph.json", check_every=0)
    assert mirror.graph().attrs["seattle"]["label"] == "Seattle"
    kb.store.relabel_nodes({"seattle": "Emerald City"})
    assert mirror.graph().attrs["seattle"]["label"] == "Emerald City"


def test_rebuild_and_wipe_reach_the_indexes(kb):
    assert kb.retrieve("Which city has mild weather?").lexical.keys() == {"u4"}
    finder, lexical = kb.entry_finder._derived, kb.lexical_units._derived
    builds = finder.builds, lexical.builds
    kb.store.rebuild_indexes()
    kb.retrieve("Which city has mild weather?")
    assert (finder.builds, lexical.builds) == (builds[0] + 1, builds[1] + 1)
    kb.store.wipe()
    assert named(kb, "Where was Pearl Jam formed?") == []
    assert kb.lexical_units.index().top("mild weather", 3) == []


def test_a_retrieve_reads_the_version_once_and_never_counts(kb, monkeypatch):
    clock = kb.store.version_clock()
    assert clock is not None
    reads, counts = [], []
    real_version, real_counts = clock.feed.version, kb.store.counts
    monkeypatch.setattr(clock.feed, "version", lambda: reads.append(1) or real_version())
    monkeypatch.setattr(kb.store, "counts", lambda: counts.append(1) or real_counts())
    kb.retrieve("Who governed the city where the performers of Brother were formed?")  # builds both indexes
    for question in ("Which city has mild weather?", "Where was Pearl Jam formed?"):
        reads.clear()
        r = kb.retrieve(question)
        assert r.units and len(reads) <= 1 and counts == []
    kb.ingest_notation("#u5 {Portland} [has] {mild drizzle}")
    assert "u5" in {u for u, _ in kb.lexical_units.index().top("drizzle", 3)}  # the version moved: rebuilt
    assert counts == []


def test_one_request_reads_the_version_once(kb, monkeypatch):
    """In a server request the caches' sync, the key check and the indexes share the store's clock."""
    from kgservice.stores.changelog import request_arrived

    clock = kb.store.version_clock()
    assert kb.caches.clock is clock
    kb.retrieve("Where was Pearl Jam formed?")  # builds
    reads = []
    real_version = clock.feed.version
    monkeypatch.setattr(clock.feed, "version", lambda: reads.append(1) or real_version())
    with request_arrived():
        kb.caches.sync_store()
        kb.retrieve("Which city has mild weather?")
        kb.search("Seattle")
    assert len(reads) == 1


def test_an_index_built_while_a_batch_lands_is_rebuilt(kb, monkeypatch):
    """A reader that builds between the change-log write and the batch reaching the store
    (embedded: the log is written first; Neo4j: a commit between the version read and the
    build's reads) stamps its index with what it read before building, so the next get rebuilds."""
    store = kb.store
    finder = kb.entry_finder._derived
    assert named(kb, "Is Tacoma near?") == []
    if store.backend == "embedded":
        real_append = store._append

        def append_after_a_reader(records):  # the log already says v+1; memory still has v
            assert named(kb, "Is Tacoma near?") == []
            return real_append(records)

        monkeypatch.setattr(store, "_append", append_after_a_reader)
    else:
        real_build, real_patch = finder._build, finder._patch

        def commit_after(value):  # a batch commits while the index is being built or patched
            monkeypatch.setattr(finder, "_build", real_build)
            monkeypatch.setattr(finder, "_patch", real_patch)
            kb.store.ingest(parse_units("#u6 {Tacoma} [near] {Seattle}", kb.lexicon, doc="late.units"))
            return value

        kb.store.relabel_nodes({"seattle": "Seattle WA"})  # the version moves: the next get patches
        monkeypatch.setattr(finder, "_build", lambda: commit_after(real_build()))
        monkeypatch.setattr(finder, "_patch", lambda value, changes: commit_after(real_patch(value, changes)))
        assert named(kb, "Is Tacoma near?") == []
    if store.backend == "embedded":
        kb.ingest_notation("#u6 {Tacoma} [near] {Seattle}")
    assert named(kb, "Is Tacoma near?") == ["tacoma"]


class FakeClock:
    def __init__(self) -> None:
        self.version = 0
        self.feed = self

    def read(self) -> int:
        return self.version


class FakeStore:
    def __init__(self) -> None:
        self.clock = FakeClock()
        self.generation = 0

    def version_clock(self) -> FakeClock:
        return self.clock

    def local_generation(self) -> int:
        return self.generation

    def counts(self) -> dict:
        raise AssertionError("a store with a change log is never counted")


def test_the_stamp_is_what_was_read_before_the_build():
    store = FakeStore()
    seen: list[int] = []

    def build() -> int:
        seen.append(store.clock.version)
        if len(seen) == 1:
            store.clock.version += 1  # a change lands while the first build reads
        return len(seen)

    d = VersionedIndex(store, build)
    assert d.get() == 1
    assert d.get() == 2  # stamped 0, the store is at 1: rebuilt
    assert d.get() == 2 and seen == [0, 1]
    store.generation += 1  # memory changed under the same version (embedded: the batch landed)
    assert d.get() == 3


def test_concurrent_gets_build_once():
    store = FakeStore()
    started, release = threading.Event(), threading.Event()
    builds = []

    def build() -> str:
        builds.append(1)
        started.set()
        assert release.wait(300)  # bounds a hang only
        return "index"

    d = VersionedIndex(store, build)
    out: list[str] = []
    threads = [threading.Thread(target=lambda: out.append(d.get())) for _ in range(4)]
    for t in threads:
        t.start()
    assert started.wait(300)  # bounds a hang only
    release.set()
    for t in threads:
        t.join(300)
    assert out == ["index"] * 4 and len(builds) == 1

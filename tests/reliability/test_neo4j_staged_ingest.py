"""Big Neo4j ingest batches are staged in bounded transactions and published in one
(issue 13: a 200k-unit file could never be ingested, one transaction ran out of memory).

Against the real server: a batch bigger than one staging transaction lands whole and equal
to what the embedded store (a second implementation) stores from it; a failure injected
mid-stage leaves no visible unit and nothing staged; a stage left by a crashed writer is
invisible and removed once abandoned; concurrent readers see the batch before or after,
never part of it. Stage sizes are made tiny so a few hundred units span many transactions.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from kgservice.notation import parse_units
from kgservice.stores import cypher
from kgservice.stores.base import StoreError
from kgservice.stores.embedded import EmbeddedStore
from kgservice.stores.neo4j import Neo4jStore
from tests.reliability.conftest import state_of
from tests.reliability.test_faults_neo4j import batch

pytestmark = pytest.mark.neo4j

N = 420  # units per test batch: 14 staging transactions of 30


@pytest.fixture
def staged(neo4j_proc):
    store = neo4j_proc.connect(stage_units=50, stage_chunk=30)
    store.wipe()
    yield store
    store.close()


def _staged_counts(store: Neo4jStore) -> tuple[int, int, int]:
    with store._session(write=False) as s:
        row = s.run("RETURN COUNT { (:StagedUnit) } AS u, COUNT { (:StagedNode) } AS n, "
                    "COUNT { (:IngestStage) } AS st").single()
    return row["u"], row["n"], row["st"]


def _units(store) -> list[dict]:
    return sorted((u.model_dump(exclude={"ingested_at"}) for u in store.iter_units()), key=lambda d: d["id"])


def test_batch_bigger_than_a_stage_lands_whole_and_equal_to_the_embedded_store(staged, lexicon, tmp_path):
    seed = batch(lexicon, 40, prefix="s")  # existing nodes the big batch reuses (hubs, docs)
    staged.ingest(seed)
    chunks: list[int] = []
    real = staged._stage_chunk

    def counting(run, stage, rows):
        chunks.append(len(rows))
        return real(run, stage, rows)

    staged._stage_chunk = counting  # type: ignore[method-assign]
    # plus units that supersede units stored before the batch (linked at publish; the ones
    # inside the batch are linked while staging)
    extra = parse_units("#bx1 {b item x} [has] {hub 3}\n    ()[supersedes] #s9\n"
                        "#bx2 {b item y} [causes] {hub 4}\n    ()[supersedes] #s19\n", lexicon, doc="b.units")
    units = batch(lexicon, N - 2, prefix="b") + extra
    report = staged.ingest(units)
    assert chunks == [30] * (N // 30) and report.units_added == N  # really staged, in 14 transactions
    oracle = EmbeddedStore(tmp_path / "graph")
    oracle.ingest(seed)
    expected = oracle.ingest(units)
    assert report.nodes_added == expected.nodes_added
    assert sorted(report.new_embeddable_nodes) == sorted(expected.new_embeddable_nodes)
    got, want = state_of(staged), state_of(oracle)
    for key in ("counts", "nodes", "subject", "context", "relations", "superseded_by"):
        assert got[key] == want[key], key
    assert _units(staged) == _units(oracle)  # everything but the ingest time stamps
    assert _staged_counts(staged) == (0, 0, 0)
    assert staged.ingest(units).units_unchanged == N  # a rerun is a no-op


def _fail_chunk(store: Neo4jStore, nth: int, fail) -> Callable:
    """Make the ``nth`` staging transaction call ``fail()`` instead; returns the real method."""
    real, calls = store._stage_chunk, []

    def chunk(run, stage, rows):
        calls.append(1)
        if len(calls) == nth:
            fail()
        return real(run, stage, rows)

    store._stage_chunk = chunk  # type: ignore[method-assign]
    return real


def test_failure_mid_stage_leaves_nothing_visible_and_nothing_staged(staged, lexicon):
    staged.ingest(batch(lexicon, 40, prefix="s"))
    before = state_of(staged)

    def fail() -> None:
        assert _staged_counts(staged)[0] == 4 * 30  # four chunks committed, staged only
        assert state_of(staged) == before  # ... and invisible
        raise RuntimeError("injected failure mid-stage")

    real = _fail_chunk(staged, 5, fail)
    units = batch(lexicon, N, prefix="f")
    with pytest.raises(RuntimeError, match="injected"):
        staged.ingest(units)
    assert state_of(staged) == before
    assert _staged_counts(staged) == (0, 0, 0)  # the failed stage was discarded
    staged._stage_chunk = real  # type: ignore[method-assign]
    assert staged.ingest(units).units_added == N


def test_crashed_writer_stage_is_invisible_then_removed_once_abandoned(staged, neo4j_proc, lexicon):
    staged.ingest(batch(lexicon, 40, prefix="s"))
    before = state_of(staged)

    def die() -> None:
        raise KeyboardInterrupt  # the process dies: nothing runs after this

    _fail_chunk(staged, 3, die)
    staged._discard_stage_quietly = lambda stage: None  # type: ignore[method-assign] # a crash cleans nothing
    units = batch(lexicon, N, prefix="c")
    with pytest.raises(KeyboardInterrupt):
        staged.ingest(units)
    left = _staged_counts(staged)
    assert left[0] == 2 * 30 and left[1] > 0 and left[2] == 1  # leftovers of the dead writer ...
    assert state_of(staged) == before  # ... that no read sees
    other = neo4j_proc.connect(stage_units=50, stage_chunk=30)
    try:
        assert other.discard_abandoned_stages(stale_seconds=3600) == []  # not abandoned yet: kept
        assert _staged_counts(other) == left
        time.sleep(0.05)
        assert len(other.discard_abandoned_stages(stale_seconds=0.01)) == 1
        assert _staged_counts(other) == (0, 0, 0)
        assert other.ingest(units).units_added == N
        assert state_of(other)["counts"]["units"] == 40 + N
    finally:
        other.close()


def test_concurrent_readers_see_before_or_after_only(staged, neo4j_proc, lexicon):
    """Readers during the 14 staging transactions see exactly the store before the batch;
    readers after it see all of it. (While the one publish transaction *commits*, Neo4j's
    read-committed isolation applies it store records first, counts next, indexes last, so a
    reader overlapping those milliseconds can see a mix: the same holds for a batch written
    in one transaction, and is not asserted either way.)"""
    staged.ingest(batch(lexicon, 40, prefix="s"))
    units = batch(lexicon, N, prefix="r")
    probe = units[N // 2].id  # a unit in the middle of the batch
    hub = "hub 7"
    real_chunk, real_publish = staged._stage_chunk, staged._publish_steps
    marks: dict[str, float] = {}

    def slow(run, stage, rows):
        real_chunk(run, stage, rows)
        # the reader completes a read that began after this staging transaction committed (two
        # more reads), before the next one starts: at least one read between each pair, however
        # slow the machine (the deadline bounds a hang only)
        n, deadline = len(seen), time.monotonic() + 300
        while len(seen) < n + 2 and time.monotonic() < deadline:
            time.sleep(0.01)

    def publish_steps(*a, **k):
        marks.setdefault("publish", time.monotonic())
        return real_publish(*a, **k)

    staged._stage_chunk = slow  # type: ignore[method-assign]
    staged._publish_steps = publish_steps  # type: ignore[method-assign]
    seen: list[tuple[float, float, tuple[int, int, int]]] = []
    done = threading.Event()
    reader = neo4j_proc.connect()

    def snapshot(tx) -> tuple[int, int, int]:
        return (tx.run(cypher.load("counts")).single()["units"],
                len(tx.run(cypher.load("context_mentions"), id=hub).single()["units"]),
                len(tx.run(cypher.load("get_units"), ids=[probe]).data()))

    def read() -> None:
        while not done.is_set() or len([r for r in seen if r[0] > marks.get("end", 1e18)]) < 3:
            t0 = time.monotonic()
            with reader._session(write=False) as session:
                state = session.execute_read(snapshot)
            seen.append((t0, time.monotonic(), state))

    before = (40, len(staged.context_mentions(hub)), 0)
    t = threading.Thread(target=read)
    t.start()
    try:
        staged.ingest(units)
        marks["end"] = time.monotonic()
    finally:
        done.set()
        t.join(60)
        reader.close()
    after = (40 + N, len(staged.context_mentions(hub)), 1)
    assert after[1] > before[1]
    during = [st for t0, t1, st in seen if t1 < marks["publish"]]
    later = [st for t0, t1, st in seen if t0 > marks["end"]]
    assert len(during) >= 10 and len(later) >= 3  # the reader really ran during the stage and after
    assert set(during) == {before}, set(during)
    assert set(later) == {after}, set(later)


def test_staging_error_names_a_vanished_stage(staged, lexicon):
    """A stage removed under a live writer (e.g. wrongly judged abandoned) fails the ingest
    instead of publishing part of the batch."""
    stages: list[str] = []
    real = staged._stage_chunk

    def remember(run, stage, rows):
        stages.append(stage)
        return real(run, stage, rows)

    staged._stage_chunk = remember  # type: ignore[method-assign]
    _fail_chunk(staged, 2, lambda: staged.discard_stage(stages[0]))
    with pytest.raises(StoreError, match="disappeared"):
        staged.ingest(batch(lexicon, 120, prefix="v"))
    assert staged.counts()["units"] == 0 and _staged_counts(staged) == (0, 0, 0)

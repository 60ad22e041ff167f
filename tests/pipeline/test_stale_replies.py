"""Bounded staleness: while a server catches up with another server's change, an ask that
presents no bookmark is answered from the previous version's cached result, marked ``stale``
with the version it reflects; an ask with the write's bookmark, or one past the bound, waits for
the catch-up and sees the new data. The catch-up is held by the test (an event it releases),
never raced against a clock: the bound is measured on a clock the test moves.

What is expected was worked out by hand from the two facts stored: before the second ingest
"What does Portland have?" is "not in the graph" (no unit names Portland); after it the answer
cites the unit that says Portland has mild weather.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from kgservice.caches import Caches
from kgservice.config import Settings
from kgservice.service import KnowledgeBase
from kgservice.stores import causal
from kgservice.stores.changelog import SqliteChangeFeed, VersionClock, record_embedded_change
from tests.neo4j_helpers import wipe_all

QUESTION = "What does Portland have?"
WAIT = 120  # seconds: only a hang fails on it


# -- the front's rule, on a real change log (the embedded store's) --------------------------------

class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _answered_at_1(tmp_path: Path) -> tuple[SqliteChangeFeed, Caches, Clock]:
    """Caches on a change log at version 1, with the fake clock, holding "answer at 1" for "k"."""
    feed = SqliteChangeFeed(tmp_path)
    record_embedded_change(tmp_path, ["n1"], units=["u1"])
    caches = Caches(None, changes=feed, clock=VersionClock(feed), stale_seconds=5)
    caches.monotonic = clock = Clock()
    caches.sync_store()
    assert caches.front_put("k", "answer at 1", {"decision": 1})
    return feed, caches, clock


def test_a_stale_entry_is_given_only_to_a_caller_that_accepts_it_within_the_bound(tmp_path: Path):
    feed, caches, clock = _answered_at_1(tmp_path)
    held, refreshed = threading.Event(), []

    def refresh() -> None:
        held.wait(WAIT)
        refreshed.append(True)

    record_embedded_change(tmp_path, ["n2"], units=["u2"])  # another process's change: version 2
    try:
        assert caches.front_stale("k", refresh) == ("answer at 1", 1)
        assert caches.front_stale("other key", refresh) is None  # nothing cached for it: nothing stale
        # the ordinary path never serves it: after the replay to 2 the front has nothing at 2
        caches.sync_store()
        assert caches.observed_version() == 2 and caches.front_get("k") is None
        clock.now += 5  # the bound reached, not passed: still stale (one refresh queued, not two)
        assert caches.front_stale("k", refresh) == ("answer at 1", 1)
        clock.now += 0.5
        assert caches.front_stale("k", refresh) is None  # past the bound
    finally:
        held.set()
    caches.wait_refreshed()
    assert refreshed == [True] and caches.stale_served == 2
    caches.close()


def _answer_held_then_another_change(tmp_path: Path, counts: dict[str, int]) -> Caches:
    """Caches holding "answer at 1" whole at version 1, then another process's change (version 2)."""
    feed = SqliteChangeFeed(tmp_path)
    record_embedded_change(tmp_path, ["n1"], units=["u1"])
    caches = Caches(None, changes=feed, clock=VersionClock(feed), stale_seconds=5)
    caches.monotonic = Clock()
    caches.sync_store()
    assert caches.front_put("k", "answer at 1", counts)
    record_embedded_change(tmp_path, ["n2"], units=["u2"])
    return caches


def test_the_background_refresh_runs_with_a_short_switch_interval_and_restores_it(tmp_path: Path):
    import sys

    from kgservice.caches.switching import REFRESH_SWITCH_INTERVAL

    caches = _answer_held_then_another_change(tmp_path, {"decision": 1})
    during: list[float] = []
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.004)  # a setting of this process's own, which must come back
    try:
        assert caches.front_stale("k", lambda: during.append(sys.getswitchinterval())) == ("answer at 1", 1)
        caches.wait_refreshed()
        assert during == [pytest.approx(0.0005)] and REFRESH_SWITCH_INTERVAL == 0.0005
        assert sys.getswitchinterval() == pytest.approx(0.004)
    finally:
        sys.setswitchinterval(before)
        caches.close()


def test_a_stale_reply_does_not_wait_for_a_replay_in_progress(tmp_path: Path):
    """A replay holds the caches' lock through its reads of the change log (the catch-up); a
    stale reply is given without that lock (only a hang fails this test)."""
    feed = SqliteChangeFeed(tmp_path)
    record_embedded_change(tmp_path, ["n1"], units=["u1"])
    caches = Caches(None, changes=feed, clock=VersionClock(feed), stale_seconds=5)
    caches.sync_store()
    assert caches.front_put("k", "answer at 1", {})
    record_embedded_change(tmp_path, ["n2"], units=["u2"])
    out: list = []
    with caches._lock:  # as _replay_changes holds it
        th = threading.Thread(target=lambda: out.append(caches.front_stale("k", lambda: None)))
        th.start()
        th.join(WAIT)
        assert not th.is_alive()
    assert out == [("answer at 1", 1)]
    caches.wait_refreshed()
    caches.close()


def test_a_local_write_or_a_reset_leaves_nothing_stale(tmp_path: Path):
    caches = _answer_held_then_another_change(tmp_path, {})
    caches.invalidate(["n2"])  # this process wrote it
    assert caches.front_stale("k", lambda: None) is None
    caches.sync_store()
    assert caches.front_put("k", "answer at 2", {})
    record_embedded_change(tmp_path, [], everything=True)  # a change the log cannot list (a restore)
    caches.sync_store()
    assert caches.front_stale("k", lambda: None) is None
    caches.wait_refreshed()
    caches.close()


def test_a_refresh_overtaken_by_the_next_change_leaves_its_result_as_the_stale_reply(tmp_path: Path):
    """Each refresh is overtaken by the next change (so the front never holds the key again, as
    when every refresh makes model calls): the stale reply is the latest completed refresh's
    result, past the held answer's own bound, and never one whose refresh began more than
    2 × stale_seconds ago."""
    feed, caches, clock = _answered_at_1(tmp_path)

    def overtaken(answer: str, change: int) -> Any:
        def refresh() -> None:
            mark = caches.refresh_mark()
            caches.sync_store()  # the refresh's replay, as ask_with_llm's
            version = caches.observed_version()
            record_embedded_change(tmp_path, [f"n{change}"], units=[f"u{change}"])  # the next batch lands
            assert caches.keep_refreshed("k", answer, version, {"decision": 1}, mark)
        return refresh

    record_embedded_change(tmp_path, ["n2"], units=["u2"])
    assert caches.front_stale("k", overtaken("answer at 2", 3)) == ("answer at 1", 1)  # t 100: newer seen
    caches.wait_refreshed()
    clock.now = 106.0  # past the held answer's bound (105); the refresh of t 100 kept "answer at 2"
    assert caches.front_stale("k", overtaken("answer at 3", 4)) == ("answer at 2", 2)
    caches.wait_refreshed()  # that refresh began at 106: its result may be given until 116
    assert caches.front_get("k") is None  # never served fresh
    clock.now = 107.0  # a request sees version 4 (the refresh's next batch): newer than 3 first seen
    assert caches.front_stale("k", lambda: None) == ("answer at 3", 3)
    caches.wait_refreshed()  # a refresh that kept nothing (it failed, or is still running)
    clock.now = 115.9
    assert caches.front_stale("k", lambda: None) == ("answer at 3", 3)
    caches.wait_refreshed()
    clock.now = 116.1
    assert caches.front_stale("k", lambda: None) is None  # past 2 × 5 s after the latest refresh began
    assert caches.refresh_kept == 2
    caches.close()


def test_a_refresh_result_is_not_kept_across_a_local_write_nor_over_a_newer_one(tmp_path: Path):
    caches = _answer_held_then_another_change(tmp_path, {})
    mark = caches.refresh_mark()
    caches.sync_store()
    assert caches.keep_refreshed("k", "answer at 2", 2, {}, mark)
    assert not caches.keep_refreshed("k", "answer at 1 again", 1, {}, mark)  # older than the one held
    late = caches.refresh_mark()
    caches.invalidate(["n3"])  # this process wrote: a refresh that read before it keeps nothing
    assert not caches.keep_refreshed("k", "answer at 2", 2, {}, late)
    record_embedded_change(tmp_path, ["n4"], units=["u4"])
    assert caches.front_stale("k", lambda: None) is None
    caches.wait_refreshed()
    caches.close()


def test_a_refresh_result_of_the_current_version_is_bounded_from_when_a_newer_one_is_seen(tmp_path: Path):
    """The refresh finished while its version was still the store's (its answer made model
    calls, so the front does not hold it): it is given, marked stale with that version, rather
    than computed in the foreground, while the refresh that queues puts it in the front. Once a
    newer version is seen it is given for stale_seconds from then (as a held answer is), even
    past 2 × stale_seconds after the refresh began."""
    caches = _answer_held_then_another_change(tmp_path, {})
    clock = caches.monotonic
    assert isinstance(clock, Clock)
    mark = caches.refresh_mark()
    caches.sync_store()
    assert caches.keep_refreshed("k", "answer at 2", 2, {}, mark)
    assert caches.front_stale("k", lambda: None) == ("answer at 2", 2)  # not computed in the foreground
    caches.wait_refreshed()
    clock.now = 108.0
    record_embedded_change(tmp_path, ["n3"], units=["u3"])
    assert caches.front_stale("k", lambda: None) == ("answer at 2", 2)  # newer first seen at 108
    clock.now = 111.0
    assert caches.front_stale("k", lambda: None) == ("answer at 2", 2)  # before the replay too
    caches.sync_store()  # the replay to 3: the bound stays 108 + 5
    clock.now = 113.0
    assert caches.front_stale("k", lambda: None) == ("answer at 2", 2)
    clock.now = 113.5
    assert caches.front_stale("k", lambda: None) is None
    caches.wait_refreshed()
    caches.close()


# -- two servers on one Neo4j: B catches up with A's ingest while asks arrive --------------------

def _settings(d: Path) -> Settings:
    return Settings(data_dir=d, backend="neo4j", neo4j_uri=os.environ["KG_TEST_NEO4J_URI"],
                    neo4j_user=os.environ.get("KG_NEO4J_USER", "neo4j"), neo4j_password=os.environ.get("NEO4J_PASSWORD"),
                    embedder="hash:64", vector_backend="neo4j", llm_model="kgoffline/rules", stale_seconds=5)


@pytest.fixture
def servers(neo4j_connection, tmp_path: Path):
    wipe_all(neo4j_connection)
    a, b = KnowledgeBase(_settings(tmp_path / "a")), KnowledgeBase(_settings(tmp_path / "b"))
    a.ingest_notation("#u1 {Seattle} [has] {heavy snowfall}\n", doc="seattle.units")
    yield a, b
    b.caches.wait_refreshed()
    a.close()
    b.close()


class Held:
    """B's catch-up of its BM25 unit index, held at the patch until the test releases it."""

    def __init__(self, kb: KnowledgeBase):
        self.entered, self.release = threading.Event(), threading.Event()
        derived = kb.parts.lexical_units._derived
        patch = derived._patch

        def held(value: Any, changes: list[Any]) -> Any:
            self.entered.set()
            self.release.wait(WAIT)
            return patch(value, changes)

        derived._patch = held


def _warm(b: KnowledgeBase) -> int:
    """B answers the question twice: the second answer is whole in its front. Returns the version."""
    first = b.ask(QUESTION)
    assert not first.found and first.stale is False
    again = b.ask(QUESTION)
    assert again.llm["calls"] == 0 and not again.found and again.stale is False
    assert again.as_of_version is not None
    return again.as_of_version


def _portland(a: KnowledgeBase) -> str:
    with causal.capturing() as got:
        a.ingest_notation("#u2 {Portland} [has] {mild weather}\n", doc="portland.units")
    assert got.bookmark
    return got.bookmark


def _sees_the_change(b: KnowledgeBase) -> None:
    """B reads the version after A's ingest, as any request's key check (or a request of the last
    ``stale_read_seconds``) does: a request without a bookmark may take a version read that
    started up to that long before it arrived (docs/jobs-and-caches.md), so without a read after
    the change it could be answered at the previous version, unmarked."""
    assert b.caches.clock is not None
    b.caches.clock.read()


def _in_thread(fn) -> tuple[threading.Thread, list]:
    out: list = []
    th = threading.Thread(target=lambda: out.append(fn()))
    th.start()
    return th, out


def test_during_a_held_catch_up_no_bookmark_is_served_stale_and_the_bookmark_waits(servers):
    a, b = servers
    v1 = _warm(b)
    held = Held(b)
    bookmark = _portland(a)
    _sees_the_change(b)
    with causal.accepting_stale():  # what a server sets for a request without a bookmark
        stale = b.ask(QUESTION)
    assert (stale.stale, stale.found, stale.as_of_version) == (True, False, v1)
    assert held.entered.wait(WAIT)  # the refresh it started is in the catch-up, held
    with causal.accepting_stale():
        again = b.ask(QUESTION)
    assert (again.stale, again.as_of_version) == (True, v1)

    def with_bookmark():
        with causal.reading_after(causal.parse(bookmark)), causal.accepting_stale():
            return b.ask(QUESTION)

    th, out = _in_thread(with_bookmark)
    held.release.set()
    th.join(WAIT)
    fresh = out[0]
    assert fresh.stale is False and fresh.found and fresh.cited == ["u2"]
    assert fresh.as_of_version > v1
    b.caches.wait_refreshed()
    with causal.accepting_stale():
        after = b.ask(QUESTION)
    assert after.stale is False and after.cited == ["u2"]
    assert b.caches.stale_served == 2


def test_past_the_bound_an_ask_without_a_bookmark_waits_for_the_catch_up(servers):
    a, b = servers
    v1 = _warm(b)
    held = Held(b)
    b.caches.monotonic = clock = Clock()
    _portland(a)
    _sees_the_change(b)
    with causal.accepting_stale():
        assert b.ask(QUESTION).stale is True  # a newer version first seen now
    assert held.entered.wait(WAIT)
    clock.now += 5.5  # past the 5 s bound while the catch-up is still held

    def without_bookmark():
        with causal.accepting_stale():
            return b.ask(QUESTION)

    th, out = _in_thread(without_bookmark)
    held.release.set()
    th.join(WAIT)
    late = out[0]
    assert late.stale is False and late.found and late.cited == ["u2"] and late.as_of_version > v1


def test_the_library_never_answers_stale(servers):
    """Without a server's say-so (the CLI, a library caller) the ask waits for the catch-up."""
    a, b = servers
    _warm(b)
    held = Held(b)
    _portland(a)
    th, out = _in_thread(lambda: b.ask(QUESTION))
    assert held.entered.wait(WAIT)  # the ask itself is catching up
    held.release.set()
    th.join(WAIT)
    assert out[0].stale is False and out[0].cited == ["u2"] and b.caches.stale_served == 0


def test_an_answer_with_the_entry_steps_note_is_kept_whole(tmp_path: Path):
    """The entry step's note ("no key node matched a node; ...") is what the same caches give
    again, so that answer is kept whole like any other (it is one a stale reply can give); only
    an answer whose request found the caches cleared is not."""
    from kgservice.pipeline.asking import AskParams, _front_key

    kb = KnowledgeBase(Settings(data_dir=tmp_path / "kg", embedder="hash:64", vector_backend="edge",
                                llm_model="kgoffline/rules"))
    try:
        kb.ingest_notation("#u1 {marine atlas} [has] {heavy snowfall}\n#u2 {atlas} [belongs to] {maps}\n", embed=False)
        question = "What does marine atlas belong to?"
        first, again = kb.ask(question), kb.ask(question)
        assert any("entry nodes named in the question were used" in n for n in first.notes)
        assert again.llm["calls"] == 0 and again.notes == first.notes
        assert kb.caches.front_fresh(_front_key(question, False, AskParams(), "kgoffline/rules"))
    finally:
        kb.close()


def _ingest_on(a: KnowledgeBase, b: KnowledgeBase, notation: str, doc: str) -> int:
    """A's ingest, then B reads the version once (as any request does): returns that version."""
    a.ingest_notation(notation, doc=doc)
    assert b.caches.clock is not None
    return b.caches.clock.read()


def test_a_refresh_overtaken_by_the_next_ingest_keeps_the_question_answered_stale(servers):
    """The failure of scripts/bench/RESULTS.md ("Stale replies from the latest refresh"): every
    ingest touches the question's nodes, so each refresh makes model calls (its result is not
    kept whole) and the next ingest lands while it runs. Past the held answer's 5 s bound a
    request without a bookmark is still answered at once, from the latest completed refresh."""
    a, b = servers
    v1 = _warm(b)
    held = Held(b)
    b.caches.monotonic = clock = Clock()
    v2 = _ingest_on(a, b, "#u2 {Portland} [has] {mild weather}\n", "portland.units")
    with causal.accepting_stale():
        first = b.ask(QUESTION)  # t 100: a newer version first seen; the refresh starts
    assert (first.stale, first.as_of_version) == (True, v1)
    assert held.entered.wait(WAIT)  # the refresh's first pass, at v2, is in its catch-up
    clock.now = 103.0
    v3 = _ingest_on(a, b, "#u3 {Portland} [has] {rainy winters}\n", "portland-rain.units")  # overtaken
    held.release.set()
    b.caches.wait_refreshed()  # pass 1 at v2, pass 2 (began at 103) at v3: each made model calls
    assert v1 < v2 < v3
    clock.now = 106.0  # past the held answer's bound (100 + 5)
    v4 = _ingest_on(a, b, "#u4 {Portland} [has] {coastal fog}\n", "portland-fog.units")
    with causal.accepting_stale():
        late = b.ask(QUESTION)
    assert (late.stale, late.as_of_version, late.found) == (True, v3, True)
    assert late.llm["calls"] == 0 and {"u2", "u3"} <= set(late.cited) and "u4" not in late.cited
    assert b.caches.refresh_kept == 2  # both passes of the first refresh (counted before this reply's)
    b.caches.wait_refreshed()  # the refresh that reply queued brings B to v4
    with causal.accepting_stale():
        fresh = b.ask(QUESTION)
    assert fresh.stale is False and fresh.as_of_version == v4 and "u4" in fresh.cited

"""A request that accepts a stale reply (a server request without a bookmark) makes no version
round trip of its own while a recent read is there (:meth:`VersionClock.recent`,
:meth:`Caches._request_version`); every other request reads after it arrived, as before.

Asserted on structure, never on speed: which thread called the change feed's ``version()`` (the
Neo4j round trip), with the request's arrival given explicitly relative to the last read's start,
and reads held on an event the test releases."""

from __future__ import annotations

import threading
from pathlib import Path

from kgservice.caches import Caches
from kgservice.stores import causal
from kgservice.stores.changelog import SqliteChangeFeed, VersionClock, record_embedded_change, request_arrived

WAIT = 120  # seconds: only a hang fails on it


class Counted:
    """A change feed whose ``version()`` records the calling thread and can be held."""

    def __init__(self, feed):
        self.feed, self.threads = feed, []
        self.open = threading.Event()
        self.open.set()
        self.entered = threading.Semaphore(0)  # released once per call, when it starts

    def version(self) -> int:
        self.threads.append(threading.get_ident())
        self.entered.release()
        assert self.open.wait(WAIT)
        return self.feed.version()

    def since(self, after: int, upto: int):
        return self.feed.since(after, upto)

    def mine(self) -> int:
        return self.threads.count(threading.get_ident())


def _last_start(clock: VersionClock) -> float:
    assert clock._last is not None
    return clock._last[0]


def _settle(clock: VersionClock) -> None:
    """Wait for a read-ahead in flight (if any) to finish."""
    flight = clock._flight
    if flight is not None:
        assert flight[1].wait(WAIT)


def test_recent_answers_from_a_read_within_the_age_and_reads_ahead_in_another_thread(tmp_path: Path):
    record_embedded_change(tmp_path, ["n1"], units=["u1"])
    feed = Counted(SqliteChangeFeed(tmp_path))
    clock = VersionClock(feed)
    with request_arrived():
        assert clock.read() == 1
    assert feed.mine() == 1
    record_embedded_change(tmp_path, ["n2"], units=["u2"])
    feed.open.clear()  # from now on a round trip hangs until the test lets it go
    with request_arrived(at=_last_start(clock) + 0.5):
        assert clock.recent(1.0) == 1  # no wait: the read-ahead is held, not this request
    assert feed.entered.acquire(timeout=WAIT) and feed.entered.acquire(timeout=WAIT)  # this one's, the read-ahead's
    assert feed.mine() == 1 and len(feed.threads) == 2 and clock.ahead == 1
    feed.open.set()
    _settle(clock)
    with request_arrived(at=_last_start(clock) + 0.5):
        assert clock.recent(1.0) == 2  # the read-ahead's version
    assert feed.mine() == 1


def test_recent_reads_itself_past_the_age_and_read_stays_strict(tmp_path: Path):
    record_embedded_change(tmp_path, ["n1"], units=["u1"])
    feed = Counted(SqliteChangeFeed(tmp_path))
    clock = VersionClock(feed)
    with request_arrived():
        clock.read()
    with request_arrived(at=_last_start(clock) + 1.5):
        assert clock.recent(1.0) == 1
    assert feed.mine() == 2  # older than the age: a round trip of its own
    with request_arrived(at=_last_start(clock) + 0.5):
        clock.read()
    assert feed.mine() == 3  # read(): always a read that started after the request arrived
    _settle(clock)


def _held_answer(tmp_path: Path, read_age: float) -> tuple[Caches, Counted]:
    record_embedded_change(tmp_path, ["n1"], units=["u1"])
    feed = Counted(SqliteChangeFeed(tmp_path))
    caches = Caches(None, changes=feed.feed, clock=VersionClock(feed), stale_seconds=5, stale_read_seconds=read_age)
    with request_arrived():
        caches.sync_store()
        assert caches.front_put("k", "answer at 1", {"decision": 1})
    return caches, feed


def _cached_ask(caches: Caches, arrived: float, bookmark: tuple[str, ...] = (), server: bool = True):
    """What ask_with_llm does before its pipeline: the stale path, the replay, the front. The
    request arrives at ``arrived`` (after the last read started, maybe later than now: no
    timing is assumed), without a bookmark as a server request unless told otherwise."""
    with request_arrived(at=arrived), causal.reading_after(bookmark), causal.accepting_stale(server):
        stale = caches.front_stale("k", lambda: None) if causal.stale_allowed() else None
        if stale is not None:
            return "stale", stale
        caches.sync_store()
        return "front", caches.front_get("k")


def test_a_cached_ask_without_a_bookmark_makes_no_round_trip_of_its_own(tmp_path: Path):
    caches, feed = _held_answer(tmp_path, 1.0)
    before = feed.mine()
    feed.open.clear()  # the read-ahead hangs: the ask must not wait for it
    assert _cached_ask(caches, _last_start(caches.clock) + 0.5) == ("front", "answer at 1")
    assert feed.mine() == before
    feed.open.set()
    _settle(caches.clock)
    caches.close()


def test_with_a_bookmark_or_outside_a_server_the_ask_reads_after_it_arrived(tmp_path: Path):
    caches, feed = _held_answer(tmp_path, 1.0)
    for kwargs in ({"bookmark": ("FB:x",)}, {"server": False}):
        before = feed.mine()
        assert _cached_ask(caches, _last_start(caches.clock) + 0.5, **kwargs) == ("front", "answer at 1")
        assert feed.mine() > before, kwargs  # a round trip of its own, as before
        _settle(caches.clock)
    caches.close()


def test_without_stale_replies_or_with_no_age_every_request_reads(tmp_path: Path):
    for age, stale in ((0.0, 5), (1.0, 0)):
        (tmp_path / f"{age}-{stale}").mkdir()
        caches, feed = _held_answer(tmp_path / f"{age}-{stale}", age)
        caches.stale_seconds = stale
        before = feed.mine()
        assert _cached_ask(caches, _last_start(caches.clock) + 0.5)[0] == "front"
        assert feed.mine() > before, (age, stale)
        caches.close()


def test_a_change_the_read_ahead_saw_still_gives_a_marked_stale_reply(tmp_path: Path):
    caches, feed = _held_answer(tmp_path, 1.0)
    record_embedded_change(tmp_path, ["n2"], units=["u2"])  # another process's change: version 2
    with request_arrived():
        assert caches.clock.read() == 2  # a read after it (a concurrent request's, say)
    before = feed.mine()
    assert _cached_ask(caches, _last_start(caches.clock) + 0.5) == ("stale", ("answer at 1", 1))
    assert feed.mine() == before and caches.stale_served == 1
    caches.wait_refreshed()
    caches.close()


def test_a_version_older_than_the_replayed_one_is_read_again_not_taken_for_a_reset(tmp_path: Path):
    """Two requests: X took version 1 (a read that began before Y's), Y replayed to version 2
    first. X's replay must not read 1 < 2 as a reset of the store (which clears every cache):
    it reads again, and only a read begun after it arrived that is also older is a reset."""
    caches, feed = _held_answer(tmp_path, 1.0)
    record_embedded_change(tmp_path, ["n2"], units=["u2"])
    with request_arrived():
        caches.sync_store()  # Y: replays to 2
    assert caches._seen == 2
    caches._request_version = lambda: 1  # X: its version came from the earlier read
    before = feed.mine()
    with request_arrived():
        assert caches._replay_changes() is False
    assert caches._seen == 2 and caches.last_sync.get("reason", "") != "the store was reset"
    assert feed.mine() == before + 1  # the one strict read that settled it
    caches.close()


def test_a_store_whose_version_went_back_is_still_a_reset(tmp_path: Path):
    caches, feed = _held_answer(tmp_path, 1.0)
    record_embedded_change(tmp_path, ["n2"], units=["u2"])
    with request_arrived():
        caches.sync_store()
    assert caches._seen == 2

    class Behind:  # the store recreated: its log starts again below what the caches saw
        def version(self) -> int:
            return 1

        def since(self, after: int, upto: int):
            return []

    caches.clock = VersionClock(Behind())
    with request_arrived():
        caches._replay_changes()
    assert caches._seen == 1 and caches.last_sync["reason"] == "the store was reset"
    caches.close()

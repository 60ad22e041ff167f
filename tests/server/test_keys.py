"""API keys on both stores (SQLite file for the embedded backend, (:KgApiKey) nodes on Neo4j)."""

from __future__ import annotations

from tests.neo4j_helpers import wipe_all
import hashlib
import sqlite3

import pytest

from kgservice.apikeys.model import split_key
from kgservice.server.auth import KeyError_, Role
from kgservice.stores.embedded.keys import SqliteKeyStore
from kgservice.stores.neo4j.keys import Neo4jKeyStore
from kgservice.stores.base import ReadOnlyError


@pytest.fixture(params=["sqlite", "neo4j"])
def keystore(request, tmp_path):
    if request.param == "sqlite":
        s = SqliteKeyStore(tmp_path / "keys.sqlite3")
        yield s
        s.close()
    else:
        conn = request.getfixturevalue("neo4j_connection")
        wipe_all(conn)
        yield Neo4jKeyStore(conn)


def test_roles_are_nested():
    r, w, a = Role.reader, Role.writer, Role.admin
    assert [x.allows(r) for x in (r, w, a)] == [True, True, True]
    assert [x.allows(w) for x in (r, w, a)] == [False, True, True]
    assert [x.allows(a) for x in (r, w, a)] == [False, False, True]
    assert a.scopes == ["kg:read", "kg:write", "kg:admin"]
    with pytest.raises(KeyError_):
        Role.parse("root")


def test_create_verify_revoke(keystore):
    key, rec = keystore.create("alice", "writer")
    key_id, secret = split_key(key)
    assert rec.key_id == key_id and len(secret) == 32 and rec.user == "alice" and rec.role is Role.writer
    who = keystore.verify(key)
    assert (who.user, who.role, who.key_id) == ("alice", Role.writer, key_id)
    assert keystore.verify(f"kg_{key_id}_{'A' * 32}") is None  # right id, wrong secret
    assert keystore.verify("kg_short_x") is None and keystore.verify("") is None
    other, _ = keystore.create("bob", "reader")
    assert [k.user for k in keystore.list()] == ["alice", "bob"]
    revoked = keystore.revoke(key_id)
    assert revoked.revoked_at is not None and not revoked.active
    assert keystore.verify(key) is None
    assert keystore.verify(other).user == "bob"  # only that key
    with pytest.raises(KeyError_, match="no API key"):
        keystore.revoke("zzzzzzzz")
    with pytest.raises(KeyError_, match="user"):
        keystore.create("has space", "reader")


def test_only_the_digest_is_stored(tmp_path):
    store = SqliteKeyStore(tmp_path / "keys.sqlite3")
    key, rec = store.create("carol", "admin")
    secret = key.split("_")[2]
    row = sqlite3.connect(tmp_path / "keys.sqlite3").execute("SELECT * FROM keys").fetchone()
    assert key not in repr(row) and secret not in repr(row)
    assert hashlib.sha256(secret.encode()).hexdigest() in row
    assert (tmp_path / "keys.sqlite3").stat().st_mode & 0o077 == 0


def test_read_only_store_verifies_but_refuses_changes(tmp_path):
    key, _ = SqliteKeyStore(tmp_path / "k.sqlite3").create("dan", "reader")
    ro = SqliteKeyStore(tmp_path / "k.sqlite3", read_only=True)
    assert ro.verify(key).user == "dan"
    with pytest.raises(ReadOnlyError):
        ro.create("eve", "reader")
    assert ro.list()[0].last_used is None  # verification did not write either


@pytest.mark.parametrize("backend", ["embedded", "neo4j"])
def test_key_table_follows_the_version_and_revocation_reaches_other_servers(backend, tmp_path, request):
    """Two servers' key stores on one store (two KnowledgeBases): A keeps a verified key in
    memory while the version stands still (no lookup per request), and B's revocation moves
    the version, so A refuses the key on its next request."""
    from kgservice.stores.changelog import request_arrived
    from kgservice.service import KnowledgeBase
    from tests.pipeline.conftest import make_settings

    over = {}
    if backend == "neo4j":
        from tests.jobs.conftest import neo4j_over

        wipe_all(request.getfixturevalue("neo4j_connection"))
        over = neo4j_over()
    a = KnowledgeBase(make_settings(tmp_path / "a" if backend == "neo4j" else tmp_path, **over))
    b = KnowledgeBase(make_settings(tmp_path / "b" if backend == "neo4j" else tmp_path, **over))
    try:
        ka, kb_ = a.key_store(), b.key_store()
        key, rec = kb_.create("dana", "writer")
        assert ka.verify(key).user == "dana" and ka.lookups == 1
        for _ in range(3):
            with request_arrived():
                assert ka.verify(key) is not None
        assert ka.lookups == 1  # kept in memory: the version did not move
        reads = a.caches.clock.reads
        with request_arrived():  # one request: the key check and the cache sync share one version read
            ka.verify(key)
            a.caches.sync_store()
        assert a.caches.clock.reads == reads + 1
        kb_.revoke(rec.key_id)
        assert ka.verify(key) is None  # the very next request
        assert ka.lookups == 2
    finally:
        for k in (a, b):
            k.close()


def test_version_clock_shares_reads_that_started_after_arrival():
    """Requests waiting together share one read; a request never takes a read that started
    before it arrived (that read may predate a change the request must see)."""
    import asyncio
    import threading
    import time

    from kgservice.stores.changelog import VersionClock, request_arrived

    class Feed:
        def __init__(self):
            self.v, self.n = 0, 0
            self.gate = threading.Event()
            self.read = threading.Event()  # a read has taken its value

        def version(self):
            self.n += 1
            v = self.v
            self.read.set()
            assert self.gate.wait(300)  # bounds a hang only
            return v

    feed = Feed()
    clock = VersionClock(feed)

    async def one():
        with request_arrived():
            return await clock.aread()

    async def scenario():
        first = asyncio.ensure_future(one())  # starts read 1 (held at the gate)
        # read 1 has taken its value (an event, not a sleep: its thread may start late under load)
        assert await asyncio.to_thread(feed.read.wait, 300)
        feed.v = 7  # a change commits after read 1 started
        late = [asyncio.ensure_future(one()) for _ in range(20)]  # arrived after read 1 started
        while clock.calls < 21:  # every late request is waiting on the clock (each yields once to get there)
            await asyncio.sleep(0)
        feed.gate.set()
        return await first, await asyncio.gather(*late)

    first, late = asyncio.run(scenario())
    assert first == 0  # read 1 began before the change
    assert late == [7] * 20  # all 20 waited for one fresh read, none took read 1's stale answer
    assert feed.n == 2 and clock.reads == 2
    with request_arrived(time.monotonic() + 1):  # arrived "later" than every read so far: reads again
        assert clock.read() == 7 and feed.n == 3


def test_key_table_entries_expire_even_if_the_version_never_moves(tmp_path, monkeypatch):
    """The safety net for a key change whose version bump failed: after KEY_TABLE_TTL the key
    is read from the store again."""
    from kgservice.stores.changelog import VersionClock
    from kgservice.apikeys import store as keystore_mod

    class Still:
        def version(self):
            return 1

    keys = SqliteKeyStore(tmp_path / "keys.sqlite3", clock=VersionClock(Still()))
    try:
        key, _ = keys.create("erin", "reader")
        keys.verify(key)
        keys.verify(key)
        assert keys.lookups == 1
        monkeypatch.setattr(keystore_mod, "KEY_TABLE_TTL", 0.0)
        keys.verify(key)
        assert keys.lookups == 2
    finally:
        keys.close()

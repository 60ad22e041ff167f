"""Web sign-ins kept in the store, on both backends (kgservice.stores.sessions): what one
server writes another reads; an expired session is gone; a flash is taken once and only by
the page it waits for; a sign-out ends it; a replacing restore's wipe keeps it; the store
holds sha256 of the cookie's token and the flash sealed, never the token or the flash's text."""

from __future__ import annotations

import hashlib

from kgservice.web.session import StoredSessions, row_id
from kgservice.web.sealed import unseal


def test_a_session_round_trips_and_ends(store):
    table = store.session_table()
    sid = hashlib.sha256(b"token-1").hexdigest()
    expires = table.create(sid, "key00001", "csrf-1", 3_600_000)
    row = table.get(sid)
    assert (row.id, row.key_id, row.csrf, row.expires_ms, row.flash_path) == (sid, "key00001", "csrf-1", expires, None)
    assert table.get(hashlib.sha256(b"token-2").hexdigest()) is None
    table.set_flash(sid, "/ui/admin", "sealed-text", 300_000)
    assert table.get(sid).flash_path == "/ui/admin"
    assert table.take_flash(sid, "/ui/jobs") is None  # another page leaves it waiting
    assert table.take_flash(sid, "/ui/admin") == "sealed-text"
    assert table.take_flash(sid, "/ui/admin") is None  # once
    assert table.get(sid).flash_path is None
    store.wipe()  # kg restore --replace keeps the team signed in
    assert table.get(sid) is not None
    table.drop(sid)
    assert table.get(sid) is None


def test_an_expired_session_or_flash_is_not_read(store):
    table = store.session_table()
    gone, live = hashlib.sha256(b"old").hexdigest(), hashlib.sha256(b"new").hexdigest()
    table.create(gone, "key00001", "c", 0)  # expires the moment it is made
    table.create(live, "key00002", "c", 3_600_000)
    assert table.get(gone) is None and table.get(live).key_id == "key00002"
    table.set_flash(live, "/ui/admin", "s", 0)
    assert table.get(live).flash_path is None and table.take_flash(live, "/ui/admin") is None


def test_the_store_keeps_no_token_and_no_flash_text(store):
    sessions = StoredSessions(store.session_table())
    s = sessions.create("key00003")
    s.set_flash("/ui/admin", created={"key": "kg_SECRETID_" + "x" * 32})
    again = sessions.get(s.token)  # another server's view: only the cookie's token
    assert (again.key_id, again.csrf, again.flash_path) == ("key00003", s.csrf, "/ui/admin")
    assert again.take_flash("/ui/admin") == {"created": {"key": "kg_SECRETID_" + "x" * 32}}
    assert again.take_flash("/ui/admin") == {}
    s.set_flash("/ui/admin", notice="done")
    stored = _stored_text(store)
    assert s.token not in stored and "SECRETID" not in stored and "done" not in stored
    assert row_id(s.token) == hashlib.sha256(s.token.encode()).hexdigest() and row_id(s.token) in stored
    sealed = store.session_table().take_flash(row_id(s.token), "/ui/admin")
    assert unseal(s.token, sealed) == {"notice": "done"} and unseal("another-token", sealed) is None


def _stored_text(store) -> str:
    """Everything the backend keeps about sessions, as text."""
    if store.backend == "neo4j":
        with store.driver.session() as s:
            return repr(s.run("MATCH (n:KgSession) RETURN properties(n) AS p").data())
    import sqlite3

    db = sqlite3.connect(store.session_table().path)
    try:
        return repr(db.execute("SELECT * FROM sessions").fetchall())
    finally:
        db.close()

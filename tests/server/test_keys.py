"""API keys on both stores (SQLite file for the embedded backend, (:KgApiKey) nodes on Neo4j)."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from kgservice.server.auth import KeyError_, Neo4jKeyStore, Role, SqliteKeyStore
from kgservice.server.auth.keys import split_key
from kgservice.stores.base import ReadOnlyError


@pytest.fixture(params=["sqlite", "neo4j"])
def keystore(request, tmp_path):
    if request.param == "sqlite":
        s = SqliteKeyStore(tmp_path / "keys.sqlite3")
        yield s
        s.close()
    else:
        conn = request.getfixturevalue("neo4j_connection")
        conn.wipe_all_for_tests()
        yield Neo4jKeyStore(conn.driver, conn.database)


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

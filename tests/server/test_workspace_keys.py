"""Keys carry their workspaces (docs/workspaces.md), on both stores: a key holds one or several
workspaces with a role in each; a key stored before workspaces is a key of ``default`` with its
role, with no step to run; keys an earlier release kept inside a named workspace's directory are
carried into the deployment's, secret unchanged; a renamed workspace's keys follow it, and a
deleted one leaves every key (a key left with none is revoked)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from kgservice.apikeys.model import KeyError_, Role, parse_grants
from kgservice.stores.embedded.keys import SqliteKeyStore
from kgservice.stores.neo4j.keys import Neo4jKeyStore
from tests.neo4j_helpers import wipe_all
from tests.server.test_keys import keystore  # noqa: F401 - the fixture: a key store of each backend

R, W, A = Role.reader, Role.writer, Role.admin


def test_a_key_acts_in_its_workspaces_with_a_role_in_each(keystore):
    key, rec = keystore.create("cy", W, {"team-a": W, "team-b": R})
    assert (rec.role, rec.workspaces) == (W, {"team-a": W, "team-b": R})
    who = keystore.verify(key)
    assert who.workspaces == {"team-a": W, "team-b": R}
    assert (who.within("team-a").role, who.within("team-b").role, who.within("default")) == (W, R, None)
    assert who.within("team-b").workspace == "team-b" and not who.within("team-b").allows(W)
    listed = {k.key_id: k.workspaces for k in keystore.list()}
    assert listed == {rec.key_id: {"team-a": W, "team-b": R}}
    # a key made as before is a key of default
    _, old_style = keystore.create("ann", A)
    assert old_style.workspaces == {"default": A}


def test_rename_follows_and_delete_leaves_every_key(keystore):
    _, both = keystore.create("cy", W, {"team-a": W, "team-b": R})
    key_a, only_a = keystore.create("ann", A, {"team-a": A})
    assert keystore.rename_workspace("team-a", "blue") == 2
    assert {k.key_id: k.workspaces for k in keystore.list()} == {both.key_id: {"blue": W, "team-b": R},
                                                                 only_a.key_id: {"blue": A}}
    assert keystore.drop_workspace("blue") == 2
    after = {k.key_id: k for k in keystore.list()}
    assert after[both.key_id].workspaces == {"team-b": R} and after[both.key_id].active
    assert not after[only_a.key_id].active and keystore.verify(key_a) is None  # left with none: revoked


def test_a_key_stored_before_workspaces_is_a_key_of_default(tmp_path: Path):
    """A keys.sqlite3 as the release before workspaces wrote it (no workspaces column)."""
    path = tmp_path / "keys.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE keys (key_id TEXT PRIMARY KEY, sha256 TEXT NOT NULL, user TEXT NOT NULL, "
               "role TEXT NOT NULL, created TEXT NOT NULL, last_used TEXT, revoked_at TEXT)")
    import hashlib

    secret = "S" * 32
    db.execute("INSERT INTO keys VALUES ('AbCd1234', ?, 'ann', 'writer', '2025-01-01T00:00:00+00:00', NULL, NULL)",
               (hashlib.sha256(secret.encode()).hexdigest(),))
    db.commit()
    db.close()
    ro = SqliteKeyStore(path, read_only=True)  # a read-only server reads it as it is
    assert ro.verify(f"kg_AbCd1234_{secret}").workspaces == {"default": W}
    ro.close()
    store = SqliteKeyStore(path)
    who = store.verify(f"kg_AbCd1234_{secret}")
    assert who is not None and who.workspaces == {"default": W} and who.within("default").role is W
    store.close()


def test_an_old_key_node_is_a_key_of_default(neo4j_connection):
    wipe_all(neo4j_connection)
    import hashlib

    secret = "T" * 32
    neo4j_connection.driver.execute_query(  # a key node as the release before workspaces wrote it
        "CREATE (:KgApiKey {key_id: 'Old12345', sha256: $sha, user: 'ann', role: 'admin', created: '2025'})",
        sha=hashlib.sha256(secret.encode()).hexdigest(), database_=neo4j_connection.database)
    who = Neo4jKeyStore(neo4j_connection).verify(f"kg_Old12345_{secret}")
    assert who is not None and who.workspaces == {"default": A}


def test_keys_made_inside_a_named_workspace_are_carried_into_the_deployment(tmp_path: Path):
    """The layout the first workspaces release wrote: `kg --workspace team-a keys create` put the
    key in workspaces/team-a/keys.sqlite3. Opening the deployment's keys carries it in as a key of
    team-a, with the same secret; the old file is kept aside, never read again."""
    from kgservice.config import Settings
    from kgservice.service import KnowledgeBase

    old_dir = tmp_path / "kg" / "workspaces" / "team-a"
    old_dir.mkdir(parents=True)
    old = SqliteKeyStore(old_dir / "keys.sqlite3")
    key, rec = old.create("bob", W)
    old.close()
    settings = Settings(data_dir=tmp_path / "kg", embedder="hash:64", vector_backend="edge")
    with KnowledgeBase(settings) as kb:
        keys = kb.key_store()
        who = keys.verify(key)
        keys.close()
    assert who is not None and who.workspaces == {"team-a": W} and who.key_id == rec.key_id
    assert not (old_dir / "keys.sqlite3").exists() and (old_dir / "keys.sqlite3.carried").exists()


def test_grants_from_the_command_line():
    assert parse_grants(["team-a", "team-b:admin"], "writer") == {"team-a": W, "team-b": A}
    for bad in (["team-a", "team-a:reader"], ["Team"], ["team-a:root"]):
        with pytest.raises(KeyError_):
            parse_grants(bad, "reader")


def test_kg_workspaces_rename_and_delete_carry_the_keys_along(tmp_path: Path):
    """`kg workspaces rename` / `delete` (kgservice.workspaces) change the deployment's keys too."""
    from tests.processes import env_for, kg

    env = env_for(tmp_path / "kg")
    assert kg(env, "workspaces", "create", "team-b").returncode == 0
    made = kg(env, "keys", "create", "--user", "bob", "--workspace", "team-b:writer", "--workspace", "default")
    assert made.returncode == 0, made.stderr
    assert kg(env, "workspaces", "rename", "team-b", "blue").returncode == 0
    import json

    listed = json.loads(kg(env, "keys", "list", "--json").stdout)
    assert [k["workspaces"] for k in listed] == [{"blue": "writer", "default": "reader"}]
    assert kg(env, "workspaces", "delete", "blue", "--yes").returncode == 0
    listed = json.loads(kg(env, "keys", "list", "--json").stdout)
    assert [(k["workspaces"], k["revoked_at"]) for k in listed] == [({"default": "reader"}, None)]


def test_a_keys_workspaces_change_in_place(keystore):
    """set_grants: the same secret acts in the new workspaces only, from the next verification
    on; ``role`` follows the grants (the highest); a revoked key, an unknown id or no workspace
    at all is refused."""
    key, rec = keystore.create("cy", A, {"team-a": A, "team-b": R})
    assert keystore.verify(key).workspaces == {"team-a": A, "team-b": R}
    changed = keystore.set_grants(rec.key_id, {"team-b": W})
    assert (changed.workspaces, changed.role) == ({"team-b": W}, W)
    who = keystore.verify(key)
    assert who.workspaces == {"team-b": W} and who.role is W and who.within("team-a") is None
    assert [(k.workspaces, k.role) for k in keystore.list()] == [({"team-b": W}, W)]
    with pytest.raises(KeyError_):
        keystore.set_grants(rec.key_id, {})
    with pytest.raises(KeyError_):
        keystore.set_grants("NoSuch12", {"team-a": R})
    keystore.revoke(rec.key_id)
    with pytest.raises(KeyError_):
        keystore.set_grants(rec.key_id, {"team-a": R})
    assert keystore.verify(key) is None

"""Every Cypher procedure file is scoped by workspace (docs/workspaces.md, "Neo4j"): a node
pattern of a label the service stores per knowledge base carries ``ws: $ws`` (the connection
adds ``$ws`` to every query, kgservice.stores.neo4j.connection.Scoped), and a file that reads or
writes without naming a label at all (a scan of every node) uses ``$ws`` somewhere. Only the
files of deployment-level state (keys, web sign-ins, server heartbeats, the schema) are exempt,
each named here with why.

A static check over the files, written apart from the store code; the negative cases show it
flags an unscoped read, an unscoped write, an unlabelled scan and a real file with its scope
taken out."""

from __future__ import annotations

import re
import pytest

from kgservice.stores import cypher

#: the labels of everything stored per workspace (docs/workspaces.md); keys (KgApiKey), web
#: sign-ins (KgSession), server heartbeats (KgServer) and schema markers (KgSchema) are the deployment's
SCOPED = {"Node", "Unit", "UnitAlias", "Document", "RetractedUnit", "Change", "KgMeta", "KgChange", "KgJob",
          "KgSavedResult", "KgCommunities", "KgMergeDecision", "KgVector", "KgVectorSet", "KgMirrorChunk",
          "KgRestore", "StagedNode", "StagedUnit", "IngestStage"}

#: files that do not use $ws, and why
DEPLOYMENT = {
    "key_create": "API keys belong to the deployment", "key_get": "API keys", "key_list": "API keys",
    "key_revoke": "API keys", "key_touch": "API keys", "keys_schema": "schema",
    "session_create": "web sign-ins belong to the deployment", "session_drop": "web sign-ins",
    "session_flash_set": "web sign-ins", "session_flash_take": "web sign-ins", "session_get": "web sign-ins",
    "servers_beat": "server heartbeats", "servers_leave": "server heartbeats", "servers_live": "server heartbeats",
    "schema": "constraints", "schema_2": "constraints", "schema_3": "the migration that sets ws",
    "schema_3_pending": "whether any node still lacks ws",
    "schema_version_get": "the schema record", "schema_version_set": "the schema record",
    "unit_probes_pending": "a schema marker", "unit_probes_backfill": "schema upkeep over every workspace",
    "plugin_procedures": "which procedures the server has", "vectors_index": "the one vector index",
    "vectors_index_await": "the one vector index", "vectors_index_drop": "the one vector index",
    "vectors_index_info": "the one vector index", "vectors_schema": "constraints",
    "wipe_all": "tests: every workspace", "workspaces_list": "the set of workspaces: every one's name", "plugin_create_relations": "ends given by element ids of this "
                                                                       "workspace's own nodes",
}

_COMMENT = re.compile(r"^\s*//.*$", re.M)
_NODE = re.compile(r"\((\w*)((?::\w+(?:\|\w+)*)+)\s*(\{[^}]*\})?\s*\)")
# a MATCH that starts from a node of no label: every node of every workspace unless $ws filters it
_SCAN = re.compile(r"\bMATCH\s+\(\w*\s*(\{[^}]*\})?\)")
_SCHEMA_STATEMENT = re.compile(r"^\s*(CREATE|DROP)\s+(CONSTRAINT|INDEX|VECTOR\s+INDEX)", re.I | re.M)


def unscoped(text: str) -> list[str]:
    """The node patterns of scoped labels without ``ws: $ws``, and each statement that matches
    from a node of no label (a scan of every node) without using ``$ws``."""
    body = _COMMENT.sub("", text)
    statements = [s for s in body.split(";\n") if s.strip() and not _SCHEMA_STATEMENT.match(s)]
    problems = []
    for statement in statements:
        for m in _NODE.finditer(statement):
            labels = set(re.split(r"[:|]", m.group(2))) - {""}
            props = m.group(3) or ""
            if labels & SCOPED and not re.search(r"\bws\s*:\s*\$ws\b", props):
                problems.append(m.group(0))
        if _SCAN.search(statement) and "$ws" not in statement:
            problems.append(f"a statement without $ws: {statement.strip().splitlines()[0]}")
    return problems


def test_every_procedure_file_is_scoped_by_workspace():
    found = {name: unscoped(cypher.load(name)) for name in cypher.names() if name not in DEPLOYMENT}
    assert {name: p for name, p in found.items() if p} == {}
    assert len(found) > 90  # the check saw the procedure files, not an empty folder


def test_the_deployment_files_hold_no_scoped_label():
    """What is exempt is exempt because it touches no knowledge-base node (the migration and the
    schema name the labels only to constrain or tag them; the probe backfill runs over all)."""
    holding = {name for name in DEPLOYMENT if name in cypher.names()
               and any(set(re.split(r"[:|]", m.group(2))) & SCOPED
                       for m in _NODE.finditer(_COMMENT.sub("", cypher.load(name))))}
    assert holding <= {"schema", "schema_2", "schema_3", "unit_probes_backfill", "vectors_index", "vectors_schema",
                       "workspaces_list"}


@pytest.mark.parametrize("text", [
    "MATCH (u:Unit) WHERE u.id IN $ids RETURN u.id",
    "MATCH (u:Unit {id: $id}) RETURN u",
    "MERGE (x:Node {id: n.id}) RETURN x",
    "MATCH (n {ws: $ws})-[:SUBJECT]->(m:Node) RETURN m",
    "MATCH (n) WHERE NOT n:KgApiKey DETACH DELETE n",
    "CREATE (:KgChange {seq: 1, touched: $touched})",
    "MATCH (a:Node|Unit {id: $id}) RETURN a",
])
def test_the_check_flags_an_unscoped_statement(text: str):
    assert unscoped(text)


@pytest.mark.parametrize("text", [
    "MATCH (u:Unit {ws: $ws}) WHERE u.id IN $ids RETURN u.id",
    "MERGE (x:Node {ws: $ws, id: n.id}) RETURN x",
    "MATCH (k:KgApiKey {key_id: $key_id}) RETURN k",
    "CREATE CONSTRAINT node_ws_id IF NOT EXISTS FOR (n:Node) REQUIRE (n.ws, n.id) IS UNIQUE",
])
def test_the_check_passes_a_scoped_or_deployment_statement(text: str):
    assert unscoped(text) == []


def test_the_check_flags_a_real_file_with_its_scope_taken_out():
    text = cypher.load("get_units")
    assert unscoped(text) == []
    assert unscoped(text.replace(" {ws: $ws}", "")) == ["(u:Unit)"]
    wipe = cypher.load("wipe")
    assert unscoped(wipe) == []
    assert [p[:40] for p in unscoped(wipe.replace("MATCH (n {ws: $ws})", "MATCH (n)"))] == [
        "a statement without $ws: MATCH (n) WHERE"]


def test_the_scoped_labels_are_those_the_migration_tags():
    """The migration (schema_3) gives every node of these labels its workspace: the two lists agree."""
    text = cypher.load("schema_3")
    tagged = set(re.findall(r"\bn:(\w+)", text.split("IN TRANSACTIONS")[0]))
    assert tagged == SCOPED

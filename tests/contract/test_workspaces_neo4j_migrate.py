"""A Neo4j store written before workspaces (schema 2: nodes without ``ws``, uniqueness on ``id``
alone) is refused with a message naming ``kg migrate``, and ``kg migrate`` makes it the
workspace ``default`` in place: every stored node gets ``ws = 'default'``, the single-property
constraints give way to (ws, id) ones, and running it again changes nothing.

The old store is made the way schema 2 kept it: a knowledge base ingested and vectorised, then
every ``ws`` removed, the composite constraints dropped and the old ones created (their names
and properties as main's schema.cypher had them), and the schema record set back to 2."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from kgservice.config import Settings
from kgservice.errors import InputError
from kgservice.service import KnowledgeBase
from kgservice.stores.schema import SchemaNeedsMigration
from tests.neo4j_helpers import wipe_all
from tests.processes import kg, neo4j_env

MARKER = "zqxvortmarker"
TEXT = f"#w1 {{smoking}} [causes] {{lung cancer}}\n#w2 {{smoking}} [causes] {{{MARKER}}}\n"

#: schema 2's single-property uniqueness constraints (name: label, property)
OLD = {"node_id": ("Node", "id"), "unit_id": ("Unit", "id"), "unit_alias_id": ("UnitAlias", "id"),
       "kgmeta_id": ("KgMeta", "id"), "kgchange_seq": ("KgChange", "seq"), "kgjob_id": ("KgJob", "id"),
       "kgjob_idem": ("KgJob", "idem"), "document_id": ("Document", "id"),
       "retracted_unit_id": ("RetractedUnit", "id"), "change_id": ("Change", "id"),
       "ingest_stage_id": ("IngestStage", "id"), "kgvector_node_id": ("KgVector", "node_id"),
       "kgvectorset_id": ("KgVectorSet", "id")}
NEW = {"node_ws_id", "unit_ws_id", "unit_alias_ws_id", "kgmeta_ws_id", "kgchange_ws_seq", "kgjob_ws_id",
       "kgjob_ws_idem", "document_ws_id", "retracted_unit_ws_id", "change_ws_id", "ingest_stage_ws_id",
       "kgvector_ws_node_id", "kgvectorset_ws_id", "kgmerge_ws_pair"}


def _run(settings: Settings, query: str) -> list[dict]:
    import neo4j

    with neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=(settings.neo4j_user, settings.neo4j_password)) as d:
        return [r.data() for r in d.execute_query(query).records]


def _constraints(settings: Settings) -> set[str]:
    return {r["name"] for r in _run(settings, "SHOW CONSTRAINTS YIELD name")}


@pytest.fixture
def settings(tmp_path: Path, request) -> Settings:
    if not os.environ.get("KG_TEST_NEO4J_URI") and os.environ.get("CI") != "true":
        pytest.skip("no Neo4j: set KG_TEST_NEO4J_URI (and NEO4J_PASSWORD) after `scripts/neo4j start`")
    wipe_all(request.getfixturevalue("neo4j_connection"))
    s = Settings(data_dir=tmp_path / "kg", embedder="hash:64", vector_backend="neo4j", backend="neo4j",
                 neo4j_uri=os.environ["KG_TEST_NEO4J_URI"], neo4j_user=os.environ.get("KG_NEO4J_USER", "neo4j"),
                 neo4j_password=os.environ.get("NEO4J_PASSWORD"))
    yield s
    # whatever happened, leave the database as the current schema wants it for the next test
    for name in OLD:
        _run(s, f"DROP CONSTRAINT {name} IF EXISTS")
    wipe_all(request.getfixturevalue("neo4j_connection"))
    with KnowledgeBase(s) as kb:
        kb.stats()


def _make_schema_2_store(settings: Settings) -> int:
    """A knowledge base as schema 2 kept it; how many nodes it holds."""
    with KnowledgeBase(settings) as kb:
        kb.ingest_document("notes.units", TEXT, mode="manual")
        assert kb.stats()["units"] == 2
    for name in NEW:
        _run(settings, f"DROP CONSTRAINT {name} IF EXISTS")
    for name, (label, prop) in OLD.items():
        _run(settings, f"CREATE CONSTRAINT {name} IF NOT EXISTS FOR (n:{label}) REQUIRE n.{prop} IS UNIQUE")
    _run(settings, "MATCH (n) WHERE n.ws IS NOT NULL REMOVE n.ws")
    _run(settings, "MATCH (m:KgSchema {id: 'version'}) SET m.version = 2, m.compat = 1")
    return _run(settings, "MATCH (n) WHERE NOT n:KgSchema RETURN count(n) AS n")[0]["n"]


def test_a_schema_2_store_is_refused_until_kg_migrate_makes_it_the_default_workspace(settings: Settings):
    stored = _make_schema_2_store(settings)
    assert stored > 5  # units, nodes, a document, the change log, vectors
    assert _run(settings, "MATCH (n) WHERE n.ws IS NOT NULL RETURN count(n) AS n")[0]["n"] == 0

    # refused, naming the command, before anything is written (no node got a ws)
    with pytest.raises(SchemaNeedsMigration, match="kg migrate"):
        KnowledgeBase(settings).stats()
    env = neo4j_env(settings.data_dir, KG_EMBEDDER="hash:64", KG_VECTOR_BACKEND="neo4j")
    refused = kg(env, "stats")
    assert refused.returncode == 1 and "`kg migrate`" in refused.stderr, refused.stderr
    assert _run(settings, "MATCH (n) WHERE n.ws IS NOT NULL RETURN count(n) AS n")[0]["n"] == 0

    done = kg(env, "migrate", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["before"], report["after"], report["compat"]) == (2, 3, 3)

    # every node of the knowledge base is the default workspace's; keys and schema stay the deployment's
    rows = _run(settings, "MATCH (n) WHERE NOT n:KgSchema RETURN n.ws AS ws, count(n) AS n")
    assert rows == [{"ws": "default", "n": stored}]
    names = _constraints(settings)
    assert NEW <= names and not (set(OLD) & names), names
    assert {"version": 3, "compat": 3} == _run(
        settings, "MATCH (m:KgSchema {id: 'version'}) RETURN m.version AS version, m.compat AS compat")[0]

    # the default workspace reads its knowledge as before; another workspace sees none of it
    with KnowledgeBase(settings) as d:
        assert d.stats()["units"] == 2 and d.unit("w2") is not None and d.resolve_node(MARKER) is not None
        assert MARKER in [n.node for n in d.search(MARKER, threshold=0.0).nodes]
    with KnowledgeBase(dataclasses.replace(settings, workspace="team-a")) as a:
        with pytest.raises(InputError, match="no workspace 'team-a'"):  # nobody made it: refused, not default's
            a.stats()

    # idempotent: again, nothing to do; the step itself run again (a half-finished run) changes nothing
    again = kg(env, "migrate", "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["applied"] == [], again.stdout
    from kgservice.stores.factory import open_store

    store = open_store(settings)
    try:
        store.write_statements("schema_3")
    finally:
        store.close()
    assert _run(settings, "MATCH (n) WHERE NOT n:KgSchema RETURN n.ws AS ws, count(n) AS n") == [
        {"ws": "default", "n": stored}]
    assert _constraints(settings) == names

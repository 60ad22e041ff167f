"""The store's schema version (kgservice.stores.schema), on both backends: a fresh store gets the
current version; a store of the shape kgservice kept before the version existed (data, no
record) is brought up to date in place when opened; a store a newer release changed beyond
what this one can use is refused with a clear message and exit 1, before anything is written;
``kg migrate`` reports and runs the steps; /readyz turns unready when the store outgrows it.

The expected versions are the step table's, read by hand: step 2 only adds (compat stays 1);
step 3 (workspaces) changes Neo4j stores only, in a way older releases cannot follow (compat 3
there; the embedded store only records it, compat stays 1)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from kgservice.config import Settings
from kgservice.service import KnowledgeBase
from kgservice.stores import schema
from kgservice.stores.schema import SchemaNeedsMigration, SchemaState, SchemaTooNew, Step
from tests.neo4j_helpers import wipe_all
from tests.processes import env_for, kg

STEP2_NEO4J = {"kgsession_id", "kgserver_id", "kgsession_expires", "kgjob_updated"}


@pytest.fixture(params=["embedded", "neo4j"])
def settings(request, tmp_path) -> Settings:
    over = {}
    if request.param == "neo4j":
        wipe_all(request.getfixturevalue("neo4j_connection"))
        over = dict(backend="neo4j", neo4j_uri=os.environ["KG_TEST_NEO4J_URI"],
                    neo4j_user=os.environ.get("KG_NEO4J_USER", "neo4j"), neo4j_password=os.environ.get("NEO4J_PASSWORD"))
    return Settings(data_dir=tmp_path / "kg", embedder="hash:64", vector_backend="edge", **over)


def recorded(settings: Settings) -> dict | None:
    """The version record as stored, read around the code under test."""
    if settings.backend == "neo4j":
        import neo4j

        with neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=(settings.neo4j_user, settings.neo4j_password)) as d:
            rows = d.execute_query("MATCH (m:KgSchema {id: 'version'}) RETURN m.version AS version, m.compat AS compat")
        return rows.records[0].data() if rows.records else None
    path = settings.data_dir / "schema.json"
    return json.loads(path.read_text()) if path.exists() else None


def neo4j_run(settings: Settings, query: str) -> list[dict]:
    import neo4j

    with neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=(settings.neo4j_user, settings.neo4j_password)) as d:
        return [r.data() for r in d.execute_query(query).records]


def set_record(settings: Settings, version: int | None, compat: int | None) -> None:
    if settings.backend == "neo4j":
        if version is None:
            neo4j_run(settings, "MATCH (m:KgSchema {id: 'version'}) DELETE m")
        else:
            neo4j_run(settings, f"MERGE (m:KgSchema {{id: 'version'}}) SET m.version = {version}, m.compat = {compat}")
        return
    path = settings.data_dir / "schema.json"
    if version is None:
        path.unlink(missing_ok=True)
    else:
        path.write_text(json.dumps({"version": version, "compat": compat}))


def current(settings: Settings) -> dict:
    """What a store of this release records: version 3; compat 3 on Neo4j (step 3 changed it), 1 else."""
    return {"version": 3, "compat": 3 if settings.backend == "neo4j" else 1}


def ingest_one(settings: Settings) -> None:
    with KnowledgeBase(settings) as kb:
        kb.ingest_notation("#v1 {tea} [contains] {caffeine}\n", embed=False)


def test_a_fresh_store_gets_the_current_version(settings):
    assert recorded(settings) is None
    ingest_one(settings)
    assert recorded(settings) == current(settings)


def test_a_store_of_the_old_shape_is_brought_up_to_date_in_place(settings):
    ingest_one(settings)
    set_record(settings, None, None)  # what kgservice wrote before the version existed
    if settings.backend == "neo4j":
        for name in STEP2_NEO4J:
            kind = "CONSTRAINT" if name.endswith("_id") else "INDEX"
            neo4j_run(settings, f"DROP {kind} {name} IF EXISTS")
    with KnowledgeBase(settings) as kb:
        report = kb.migrate(dry_run=True)
        assert (report.before, report.after, [s["version"] for s in report.applied]) == (1, 3, [2, 3])
        assert recorded(settings) is None  # a dry run changes nothing
    with KnowledgeBase(settings) as kb:
        # opening applies the steps: step 2 only adds; step 3 has nothing to rewrite on Neo4j here,
        # where every node already carries ws (tests/contract/test_workspaces_neo4j_migrate.py has
        # a store whose nodes do not, refused until kg migrate)
        assert kb.stats()["units"] == 1
    assert recorded(settings) == current(settings)
    if settings.backend == "neo4j":
        names = {r["name"] for r in neo4j_run(settings, "SHOW CONSTRAINTS YIELD name") +
                 neo4j_run(settings, "SHOW INDEXES YIELD name")}
        assert STEP2_NEO4J <= names


def test_a_newer_schema_is_refused_before_anything_is_written(settings, tmp_path):
    ingest_one(settings)
    set_record(settings, 4, 4)  # a later release changed the store beyond what this one knows
    env = env_for(settings.data_dir)
    if settings.backend == "neo4j":
        env.update(KG_BACKEND="neo4j", KG_NEO4J_URI=settings.neo4j_uri, NEO4J_PASSWORD=settings.neo4j_password,
                   KG_SINGLE_PROCESS="1")
    for args in (["stats"], ["serve", "--port", "0"], ["migrate"]):
        done = kg(env, *args)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        assert "schema version 4" in done.stderr and "this kgservice knows schema 3" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    assert recorded(settings) == {"version": 4, "compat": 4}
    set_record(settings, 4, 3)  # a later release that only added: this one still works beside it
    done = kg(env, "stats", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["units"] == 1, done.stderr
    assert recorded(settings) == {"version": 4, "compat": 3}  # never lowered


def test_a_step_older_releases_cannot_use_waits_for_kg_migrate(tmp_path, monkeypatch):
    """A future step that raises compat, on the embedded store (its action: a marker file)."""
    from kgservice.stores.embedded import schema_record

    settings = Settings(data_dir=tmp_path / "kg", embedder="hash:64", vector_backend="edge")
    ingest_one(settings)
    assert recorded(settings) == {"version": 3, "compat": 1}
    ran = []
    monkeypatch.setattr(schema, "STEPS", (*schema.STEPS, Step(4, "a change old code cannot read", compat=4)))
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 4)
    monkeypatch.setitem(schema_record.STEP_ACTIONS, 4, lambda data_dir: ran.append(Path(data_dir)))
    with pytest.raises(SchemaNeedsMigration, match="run `kg migrate`"), KnowledgeBase(settings) as kb:
        kb.stats()
    assert ran == [] and recorded(settings) == {"version": 3, "compat": 1}
    with KnowledgeBase(settings) as kb:
        report = kb.migrate()
    assert (report.before, report.after, report.compat) == (3, 4, 4) and ran == [settings.data_dir]
    assert recorded(settings) == {"version": 4, "compat": 4}
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 3)  # the previous release, started again
    with pytest.raises(SchemaTooNew, match="upgrade kgservice"), KnowledgeBase(settings) as kb:
        kb.stats()


def test_a_read_only_process_writes_no_version(tmp_path):
    settings = Settings(data_dir=tmp_path / "kg", embedder="hash:64", vector_backend="edge")
    ingest_one(settings)
    set_record(settings, None, None)
    with KnowledgeBase(Settings(**{**settings.__dict__, "read_only": True})) as kb:
        assert kb.stats()["units"] == 1
    assert recorded(settings) is None


def test_readyz_turns_unready_when_the_store_outgrows_the_server(tmp_path):
    from kgservice.server import ServeOptions, create_app

    settings = Settings(data_dir=tmp_path / "kg", embedder="hash:64", vector_backend="edge")
    ingest_one(settings)
    app = create_app(settings, ServeOptions())
    with TestClient(app, base_url="http://127.0.0.1") as c:
        r = c.get("/readyz")
        assert r.status_code == 200 and r.json()["checks"]["schema"] == "ok"
        set_record(settings, 4, 4)  # `kg migrate` of a newer release ran meanwhile
        r = c.get("/readyz")
        assert r.status_code == 503 and "needs kgservice schema 4" in r.json()["checks"]["schema"]
        assert str(tmp_path) not in r.json()["checks"]["schema"]  # no server path in a public reply

"""Neo4j URIs (issue 13: N06, N07): credentials in the URI gave a driver traceback that printed
the password; a URI without a scheme gave a traceback. Both are config errors (exit 2) that
never show the secret, on the CLI (with and without --json), in logs and in Settings.public()."""

from __future__ import annotations

import logging

import pytest
from typer.testing import CliRunner

from kgservice.cli.app import app
from kgservice.config import ConfigError, load_settings, redact_uri
from kgservice.stores.neo4j import Neo4jStore

SECRET = "s3cr3t-Pa55"


@pytest.mark.parametrize("args", [["stats"], ["stats", "--json"], ["ingest", "nothing.units"], ["doctor", "--json"]])
def test_credentials_in_uri_never_printed(args, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    env = {"KG_NEO4J_URI": f"bolt://neo4j:{SECRET}@127.0.0.1:7687", "NEO4J_PASSWORD": "other"}
    r = CliRunner().invoke(app, ["--data-dir", str(tmp_path), *args], env=env)
    assert r.exit_code == 2, r.output
    assert SECRET not in r.output and SECRET not in caplog.text and "Traceback" not in r.output
    msg = " ".join(r.stderr.split())
    assert "bolt://neo4j:***@127.0.0.1:7687" in msg and "NEO4J_PASSWORD" in msg


@pytest.mark.parametrize("uri,needle", [("localhost:7687", "needs a scheme"), ("127.0.0.1:7687", "needs a scheme"),
                                        ("http://127.0.0.1:7474", "scheme 'http://' is not supported; use one of bolt://"),
                                        ("bolt://", "names no host"), ("bolt://127.0.0.1:port", "not a number")])
def test_bad_uri_is_a_config_error(uri, needle, tmp_path):
    r = CliRunner().invoke(app, ["--data-dir", str(tmp_path), "stats"],
                           env={"KG_NEO4J_URI": uri, "NEO4J_PASSWORD": SECRET})
    assert r.exit_code == 2 and needle in r.stderr and "Traceback" not in r.output, r.output
    assert SECRET not in r.output


def test_library_connect_refuses_without_echoing():
    with pytest.raises(ConfigError) as ei:
        Neo4jStore.connect(f"neo4j+s://admin:{SECRET}@db.example:7687", password="x", attempts=1)
    assert SECRET not in str(ei.value) and "admin:***@db.example:7687" in str(ei.value)


def test_public_settings_redact_uris():
    s = load_settings(env={"KG_BACKEND": "embedded", "KG_QDRANT_URL": f"http://u:{SECRET}@q:6333"})
    assert s.public()["qdrant_url"] == "http://u:***@q:6333"
    assert redact_uri("bolt://127.0.0.1:7687") == "bolt://127.0.0.1:7687"
    assert redact_uri(f"bolt://neo4j:{SECRET}@h:1") == "bolt://neo4j:***@h:1"
    assert redact_uri(f"bolt://neo4j@h:1") == "bolt://neo4j:***@h:1"

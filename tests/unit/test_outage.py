"""The one outage classifier (kgservice.outage) on the Neo4j driver's real exception classes."""

from __future__ import annotations

import pytest

neo4j_exceptions = pytest.importorskip("neo4j.exceptions")


def server_error(code: str) -> Exception:
    """The exception the driver raises for a server status ``code`` (its own hydration)."""
    return neo4j_exceptions.Neo4jError._hydrate_neo4j(code=code, message="from the server")


def test_a_stopping_database_is_an_outage_and_a_bad_query_is_not():
    from kgservice.outage import is_outage, transient

    # what a `kg worker` met while Neo4j shut down under it (it died with "internal error")
    stopping = server_error("Neo.TransientError.General.DatabaseUnavailable")
    assert is_outage(stopping) and transient(stopping)
    assert is_outage(neo4j_exceptions.ServiceUnavailable("gone"))
    assert is_outage(neo4j_exceptions.SessionExpired("gone"))
    for code in ("Neo.ClientError.Statement.SyntaxError", "Neo.ClientError.Schema.ConstraintValidationFailed",
                 "Neo.TransientError.Transaction.DeadlockDetected"):
        assert not is_outage(server_error(code)), code
    assert not is_outage(OSError("disk"))

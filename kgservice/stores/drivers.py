"""What the rest of the service needs to know of the graph drivers' behaviour, without importing
a backend (the outage classifier asks this from every layer, so it must stay a leaf module)."""

from __future__ import annotations


# Server status codes that mean "the database is not there right now" rather than "this query
# failed": a database stopping or starting answers the connection but refuses every transaction.
# The driver retries them as transient and, once its retry time is spent, raises them as they are.
OUTAGE_CODES = frozenset({"Neo.TransientError.General.DatabaseUnavailable"})


def driver_outage(exc: BaseException) -> bool:
    """A graph-server driver's connection error, or a database-unavailable status, that escaped a
    store method unwrapped (the store wraps what it sees; the driver can still raise from a lazily
    consumed result).

    >>> class ServiceUnavailable(Exception): __module__ = "neo4j.exceptions"
    >>> class TransientError(Exception):
    ...     __module__ = "neo4j.exceptions"
    ...     code = "Neo.TransientError.General.DatabaseUnavailable"
    >>> driver_outage(ServiceUnavailable()), driver_outage(TransientError()), driver_outage(OSError())
    (True, True, False)
    """
    neo4j = [c for c in type(exc).__mro__ if c.__module__.startswith("neo4j")]
    return bool(neo4j) and (any(c.__name__ in ("ServiceUnavailable", "SessionExpired") for c in neo4j)
                            or getattr(exc, "code", None) in OUTAGE_CODES)


def quiet_driver_logs() -> None:
    """The graph driver logs every retried connection as a warning; a long-running worker reports
    an outage itself, once."""
    import logging

    logging.getLogger("neo4j").setLevel(logging.ERROR)

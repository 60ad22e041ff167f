"""What the rest of the service needs to know of the graph drivers' behaviour, without importing
a backend (the outage classifier asks this from every layer, so it must stay a leaf module)."""

from __future__ import annotations


def driver_outage(exc: BaseException) -> bool:
    """A graph-server driver's connection error that escaped a store method unwrapped (the
    store wraps what it sees; the driver can still raise from a lazily consumed result)."""
    return any(c.__module__.startswith("neo4j") and c.__name__ in ("ServiceUnavailable", "SessionExpired")
               for c in type(exc).__mro__)


def quiet_driver_logs() -> None:
    """The graph driver logs every retried connection as a warning; a long-running worker reports
    an outage itself, once."""
    import logging

    logging.getLogger("neo4j").setLevel(logging.ERROR)

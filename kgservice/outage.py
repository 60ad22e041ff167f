"""Which failures mean "a backend is down", shared by the server (503), the worker (wait and
resume) and job retries: one definition, so they agree."""

from __future__ import annotations

from kgservice.errors import StoreUnavailable


def is_outage(exc: BaseException) -> bool:
    """Our own :class:`StoreUnavailable`, or a Neo4j driver connection error that escaped a
    store method unwrapped."""
    if isinstance(exc, StoreUnavailable):
        return True
    from kgservice.stores.factory import driver_outage

    return driver_outage(exc)

"""Which failures pass by themselves, shared by the server (503), the worker (wait and resume),
job retries and the graph store's own write retries: one classifier, so they agree.

* :func:`is_outage`: a backend every request needs is down (the server answers 503, the worker
  waits for it);
* :func:`transient`: an outage, or a vector store that is held or did not answer for a moment:
  the work (an idempotent ingest) is simply run again.

A backend adds its own retryable cases on top (the Neo4j write path: a constraint race, a
driver-retryable error) but starts from :func:`is_outage`.
"""

from __future__ import annotations

from kgservice.errors import StoreUnavailable


def is_outage(exc: BaseException) -> bool:
    """Our own :class:`StoreUnavailable`, or a Neo4j driver connection error that escaped a
    store method unwrapped."""
    if isinstance(exc, StoreUnavailable):
        return True
    from kgservice.stores.drivers import driver_outage

    return driver_outage(exc)


def transient(exc: BaseException) -> bool:
    """An outage, a local vector directory another process holds for a moment, or a vector
    server that did not answer."""
    from kgservice.vectors.base import VectorStoreLocked, VectorStoreUnavailable

    return isinstance(exc, (VectorStoreLocked, VectorStoreUnavailable)) or is_outage(exc)

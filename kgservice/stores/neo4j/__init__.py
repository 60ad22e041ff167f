"""The Neo4j graph store: the same store interface, each method one Cypher file from ``procedures/``.

Modules: ``connection`` (the driver, connecting with bounded retries, the public named
:meth:`~Neo4jConnection.read` / :meth:`~Neo4jConnection.write` every other part goes through),
``writes`` (the ingest write path: one transaction per batch, staging of big batches, the
retry of a whole ingest), ``admin`` (doctor / restore / rebuild, the merge memory),
``procedures`` (the reads expansion and answering run), ``lifecycle`` (documents, archived units
and changes; a lifecycle change as one transaction), ``jobs`` and ``keys`` (the job queue
and API keys kept in the same database) and ``store`` (:class:`Neo4jStore`, which combines them
and provides the change feed, job queue and key store).
"""

from kgservice.stores.neo4j.connection import Neo4jUnavailable
from kgservice.stores.neo4j.store import Neo4jStore

__all__ = ["Neo4jStore", "Neo4jUnavailable"]

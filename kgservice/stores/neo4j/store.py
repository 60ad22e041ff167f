"""Neo4jStore: the connection, write path, lifecycle, administration and procedures of this package in one
:class:`~kgservice.stores.base.GraphStore`, and what the backend provides besides the graph
(change feed, job queue, key store, all kept in the same database).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgservice.stores.neo4j.admin import Neo4jAdmin
from kgservice.stores.neo4j.lifecycle import Neo4jLifecycle
from kgservice.stores.neo4j.procedures import Neo4jProcedures
from kgservice.stores.neo4j.workspaces import Neo4jWorkspaces
from kgservice.stores.neo4j.writes import Neo4jWrites

if TYPE_CHECKING:
    from kgservice.apikeys.store import KeyStore
    from kgservice.jobs.queue import JobQueue
    from kgservice.stores.changelog import ChangeFeed, VersionClock
    from kgservice.stores.shared import CommunityMap, SavedResult
    from kgservice.vectors.base import VectorStore


class Neo4jStore(Neo4jLifecycle, Neo4jWrites, Neo4jAdmin, Neo4jProcedures, Neo4jWorkspaces):
    """The Neo4j backend (see the package docstring); built by the store factory."""

    backend = "neo4j"

    # -- what this backend provides besides the graph ------------------------------------
    def change_feed(self) -> ChangeFeed:
        from kgservice.stores.neo4j.changes import Neo4jChangeFeed

        return Neo4jChangeFeed(self)

    def log_change(self, touched: Iterable[str], *, everything: bool = False) -> int:
        from kgservice.stores.changelog import neo4j_change_step

        query, params = neo4j_change_step(touched, units=[])  # keys, vectors: no unit stored or removed
        if everything:
            params = {**params, "touched": [], "all": True}
        with self._session(write=True) as s:
            return int(s.execute_write(lambda tx: tx.run(query, **params).single()["version"]))

    def job_queue(self, data_dir: Path, *, validate: Callable[[str, Any], Any] | None = None,
                  max_attempts: int, read_only: bool) -> JobQueue:
        """``(:KgJob)`` nodes in this database (``data_dir`` is not used)."""
        from kgservice.stores.neo4j.jobs import Neo4jJobQueue

        return Neo4jJobQueue(self, validate=validate, max_attempts=max_attempts, read_only=read_only)

    def key_store(self, data_dir: Path, *, clock: VersionClock | None, bump: Callable[[], Any] | None,
                  read_only: bool) -> KeyStore:
        """``(:KgApiKey)`` nodes in this database (``data_dir`` is not used)."""
        from kgservice.stores.neo4j.keys import Neo4jKeyStore

        return Neo4jKeyStore(self, read_only=read_only, clock=clock, bump=bump)

    def session_table(self) -> Any:
        """``(:KgSession)`` nodes in this database (:mod:`kgservice.stores.neo4j.sessions`)."""
        if self.read_only:
            return None
        from kgservice.stores.neo4j.sessions import Neo4jSessionTable

        return Neo4jSessionTable(self)

    def server_registry(self) -> Any:
        """``(:KgServer)`` heartbeats in this database (:mod:`kgservice.stores.neo4j.servers`)."""
        from kgservice.stores.neo4j.servers import Neo4jServerRegistry

        return Neo4jServerRegistry(self)

    def mirror_artefact(self) -> Any:
        """The graphify mirror kept in this database (:mod:`kgservice.stores.neo4j.mirror`): one
        server builds each version, the others read it (a read-only server reads it, never builds it for others)."""
        from kgservice.stores.neo4j.mirror import Neo4jMirrorArtefact

        return Neo4jMirrorArtefact(self)

    def graph_vectors(self, *, dim: int, model_name: str, collection: str, recreate: bool = False,
                      candidates: int | None = None) -> VectorStore:
        """Neo4j's own vector index (:class:`~kgservice.stores.neo4j.vectors.Neo4jVectorStore`) on
        this connection: closing the vector store leaves the graph connection open.
        ``candidates``: neighbours asked of the index per search (None: the store's default)."""
        from kgservice.stores.neo4j.vectors import DEFAULT_CANDIDATES, Neo4jVectorStore

        return Neo4jVectorStore(self, dim=dim, model_name=model_name, collection=collection, recreate=recreate,
                                candidates=candidates or DEFAULT_CANDIDATES)

    # -- state shared by every server of this database (kgservice.stores.shared) ----------
    def save_result(self, record: SavedResult) -> None:
        """A ``(:KgSavedResult)`` node (kept by a replacing restore's wipe)."""
        self.write("saved_result_create", result_name=record.name, date=record.date, record=record.model_dump_json())

    def saved_results(self) -> list[SavedResult]:
        from kgservice.stores.shared import SavedResult

        return [SavedResult.model_validate_json(r["record"]) for r in self.read("saved_results")]

    def community_map(self) -> CommunityMap | None:
        """The ``(:KgCommunities {id: 'current'})`` node's map, or None."""
        import json

        from kgservice.stores.shared import CommunityMap

        rows = self.read("communities_get")
        if not rows:
            return None
        return CommunityMap(graph=rows[0]["graph"], communities=json.loads(rows[0]["map"]))

    def set_community_map(self, record: CommunityMap) -> None:
        import json

        self.write("communities_set", graph=record.graph, map=json.dumps(record.communities, separators=(",", ":")))

    def merge_decision(self, a: str, b: str) -> Any:
        """The ``(:KgMergeDecision {a, b})`` node's record, or None."""
        from kgservice.stores.shared import MergeDecision

        rows = self.read("merge_decision_get", a=a, b=b)
        return MergeDecision.model_validate_json(rows[0]["record"]) if rows else None

    def record_merge_decision(self, decision: Any) -> None:
        """A ``(:KgMergeDecision)`` node (kept by a replacing restore's wipe)."""
        self.write("merge_decision_set", a=decision.a, b=decision.b, record=decision.model_dump_json())

    def merge_decisions(self) -> list[Any]:
        from kgservice.stores.shared import MergeDecision

        return [MergeDecision.model_validate_json(r["record"]) for r in self.read("merge_decisions_all")]

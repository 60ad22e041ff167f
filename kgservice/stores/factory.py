"""Open the graph store the settings ask for; the only place that knows both backends."""

from __future__ import annotations

from kgservice.config import Settings
from kgservice.stores.base import GraphStore


def in_process(settings: Settings) -> bool:
    """Whether the configured store is files this process holds (not a shared server), asked
    before it is opened: a damaged one may not open (``kg doctor --salvage``)."""
    return settings.backend == "embedded"


def open_store(settings: Settings) -> GraphStore:
    if settings.backend == "neo4j":
        from kgservice.stores.neo4j_store import Neo4jStore  # driver import only when used

        return Neo4jStore.connect(
            uri=settings.neo4j_uri or "",
            user=settings.neo4j_user,
            password=settings.neo4j_password,
            database=settings.neo4j_database,
            read_only=settings.read_only,
            stage_units=settings.neo4j_stage_units,
        )
    from kgservice.stores.embedded import EmbeddedStore

    return EmbeddedStore(settings.data_dir / "graph")

"""The schema version of a Neo4j store (:mod:`kgservice.stores.schema`): the
``(:KgSchema {id: 'version'})`` node, and each step as a file of statements (``schema_<n>.cypher``)."""

from __future__ import annotations

from typing import Any

from kgservice.stores.schema import SchemaState, Step


def release() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kgservice")
    except PackageNotFoundError:
        return "unknown"


class Neo4jSchemaRecord:
    backend = "neo4j"  # which steps change this store (Step.backends)

    def __init__(self, store: Any):
        self.store = store
        self.where = store.where
        self._empty: bool | None = None

    def read(self) -> SchemaState | None:
        row = self.store.read("schema_version_get")[0]
        self._empty = bool(row["empty"])
        return None if row["version"] is None else SchemaState(version=row["version"], compat=row["compat"] or 1)

    def fresh(self) -> bool:
        if self._empty is None:
            self.read()
        return bool(self._empty)

    def needed(self, step: Step) -> bool:
        """Whether ``step`` has anything to change in this store (``schema_<n>_pending.cypher``,
        when the step has one): a store whose record a wipe removed, written by this release,
        needs no migration to be opened."""
        from kgservice.stores.cypher import CypherNotFound, load

        try:
            load(f"schema_{step.version}_pending")
        except CypherNotFound:
            return True
        return bool(self.store.read(f"schema_{step.version}_pending")[0]["todo"])

    def apply(self, step: Step) -> None:
        self.store.write_statements(f"schema_{step.version}")

    def write(self, state: SchemaState) -> None:
        self.store.write("schema_version_set", version=state.version, compat=state.compat, by=release())

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

    def apply(self, step: Step) -> None:
        self.store.write_statements(f"schema_{step.version}")

    def write(self, state: SchemaState) -> None:
        self.store.write("schema_version_set", version=state.version, compat=state.compat, by=release())

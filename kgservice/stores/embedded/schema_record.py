"""The schema version of an embedded store (:mod:`kgservice.stores.schema`): ``schema.json`` in the
data directory (beside the graph directory, so a replacing restore that swaps the graph
directory keeps it), and each step as a function here (none needed yet: the files of the
embedded store make their own tables on first use)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from kgservice.disk import replaced
from kgservice.errors import StoreDamaged, StoreWriteError
from kgservice.stores.schema import SchemaState, Step

SCHEMA_FILE = "schema.json"

#: what each step does to an embedded store, by version (absent: nothing beyond recording it)
STEP_ACTIONS: dict[int, Callable[[Path], None]] = {}


class EmbeddedSchemaRecord:
    backend = "embedded"  # which steps change this store (Step.backends)

    def __init__(self, graph_dir: Path, fresh: Callable[[], bool]):
        self.path = Path(graph_dir).parent / SCHEMA_FILE
        self.where = str(Path(graph_dir).parent)
        self._fresh = fresh

    def read(self) -> SchemaState | None:
        try:
            raw = self.path.read_text("utf-8")
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreWriteError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        try:
            return SchemaState.model_validate(json.loads(raw))
        except ValueError:
            raise StoreDamaged(f"{self.path} is not a schema version record", kind="damaged",
                               fix=f"Delete it: the store is then taken as version 1 and brought up to date in "
                                   "place (or run `kg migrate`)") from None

    def fresh(self) -> bool:
        return self._fresh()

    def apply(self, step: Step) -> None:
        action = STEP_ACTIONS.get(step.version)
        if action is not None:
            action(self.path.parent)

    def write(self, state: SchemaState) -> None:
        """Atomically (temp file, fsync, rename), never lowering what is recorded."""
        old = self.read()
        if old is not None:
            state = SchemaState(version=max(old.version, state.version), compat=max(old.compat, state.compat))
        try:
            with replaced(self.path) as fh:
                fh.write((state.model_dump_json() + "\n").encode("utf-8"))
        except OSError as exc:
            raise StoreWriteError(f"cannot write {self.path} ({exc.strerror or exc}); the store is as it was: free "
                                  "space or make the data directory writable") from None

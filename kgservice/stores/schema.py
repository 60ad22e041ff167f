"""The store's schema version, checked whenever a store is opened, and ``kg migrate``.

A store records two numbers (Neo4j: the ``(:KgSchema {id: 'version'})`` node; embedded:
``schema.json`` in the data directory):

* ``version``: the last numbered step (:data:`STEPS`) applied to it;
* ``compat``: the oldest kgservice schema that can still use it. A step that only adds
  (a label, an index, a constraint older code never touches) leaves ``compat`` alone, so
  servers of the previous release keep working beside new ones during a rolling upgrade; a
  step that changes what older code reads or writes raises it.

When a store is opened:

* ``compat`` above :data:`SCHEMA_VERSION` (a newer kgservice changed the store in a way this
  one cannot follow): refused, before anything is written (:class:`SchemaTooNew`, exit 1).
* ``version`` below :data:`SCHEMA_VERSION`: the pending steps that only add are applied in
  place at once (so ``pip install -U`` needs nothing else); a pending step that raises
  ``compat`` is refused until ``kg migrate`` runs it (:class:`SchemaNeedsMigration`, exit 1),
  since it locks out the older servers still running: the operator picks the moment.
* a fresh store (nothing in it yet) gets every step and the current version.
* no version recorded on a store that holds data: a store of the shape kgservice had before
  the version existed, which is version 1.

A read-only process (``KG_READ_ONLY``) writes nothing: it runs on a store whose pending steps
all only add, and is refused otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from kgservice.errors import ReadOnlyError, StoreError


@dataclass(frozen=True)
class Step:
    version: int  # the schema version a store has after this step
    what: str  # one line, for `kg migrate`
    compat: int  # the oldest kgservice schema that can use a store after it (unchanged: it only adds)
    # the backends the step changes (None: every one); on the others it is only recorded and
    # raises no compat (the embedded store needs nothing for workspaces: a workspace is a directory)
    backends: tuple[str, ...] | None = None

    def compat_on(self, backend: str | None) -> int:
        """The compat this step gives a store of ``backend``: its own where it changes the store."""
        return self.compat if self.backends is None or backend in self.backends else 0


#: the steps, oldest first; version 1 is the store as kgservice kept it before it had a version
STEPS: tuple[Step, ...] = (
    Step(2, "web sign-ins and server heartbeats kept in the store (KgSession, KgServer) and an index for "
            "pruning finished jobs", compat=1),
    Step(3, "workspaces: every stored node carries its workspace (ws; what was stored before becomes the "
            "workspace 'default') and identity is (ws, id)", compat=3, backends=("neo4j",)),
)
SCHEMA_VERSION = STEPS[-1].version if STEPS else 1
UNVERSIONED = 1  # a store with data and no version record


class SchemaState(BaseModel):
    version: int
    compat: int


class SchemaTooNew(StoreError):
    """The store was changed by a newer kgservice in a way this one cannot use (exit 1)."""


class SchemaNeedsMigration(StoreError):
    """The store needs a step that only ``kg migrate`` applies (exit 1)."""


class MigrationReport(BaseModel):
    before: int  # the store's version before (1: data and no version recorded; 0: an empty store)
    after: int
    compat: int
    applied: list[dict[str, Any]]  # {version, what} per step, oldest first
    dry_run: bool = False
    fresh: bool = False


class SchemaRecord(Protocol):
    """What a backend provides (``GraphStore.schema_record()``)."""

    where: str  # the store, as messages name it

    def read(self) -> SchemaState | None:
        """The recorded version, or None when none is recorded."""
        ...

    def fresh(self) -> bool:
        """The store holds nothing yet."""
        ...

    def apply(self, step: Step) -> None:
        """Run one step (idempotent: a step that ran half before is run again whole)."""
        ...

    def write(self, state: SchemaState) -> None:
        """Record ``state`` (never lowering either number already recorded)."""
        ...


def pending(state: SchemaState) -> list[Step]:
    return [s for s in STEPS if s.version > state.version]


def current(record: SchemaRecord) -> tuple[SchemaState, bool]:
    """(the store's state, whether it is fresh); refuses a store this kgservice cannot use."""
    state = record.read()
    fresh = False
    if state is None:
        fresh = record.fresh()
        state = SchemaState(version=0 if fresh else UNVERSIONED, compat=0 if fresh else UNVERSIONED)
    if state.compat > SCHEMA_VERSION:
        raise SchemaTooNew(
            f"the store at {record.where} has schema version {state.version}, which needs kgservice schema "
            f"{state.compat} or later; this kgservice knows schema {SCHEMA_VERSION}: upgrade kgservice here "
            "(every server and worker of a deployment runs the same release after `kg migrate`); nothing was "
            "read or written")
    return state, fresh


def open_schema(record: SchemaRecord | None, *, read_only: bool, mode: Literal["auto", "check"] = "auto",
                baseline: Any = None) -> SchemaState | None:
    """The check made whenever a store is opened (see the module doc). ``baseline``: what the
    backend applies on every writable open before the steps (Neo4j's ``schema.cypher``).
    ``mode="check"`` (``kg migrate`` opening the store) only refuses a store too new."""
    if record is None:
        return None
    state, fresh = current(record)
    if not read_only and baseline is not None:
        baseline()
    todo = pending(state)
    if not todo or mode == "check":
        return state
    backend = getattr(record, "backend", None)
    needed = getattr(record, "needed", lambda step: True)  # a step with nothing to do locks no one out
    locking = [s for s in todo if s.compat_on(backend) > state.compat and needed(s)]
    if locking and not fresh:
        first = locking[0]
        raise SchemaNeedsMigration(
            f"the store at {record.where} has schema version {state.version}; this kgservice needs {SCHEMA_VERSION}, "
            f"and step {first.version} ({first.what}) cannot be used by older kgservice versions: stop the servers "
            "and workers of the older release, then run `kg migrate` with this one")
    if read_only:
        return state  # every pending step only adds: this process can read the store as it is
    return _apply(record, state, todo).model_copy()


def _apply(record: SchemaRecord, state: SchemaState, todo: list[Step]) -> SchemaState:
    compat = state.compat
    backend = getattr(record, "backend", None)
    for step in todo:
        if step.backends is None or backend in step.backends:
            record.apply(step)
        compat = max(compat, step.compat_on(backend))
        record.write(SchemaState(version=step.version, compat=compat))  # each step recorded as it lands
    return SchemaState(version=todo[-1].version, compat=compat) if todo else state


def migrate(record: SchemaRecord | None, *, read_only: bool, dry_run: bool = False) -> MigrationReport:
    """``kg migrate``: every pending step, those that lock out older versions included."""
    if record is None:
        return MigrationReport(before=SCHEMA_VERSION, after=SCHEMA_VERSION, compat=SCHEMA_VERSION, applied=[])
    state, fresh = current(record)
    todo = pending(state)
    listed = [{"version": s.version, "what": s.what} for s in todo]
    if dry_run or not todo:
        compat = max([state.compat, *(s.compat_on(getattr(record, "backend", None)) for s in todo)])
        return MigrationReport(before=state.version, after=todo[-1].version if todo else state.version,
                               compat=compat if todo else state.compat, applied=listed, dry_run=dry_run, fresh=fresh)
    if read_only:
        raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY): `kg migrate` writes the store")
    after = _apply(record, state, todo)
    return MigrationReport(before=state.version, after=after.version, compat=after.compat,
                           applied=listed, fresh=fresh)


def readiness(record: SchemaRecord | None) -> str:
    """``ok``, or why this running server no longer fits its store (/readyz): after a
    ``kg migrate`` that locks out this release, a balancer stops sending it requests."""
    if record is None:
        return "ok"
    state = record.read()
    if state is not None and state.compat > SCHEMA_VERSION:
        return (f"the store now has schema version {state.version}, which needs kgservice schema {state.compat}; "
                f"this server knows {SCHEMA_VERSION}: replace it with the new release")
    return "ok"

"""Open the graph store the settings ask for; the only place that knows both backends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from kgservice.config import Settings
from kgservice.stores.base import GraphStore

if TYPE_CHECKING:
    from kgservice.stores.embedded.files import EmbeddedFiles


def in_process(settings: Settings) -> bool:
    """Whether the configured store is files this process holds (not a shared server), asked
    before it is opened: a damaged one may not open (``kg doctor --salvage``). Outside this
    module, ask :func:`capabilities`."""
    return settings.backend == "embedded"


@dataclass(frozen=True)
class Capabilities:
    """What the configured backend means for the rest of the service, answered here (the one
    module that knows the backends) before the store is opened, so no module outside ``stores/``
    asks which backend it is or names a backend's files."""

    #: the store's files, when it is files this process holds (the embedded store): what the admin
    #: commands do to them (salvage, build beside and swap in, the SQLite files kept beside it)
    files: EmbeddedFiles | None

    @property
    def one_process(self) -> bool:
        """The store belongs to the one process holding its files: a ``kg serve`` on it owns the
        data directory and runs its jobs itself, and its vectors live beside it (a server store
        is shared by every process pointed at it)."""
        return self.files is not None


def capabilities(settings: Settings) -> Capabilities:
    """The configured backend's :class:`Capabilities` (nothing is opened)."""
    if in_process(settings):
        from kgservice.stores.embedded.files import EmbeddedFiles

        return Capabilities(files=EmbeddedFiles(settings.kb_dir))
    return Capabilities(files=None)


def missing_store(settings: Settings) -> str | None:
    """Why a read would find no store, or None. Opening an embedded store creates it, so a read
    pointed at a folder that holds none (./.kg in the wrong folder, a mistyped --data-dir or
    KG_DATA_DIR) would make an empty store and answer from it as if it had looked; it is refused
    instead, naming the folder. A server store always exists."""
    if in_process(settings) and not settings.data_dir.exists():
        return (f"no knowledge store at {settings.data_dir}: run `kg init` or `kg ingest FILE` there "
                f"first, or point --data-dir / KG_DATA_DIR at an existing store")
    return missing_workspace(settings)


def missing_workspace(settings: Settings) -> str | None:
    """Why a named workspace would be found empty, or None: it was never written to. A workspace
    is made by writing to it (``kg init`` / ``kg ingest --workspace NAME``), never by a read, so
    a mistyped name is an error rather than an empty knowledge base."""
    if in_process(settings) and settings.kb_dir != settings.data_dir and not settings.kb_dir.exists():
        return no_workspace(settings.workspace, settings.data_dir)
    return None


def no_workspace(name: str, where: object) -> str:
    """The one message for a read of a workspace nobody made, on either backend (``where``: the
    data directory, or the shared store's redacted address)."""
    return (f"no workspace {name!r} in {where}: `kg workspaces list` names the workspaces there; "
            f"`kg --workspace {name} init` or `kg --workspace {name} ingest FILE` makes it")


def open_store(settings: Settings, schema_mode: Literal["auto", "check"] = "auto") -> GraphStore:
    """The store, its schema version checked (and brought up to date in place where that only
    adds: :func:`kgservice.stores.schema.open_schema`; ``schema_mode="check"`` for ``kg migrate``)."""
    if settings.backend == "neo4j":
        from kgservice.stores.neo4j import Neo4jStore  # driver import only when used

        return Neo4jStore.connect(
            uri=settings.neo4j_uri or "",
            user=settings.neo4j_user,
            password=settings.neo4j_password,
            database=settings.neo4j_database,
            read_only=settings.read_only,
            stage_units=settings.neo4j_stage_units,
            # one request waits about store_timeout for a server that went away, then reports it
            connection_timeout=max(0.5, settings.store_timeout / 2),
            max_transaction_retry_time=max(0.5, settings.store_timeout / 2),
            schema_mode=schema_mode,
            workspace=settings.workspace,
        )
    from kgservice.stores.embedded import EmbeddedStore
    from kgservice.stores.schema import open_schema

    store = EmbeddedStore(settings.kb_dir / "graph")
    try:
        open_schema(store.schema_record(), read_only=settings.read_only, mode=schema_mode)
    except BaseException:
        store.close()
        raise
    return store

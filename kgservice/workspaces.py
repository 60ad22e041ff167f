"""The workspaces of a deployment (docs/workspaces.md): list, create, rename and delete them.

A workspace is a knowledge base of its own beside the others; these are the operations on the
set of them, not on one knowledge base, so they take the deployment's settings and a name. On
the embedded store a workspace is the directory ``Settings.kb_dir`` names; on Neo4j it is the
``ws`` property every stored node carries (:mod:`kgservice.stores.neo4j.workspaces`): a rename
rewrites it in batches, a delete removes the workspace's nodes in batches. Both are refused
while a ``kg serve`` serves the workspace.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from kgservice.config import DEFAULT_WORKSPACE, WORKSPACES_DIR, Settings, check_workspace_name, init_data_dir
from kgservice.errors import InputError, ReadOnlyError


@contextmanager
def _server_store(settings: Settings) -> Iterator[Any | None]:
    """The shared store when the workspaces live in one (Neo4j), else None (a directory each)."""
    from kgservice.stores.factory import in_process, open_store

    if in_process(settings):
        yield None
        return
    store = open_store(replace(settings, workspace=DEFAULT_WORKSPACE))
    try:
        yield store
    finally:
        store.close()


def _not_default(settings: Settings, name: str) -> None:
    check_workspace_name(name)
    if name == DEFAULT_WORKSPACE:
        raise InputError(f"the workspace {DEFAULT_WORKSPACE!r} is the data directory itself "
                         f"({settings.data_dir}): it is not created, renamed or deleted")


def _in_store(store: Any, settings: Settings, name: str, *, exists: bool) -> Settings:
    """:func:`_named` for workspaces kept in a shared store."""
    _not_default(settings, name)
    there = store.workspace_exists(name)
    if exists and not there:
        raise InputError(f"no workspace {name!r} in {store.where}")
    if not exists and there:
        raise InputError(f"workspace {name!r} already exists in {store.where}")
    return replace(settings, workspace=name)


def _writable(settings: Settings, what: str) -> None:
    if settings.read_only:
        raise ReadOnlyError(f"this kgservice is configured read-only (KG_READ_ONLY); {what} refused")


def _named(settings: Settings, name: str, *, exists: bool) -> Settings:
    """The settings of workspace ``name``, which must (``exists``) or must not exist; ``default``
    is the data directory itself, which holds the others: it is never made, renamed or deleted."""
    _not_default(settings, name)
    ws = replace(settings, workspace=name)
    if exists and not ws.kb_dir.is_dir():
        raise InputError(f"no workspace {name!r} in {settings.data_dir}")
    if not exists and ws.kb_dir.exists():
        raise InputError(f"workspace {name!r} already exists in {settings.data_dir}")
    return ws


def list_workspaces(settings: Settings) -> list[str]:
    """Every workspace: ``default`` first, then the others by name."""
    with _server_store(settings) as store:
        if store is not None:
            return store.workspace_names()
    root = settings.data_dir / WORKSPACES_DIR
    names = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    return [DEFAULT_WORKSPACE, *names]


def create_workspace(settings: Settings, name: str) -> str:
    """A new, empty workspace ``name`` (an existing one is an error, never emptied)."""
    _writable(settings, f"creating workspace {name!r}")
    with _server_store(settings) as store:
        if store is not None:
            _in_store(store, settings, name, exists=False)
            store.create_workspace(name)
            return name
    ws = _named(settings, name, exists=False)
    init_data_dir(ws)
    return name


def exists(settings: Settings, name: str, store: Any | None = None) -> bool:
    """Whether workspace ``name`` exists (``default`` always does): a directory on the embedded
    store, a mark in the shared store (Neo4j). ``store``: that shared store, already open (a
    server asks per request and keeps its default workspace's store open)."""
    if name == DEFAULT_WORKSPACE:
        return True
    from kgservice.stores.factory import in_process

    if in_process(settings):
        return replace(settings, workspace=name).kb_dir.is_dir()
    if store is not None:
        return bool(store.workspace_exists(name))
    with _server_store(settings) as opened:
        return opened is not None and bool(opened.workspace_exists(name))


def unknown(settings: Settings, store: Callable[[], Any]) -> str | None:
    """Why a read of ``settings.workspace`` in a shared store (Neo4j) would find no workspace,
    or None. Nothing there marks a workspace nobody wrote to, so without this a mistyped name
    reads as an empty knowledge base; the embedded store refuses it before opening
    (:func:`kgservice.stores.factory.missing_workspace`), and both say the same. ``store``:
    opens (or returns) the knowledge base's store, called only for a named workspace there."""
    from kgservice.stores.factory import in_process, no_workspace

    name = settings.workspace
    if name == DEFAULT_WORKSPACE or in_process(settings):
        return None
    opened = store()
    return None if opened.workspace_exists(name) else no_workspace(name, opened.where)


def missing(settings: Settings) -> str | None:
    """Why ``settings.workspace`` does not exist, or None, on either backend, asked before its
    knowledge base is opened: for the servers (``kg --workspace NAME serve / worker / mcp``),
    which open it later, in the background or per request, and must refuse to start instead
    (exit 2) of serving a mistyped name as an empty knowledge base."""
    from kgservice.stores.factory import missing_workspace

    if settings.workspace == DEFAULT_WORKSPACE:
        return None
    if why := missing_workspace(settings):
        return why
    with _server_store(settings) as store:
        return None if store is None else unknown(settings, lambda: store)


def mark(settings: Settings, store: Callable[[], Any]) -> None:
    """Make ``settings.workspace`` exist in a shared store (``kg --workspace NAME init`` on
    Neo4j), as the embedded store's directory makes it; a no-op for ``default`` and the
    embedded store."""
    from kgservice.stores.factory import in_process

    if settings.workspace != DEFAULT_WORKSPACE and not in_process(settings) and not settings.read_only:
        store().create_workspace(settings.workspace)


def rename_workspace(settings: Settings, old: str, new: str, *, keys: Any, served_here: bool = False) -> str:
    """Workspace ``old`` under the name ``new`` (which must be free), refused while a server owns
    it (``served_here``: the caller is that server, which closed the workspace itself). Its keys
    follow it (``keys``: the deployment's key store): keys are the deployment's and name their
    workspaces, so a key of ``old`` is a key of ``new`` afterwards, never of a later ``old``."""
    from kgservice.deployment import refuse_if_served

    _writable(settings, f"renaming workspace {old!r}")
    with _server_store(settings) as store:
        if store is not None:
            src, dst = _in_store(store, settings, old, exists=True), _in_store(store, settings, new, exists=False)
            refuse_if_served(src, f"renaming workspace {old!r}", exclusive=True, served_here=served_here, store=store)
            store.rename_workspace(old, new)
            keys.rename_workspace(old, new)
            if src.kb_dir.is_dir() and not dst.kb_dir.exists():  # this machine's caches of it follow it
                dst.kb_dir.parent.mkdir(parents=True, exist_ok=True)
                os.rename(src.kb_dir, dst.kb_dir)
            _vectors_follow(src, dst)
            return new
    src, dst = _named(settings, old, exists=True), _named(settings, new, exists=False)
    refuse_if_served(src, f"renaming workspace {old!r}", exclusive=True, served_here=served_here)
    os.rename(src.kb_dir, dst.kb_dir)
    keys.rename_workspace(old, new)
    _vectors_follow(src, dst)
    return new


def _vectors_follow(src: Settings, dst: Settings) -> None:
    """A renamed workspace's vectors under its new collection name (``vector_collection``), on a
    Qdrant server or in qdrant-client's local mode, which rename no collection. Vectors in the
    graph database carry the workspace as a property (renamed with the store), and a qdrant-edge
    shard is adopted by its new name on the next open (``edge_store.adopt_renamed_shard``)."""
    from kgservice.vectors.qdrant_store import move_collection

    if src.vectors_in_graph or src.vector_collection == dst.vector_collection:
        return
    if src.qdrant_url:
        move_collection(old=src.vector_collection, new=dst.vector_collection, url=src.qdrant_url,
                        api_key=src.qdrant_api_key)
    elif (dst.kb_dir / "qdrant" / "meta.json").exists():  # local mode, moved with the folder
        move_collection(old=src.vector_collection, new=dst.vector_collection, path=dst.kb_dir / "qdrant")


def delete_workspace(settings: Settings, name: str, *, keys: Any, served_here: bool = False) -> str:
    """Workspace ``name`` and everything in it, for good; refused while a server owns it. It is
    taken out of every key (a key left with none is revoked); ``keys``, ``served_here`` as for rename."""
    from kgservice.deployment import refuse_if_served

    _writable(settings, f"deleting workspace {name!r}")
    with _server_store(settings) as store:
        if store is not None:
            ws = _in_store(store, settings, name, exists=True)
            refuse_if_served(ws, f"deleting workspace {name!r}", exclusive=True, served_here=served_here, store=store)
            store.delete_workspace(name)
            keys.drop_workspace(name)
            if ws.kb_dir.is_dir():  # this machine's caches of it
                shutil.rmtree(ws.kb_dir)
            _drop_vectors(ws)
            return name
    ws = _named(settings, name, exists=True)
    refuse_if_served(ws, f"deleting workspace {name!r}", exclusive=True, served_here=served_here)
    shutil.rmtree(ws.kb_dir)
    keys.drop_workspace(name)
    _drop_vectors(ws)
    return name


def _drop_vectors(ws: Settings) -> None:
    """A deleted workspace's collection on a Qdrant server (a local one went with its folder),
    so a later workspace of the same name starts empty rather than with these vectors."""
    if ws.qdrant_url and not ws.vectors_in_graph:
        from kgservice.vectors.qdrant_store import drop_collection

        drop_collection(name=ws.vector_collection, url=ws.qdrant_url, api_key=ws.qdrant_api_key)

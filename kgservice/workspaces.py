"""The workspaces of a deployment (docs/workspaces.md): list, create, rename and delete them.

A workspace is a knowledge base of its own beside the others; these are the operations on the
set of them, not on one knowledge base, so they take the deployment's settings and a name. On
the embedded store a workspace is the directory ``Settings.kb_dir`` names; the Neo4j backend
serves only ``default`` so far, and every change to the set is refused there.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from typing import Any

from kgservice.config import DEFAULT_WORKSPACE, WORKSPACES_DIR, Settings, check_workspace_name, init_data_dir
from kgservice.errors import ConfigError, InputError, ReadOnlyError


def _on_files(settings: Settings, what: str) -> None:
    """Workspaces other than ``default`` exist only on the embedded store so far."""
    from kgservice.stores.factory import in_process

    if not in_process(settings):
        raise ConfigError(f"{what}: the Neo4j backend serves only the default workspace so far (docs/workspaces.md)")


def _writable(settings: Settings, what: str) -> None:
    if settings.read_only:
        raise ReadOnlyError(f"this kgservice is configured read-only (KG_READ_ONLY); {what} refused")


def _named(settings: Settings, name: str, *, exists: bool) -> Settings:
    """The settings of workspace ``name``, which must (``exists``) or must not exist; ``default``
    is the data directory itself, which holds the others: it is never made, renamed or deleted."""
    check_workspace_name(name)
    if name == DEFAULT_WORKSPACE:
        raise InputError(f"the workspace {DEFAULT_WORKSPACE!r} is the data directory itself "
                         f"({settings.data_dir}): it is not created, renamed or deleted")
    ws = replace(settings, workspace=name)
    if exists and not ws.kb_dir.is_dir():
        raise InputError(f"no workspace {name!r} in {settings.data_dir}")
    if not exists and ws.kb_dir.exists():
        raise InputError(f"workspace {name!r} already exists in {settings.data_dir}")
    return ws


def list_workspaces(settings: Settings) -> list[str]:
    """Every workspace: ``default`` first, then the others by name."""
    from kgservice.stores.factory import in_process

    if not in_process(settings):
        return [DEFAULT_WORKSPACE]
    root = settings.data_dir / WORKSPACES_DIR
    names = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    return [DEFAULT_WORKSPACE, *names]


def create_workspace(settings: Settings, name: str) -> str:
    """A new, empty workspace ``name`` (an existing one is an error, never emptied)."""
    _on_files(settings, f"creating workspace {name!r}")
    _writable(settings, f"creating workspace {name!r}")
    ws = _named(settings, name, exists=False)
    init_data_dir(ws)
    return name


def exists(settings: Settings, name: str) -> bool:
    """Whether workspace ``name`` exists (``default`` always does)."""
    if name == DEFAULT_WORKSPACE:
        return True
    from kgservice.stores.factory import in_process

    return in_process(settings) and replace(settings, workspace=name).kb_dir.is_dir()


def rename_workspace(settings: Settings, old: str, new: str, *, keys: Any, served_here: bool = False) -> str:
    """Workspace ``old`` under the name ``new`` (which must be free), refused while a server owns
    it (``served_here``: the caller is that server, which closed the workspace itself). Its keys
    follow it (``keys``: the deployment's key store): keys are the deployment's and name their
    workspaces, so a key of ``old`` is a key of ``new`` afterwards, never of a later ``old``."""
    from kgservice.deployment import refuse_if_served

    _on_files(settings, f"renaming workspace {old!r}")
    _writable(settings, f"renaming workspace {old!r}")
    src, dst = _named(settings, old, exists=True), _named(settings, new, exists=False)
    if not served_here:
        refuse_if_served(src, f"renaming workspace {old!r}")
    os.rename(src.kb_dir, dst.kb_dir)
    keys.rename_workspace(old, new)
    return new


def delete_workspace(settings: Settings, name: str, *, keys: Any, served_here: bool = False) -> str:
    """Workspace ``name`` and everything in it, for good; refused while a server owns it. It is
    taken out of every key (a key left with none is revoked); ``keys``, ``served_here`` as for rename."""
    from kgservice.deployment import refuse_if_served

    _on_files(settings, f"deleting workspace {name!r}")
    _writable(settings, f"deleting workspace {name!r}")
    ws = _named(settings, name, exists=True)
    if not served_here:
        refuse_if_served(ws, f"deleting workspace {name!r}")
    shutil.rmtree(ws.kb_dir)
    keys.drop_workspace(name)
    return name

"""``kg workspaces list|create|rename|delete``: the set of workspaces of the data directory
(:mod:`kgservice.workspaces`, docs/workspaces.md); registered by :func:`register`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from kgservice.cli.common import errors_reported, out, print_json, settings_of

workspaces_app = typer.Typer(help="The workspaces of the data directory: separate knowledge bases "
                                  "(docs/workspaces.md).", no_args_is_help=True)


@workspaces_app.command("list")
def list_(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Every workspace, `default` first."""
    from kgservice.workspaces import list_workspaces

    with errors_reported():
        names = list_workspaces(settings_of(ctx))
    if as_json:
        print_json(names)
        return
    for name in names:
        out.print(name, highlight=False, markup=False)


@workspaces_app.command("create")
def create(ctx: typer.Context, name: str) -> None:
    """A new, empty workspace (the same as `kg --workspace NAME init`)."""
    from kgservice.workspaces import create_workspace

    with errors_reported():
        create_workspace(settings_of(ctx), name)
    out.print(f"created workspace {name}", highlight=False, markup=False)


@workspaces_app.command("rename")
def rename(ctx: typer.Context, old: str, new: str) -> None:
    """Give a workspace a new name (refused while a `kg serve` owns it)."""
    from kgservice.workspaces import rename_workspace

    with errors_reported(), _deployment_keys(ctx, old, f"renaming workspace {old!r}") as keys:
        rename_workspace(settings_of(ctx), old, new, keys=keys)
    out.print(f"renamed workspace {old} to {new}", highlight=False, markup=False)


@workspaces_app.command("delete")
def delete(ctx: typer.Context, name: str,
           yes: Annotated[bool, typer.Option("--yes", help="Delete for good: every document, unit, "
                                                           "key and job of the workspace.")] = False) -> None:
    """Delete a workspace and everything in it, for good (needs --yes)."""
    from kgservice.errors import InputError
    from kgservice.workspaces import delete_workspace

    with errors_reported():
        if not yes:
            raise InputError(f"deleting workspace {name!r} removes everything in it for good: "
                             "add --yes to do it")
        with _deployment_keys(ctx, name, f"deleting workspace {name!r}") as keys:
            delete_workspace(settings_of(ctx), name, keys=keys)
    out.print(f"deleted workspace {name}", highlight=False, markup=False)


@contextmanager
def _deployment_keys(ctx: typer.Context, name: str, what: str) -> Iterator[Any]:
    """The deployment's keys (the default workspace's), which a rename or delete of ``name``
    changes too; refused first, before anything is opened, while a server owns ``name``."""
    from dataclasses import replace

    from kgservice.config import DEFAULT_WORKSPACE, check_workspace_name
    from kgservice.deployment import refuse_if_served
    from kgservice.service import KnowledgeBase

    check_workspace_name(name)
    refuse_if_served(replace(settings_of(ctx), workspace=name), what)
    with KnowledgeBase(replace(settings_of(ctx), workspace=DEFAULT_WORKSPACE)) as kb:
        keys = kb.key_store()
        try:
            yield keys
        finally:
            keys.close()


def register(app: typer.Typer) -> None:
    app.add_typer(workspaces_app, name="workspaces")

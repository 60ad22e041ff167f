"""The deployment's workspaces over REST (docs/workspaces.md): the caller's own, and their
administration by the deployment's admin (a key with the admin role in ``default``).

These routes act in no workspace (:func:`kgservice.server.middleware.deployment_path`): the key
check leaves the caller's workspaces whole, and each route decides from them. The operations are
:mod:`kgservice.workspaces`'s, as ``kg workspaces`` runs them; a workspace renamed or deleted is
closed in this server first, and its keys follow it (renamed, or the workspace taken out)."""

from __future__ import annotations

import anyio.to_thread
from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

from kgservice.config import DEFAULT_WORKSPACE
from kgservice.server.auth import Principal, Role
from kgservice.server.deps import ADMIN, READER, principal_of
from kgservice.server.errors import Forbidden, NotFound
from kgservice.server.models import Strict

router = APIRouter(tags=["workspaces"])


class WorkspaceOut(BaseModel):
    name: str
    role: str = Field(description="the caller's role in it")


class WorkspacesOut(BaseModel):
    workspaces: list[WorkspaceOut]


class WorkspaceIn(Strict):
    name: str = Field(min_length=1, max_length=63)


def _root(request: Request):
    return request.app.state.ctx


def _caller(request: Request) -> Principal:
    who = principal_of(request)
    assert who is not None  # the route's role dependency ran first
    return who


def _deployment_admin(request: Request) -> Principal:
    """Only a key with the admin role in ``default`` (or the local operator with it) changes the
    set of workspaces: a team's admin manages its own workspace's keys, not the others'."""
    who, sc = _caller(request), _root(request)
    if sc.only is not None:
        raise Forbidden(f"this server serves the workspace {sc.only!r} only; administer workspaces on a "
                        "server of the whole deployment (kg serve without --workspace)")
    if who.role_in(DEFAULT_WORKSPACE) is not Role.admin:
        raise Forbidden("administering workspaces needs the admin role in the workspace 'default'; "
                        f"{who.user}'s key does not have it")
    return who


def _mine(request: Request) -> list[WorkspaceOut]:
    from kgservice.workspaces import list_workspaces

    who, sc = _caller(request), _root(request)
    names = [n for n in list_workspaces(sc.settings) if sc.serves(n)]
    if who.role_in(DEFAULT_WORKSPACE) is Role.admin and sc.only is None:
        return [WorkspaceOut(name=n, role=(who.role_in(n) or Role.admin).value) for n in names]
    return [WorkspaceOut(name=n, role=role.value) for n in names if (role := who.role_in(n)) is not None]


@router.get("/v1/workspaces", response_model=WorkspacesOut, dependencies=[Depends(READER)])
async def my_workspaces(request: Request) -> WorkspacesOut:
    """The workspaces this key may act in, with its role in each (the deployment's admin: every
    workspace). Name one in the path, ``/w/<name>/v1/...``, when there are several."""
    return WorkspacesOut(workspaces=await anyio.to_thread.run_sync(_mine, request))


@router.post("/v1/admin/workspaces", response_model=WorkspaceOut, status_code=201, dependencies=[Depends(ADMIN)])
async def create(body: WorkspaceIn, request: Request) -> WorkspaceOut:
    """A new, empty workspace (``kg workspaces create``)."""
    from kgservice.workspaces import create_workspace

    _deployment_admin(request)
    name = await anyio.to_thread.run_sync(create_workspace, _root(request).settings, body.name)
    return WorkspaceOut(name=name, role=Role.admin.value)


@router.patch("/v1/admin/workspaces/{name}", response_model=WorkspaceOut, dependencies=[Depends(ADMIN)])
async def rename(name: str, body: WorkspaceIn, request: Request) -> WorkspaceOut:
    """Workspace ``name`` under the name ``body.name`` (``kg workspaces rename``); the keys of
    ``name`` are keys of the new name afterwards. Requests in flight on it may fail."""
    from kgservice.workspaces import rename_workspace

    _deployment_admin(request)
    sc = _root(request)
    _known(sc, name)

    def run() -> str:
        sc.close_workspace(name)
        return rename_workspace(sc.settings, name, body.name, keys=sc.keys(), served_here=True)

    return WorkspaceOut(name=await anyio.to_thread.run_sync(run), role=Role.admin.value)


@router.delete("/v1/admin/workspaces/{name}", dependencies=[Depends(ADMIN)])
async def delete(name: str, request: Request) -> dict[str, str]:
    """Workspace ``name`` and everything in it, for good (``kg workspaces delete``); it is taken
    out of every key, and a key left with no workspace is revoked."""
    from kgservice.workspaces import delete_workspace

    _deployment_admin(request)
    sc = _root(request)
    _known(sc, name)

    def run() -> str:
        sc.close_workspace(name)
        return delete_workspace(sc.settings, name, keys=sc.keys(), served_here=True)

    return {"deleted": await anyio.to_thread.run_sync(run)}


def _known(sc, name: str) -> None:
    if name != DEFAULT_WORKSPACE and not sc.serves(name):
        raise NotFound(f"no workspace {name!r}")

"""Admin: API keys (the key is shown once), query caches, doctor (check only).

Keys are the deployment's. The deployment's admin (a key with the admin role in ``default``, on
a server of the whole deployment, as the workspace routes treat it) manages every key: it lists
them all, makes a key of any workspaces, changes a key's workspaces and revokes any key; a
workspace it names that does not exist is refused (422, naming it). Any other admin manages keys
from the workspace a request acts in: it lists the keys of that workspace, makes keys of
workspaces where it is admin, changes a key's role only in workspaces it administers, and revokes
only a key all of whose workspaces it administers. Another workspace's keys are not found (404),
and so is a workspace the caller holds no role in (a key learns nothing of other teams')."""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from kgservice.config import DEFAULT_WORKSPACE
from kgservice.server.auth import ApiKey, Principal, Role
from kgservice.server.context import ServerContext
from kgservice.server.deps import ADMIN, principal_of
from kgservice.server.errors import Conflict, Forbidden, NotFound
from kgservice.server.models import KeyCreated, KeyGrantsIn, KeyIn
from kgservice.server.routes import ctx_of

router = APIRouter(prefix="/v1/admin", tags=["admin"])


def _admin(request: Request) -> Principal:
    who = principal_of(request)
    assert who is not None  # ADMIN ran first
    return who


def _administers(who: Principal, key: ApiKey) -> bool:
    return all(who.role_in(w) is Role.admin for w in key.workspaces)


def _of_deployment(who: Principal, sc: ServerContext) -> bool:
    """The caller is the deployment's admin here: admin in ``default``, on a server serving every
    workspace (a server of one workspace has no deployment to administer)."""
    return who.role_in(DEFAULT_WORKSPACE) is Role.admin and (sc.root or sc).only is None


def _known(sc: ServerContext, grants: dict[str, Role]) -> None:
    """The deployment's admin names workspaces that exist, or gets 422 naming every one that does
    not (it may know them all: `GET /v1/workspaces` lists them)."""
    from kgservice.errors import InputError

    missing = sorted(name for name in grants if not sc.serves(name))
    if missing:
        raise InputError(f"workspaces: no workspace {', '.join(repr(m) for m in missing)} "
                         "(`GET /v1/workspaces` lists them; `POST /v1/admin/workspaces` makes one)")


def _may_grant(who: Principal, sc: ServerContext, name: str, holds_it: bool = False) -> None:
    """A workspace admin changes a grant of ``name`` only where it is admin: 404 for a workspace
    it holds no role in and the key does not show it (exactly as one nobody made), 403 otherwise."""
    if who.role_in(name) is None and not holds_it or not sc.serves(name):
        raise NotFound(f"no workspace {name!r}")
    if who.role_in(name) is not Role.admin:
        raise Forbidden(f"a key's role in {name!r} needs the admin role there; {who.user}'s key does not have it")


def _grants(body_workspaces: Mapping[str, str]) -> dict[str, Role]:
    return {name: Role(role) for name, role in body_workspaces.items()}


@router.post("/keys", response_model=KeyCreated, status_code=201, dependencies=[Depends(ADMIN)])
def create_key(body: KeyIn, request: Request) -> KeyCreated:
    who, sc = _admin(request), ctx_of(request)
    grants = _grants(body.workspaces) if body.workspaces else {sc.workspace: Role(body.role)}
    if _of_deployment(who, sc):
        _known(sc, grants)
    else:
        for name in grants:
            _may_grant(who, sc, name)
    key, rec = sc.keys().create(body.user, body.role, grants)
    return KeyCreated(key=key, key_id=rec.key_id, user=rec.user, role=rec.role.value, created=rec.created,
                      workspaces={k: v.value for k, v in rec.workspaces.items()})


@router.get("/keys", response_model=list[ApiKey], dependencies=[Depends(ADMIN)])
def list_keys(request: Request) -> list[ApiKey]:
    """Every key of the deployment for its admin; else the keys of the workspace the request
    acts in (each with all its workspaces)."""
    who, sc = _admin(request), ctx_of(request)
    every = _of_deployment(who, sc)
    return [k for k in sc.keys().list() if every or sc.workspace in k.workspaces]


def _target(request: Request, key_id: str) -> tuple[Principal, ServerContext, list[ApiKey], ApiKey]:
    """(caller, context, every key, the key ``key_id``): 404 when the caller may not see it."""
    who, sc = _admin(request), ctx_of(request)
    listed = sc.keys().list()
    every = _of_deployment(who, sc)
    target = next((k for k in listed if k.key_id == key_id and (every or sc.workspace in k.workspaces)), None)
    if target is None:
        raise NotFound(f"no API key with id {key_id!r}")
    return who, sc, listed, target


@router.patch("/keys/{key_id}", response_model=ApiKey, dependencies=[Depends(ADMIN)])
def change_key(key_id: str, body: KeyGrantsIn, request: Request) -> ApiKey:
    """The key's workspaces, each with its role, replaced by ``workspaces`` from the next request
    on, on every server sharing the store (the secret is unchanged)."""
    from kgservice.apikeys.model import top_role

    who, sc, listed, target = _target(request, key_id)
    if not target.active:
        raise Conflict(f"{key_id!r} is revoked; create a new key instead")
    grants = _grants(body.workspaces)
    if _of_deployment(who, sc):
        _known(sc, grants)
    else:
        for name in sorted(set(grants) | set(target.workspaces)):
            if grants.get(name) != target.workspaces.get(name):
                _may_grant(who, sc, name, holds_it=name in target.workspaces)
    others = [k for k in listed if k.active and k.key_id != target.key_id]
    if target.role is Role.admin and top_role(grants) is not Role.admin and not any(k.role is Role.admin
                                                                                   for k in others):
        raise Conflict(f"{key_id!r} is the only admin key: create another admin key before taking its admin role")
    if (target.workspaces.get(DEFAULT_WORKSPACE) is Role.admin and grants.get(DEFAULT_WORKSPACE) is not Role.admin
            and not any(k.workspaces.get(DEFAULT_WORKSPACE) is Role.admin for k in others)):
        raise Conflict(f"{key_id!r} is the deployment's only admin (admin in {DEFAULT_WORKSPACE!r}): make "
                       "another before taking it away")
    return sc.keys().set_grants(target.key_id, grants)


@router.delete("/keys/{key_id}", response_model=ApiKey, dependencies=[Depends(ADMIN)])
def revoke_key(key_id: str, request: Request) -> ApiKey:
    """Revoke: the key fails from the next request on, on every server sharing the store."""
    from kgservice.apikeys.model import only_admin

    who, sc, listed, target = _target(request, key_id)
    if not _of_deployment(who, sc) and not _administers(who, target):
        raise Forbidden(f"{key_id!r} also acts in workspaces this key does not administer; revoke it as "
                        "the deployment's admin, or with `kg keys revoke`")
    if only_admin(listed, target):
        raise Conflict(f"{key_id!r} is the only admin key: create another admin key before revoking it")
    return sc.keys().revoke(key_id)


@router.get("/cache", dependencies=[Depends(ADMIN)])
def cache_stats(request: Request) -> JSONResponse:
    stats = ctx_of(request).kb.cache_stats()
    stats.pop("path", None)  # a server path is not the caller's business
    return JSONResponse(stats)


@router.post("/cache/clear", dependencies=[Depends(ADMIN)])
def cache_clear(request: Request) -> JSONResponse:
    return JSONResponse({"cleared": ctx_of(request).kb.clear_caches()})


@router.get("/doctor", dependencies=[Depends(ADMIN)])
def doctor(request: Request) -> JSONResponse:
    """`kg doctor` (check only; repairs stay a CLI operation)."""
    return JSONResponse(ctx_of(request).kb.doctor().to_dict())

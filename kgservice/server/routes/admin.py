"""Admin: API keys (the key is shown once), query caches, doctor (check only).

Keys are the deployment's, but an admin manages them from the workspace a request acts in: it
lists the keys of that workspace, makes keys of workspaces where it is admin, and revokes only a
key all of whose workspaces it administers. Another workspace's keys are not found (404)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from kgservice.server.auth import ApiKey, Principal, Role
from kgservice.server.deps import ADMIN, principal_of
from kgservice.server.models import KeyCreated, KeyIn
from kgservice.server.routes import ctx_of

router = APIRouter(prefix="/v1/admin", tags=["admin"])


def _admin(request: Request) -> Principal:
    who = principal_of(request)
    assert who is not None  # ADMIN ran first
    return who


def _administers(who: Principal, key: ApiKey) -> bool:
    return all(who.role_in(w) is Role.admin for w in key.workspaces)


@router.post("/keys", response_model=KeyCreated, status_code=201, dependencies=[Depends(ADMIN)])
def create_key(body: KeyIn, request: Request) -> KeyCreated:
    from kgservice.server.errors import Forbidden, NotFound

    who, sc = _admin(request), ctx_of(request)
    grants = ({name: Role(role) for name, role in body.workspaces.items()} if body.workspaces
              else {sc.workspace: Role(body.role)})
    for name in grants:
        if who.role_in(name) is None or not sc.serves(name):
            raise NotFound(f"no workspace {name!r}")
        if who.role_in(name) is not Role.admin:
            raise Forbidden(f"a key of {name!r} needs the admin role there; {who.user}'s key does not have it")
    key, rec = sc.keys().create(body.user, body.role, grants)
    return KeyCreated(key=key, key_id=rec.key_id, user=rec.user, role=rec.role.value, created=rec.created,
                      workspaces={k: v.value for k, v in rec.workspaces.items()})


@router.get("/keys", response_model=list[ApiKey], dependencies=[Depends(ADMIN)])
def list_keys(request: Request) -> list[ApiKey]:
    """The keys of the workspace the request acts in (each with all its workspaces)."""
    sc = ctx_of(request)
    return [k for k in sc.keys().list() if sc.workspace in k.workspaces]


@router.delete("/keys/{key_id}", response_model=ApiKey, dependencies=[Depends(ADMIN)])
def revoke_key(key_id: str, request: Request) -> ApiKey:
    """Revoke: the key fails from the next request on, on every server sharing the store."""
    from kgservice.apikeys.model import only_admin
    from kgservice.server.errors import Conflict, NotFound

    from kgservice.server.errors import Forbidden

    sc = ctx_of(request)
    keys = sc.keys()
    listed = keys.list()
    target = next((k for k in listed if k.key_id == key_id and sc.workspace in k.workspaces), None)
    if target is None:
        raise NotFound(f"no API key with id {key_id!r}")
    if not _administers(_admin(request), target):
        raise Forbidden(f"{key_id!r} also acts in workspaces this key does not administer; revoke it as "
                        "the deployment's admin, or with `kg keys revoke`")
    if only_admin(listed, target):
        raise Conflict(f"{key_id!r} is the only admin key: create another admin key before revoking it")
    return keys.revoke(key_id)


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

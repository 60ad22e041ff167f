"""Admin: API keys (the key is shown once), query caches, doctor (check only)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from kgservice.server.auth import ApiKey
from kgservice.server.deps import ADMIN
from kgservice.server.models import KeyCreated, KeyIn
from kgservice.server.routes import ctx_of

router = APIRouter(prefix="/v1/admin", tags=["admin"])


@router.post("/keys", response_model=KeyCreated, status_code=201, dependencies=[Depends(ADMIN)])
def create_key(body: KeyIn, request: Request) -> KeyCreated:
    key, rec = ctx_of(request).keys().create(body.user, body.role)
    return KeyCreated(key=key, key_id=rec.key_id, user=rec.user, role=rec.role.value, created=rec.created)


@router.get("/keys", response_model=list[ApiKey], dependencies=[Depends(ADMIN)])
def list_keys(request: Request) -> list[ApiKey]:
    return ctx_of(request).keys().list()


@router.delete("/keys/{key_id}", response_model=ApiKey, dependencies=[Depends(ADMIN)])
def revoke_key(key_id: str, request: Request) -> ApiKey:
    """Revoke: the key fails from the next request on, on every server sharing the store."""
    from kgservice.apikeys.model import only_admin
    from kgservice.server.errors import Conflict, NotFound

    keys = ctx_of(request).keys()
    listed = keys.list()
    target = next((k for k in listed if k.key_id == key_id), None)
    if target is None:
        raise NotFound(f"no API key with id {key_id!r}")
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

"""Role declarations for routes: every route depends on exactly one of :func:`need` or
:func:`public`, and a test walks ``app.routes`` to make sure none is missing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import HTTPException, Request

from kgservice.server.auth import Principal, Role
from kgservice.server.middleware import PRINCIPAL

ROLE_ATTR = "kg_role"  # on the dependency callables: the Role needed, or None for public


def principal_of(request: Request) -> Principal | None:
    return request.scope.get(PRINCIPAL)


def refusal(principal: Principal | None, role: Role) -> tuple[int, str] | None:
    """The one role check, for REST routes and MCP tools alike: None, or (status, why)."""
    if principal is None:
        return 401, "missing API key"
    if not principal.allows(role):
        if principal.key_id is None and principal.workspaces is None:  # no key: kg mcp (stdio), kg serve --no-auth
            return 403, (f"this needs the {role.value} role; without a key the local operator has the "
                         f"{principal.role.value} role (KG_LOCAL_ROLE, local_role in the config file)")
        return 403, f"this needs the {role.value} role; {principal.user}'s key has the {principal.role.value} role"
    return None


def check(principal: Principal | None, role: Role) -> Principal:
    refused = refusal(principal, role)
    if refused is not None:
        status, why = refused
        raise HTTPException(status, why, headers={"WWW-Authenticate": 'Bearer realm="kgservice"'} if status == 401 else None)
    assert principal is not None
    return principal


def need(role: Role) -> Callable[[Request], Any]:
    # async: a plain ``def`` dependency is run by FastAPI in a worker thread (a thread hop per
    # request for a dictionary lookup); this one never blocks
    async def dependency(request: Request) -> Principal:
        return check(principal_of(request), role)

    setattr(dependency, ROLE_ATTR, role)
    dependency.__name__ = f"need_{role.value}"
    return dependency


def public() -> Callable[[Request], Any]:
    async def dependency(request: Request) -> None:
        return None

    setattr(dependency, ROLE_ATTR, None)
    dependency.__name__ = "public"
    return dependency


READER, WRITER, ADMIN, PUBLIC = need(Role.reader), need(Role.writer), need(Role.admin), public()

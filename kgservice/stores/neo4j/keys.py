"""API keys on Neo4j: ``(:KgApiKey)`` nodes through the store's named Cypher (``key_*.cypher``).

Keys belong to the deployment, not to a workspace: the nodes carry no ``ws`` property and are
never scoped by one. Each holds its workspaces with a role in each (``workspaces``, JSON text);
a node made before workspaces has none and is a key of ``default`` with its ``role``."""

from __future__ import annotations

from typing import Any

from kgservice.apikeys.model import ApiKey, Role, decode_grants
from kgservice.apikeys.store import KeyStore


class Neo4jKeyStore(KeyStore):
    """Keys as ``(:KgApiKey)`` nodes, through the knowledge base's own store (one driver pool)."""

    def __init__(self, store: Any, read_only: bool = False, clock: Any = None, bump: Any = None):
        """``store``: the :class:`~kgservice.stores.neo4j.Neo4jStore` whose database holds the keys."""
        super().__init__(read_only, clock, bump)
        self.store = store
        self._schema_done = False

    def _run(self, name: str, write: bool, **params: Any) -> list[Any]:
        return self.store.write(name, **params) if write else self.store.read(name, **params)

    def _insert(self, key_id: str, sha256: str, user: str, role: Role, created: str, workspaces: str) -> None:
        if not self._schema_done:
            self._run("keys_schema", True)
            self._schema_done = True
        self._run("key_create", True, key_id=key_id, sha256=sha256, user=user, role=role.value, created=created,
                  workspaces=workspaces)

    def _set_workspaces(self, key_id: str, workspaces: str) -> None:
        self._run("key_set_workspaces", True, key_id=key_id, workspaces=workspaces)

    @staticmethod
    def _record(r: Any) -> ApiKey:
        role = Role(r["role"])
        return ApiKey(key_id=r["key_id"], user=r["user"], role=role, created=r["created"],
                      last_used=r["last_used"], revoked_at=r["revoked_at"],
                      workspaces=decode_grants(r["workspaces"], role))

    def _get(self, key_id: str) -> tuple[ApiKey, str] | None:
        rows = self._run("key_get", False, key_id=key_id)
        if not rows:
            return None
        return self._record(rows[0]), rows[0]["sha256"]

    def list(self) -> list[ApiKey]:
        return [self._record(r) for r in self._run("key_list", False)]

    def _revoke(self, key_id: str, at: str) -> str | None:
        rows = self._run("key_revoke", True, key_id=key_id, at=at)
        return rows[0]["revoked_at"] if rows else None

    def _touch(self, key_id: str, at: str) -> None:
        self._run("key_touch", True, key_id=key_id, at=at)

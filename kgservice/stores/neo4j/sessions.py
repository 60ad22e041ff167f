"""Web sign-ins on Neo4j: ``(:KgSession)`` nodes through the store's named Cypher
(``session_*.cypher``; what a row holds: :mod:`kgservice.stores.sessions`).

Every statement, reads included, runs in a write-routed transaction: on a cluster the server
a browser lands on right after signing in elsewhere must find the session, and the leader
has it while a secondary may not yet. A session read is one small query per page view."""

from __future__ import annotations

from typing import Any

from kgservice.stores.sessions import SWEEP, SessionRow


class Neo4jSessionTable:
    def __init__(self, store: Any):
        self.store = store

    def create(self, row_id: str, key_id: str, csrf: str, ttl_ms: int) -> int:
        rows = self.store.write("session_create", id=row_id, key_id=key_id, csrf=csrf, ttl_ms=int(ttl_ms), sweep=SWEEP)
        return int(rows[0]["expires_ms"])

    def get(self, row_id: str) -> SessionRow | None:
        rows = self.store.write("session_get", id=row_id)
        return SessionRow(**rows[0]) if rows else None

    def drop(self, row_id: str) -> None:
        self.store.write("session_drop", id=row_id)

    def set_flash(self, row_id: str, path: str, sealed: str, ttl_ms: int) -> None:
        self.store.write("session_flash_set", id=row_id, path=path, sealed=sealed, ttl_ms=int(ttl_ms))

    def take_flash(self, row_id: str, path: str) -> str | None:
        rows = self.store.write("session_flash_take", id=row_id, path=path)
        return rows[0]["sealed"] if rows else None

    def close(self) -> None:  # the store's driver is the knowledge base's
        pass

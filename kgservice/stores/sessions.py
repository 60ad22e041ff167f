"""Web sign-ins kept in the store, so any server of a deployment knows every session.

A session row holds no secret: its id is sha256 of the cookie's token (a database reader
cannot use a row to sign in), the key it signed in with by key id only (the key is checked on
every request, so revoking it ends the session on every server at once), a CSRF token, an
expiry and at most one flash: the outcome of the last form, for the page it redirects to,
sealed by the web layer with a key derived from the cookie's token (a new API key's secret
can be in it), and readable only by whoever holds the cookie.

Each backend supplies a :class:`SessionTable` (``GraphStore.session_table()``); the web
layer (:mod:`kgservice.web.session`) is the only user.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel

SWEEP = 1000  # expired sessions deleted per sign-in, at most


class SessionRow(BaseModel):
    id: str  # sha256 hex of the cookie's token
    key_id: str
    csrf: str
    expires_ms: int  # wall clock, milliseconds since the epoch
    flash_path: str | None = None  # the page the flash is for (plain: it decides whether to take it)


class SessionTable(Protocol):
    def create(self, row_id: str, key_id: str, csrf: str, ttl_ms: int) -> int:
        """Store a new session; its expiry (ms). Expired sessions are swept on the way."""
        ...

    def get(self, row_id: str) -> SessionRow | None:
        """The live session, or None (unknown or expired)."""
        ...

    def drop(self, row_id: str) -> None: ...

    def set_flash(self, row_id: str, path: str, sealed: str, ttl_ms: int) -> None:
        """Keep ``sealed`` for the next take on ``path`` (a newer flash replaces it)."""
        ...

    def take_flash(self, row_id: str, path: str) -> str | None:
        """The sealed flash for ``path``, once (atomically cleared); None otherwise."""
        ...

    def close(self) -> None: ...

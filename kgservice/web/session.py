"""Web sessions: an opaque random token in the cookie names a session, which holds the key id
it signed in with (re-checked on every request, so revoking the key ends its sessions on
every server), a CSRF token and an expiry. A session also holds one flash: what a form's POST
did, shown once by the page it redirects to (POST-redirect-GET), so a reload never re-posts
and a new key's secret is shown once.

Where sessions live decides what a deployment of several servers can do:

* :class:`StoredSessions` (the default): in the graph store (:mod:`kgservice.stores.sessions`),
  so a sign-in on one server is good on every other one behind the same load balancer, a
  sign-out ends it everywhere, and a restart signs nobody out. The store keeps sha256 of the
  token, never the token, and the flash sealed under the token (:mod:`kgservice.web.sealed`).
* :class:`MemorySessions`: in this process, for a server that cannot write its store
  (``KG_READ_ONLY``): a sign-in is good on this server only, until it restarts.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

COOKIE = "kg_session"
TTL = 8 * 3600.0  # seconds a session lives after sign-in
FLASH_TTL = 300.0  # seconds a flash waits for the page it was meant for


@dataclass
class Session:
    token: str
    key_id: str
    csrf: str
    expires: float  # wall clock (time.time())
    keeper: Any = field(default=None, repr=False)  # the MemorySessions / StoredSessions holding it
    flash_path: str | None = None  # stored sessions: the page a flash waits for (None: no flash)

    def set_flash(self, path: str, **data: Any) -> None:
        """Keeps ``data`` for the next GET of ``path`` (a newer flash replaces it): the outcome of
        a form survives the redirect without being in the URL, where it would show again.
        ``path`` is the page's whole path, its ``/w/<name>`` prefix included, so a flash set in
        one workspace's page is never shown in another's (one session signs in once for all)."""
        self.keeper.set_flash(self, path, data)

    def take_flash(self, path: str) -> dict[str, Any]:
        """The flash meant for ``path``, once; {} otherwise. Other paths leave it alone, so the
        Jobs table's background refresh cannot eat a flash meant for another page."""
        return self.keeper.take_flash(self, path)


class MemorySessions:
    """Sessions in this process only (see the module doc for when)."""

    shared = False

    def __init__(self, ttl: float = TTL):
        self.ttl = ttl
        self._by_token: dict[str, Session] = {}
        self._flash: dict[str, tuple[str, float, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def create(self, key_id: str) -> Session:
        s = Session(secrets.token_urlsafe(32), key_id, secrets.token_urlsafe(32), time.time() + self.ttl, keeper=self)
        with self._lock:
            self._sweep()
            self._by_token[s.token] = s
        return s

    def get(self, token: str | None) -> Session | None:
        if not token:
            return None
        with self._lock:
            s = self._by_token.get(token)
            if s is None:
                return None
            if s.expires <= time.time():
                self._drop(token)
                return None
            return s

    async def aget(self, token: str | None) -> Session | None:
        return self.get(token)

    def drop(self, token: str | None) -> None:
        with self._lock:
            self._drop(token or "")

    def _drop(self, token: str) -> None:
        self._by_token.pop(token, None)
        self._flash.pop(token, None)

    def set_flash(self, session: Session, path: str, data: dict[str, Any]) -> None:
        with self._lock:
            self._flash[session.token] = (path, time.monotonic() + FLASH_TTL, data)

    def take_flash(self, session: Session, path: str) -> dict[str, Any]:
        with self._lock:
            kept = self._flash.get(session.token)
            if kept is None:
                return {}
            target, until, data = kept
            if until <= time.monotonic():
                del self._flash[session.token]
                return {}
            if target != path:
                return {}
            del self._flash[session.token]
            return data

    def _sweep(self) -> None:
        now = time.time()
        for t in [t for t, s in self._by_token.items() if s.expires <= now]:
            self._drop(t)


def row_id(token: str) -> str:
    """What the store keeps of a token: its sha256 (a database reader cannot sign in with it)."""
    return hashlib.sha256(token.encode()).hexdigest()


class StoredSessions:
    """Sessions in the graph store's session table (see the module doc)."""

    shared = True

    def __init__(self, table: Any, ttl: float = TTL):
        self.table = table
        self.ttl = ttl

    def create(self, key_id: str) -> Session:
        token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        expires_ms = self.table.create(row_id(token), key_id, csrf, int(self.ttl * 1000))
        return Session(token, key_id, csrf, expires_ms / 1000, keeper=self)

    def get(self, token: str | None) -> Session | None:
        if not token:
            return None
        row = self.table.get(row_id(token))
        if row is None:
            return None
        return Session(token, row.key_id, row.csrf, row.expires_ms / 1000, keeper=self, flash_path=row.flash_path)

    async def aget(self, token: str | None) -> Session | None:
        import anyio.to_thread

        return None if not token else await anyio.to_thread.run_sync(self.get, token)

    def drop(self, token: str | None) -> None:
        if token:
            self.table.drop(row_id(token))

    def set_flash(self, session: Session, path: str, data: dict[str, Any]) -> None:
        from kgservice.web.sealed import seal

        self.table.set_flash(row_id(session.token), path, seal(session.token, data), int(FLASH_TTL * 1000))
        session.flash_path = path

    def take_flash(self, session: Session, path: str) -> dict[str, Any]:
        """No store write unless a flash waits for this very page (the session read said so)."""
        if session.flash_path != path:
            return {}
        from kgservice.web.sealed import unseal

        sealed = self.table.take_flash(row_id(session.token), path)
        session.flash_path = None
        return (unseal(session.token, sealed) or {}) if sealed else {}


def sessions_for(settings: Any, store: Any) -> MemorySessions | StoredSessions:
    """Stored sessions when the store keeps them and this server may write it; else memory."""
    table = None if settings.read_only else store.session_table()
    return MemorySessions() if table is None else StoredSessions(table)


def csrf_ok(session: Session, presented: str | None) -> bool:
    return bool(presented) and hmac.compare_digest(session.csrf.encode(), (presented or "").encode())


def cookie_of(scope: Mapping[str, Any], name: str = COOKIE) -> str | None:
    """The value of cookie ``name`` in an ASGI scope's headers (the gate reads the session's
    before any request object exists; the pages read it to tell an ended session from none)."""
    for k, v in scope.get("headers", ()):
        if k.lower() == b"cookie":
            for part in v.decode("latin-1").split(";"):
                n, _, val = part.strip().partition("=")
                if n == name:
                    return val
    return None

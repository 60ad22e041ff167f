"""Server-side sessions: an opaque random token in the cookie maps to the key (kept in server
memory only, re-verified on every request so a revoked key ends its sessions), a CSRF token
and an expiry. A session also holds one flash: what a form's POST did, shown once by the page it
redirects to (POST-redirect-GET), so a reload never re-posts and a new key's secret is shown once."""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

COOKIE = "kg_session"
TTL = 8 * 3600.0  # seconds a session lives after sign-in
FLASH_TTL = 300.0  # seconds a flash waits for the page it was meant for


@dataclass
class Session:
    token: str
    key: str
    csrf: str
    expires: float
    flash: tuple[str, float, dict[str, Any]] | None = field(default=None, repr=False)

    def set_flash(self, path: str, **data: Any) -> None:
        """Keeps ``data`` for the next GET of ``path`` (a newer flash replaces it): the outcome of
        a form survives the redirect without being in the URL, where it would show again."""
        self.flash = (path, time.monotonic() + FLASH_TTL, data)

    def take_flash(self, path: str) -> dict[str, Any]:
        """The flash meant for ``path``, once; {} otherwise. Other paths leave it alone, so the
        Jobs table's background refresh cannot eat a flash meant for another page."""
        if self.flash is None:
            return {}
        target, until, data = self.flash
        if until <= time.monotonic():
            self.flash = None
            return {}
        if target != path:
            return {}
        self.flash = None
        return data


class Sessions:
    def __init__(self, ttl: float = TTL):
        self.ttl = ttl
        self._by_token: dict[str, Session] = {}
        self._lock = threading.Lock()

    def create(self, key: str) -> Session:
        s = Session(secrets.token_urlsafe(32), key, secrets.token_urlsafe(32), time.monotonic() + self.ttl)
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
            if s.expires <= time.monotonic():
                del self._by_token[token]
                return None
            return s

    def drop(self, token: str | None) -> None:
        with self._lock:
            self._by_token.pop(token or "", None)

    def _sweep(self) -> None:
        now = time.monotonic()
        for t in [t for t, s in self._by_token.items() if s.expires <= now]:
            del self._by_token[t]


def csrf_ok(session: Session, presented: str | None) -> bool:
    return bool(presented) and hmac.compare_digest(session.csrf.encode(), (presented or "").encode())


def cookie_of(scope: dict, name: str = COOKIE) -> str | None:
    """The value of cookie ``name`` in an ASGI scope's headers (the gate reads the session's
    before any request object exists; the pages read it to tell an ended session from none)."""
    for k, v in scope.get("headers", ()):
        if k.lower() == b"cookie":
            for part in v.decode("latin-1").split(";"):
                n, _, val = part.strip().partition("=")
                if n == name:
                    return val
    return None

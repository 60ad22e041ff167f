"""Where API keys live: in the graph store's database, so every `kg serve` sharing it agrees.

Each graph store supplies its own (``store.key_store(...)``, under ``kgservice/stores/``);
this module holds what they share. A verified key is kept in memory only until the store's
change-log version moves, and every create / revoke moves it, so a revocation takes effect
on the next request of every server (see :class:`KeyStore`).
"""

from __future__ import annotations

import builtins  # `list` is a method of the key stores
import threading
import time
from abc import ABC, abstractmethod
from datetime import datetime, timezone
from typing import Any

from kgservice.apikeys.model import (ApiKey, KeyError_, Principal, Role, check_user, encode_grants, new_key,
                                     secret_matches, split_key, top_role)
from kgservice.config import DEFAULT_WORKSPACE
from kgservice.errors import ReadOnlyError

TOUCH_EVERY = 60.0  # seconds between last_used writes per key and process


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


_MISSING = object()
KEY_TABLE_SIZE = 10_000
KEY_TABLE_TTL = 30.0  # seconds: a safety net only (a key change whose version bump failed)  # key records kept in memory per process (dropped whole when exceeded)


class KeyStore(ABC):
    """Create, list, revoke and verify keys.

    With a ``clock`` (the store's change-log version, :class:`kgservice.stores.changelog.VersionClock`)
    verified records are kept in memory for as long as the version does not move, and
    ``create`` / ``revoke`` move it (``bump``): every server then drops its table on its next
    request, so a revocation still takes effect on the next request, while a request in between
    costs a version read shared with concurrent requests (and with the request's own cache sync)
    instead of a key lookup of its own. Without a clock every verification reads the store."""

    def __init__(self, read_only: bool = False, clock: Any = None, bump: Any = None) -> None:
        self.read_only = read_only
        self.clock = clock
        self.bump = bump  # () -> None: move the change-log version after a key change
        self._touched: dict[str, float] = {}
        self._touch_lock = threading.Lock()
        self._table: dict[str, tuple[tuple[ApiKey, str], float]] = {}  # key id -> (record, digest), kept at
        self._table_version: int | None = None
        self._table_lock = threading.Lock()
        self.lookups = 0  # store lookups made by verify (the bench and tests read it)

    def _writable(self) -> None:
        if self.read_only:
            raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); key changes refused")

    @abstractmethod
    def _insert(self, key_id: str, sha256: str, user: str, role: Role, created: str, workspaces: str) -> None:
        """Store a new key; ``workspaces`` is :func:`encode_grants` of its workspaces."""

    @abstractmethod
    def _set_workspaces(self, key_id: str, workspaces: str) -> None:
        """Replace a key's workspaces (a workspace renamed or deleted)."""

    @abstractmethod
    def _get(self, key_id: str) -> tuple[ApiKey, str] | None:
        """(record, stored digest) or None."""

    @abstractmethod
    def list(self) -> list[ApiKey]: ...

    @abstractmethod
    def _revoke(self, key_id: str, at: str) -> str | None: ...

    @abstractmethod
    def _touch(self, key_id: str, at: str) -> None: ...

    def close(self) -> None:  # pragma: no cover - trivial
        pass

    def carry_over(self, data_dir: Any) -> builtins.list[str]:
        """Bring keys an earlier release kept per workspace into the deployment's keys (a
        backend that never kept them apart has none): the names of the workspaces carried."""
        return []

    def create(self, user: str, role: Role | str, workspaces: dict[str, Role] | None = None) -> tuple[str, ApiKey]:
        """(the full key, shown once; its record). The key itself is stored only as a digest.
        ``workspaces``: the workspaces it may act in, with its role in each (default: ``role``
        in ``default``, the key every deployment had before workspaces)."""
        role = role if isinstance(role, Role) else Role.parse(role)
        user = check_user(user)
        grants = dict(workspaces) if workspaces else {DEFAULT_WORKSPACE: role}
        self._writable()
        full, key_id, sha = new_key()
        created = _now()
        self._insert(key_id, sha, user, top_role(grants), created, encode_grants(grants))
        self._changed()
        return full, ApiKey(key_id=key_id, user=user, role=top_role(grants), created=created, workspaces=grants)

    def set_grants(self, key_id: str, workspaces: dict[str, Role]) -> ApiKey:
        """Key ``key_id`` acts in ``workspaces`` from the next request on (every server: the
        version moves), with the role given in each; its secret is unchanged. A revoked or
        unknown key, or no workspace at all (revoke the key instead), is an input error."""
        if not workspaces:
            raise KeyError_("a key needs at least one workspace; revoke it to take every workspace away")
        self._writable()
        found = self._get(key_id.strip())
        if found is None:
            raise KeyError_(f"no API key with id {key_id!r} (`kg keys list` shows the ids)")
        if not found[0].active:
            raise KeyError_(f"API key {key_id!r} is revoked; create a new key instead")
        self._set_workspaces(found[0].key_id, encode_grants(dict(workspaces)))
        self._changed()
        changed = self._get(found[0].key_id)
        assert changed is not None
        return changed[0]

    def rename_workspace(self, old: str, new: str) -> int:
        """Every key of workspace ``old`` holds ``new`` instead, with the same role (the
        workspace was renamed: its keys follow it). Returns how many keys changed."""
        def renamed(grants: dict[str, Role]) -> dict[str, Role]:
            return {new if name == old else name: role for name, role in grants.items()}

        return self._regrant(old, renamed)

    def drop_workspace(self, name: str) -> int:
        """Workspace ``name`` taken out of every key (it was deleted; a workspace made later
        under the same name is not theirs). A key left with no workspace is revoked."""
        return self._regrant(name, lambda grants: {k: v for k, v in grants.items() if k != name})

    def _regrant(self, name: str, change: Any) -> int:
        self._writable()
        changed = 0
        for key in self.list():
            if name not in key.workspaces:
                continue
            grants = change(key.workspaces)
            if grants:
                self._set_workspaces(key.key_id, encode_grants(grants))
            else:
                self._revoke(key.key_id, _now())
            changed += 1
        if changed:
            self._changed()
        return changed

    def revoke(self, key_id: str) -> ApiKey:
        self._writable()
        at = self._revoke(key_id.strip(), _now())
        if at is None:
            raise KeyError_(f"no API key with id {key_id!r} (`kg keys list` shows the ids)")
        self._changed()
        found = self._get(key_id.strip())
        assert found is not None
        return found[0]

    def _changed(self) -> None:
        """After the key write committed: move the version (other servers), drop our table. If
        the bump fails the call raises (run it again: revoking twice is harmless), and other
        servers still drop the key within KEY_TABLE_TTL."""
        if self.bump is not None:
            self.bump()
        with self._table_lock:
            self._table.clear()
            self._table_version = None

    def _lookup(self, key_id: str) -> tuple[ApiKey, str] | None:
        """The stored record, from the in-memory table while the version has not moved."""
        if self.clock is None:
            self.lookups += 1
            return self._get(key_id)
        version = self.clock.read()  # one read started after this request arrived (shared)
        found = self._table_get(key_id, version)
        return self._fetch(key_id, version) if found is _MISSING else found

    def _table_get(self, key_id: str, version: int) -> Any:
        """The record kept for ``key_id`` at ``version``, or _MISSING (the table is dropped
        whenever the version moves)."""
        with self._table_lock:
            if version != self._table_version:
                self._table.clear()
                self._table_version = version
            kept = self._table.get(key_id)
            if kept is None or time.monotonic() - kept[1] > KEY_TABLE_TTL:
                return _MISSING
            return kept[0]

    def _fetch(self, key_id: str, version: int) -> tuple[ApiKey, str] | None:
        self.lookups += 1
        found = self._get(key_id)
        with self._table_lock:
            if self._table_version == version and found is not None:  # unknown ids are not kept
                if len(self._table) >= KEY_TABLE_SIZE:
                    self._table.clear()
                self._table[key_id] = (found, time.monotonic())
        return found

    def verify(self, presented: str) -> Principal | None:
        """The principal of a valid, unrevoked key, else None. One lookup, constant-time compare."""
        parts = split_key(presented)
        if parts is None:
            return None
        key_id, secret = parts
        principal = self._check(key_id, secret, self._lookup(key_id))
        if principal is not None and self._touch_due(key_id):
            self._touch_now(key_id)
        return principal

    async def averify(self, presented: str) -> Principal | None:
        """:meth:`verify` for the event loop: the version read is shared with every concurrent
        request (:meth:`VersionClock.aread`) and a key in the in-memory table costs no thread
        hop; a table miss or a due ``last_used`` write runs in a worker thread."""
        import anyio.to_thread

        if self.clock is None or not hasattr(self.clock, "aread"):
            return await anyio.to_thread.run_sync(self.verify, presented)
        parts = split_key(presented)
        if parts is None:
            return None
        key_id, secret = parts
        version = await self.clock.aread()
        found = self._table_get(key_id, version)
        if found is _MISSING:
            found = await anyio.to_thread.run_sync(self._fetch, key_id, version)
        principal = self._check(key_id, secret, found)
        if principal is not None and self._touch_due(key_id):
            await anyio.to_thread.run_sync(self._touch_now, key_id)
        return principal

    def principal(self, key_id: str) -> Principal | None:
        """The principal of the active key ``key_id`` (no secret: the caller proved it earlier,
        as a web session that signed in with the key), else None: a session checks its key
        this way on every request, so revoking the key ends its sessions on every server."""
        return self._active(key_id, self._lookup(key_id))

    async def aprincipal(self, key_id: str) -> Principal | None:
        """:meth:`principal` for the event loop (as :meth:`averify`)."""
        import anyio.to_thread

        if self.clock is None or not hasattr(self.clock, "aread"):
            return await anyio.to_thread.run_sync(self.principal, key_id)
        version = await self.clock.aread()
        found = self._table_get(key_id, version)
        if found is _MISSING:
            found = await anyio.to_thread.run_sync(self._fetch, key_id, version)
        principal = self._active(key_id, found)
        if principal is not None and self._touch_due(key_id):
            await anyio.to_thread.run_sync(self._touch_now, key_id)
        return principal

    @staticmethod
    def _active(key_id: str, found: tuple[ApiKey, str] | None) -> Principal | None:
        record = found[0] if found is not None else None
        if record is None or not record.active:
            return None
        return Principal(user=record.user, role=record.role, key_id=key_id, workspaces=record.workspaces)

    @staticmethod
    def _check(key_id: str, secret: str, found: tuple[ApiKey, str] | None) -> Principal | None:
        record, stored = found if found is not None else (None, None)
        if not secret_matches(secret, stored) or record is None or not record.active:
            return None
        return Principal(user=record.user, role=record.role, key_id=key_id, workspaces=record.workspaces)

    def _touch_due(self, key_id: str) -> bool:
        import time

        if self.read_only:
            return False
        now = time.monotonic()
        with self._touch_lock:
            if now - self._touched.get(key_id, -TOUCH_EVERY) < TOUCH_EVERY:
                return False
            self._touched[key_id] = now
            return True

    def _touch_now(self, key_id: str) -> None:
        try:
            self._touch(key_id, _now())
        except Exception:  # last_used is a courtesy: a read-only server must still authenticate
            pass

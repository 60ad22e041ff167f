"""API keys on the embedded backend: a small SQLite file in the data directory
(``keys.sqlite3``, mode 600), separate from the graph snapshot.

Keys belong to the deployment, so there is one file, the ``default`` workspace's; each key
holds its workspaces with a role in each (a ``workspaces`` column, JSON; empty on a key made
before workspaces, which is a key of ``default``). Key files that an earlier release made inside
a named workspace's directory are carried into it when it is opened for writing
(:func:`carry_over`)."""

from __future__ import annotations

import builtins  # `list` is a method of the key stores
import os
import threading
from pathlib import Path
from typing import Any

from kgservice.apikeys.model import ApiKey, Role, decode_grants, encode_grants
from kgservice.apikeys.store import KeyStore
from kgservice.stores import sqlite_file

KEYS_FILE = "keys.sqlite3"


class SqliteKeyStore(KeyStore):
    def __init__(self, path: Path, read_only: bool = False, clock: Any = None, bump: Any = None):
        super().__init__(read_only, clock, bump)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not self.path.exists()
        self._db = sqlite_file.connect(self.path, timeout=30, check_same_thread=False)
        if fresh:
            os.chmod(self.path, 0o600)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("CREATE TABLE IF NOT EXISTS keys (key_id TEXT PRIMARY KEY, sha256 TEXT NOT NULL, "
                             "user TEXT NOT NULL, role TEXT NOT NULL, created TEXT NOT NULL, last_used TEXT, "
                             "revoked_at TEXT, workspaces TEXT)")
            columns = {r[1] for r in self._db.execute("PRAGMA table_info(keys)")}
            if "workspaces" not in columns and not read_only:  # a file made before workspaces
                self._db.execute("ALTER TABLE keys ADD COLUMN workspaces TEXT")
            self._db.commit()
            self._columns = "workspaces" if "workspaces" in columns or not read_only else "NULL"

    def _insert(self, key_id: str, sha256: str, user: str, role: Role, created: str, workspaces: str) -> None:
        with self._lock:
            self._db.execute("INSERT INTO keys (key_id, sha256, user, role, created, workspaces) "
                             "VALUES (?, ?, ?, ?, ?, ?)", (key_id, sha256, user, role.value, created, workspaces))
            self._db.commit()

    def _set_workspaces(self, key_id: str, workspaces: str) -> None:
        with self._lock:
            self._db.execute("UPDATE keys SET workspaces = ? WHERE key_id = ?", (workspaces, key_id))
            self._db.commit()

    @staticmethod
    def _record(r: Any) -> ApiKey:
        role = Role(r[2])
        return ApiKey(key_id=r[0], user=r[1], role=role, created=r[3], last_used=r[4], revoked_at=r[5],
                      workspaces=decode_grants(r[6], role))

    def _get(self, key_id: str) -> tuple[ApiKey, str] | None:
        with self._lock:
            row = self._db.execute(f"SELECT key_id, user, role, created, last_used, revoked_at, {self._columns}, "
                                   "sha256 FROM keys WHERE key_id = ?", (key_id,)).fetchone()
        if row is None:
            return None
        return self._record(row), row[7]

    def list(self) -> list[ApiKey]:
        with self._lock:
            rows = self._db.execute(f"SELECT key_id, user, role, created, last_used, revoked_at, {self._columns} "
                                    "FROM keys ORDER BY user, created, key_id").fetchall()
        return [self._record(r) for r in rows]

    def carry_over(self, data_dir: Path) -> builtins.list[str]:
        """Bring the keys an earlier release made inside named workspaces' directories
        (``<data_dir>/workspaces/<name>/keys.sqlite3``) into this, the deployment's file: each
        becomes a key of that workspace with its role, its secret unchanged (so clients holding
        it keep working), and the old file is renamed ``keys.sqlite3.carried`` (kept, never
        read again). Returns the names of the workspaces whose keys were carried."""
        from kgservice.config import WORKSPACES_DIR

        if self.read_only:
            return []
        carried = []
        for old in sorted((Path(data_dir) / WORKSPACES_DIR).glob(f"*/{KEYS_FILE}")):
            name = old.parent.name
            rows = _read_only(old, "SELECT key_id, sha256, user, role, created, last_used, revoked_at FROM keys", 30)
            with self._lock:
                for r in rows:
                    self._db.execute("INSERT OR IGNORE INTO keys (key_id, sha256, user, role, created, last_used, "
                                     "revoked_at, workspaces) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                     (*r, encode_grants({name: Role(r[3])})))
                self._db.commit()
            os.replace(old, old.with_name(KEYS_FILE + ".carried"))
            carried.append(name)
        if carried:
            self._changed()
        return carried

    def _revoke(self, key_id: str, at: str) -> str | None:
        with self._lock:
            self._db.execute("UPDATE keys SET revoked_at = coalesce(revoked_at, ?) WHERE key_id = ?", (at, key_id))
            self._db.commit()
            row = self._db.execute("SELECT revoked_at FROM keys WHERE key_id = ?", (key_id,)).fetchone()
        return None if row is None else row[0]

    def _touch(self, key_id: str, at: str) -> None:
        with self._lock:
            self._db.execute("UPDATE keys SET last_used = ? WHERE key_id = ?", (at, key_id))
            self._db.commit()

    def close(self) -> None:
        self._db.close()


def has_active_admin(data_dir: Path) -> bool:
    """An active admin key in ``data_dir``'s key file, read-only (another process may own the
    store); a file that cannot be read counts as yes, so a refusal errs on the safe side."""
    import sqlite3

    path = data_dir / KEYS_FILE
    if not path.exists():
        return False
    try:
        rows = _read_only(path, "SELECT count(*) FROM keys WHERE role = 'admin' AND revoked_at IS NULL", 5)
    except sqlite3.Error:
        return True
    return bool(rows and rows[0][0])


def _read_only(path: Path, sql: str, timeout: float) -> list[Any]:
    """The rows of ``sql`` on a key file opened read-only (another process may own it)."""
    import sqlite3

    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=timeout)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()

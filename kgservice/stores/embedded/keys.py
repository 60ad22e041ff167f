"""API keys on the embedded backend: a small SQLite file in the data directory
(``keys.sqlite3``, mode 600), separate from the graph snapshot."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from kgservice.apikeys.model import ApiKey, Role
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
                             "revoked_at TEXT)")
            self._db.commit()

    def _insert(self, key_id: str, sha256: str, user: str, role: Role, created: str) -> None:
        with self._lock:
            self._db.execute("INSERT INTO keys (key_id, sha256, user, role, created) VALUES (?, ?, ?, ?, ?)",
                             (key_id, sha256, user, role.value, created))
            self._db.commit()

    def _get(self, key_id: str) -> tuple[ApiKey, str] | None:
        with self._lock:
            row = self._db.execute("SELECT key_id, user, role, created, last_used, revoked_at, sha256 FROM keys "
                                   "WHERE key_id = ?", (key_id,)).fetchone()
        if row is None:
            return None
        return ApiKey(key_id=row[0], user=row[1], role=Role(row[2]), created=row[3], last_used=row[4],
                      revoked_at=row[5]), row[6]

    def list(self) -> list[ApiKey]:
        with self._lock:
            rows = self._db.execute("SELECT key_id, user, role, created, last_used, revoked_at FROM keys "
                                    "ORDER BY user, created, key_id").fetchall()
        return [ApiKey(key_id=r[0], user=r[1], role=Role(r[2]), created=r[3], last_used=r[4], revoked_at=r[5])
                for r in rows]

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
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            row = db.execute("SELECT count(*) FROM keys WHERE role = 'admin' AND revoked_at IS NULL").fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return True
    return bool(row and row[0])

"""Web sign-ins on the embedded backend: a table in ``shared.sqlite3`` beside the graph
directory (what a row holds: :mod:`kgservice.stores.sessions`), so a restarted server keeps
its users signed in and a replacing restore does not sign them out."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from kgservice.stores import sqlite_file
from kgservice.errors import StoreWriteError
from kgservice.stores.sessions import SWEEP, SessionRow

_SCHEMA = ("CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, key_id TEXT NOT NULL, csrf TEXT NOT NULL, "
           "expires_ms INTEGER NOT NULL, flash_path TEXT, flash TEXT, flash_until_ms INTEGER)")


def _now_ms() -> int:
    return int(time.time() * 1000)


class SqliteSessionTable:
    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite_file.connect(self.path, timeout=30, check_same_thread=False)  # errors name the file
            db.execute(_SCHEMA)
            db.commit()
            self._db = db
        return self._db

    def _run(self, sql: str, params: tuple, fetch: bool = False) -> list[tuple]:
        with self._lock:
            try:
                db = self._conn()
                with db:
                    cur = db.execute(sql, params)
                    return cur.fetchall() if fetch else []
            except sqlite3.Error as exc:
                raise StoreWriteError(f"cannot use {self.path} ({type(exc).__name__}: {exc}); "
                                      "web sign-ins cannot be kept") from exc

    def create(self, row_id: str, key_id: str, csrf: str, ttl_ms: int) -> int:
        now = _now_ms()
        self._run("DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE expires_ms <= ? LIMIT ?)",
                  (now, SWEEP))
        self._run("INSERT INTO sessions (id, key_id, csrf, expires_ms) VALUES (?, ?, ?, ?)",
                  (row_id, key_id, csrf, now + int(ttl_ms)))
        return now + int(ttl_ms)

    def get(self, row_id: str) -> SessionRow | None:
        now = _now_ms()
        rows = self._run("SELECT id, key_id, csrf, expires_ms, CASE WHEN flash_until_ms > ? THEN flash_path END "
                         "FROM sessions WHERE id = ? AND expires_ms > ?", (now, row_id, now), fetch=True)
        if not rows:
            return None
        r = rows[0]
        return SessionRow(id=r[0], key_id=r[1], csrf=r[2], expires_ms=r[3], flash_path=r[4])

    def drop(self, row_id: str) -> None:
        self._run("DELETE FROM sessions WHERE id = ?", (row_id,))

    def set_flash(self, row_id: str, path: str, sealed: str, ttl_ms: int) -> None:
        self._run("UPDATE sessions SET flash_path = ?, flash = ?, flash_until_ms = ? WHERE id = ?",
                  (path, sealed, _now_ms() + int(ttl_ms), row_id))

    def take_flash(self, row_id: str, path: str) -> str | None:
        """Read and clear in one transaction, under the connection's lock."""
        with self._lock:
            try:
                db = self._conn()
                with db:
                    row = db.execute("SELECT flash FROM sessions WHERE id = ? AND flash_path = ? AND flash_until_ms > ?",
                                     (row_id, path, _now_ms())).fetchone()
                    if row is not None:
                        db.execute("UPDATE sessions SET flash = NULL, flash_path = NULL, flash_until_ms = NULL "
                                   "WHERE id = ?", (row_id,))
                    return None if row is None else row[0]
            except sqlite3.Error as exc:
                raise StoreWriteError(f"cannot use {self.path} ({type(exc).__name__}: {exc}); "
                                      "web sign-ins cannot be kept") from exc

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

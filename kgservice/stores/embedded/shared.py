"""Saved results, the graphify community map and entity-resolution decisions on the embedded
backend: a small SQLite file beside the graph directory (``shared.sqlite3`` in the data
directory), so a replacing restore, which builds a new graph directory and swaps it in, keeps
the team's saved results and the decisions (as a Neo4j wipe keeps their nodes)."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from kgservice.stores import sqlite_file
from kgservice.errors import StoreWriteError
from kgservice.stores.shared import CommunityMap, MergeDecision, SavedResult

SHARED_FILE = "shared.sqlite3"


class SqliteSharedState:
    """One connection per store object; every statement under one lock (SQLite connections
    are not shared across threads safely otherwise)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def _conn(self, write: bool) -> sqlite3.Connection | None:
        """The connection, opened on first use; None for a read of a file that does not exist
        yet (reads never create it, so a read-only data directory still answers)."""
        if self._db is None:
            if not write and not self.path.exists():
                return None
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite_file.connect(self.path, timeout=30, check_same_thread=False)  # errors name the file
            db.execute("CREATE TABLE IF NOT EXISTS saved_results (name TEXT PRIMARY KEY, date TEXT NOT NULL, "
                       "record TEXT NOT NULL)")
            db.execute("CREATE TABLE IF NOT EXISTS communities (id INTEGER PRIMARY KEY CHECK (id = 1), "
                       "graph TEXT NOT NULL, map TEXT NOT NULL)")
            db.execute("CREATE TABLE IF NOT EXISTS merge_decisions (a TEXT NOT NULL, b TEXT NOT NULL, "
                       "record TEXT NOT NULL, PRIMARY KEY (a, b))")
            db.commit()
            self._db = db
        return self._db

    def _write(self, sql: str, params: tuple) -> None:
        with self._lock:
            try:
                db = self._conn(write=True)
                assert db is not None
                with db:
                    db.execute(sql, params)
            except sqlite3.Error as exc:
                raise StoreWriteError(f"cannot write {self.path} ({type(exc).__name__}: {exc}); "
                                      "nothing was saved") from exc

    def save_result(self, record: SavedResult) -> None:
        self._write("INSERT INTO saved_results (name, date, record) VALUES (?, ?, ?)",
                    (record.name, record.date, record.model_dump_json()))

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of one query ([] while the file does not exist yet)."""
        with self._lock:
            db = self._conn(write=False)
            return [] if db is None else db.execute(sql, params).fetchall()

    def saved_results(self) -> list[SavedResult]:
        rows = self._read("SELECT record FROM saved_results ORDER BY date, name")
        return [SavedResult.model_validate_json(r[0]) for r in rows]

    def community_map(self) -> CommunityMap | None:
        rows = self._read("SELECT graph, map FROM communities WHERE id = 1")
        return CommunityMap(graph=rows[0][0], communities=json.loads(rows[0][1])) if rows else None

    def set_community_map(self, record: CommunityMap) -> None:
        self._write("INSERT OR REPLACE INTO communities (id, graph, map) VALUES (1, ?, ?)",
                    (record.graph, json.dumps(record.communities, separators=(",", ":"))))

    def merge_decision(self, a: str, b: str) -> MergeDecision | None:
        rows = self._read("SELECT record FROM merge_decisions WHERE a = ? AND b = ?", (a, b))
        return MergeDecision.model_validate_json(rows[0][0]) if rows else None

    def record_merge_decision(self, decision: MergeDecision) -> None:
        self._write("INSERT OR REPLACE INTO merge_decisions (a, b, record) VALUES (?, ?, ?)",
                    (decision.a, decision.b, decision.model_dump_json()))

    def merge_decisions(self) -> list[MergeDecision]:
        rows = self._read("SELECT record FROM merge_decisions ORDER BY a, b")
        return [MergeDecision.model_validate_json(r[0]) for r in rows]

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

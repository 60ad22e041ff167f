"""Entity-resolution decisions remembered: a pair of labels the model judged once (same
concept or not) is never asked again, in this ingest or any later one (a real run asked
"zip" / "gunzip" again when the document was re-ingested).

Kept in a small SQLite file in the data directory (``resolution.sqlite3``), apart from the
query caches: ``kg cache clear`` must not forget them. A pair is keyed by the new label's
form (:func:`kgservice.extraction.names.form_key`) and the existing node's id, both ways
round, so "Seattle" asked against "Seattle, Washington" is also known the other way.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from kgservice.extraction.names import form_key
from kgservice.ids import node_id

DECISIONS_FILE = "resolution.sqlite3"


class MergeDecisions:
    """``path`` None keeps them in memory (a knowledge base without a data directory, tests).

    >>> d = MergeDecisions(None)
    >>> d.get("Seattle", "Seattle, Washington") is None
    True
    >>> d.put("Seattle", "Seattle, Washington", True, "the city", "m")
    >>> d.get("seattle", "Seattle, Washington"), d.get("Seattle, Washington", "Seattle")
    (True, True)
    """

    def __init__(self, path: Path | str | None):
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    @classmethod
    def at(cls, data_dir: Path | str | None) -> "MergeDecisions":
        return cls(Path(data_dir) / DECISIONS_FILE if data_dir is not None else None)

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            if self.path is not None:
                from kgservice.stores import sqlite_file

                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite_file.connect(self.path, timeout=30, check_same_thread=False)
            else:
                db = sqlite3.connect(":memory:", check_same_thread=False)
            db.execute("CREATE TABLE IF NOT EXISTS decisions (a TEXT NOT NULL, b TEXT NOT NULL, same INTEGER NOT NULL, "
                       "reason TEXT, model TEXT, decided REAL NOT NULL, PRIMARY KEY (a, b))")
            db.commit()
            self._db = db
        return self._db

    @staticmethod
    def _pair(new: str, existing: str) -> tuple[str, str]:
        a, b = form_key(new), form_key(existing) or node_id(existing)
        return (a, b) if a <= b else (b, a)

    def get(self, new: str, existing: str) -> bool | None:
        with self._lock:
            row = self._conn().execute("SELECT same FROM decisions WHERE a = ? AND b = ?",
                                       self._pair(new, existing)).fetchone()
        return None if row is None else bool(row[0])

    def put(self, new: str, existing: str, same: bool, reason: str, model: str) -> None:
        with self._lock:
            db = self._conn()
            with db:
                db.execute("INSERT OR REPLACE INTO decisions (a, b, same, reason, model, decided) VALUES (?, ?, ?, ?, ?, ?)",
                           (*self._pair(new, existing), int(same), reason[:200], model, time.time()))

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

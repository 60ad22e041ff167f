"""The embedded store's change log file (``graph/changes.sqlite3``): a new one and one written
before unit ids were listed both read and take changes with their units."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kgservice.stores.changelog import CHANGES_FILE, SqliteChangeFeed, record_embedded_change


def _read(store_dir: Path) -> list[tuple[int, list[str], list[str] | None]]:
    feed = SqliteChangeFeed(store_dir)
    try:
        return [(c.seq, c.touched, c.units) for c in feed.since(0, feed.version())]
    finally:
        feed.close()


def test_a_new_log_records_touched_nodes_and_units(tmp_path: Path):
    assert record_embedded_change(tmp_path, ["b", "a"], units=["u2", "u1"]) == 1
    assert record_embedded_change(tmp_path, ["c"]) == 2
    assert _read(tmp_path) == [(1, ["a", "b"], ["u1", "u2"]), (2, ["c"], None)]


def test_a_log_from_before_units_were_listed_gets_the_column(tmp_path: Path):
    """Its rows read as "not listed" (None) and the next change lists its units."""
    db = sqlite3.connect(tmp_path / CHANGES_FILE)
    db.executescript("""
        CREATE TABLE changes (seq INTEGER PRIMARY KEY, touched TEXT NOT NULL, everything INTEGER NOT NULL,
                              by TEXT, at REAL NOT NULL);
        CREATE TABLE meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
        INSERT INTO changes VALUES (1, '["x"]', 0, NULL, 0.0);
        INSERT INTO meta VALUES ('version', 1);
    """)
    db.close()
    assert record_embedded_change(tmp_path, ["y"], units=["u9"]) == 2
    assert _read(tmp_path) == [(1, ["x"], None), (2, ["y"], ["u9"])]

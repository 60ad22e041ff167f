"""The service's own SQLite files beside an embedded store: checked, named when damaged, and
rebuilt by ``kg doctor --repair``.

Each holds state the knowledge does not depend on, so a damaged one can be set aside and
started anew without touching a unit; what is lost differs, and the messages say it:

* ``jobs.sqlite3`` - the ingest job queue: queued and finished jobs are forgotten (units an
  ingest already stored stay stored); clients resubmit what was still queued;
* ``keys.sqlite3`` - the API keys: every key stops working; create new ones with ``kg keys create``;
* ``shared.sqlite3`` - saved results and the graphify community map: saved results are lost
  (those already fed back by an export stay as units), community ids are computed again, web
  sign-ins end (the sessions table);
* ``graph/changes.sqlite3`` - the change log that keeps every server's caches coherent: the new
  log starts above any version a server saw, with an "everything" change, so every cache clears.

A damaged file is renamed ``<name>.damaged-<time>`` (kept for a person to look at), never deleted.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgservice.stores.sqlite_file import CONSEQUENCE  # what setting each file aside loses


@dataclass(frozen=True)
class DamagedFile:
    path: Path
    reason: str

    @property
    def consequence(self) -> str:
        return CONSEQUENCE.get(self.path.name, "it is started anew")

    def line(self) -> str:
        return f"{self.path} is damaged ({self.reason})"


def service_files(settings: Any) -> list[Path]:
    """The files this data directory's backend keeps in SQLite (Neo4j keeps jobs, keys and its
    change log in the database)."""
    from kgservice.stores.factory import capabilities

    files = capabilities(settings).files
    return files.service_files() if files is not None else []


def check_file(path: Path) -> str | None:
    """Why an existing SQLite file cannot be used, or None (also for a missing one: it is
    created on first use). ``quick_check`` reads every page, so a flipped byte anywhere shows."""
    if not path.exists() or path.stat().st_size == 0:
        return None
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error as exc:
        return f"{type(exc).__name__}: {exc}"
    try:
        rows = db.execute("PRAGMA quick_check").fetchall()
    except sqlite3.Error as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        db.close()
    bad = [r[0] for r in rows if r and r[0] != "ok"]
    return "; ".join(bad[:3]) if bad else None


def damaged_files(settings: Any) -> list[DamagedFile]:
    out = []
    for path in service_files(settings):
        why = check_file(path)
        if why is not None:
            out.append(DamagedFile(path, why))
    return out


def rebuild(found: DamagedFile) -> str:
    """Set the damaged file aside and start it anew; returns where the old one went."""
    from kgservice.stores.changelog import CHANGES_FILE, carry_version

    path = found.path
    aside = path.with_name(f"{path.name}.damaged-{int(time.time())}")
    path.replace(aside)
    for suffix in ("-wal", "-shm", "-journal"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.replace(aside.with_name(aside.name + suffix))
    if path.name == CHANGES_FILE:
        carry_version(aside.parent / "__none__", path.parent)  # the clock's seconds: above any count
    return str(aside)

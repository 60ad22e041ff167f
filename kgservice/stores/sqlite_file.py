"""The service's own SQLite files (job queue, API keys, change log, document ledger) open through
:func:`connect`, so a SQLite failure leaves as a :class:`~kgservice.errors.ServiceFileError` that
names the file and the fix, wherever in the code it happened: the CLI and the server print it as it
is, without looking up which file it might have been.

A damaged file (SQLite reports it is not a database, or malformed) gets ``kg doctor --repair``,
which sets it aside and starts a new one; what that loses differs per file (:data:`CONSEQUENCE`).
A full disk or a read-only directory gets what to free or fix. Knowledge never lives in these
files, so none of these failures touches a unit.

>>> import tempfile, pathlib
>>> bad = pathlib.Path(tempfile.mkdtemp()) / "jobs.sqlite3"
>>> _ = bad.write_bytes(b"not a database, not at all" * 10)
>>> try:
...     connect(bad).execute("SELECT 1 FROM sqlite_master").fetchall()
... except ServiceFileError as exc:
...     print(exc.damaged, "jobs.sqlite3 is damaged" in str(exc), "kg doctor --repair" in str(exc))
True True True
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path
from typing import Any

from kgservice.errors import ServiceFileError

CONSEQUENCE = {
    "jobs.sqlite3": "the job queue starts empty (units already stored stay; resubmit what was still queued)",
    "keys.sqlite3": "every API key stops working: create new ones with `kg keys create`",
    "shared.sqlite3": "saved results are lost (those an export fed back stay as units); community ids are computed "
                      "again; web sign-ins end",
    "changes.sqlite3": "a new change log starts above every version seen, and every server's caches clear",
    "documents.sqlite3": "the record of ingested documents starts empty (their units stay; an unchanged "
                         "document is extracted again on its next ingest)",
}


def is_damaged(exc: BaseException) -> bool:
    """SQLite's own verdict: "file is not a database" / "malformed" are DatabaseErrors that are not
    OperationalErrors (locks, a full disk, a read-only file are operational)."""
    return isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)


def failure(path: Path | str, exc: BaseException) -> ServiceFileError:
    """The :class:`ServiceFileError` for ``exc`` raised while using the file at ``path``."""
    path = Path(path)
    why = f"{type(exc).__name__}: {exc}"
    text = str(exc).lower()
    if is_damaged(exc):
        consequence = CONSEQUENCE.get(path.name, "it is started anew")
        return ServiceFileError(f"{path} is damaged ({why}); `kg doctor --repair` sets it aside and starts a new "
                                f"one ({consequence})", path=path, damaged=True)
    if "full" in text or "disk i/o" in text:
        full = "full" in text or _no_room(path)
        return ServiceFileError(f"{path} could not be written{': the disk is full' if full else ''} ({why}); free space "
                                "on the data directory's disk, then run the same command again (reads keep working)",
                                path=path, errno=errno.ENOSPC if full else errno.EIO)
    if "readonly" in text or "read-only" in text:
        return ServiceFileError(f"{path} could not be written ({why}); make the data directory writable "
                                "(reads keep working)", path=path)
    return ServiceFileError(f"{path} could not be used ({why})", path=path)


def _no_room(path: Path) -> bool:
    """Whether the file system holding ``path`` is (all but) full: SQLite reports a WAL index it
    could not grow as a "disk I/O error", which on such a disk is the full disk."""
    from kgservice.disk import free_bytes

    try:
        return free_bytes(path.parent) < (1 << 20)
    except OSError:
        return False


class _Cursor(sqlite3.Cursor):
    """A cursor whose failures name the file (reading a damaged page fails at fetch, not execute)."""

    def _named(self, op: Any, *args: Any) -> Any:
        try:
            return op(*args)
        except sqlite3.Error as exc:
            raise failure(self.connection.path, exc) from exc  # type: ignore[attr-defined]

    def execute(self, *args: Any) -> Any:  # type: ignore[override]
        return self._named(super().execute, *args)

    def executemany(self, *args: Any) -> Any:  # type: ignore[override]
        return self._named(super().executemany, *args)

    def executescript(self, *args: Any) -> Any:  # type: ignore[override]
        return self._named(super().executescript, *args)

    def fetchone(self) -> Any:
        return self._named(super().fetchone)

    def fetchmany(self, *args: Any) -> list[Any]:
        return self._named(super().fetchmany, *args)

    def fetchall(self) -> list[Any]:
        return self._named(super().fetchall)

    def __next__(self) -> Any:
        return self._named(super().__next__)


class _Connection(sqlite3.Connection):
    path: Path

    def cursor(self, factory: Any = _Cursor) -> Any:  # type: ignore[override]
        return super().cursor(factory)

    def execute(self, *args: Any) -> _Cursor:  # type: ignore[override]
        return self.cursor().execute(*args)

    def executemany(self, *args: Any) -> _Cursor:  # type: ignore[override]
        return self.cursor().executemany(*args)

    def executescript(self, *args: Any) -> _Cursor:  # type: ignore[override]
        return self.cursor().executescript(*args)

    def commit(self) -> None:
        try:
            super().commit()
        except sqlite3.Error as exc:
            raise failure(self.path, exc) from exc


def connect(path: Path | str, **kw: Any) -> sqlite3.Connection:
    """``sqlite3.connect`` for a service file: the connection and its cursors raise
    :class:`ServiceFileError` naming ``path`` instead of a bare ``sqlite3.Error``."""
    try:
        db = sqlite3.connect(str(path), factory=_Connection, **kw)
    except sqlite3.Error as exc:
        raise failure(path, exc) from exc
    db.path = Path(path)  # type: ignore[attr-defined]
    return db


__all__ = ["CONSEQUENCE", "ServiceFileError", "connect", "failure", "is_damaged"]

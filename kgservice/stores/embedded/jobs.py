"""The job queue of the embedded backend: one SQLite file in the data directory.

Every state change is one ``BEGIN IMMEDIATE`` transaction (SQLite's write lock is taken at
BEGIN, so a claim's read and its update cannot interleave with another claim's, in this or
any other process). Each thread gets its own connection, so concurrent claims really go
through SQLite's lock rather than a Python one.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kgservice.errors import ServiceFileError
from kgservice.jobs.model import Job, JobEvent
from kgservice.jobs.queue import LEASE_LOST, JobQueue, submitted_message
from kgservice.stores import sqlite_file

JOBS_FILE = "jobs.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY, idem TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, status TEXT NOT NULL, user TEXT NOT NULL,
  idempotency_key TEXT, payload TEXT NOT NULL, input_sha256 TEXT NOT NULL, created REAL NOT NULL,
  updated REAL NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER NOT NULL, owner TEXT,
  lease_until REAL, error TEXT, result TEXT, cancel_requested INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs(status, created);
CREATE TABLE IF NOT EXISTS events (
  job_id TEXT NOT NULL, seq INTEGER NOT NULL, at REAL NOT NULL, status TEXT NOT NULL, message TEXT NOT NULL,
  PRIMARY KEY (job_id, seq));
"""
_CLAIMABLE = ("(status = 'queued' OR (status = 'running' AND lease_until < :now AND attempts < max_attempts "
              "AND cancel_requested = 0))")


def _dt(t: float | None) -> datetime | None:
    return None if t is None else datetime.fromtimestamp(t, timezone.utc)


class SqliteJobQueue(JobQueue):
    backend = "embedded"

    def __init__(self, path: Path | str, **kw: Any):
        super().__init__(**kw)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        self._conn()  # creates the schema

    def _conn(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite_file.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA busy_timeout=60000")
            db.executescript(_SCHEMA)
            columns = {r[1] for r in db.execute("PRAGMA table_info(jobs)")}
            if "cancel_requested" not in columns:  # a queue file from before cancelling existed
                try:
                    db.execute("ALTER TABLE jobs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0")
                except ServiceFileError:  # another connection added it first
                    pass
            db.row_factory = sqlite3.Row
            self._local.db = db
            with self._all_lock:
                self._all.append(db)
        return db

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        db = self._conn()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    @staticmethod
    def _event(db: sqlite3.Connection, job_id: str, status: str, message: str, now: float) -> None:
        db.execute("INSERT INTO events(job_id, seq, at, status, message) VALUES (?, "
                   "(SELECT coalesce(max(seq), 0) + 1 FROM events WHERE job_id = ?), ?, ?, ?)",
                   (job_id, job_id, now, status, message))

    @staticmethod
    def _job(row: sqlite3.Row) -> Job:
        return Job(id=row["id"], kind=row["kind"], status=row["status"], user=row["user"],
                   created_at=_dt(row["created"]), updated_at=_dt(row["updated"]), attempts=row["attempts"],
                   error=row["error"], result=json.loads(row["result"]) if row["result"] else None,
                   max_attempts=row["max_attempts"], owner=row["owner"], lease_until=_dt(row["lease_until"]),
                   idempotency_key=row["idempotency_key"], input_sha256=row["input_sha256"],
                   cancel_requested=bool(row["cancel_requested"]), payload=json.loads(row["payload"]))

    # -- submitting and reading ------------------------------------------------------------
    def _submit(self, kind: str, payload: dict[str, Any], user: str, key: str | None,
                digest: str) -> tuple[Job, bool]:
        job_id = uuid.uuid4().hex
        idem = f"key\x1f{user}\x1f{key}" if key is not None else f"job\x1f{job_id}"
        now = time.time()
        with self._tx() as db:
            row = db.execute("SELECT * FROM jobs WHERE idem = ?", (idem,)).fetchone()
            if row is not None:
                return self._job(row), False
            db.execute("INSERT INTO jobs(id, idem, kind, status, user, idempotency_key, payload, input_sha256, "
                       "created, updated, max_attempts) VALUES (?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?)",
                       (job_id, idem, kind, user, key, json.dumps(payload, ensure_ascii=False), digest, now, now,
                        self.max_attempts))
            self._event(db, job_id, "queued", submitted_message(user), now)
            row = db.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return self._job(row), True

    def get(self, job_id: str) -> Job | None:
        row = self._conn().execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return None if row is None else self._job(row)

    def events(self, job_id: str, after: int = 0) -> list[JobEvent]:
        rows = self._conn().execute("SELECT seq, at, status, message FROM events WHERE job_id = ? AND seq > ? "
                                    "ORDER BY seq", (job_id, int(after))).fetchall()
        return [JobEvent(seq=r["seq"], job_id=job_id, at=_dt(r["at"]), status=r["status"], message=r["message"])
                for r in rows]

    def _list(self, user: str | None, status: str | None, limit: int) -> list[Job]:
        rows = self._conn().execute(
            "SELECT * FROM jobs WHERE (:user IS NULL OR user = :user) AND (:status IS NULL OR status = :status) "
            "ORDER BY created DESC, id LIMIT :limit", {"user": user, "status": status, "limit": int(limit)}).fetchall()
        return [self._job(r).model_copy(update={"payload": None}) for r in rows]

    def _cancel(self, job_id: str, by: str) -> tuple[str, Job]:
        now = time.time()
        with self._tx() as db:
            row = db.execute("SELECT status, lease_until FROM jobs WHERE id = ?", (job_id,)).fetchone()
            if row is None:
                raise KeyError(job_id)
            if row["status"] == "queued" or (row["status"] == "running" and (row["lease_until"] or 0) < now):
                outcome, msg = "cancelled", f"cancelled by {by}"
                db.execute("UPDATE jobs SET status = 'cancelled', cancel_requested = 1, updated = ? WHERE id = ?",
                           (now, job_id))
                self._event(db, job_id, "cancelled", msg, now)
            elif row["status"] == "running":
                outcome = "requested"
                db.execute("UPDATE jobs SET cancel_requested = 1, updated = ? WHERE id = ?", (now, job_id))
                self._event(db, job_id, "running", f"cancel requested by {by}; the worker stops at its next check "
                                                   "unless the ingest is already being stored", now)
            else:
                outcome = "final"
            job = db.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return outcome, self._job(job)

    def _prune(self, age_s: float) -> int:
        cutoff = time.time() - age_s
        with self._tx() as db:
            gone = "SELECT id FROM jobs WHERE status IN ('done', 'failed', 'cancelled') AND updated < ?"
            db.execute(f"DELETE FROM events WHERE job_id IN ({gone})", (cutoff,))
            return db.execute(f"DELETE FROM jobs WHERE id IN ({gone})", (cutoff,)).rowcount

    # -- the worker side --------------------------------------------------------------------
    def _reap(self) -> int:
        now = time.time()
        with self._tx() as db:
            stopped = db.execute("SELECT id FROM jobs WHERE status = 'running' AND lease_until < ? "
                                 "AND cancel_requested = 1", (now,)).fetchall()
            for r in stopped:  # its worker died after a cancel was requested: cancelled, not run again
                db.execute("UPDATE jobs SET status = 'cancelled', updated = ? WHERE id = ?", (now, r["id"]))
                self._event(db, r["id"], "cancelled", "cancelled (the worker stopped holding it)", now)
            rows = db.execute("SELECT id, attempts FROM jobs WHERE status = 'running' AND lease_until < ? "
                              "AND attempts >= max_attempts", (now,)).fetchall()
            for r in rows:
                msg = LEASE_LOST.format(n=r["attempts"])
                db.execute("UPDATE jobs SET status = 'failed', error = ?, updated = ? WHERE id = ?", (msg, now, r["id"]))
                self._event(db, r["id"], "failed", msg, now)
        return len(rows)

    def _claim(self, worker_id: str, lease_s: float) -> Job | None:
        now = time.time()
        with self._tx() as db:
            row = db.execute(f"SELECT id, status, owner FROM jobs WHERE {_CLAIMABLE} ORDER BY created, id LIMIT 1",
                             {"now": now}).fetchone()
            if row is None:
                return None
            again = row["status"] == "running"
            db.execute("UPDATE jobs SET status = 'running', owner = ?, lease_until = ?, attempts = attempts + 1, "
                       "updated = ? WHERE id = ?", (worker_id, now + lease_s, now, row["id"]))
            self._event(db, row["id"], "running",
                        f"claimed by {worker_id}" + (f" (lease of {row['owner']} expired)" if again else ""), now)
            job = db.execute("SELECT * FROM jobs WHERE id = ?", (row["id"],)).fetchone()
        return self._job(job)

    def heartbeat(self, job_id: str, worker_id: str, lease_s: float) -> bool:
        now = time.time()
        with self._tx() as db:
            cur = db.execute("UPDATE jobs SET lease_until = ? WHERE id = ? AND status = 'running' AND owner = ?",
                             (now + float(lease_s), job_id, worker_id))
        return cur.rowcount == 1

    def progress(self, job_id: str, worker_id: str, message: str) -> bool:
        now = time.time()
        with self._tx() as db:
            ok = db.execute("SELECT 1 FROM jobs WHERE id = ? AND status = 'running' AND owner = ?",
                            (job_id, worker_id)).fetchone() is not None
            if ok:
                self._event(db, job_id, "running", message, now)
        return ok

    def _finish(self, job_id: str, worker_id: str, status: str, *, result: dict[str, Any] | None,
                error: str | None, message: str | None = None) -> bool:
        now = time.time()
        with self._tx() as db:
            cur = db.execute("UPDATE jobs SET status = ?, result = ?, error = ?, updated = ? "
                             "WHERE id = ? AND status = 'running' AND owner = ?",
                             (status, json.dumps(result, ensure_ascii=False) if result is not None else None, error,
                              now, job_id, worker_id))
            if cur.rowcount == 1:
                self._event(db, job_id, status, message or error or status, now)
        return cur.rowcount == 1

    def close(self) -> None:
        with self._all_lock:
            for db in self._all:
                db.close()
            self._all.clear()
        self._local = threading.local()

"""Vectors owed: the durable note a writer keeps while the graph may hold nodes whose vectors it
has not written yet.

Ingest writes the graph first and the vectors after it (``kg ingest`` and ``kg sync``: after
every document's graph write), so a writer killed in between leaves whole documents whose new
nodes have no vector. The graph cannot tell that apart from a healthy store without comparing
every node with the vector store, which is too slow for every write; the note tells the next
writer when to do it. Before its first graph write a writer creates
``<data_dir>/vectors-owed/<pid>-<token>``; once its vectors are durable it deletes the note. A
note whose process is gone, or that its writer marked failed (an error after a graph write), is
*stale*: the next write, on its way out, embeds every node the vector store lacks
(``KnowledgeBase.settle_owed_vectors``) and deletes the stale notes; so does
``kg doctor --repair``. The notes of running processes are theirs (they may still be writing).

A note is a few bytes written with fsync; a directory that cannot be written (a Neo4j deployment
on a read-only local disk) only costs the note, never the write it would have covered.
"""

from __future__ import annotations

import logging
import os
import secrets
from pathlib import Path

from kgservice.processes import alive, started

log = logging.getLogger(__name__)

OWED_DIR = "vectors-owed"
FAILED = "failed"


class OwedVectors:
    """The notes in one data directory."""

    def __init__(self, data_dir: Path) -> None:
        self.dir = Path(data_dir) / OWED_DIR

    def begin(self) -> Path | None:
        """Leave a note (durably) before a write whose vectors come after its graph write."""
        pid = os.getpid()
        note = self.dir / f"{pid}-{secrets.token_hex(4)}"
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(note, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                os.write(fd, f"{pid} {started(pid)}".encode())
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            log.debug("no vectors-owed note in %s (%s): a crash before the vectors are written is "
                      "then found by `kg doctor`", self.dir, exc)
            return None
        return note

    def end(self, note: Path | None, *, failed: bool = False) -> None:
        """The write is over: its vectors are durable (the note goes), or it ``failed`` after
        maybe writing the graph (the note stays, marked stale for the next writer)."""
        if note is None:
            return
        try:
            if failed:
                note.write_text(FAILED)
            else:
                note.unlink(missing_ok=True)
        except OSError:
            pass

    def stale(self) -> list[Path]:
        """Notes of writers that stopped or failed: their nodes may lack vectors."""
        try:
            notes = list(self.dir.iterdir())
        except OSError:
            return []
        out = []
        for note in notes:
            try:
                body = note.read_text().split()
            except OSError:
                continue
            if not body or body[0] == FAILED:
                out.append(note)
                continue
            try:
                pid = int(body[0])
            except ValueError:
                out.append(note)
                continue
            if not alive(pid, body[1] if len(body) > 1 else ""):
                out.append(note)
        return sorted(out)

    def clear(self, notes: list[Path]) -> None:
        for note in notes:
            try:
                note.unlink(missing_ok=True)
            except OSError:
                pass

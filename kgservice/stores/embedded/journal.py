"""Persistence of the embedded store: snapshot, framed journal, the writer lock, compaction.

On disk, under the data directory:

* ``graph.pkl`` — the snapshot: ``(FORMAT_VERSION, state)`` pickled, ``state`` being plain
  dicts, lists, tuples and strings (no classes), including the *epoch* of the journal
  that continues it.
* ``graph.journal`` — a header naming its epoch, then one framed record (length, CRC32,
  pickled compact units + their facts) per ingested batch, fsynced before the batch
  counts as stored. A record that did not reach the disk whole (crash mid-append) is
  ignored on load and cut off by the next writer; a bad record followed by good ones is
  corruption and is reported, never silently dropped.
* When the journal grows past half the snapshot's size (and a 16 MB floor), the writer compacts:
  a new snapshot with a fresh epoch (temp file, fsync, rename), then an empty journal
  for that epoch. A journal whose epoch does not match the snapshot is stale (its
  batches are already in the snapshot) and is ignored.

Writes are serialised across processes by an exclusive lock on the data directory; a
writer first catches up on what other processes appended (replaying only the new journal
records, or reloading if the snapshot was replaced), so two CLI runs never overwrite each
other's units. Format 1 snapshots (a pickled networkx state) are read and migrated on
the next write.
"""

from __future__ import annotations

import fcntl
import io
import os
import pickle
import struct
import sys
import uuid
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kgservice.stores.base import StoreError
from kgservice.stores.embedded.graph import _Graph
from kgservice.stores.embedded.records import _compact, _Interner
from kgservice.stores.facts import unit_facts
from kgservice.stores.validate import paused_gc

SNAPSHOT = "graph.pkl"
JOURNAL = "graph.journal"
FORMAT_VERSION = 2

_JOURNAL_MAGIC = b"KGJOURNAL2\n"
_HEADER = len(_JOURNAL_MAGIC) + 33  # magic + 32 hex chars + "\n"
_FRAME = struct.Struct(">4sII")  # b"KGJR", payload length, crc32(payload)
_FRAME_TAG = b"KGJR"
COMPACT_MIN_BYTES = 16 << 20  # never compact a journal smaller than this


# -- journal framing --------------------------------------------------------------------

def _read_journal(path: Path, start: int | None = None) -> tuple[str | None, list[bytes], int, int]:
    """(epoch, payloads from ``start``, end of the last whole record, file size).
    epoch None = no journal. A torn last record is left out; damage before good records raises."""
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return None, [], 0, 0
    with fh:
        data = fh.read()
    if len(data) < _HEADER or not data.startswith(_JOURNAL_MAGIC):
        if len(data) < _HEADER and _JOURNAL_MAGIC.startswith(data[: len(_JOURNAL_MAGIC)]):
            return None, [], 0, len(data)  # header itself torn: a journal that never held a batch
        raise StoreError(f"{path} is not a kgservice journal")
    epoch = data[len(_JOURNAL_MAGIC):_HEADER - 1].decode("ascii", "replace")
    pos = _HEADER if start is None or start < _HEADER else start
    payloads: list[bytes] = []
    while pos < len(data):
        if pos + _FRAME.size > len(data):
            break  # torn frame header at the tail
        tag, length, crc = _FRAME.unpack_from(data, pos)
        end = pos + _FRAME.size + length
        if tag != _FRAME_TAG or end > len(data) or zlib.crc32(data[pos + _FRAME.size:end]) != crc:
            if (tag == _FRAME_TAG and end >= len(data)) or not data[pos:].strip(b"\0"):
                break  # the last append did not complete: that batch was never acknowledged
            raise StoreError(f"{path} is damaged at byte {pos} (a record that is not the last one fails its "
                             "checksum); restore the data directory from a backup")
        payloads.append(data[pos + _FRAME.size:end])
        pos = end
    return epoch, payloads, pos, len(data)

class JournaledStore:
    """The persistence half of :class:`EmbeddedStore`: ``self.s`` (a ``_Graph``) kept in step with
    ``self.path`` (snapshot) and ``self.journal`` under ``self.dir``."""

    s: _Graph
    dir: Path
    path: Path
    journal: Path
    _snap_sig: tuple | None
    _journal_end: int
    _journal_size: int
    _snap_bytes: int

    # -- persistence ----------------------------------------------------------
    def _sig(self) -> tuple | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _load(self) -> _Graph:
        with paused_gc():
            sig = self._sig()
            if sig is None:
                g = _Graph()
            else:
                try:
                    with self.path.open("rb") as fh:
                        version, state = pickle.load(fh)
                except Exception as exc:  # a torn or foreign file must not be silently replaced
                    raise StoreError(f"cannot read embedded store snapshot {self.path}: {exc}") from exc
                if version == 1:
                    g = self._migrate_v1(state)
                elif version != FORMAT_VERSION:
                    raise StoreError(f"{self.path} has store format {version}, this kgservice reads {FORMAT_VERSION}")
                else:
                    g = _Graph.restore(state)
            self._snap_sig = sig
            self._snap_bytes = sig[2] if sig else 0
            self._journal_end = 0
            self._journal_size = 0
            self._replay(g)
            return g

    @staticmethod
    def _migrate_v1(state: Any) -> _Graph:
        g = _Graph()
        strs = _Interner(g.labels)
        g.apply([_compact(u, unit_facts(u), strs) for u in getattr(state, "units", {}).values()])
        g.epoch = uuid.uuid4().hex  # a v1 directory has no journal that could continue it
        return g

    def _replay(self, g: _Graph) -> None:
        """Apply journal records beyond what ``g`` holds (all of them after a snapshot load)."""
        epoch, payloads, end, size = _read_journal(self.journal, self._journal_end or None)
        if epoch is None or epoch != g.epoch:
            self._journal_end, self._journal_size = 0, size
            return
        for p in payloads:
            try:
                batch = pickle.loads(p)
            except Exception as exc:
                raise StoreError(f"cannot read a batch in {self.journal}: {exc}") from exc
            g.apply(batch)
        self._journal_end, self._journal_size = end, size

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        with (self.dir / ".lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if self._sig() != self._snap_sig:
                    self.s = self._load()  # compacted (or replaced) by another process
                else:
                    with paused_gc():
                        self._replay(self.s)  # batches other processes appended since
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _new_journal(self, epoch: str) -> None:
        tmp = self.journal.with_suffix(".jtmp")
        try:
            with tmp.open("wb") as fh:
                fh.write(_JOURNAL_MAGIC + epoch.encode("ascii") + b"\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.journal)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self._journal_end = self._journal_size = _HEADER

    def _append(self, records: list[tuple[tuple, tuple]]) -> None:
        """Make a batch durable: one framed record, fsynced. On failure the journal is as before."""
        buf = io.BytesIO()
        pickle.dump(records, buf, protocol=pickle.HIGHEST_PROTOCOL)
        payload = buf.getbuffer()
        if self._journal_end < _HEADER:  # no journal for this epoch yet (or a stale one)
            self._new_journal(self.s.epoch)
        with self.journal.open("r+b") as fh:
            fh.truncate(self._journal_end)  # cut a torn tail left by a crashed writer
            fh.seek(self._journal_end)
            try:
                fh.write(_FRAME.pack(_FRAME_TAG, len(payload), zlib.crc32(payload)))
                fh.write(payload)
                fh.flush()
                os.fsync(fh.fileno())
            except BaseException:
                fh.truncate(self._journal_end)
                raise
            self._journal_end = self._journal_size = fh.tell()

    def _compact_if_due(self) -> None:
        if self._journal_end - _HEADER < max(COMPACT_MIN_BYTES, self._snap_bytes // 2):
            return
        try:
            self._write_snapshot()
        except OSError as exc:  # the batch is already durable in the journal; compaction can wait
            print(f"kgservice: embedded store compaction postponed: {exc}", file=sys.stderr)

    def _write_snapshot(self) -> None:
        epoch = uuid.uuid4().hex
        old_epoch = self.s.epoch
        tmp = self.path.with_suffix(".tmp")
        self.s.epoch = epoch
        try:
            with paused_gc(), tmp.open("wb") as fh:
                pickle.dump((FORMAT_VERSION, self.s.dump()), fh, protocol=pickle.HIGHEST_PROTOCOL)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            self.s.epoch = old_epoch
            tmp.unlink(missing_ok=True)
            raise
        self._snap_sig = self._sig()
        self._snap_bytes = self._snap_sig[2] if self._snap_sig else 0
        # the old journal is now stale (epoch mismatch); replace it with an empty one
        self._journal_end = 0
        try:
            self._new_journal(epoch)
        except OSError:
            self._journal_end = 0  # the next write creates it

    def compact(self) -> None:
        """Fold the journal into a fresh snapshot now (normally done automatically)."""
        with self._write_lock():
            self._write_snapshot()

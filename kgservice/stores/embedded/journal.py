"""Persistence of the embedded store: snapshot, framed journal, the writer lock, compaction.

On disk, under the data directory:

* ``graph.pkl`` — the snapshot: a magic line, then ``(FORMAT_VERSION, state, meta)`` pickled
  as one stream cut into frames of 4 MB (tag, length, CRC32 each) and closed by an end frame
  (frame count, byte count), so a flipped byte or a truncated file is detected before anything
  is used. ``state`` is plain dicts, lists, tuples and strings (no classes), including the
  *epoch* of the journal that continues it; ``meta`` holds the previous epoch (the one a
  journal left stale by a compaction carries). Format 2 snapshots (a bare pickle, no
  checksum) are still read, and rewritten as format 3 by the next compaction.
* ``graph.journal`` — a header naming its epoch, then one framed record (length, CRC32,
  pickled compact units + their facts, and the duplicate aliases the batch made, if any:
  ``graph.journal_batch``) per ingested batch, fsynced before the batch counts as stored. A record that did not reach the disk whole (crash mid-append) is
  ignored on load and cut off by the next writer; a bad record followed by good ones is
  corruption and is reported, never silently dropped.
* When the journal grows past half the snapshot's size (and a 16 MB floor), the writer compacts:
  a new snapshot with a fresh epoch (temp file, fsync, rename), then an empty journal
  for that epoch. A journal whose epoch does not match the snapshot is stale (its
  batches are already in the snapshot) and is ignored - if its epoch is the previous one;
  any other epoch means the journal belongs to another snapshot, and is reported as damage.

Damage is never repaired silently and never read past: the store refuses to open with a
:class:`~kgservice.stores.base.StoreDamaged` that names the fix. A missing snapshot next to a
journal that continues one is reported the same way (kind ``missing``), so no write can
overwrite the orphaned journal. The way back (reading every record whose checksum holds, and
swapping in a store built beside this one) is in ``recovery``.

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

from kgservice.disk import replaced
from kgservice.errors import ServiceFileError, StoreDamaged, StoreError, StoreWriteError
from kgservice.stores.embedded.graph import _NO_EPOCH, _Graph
from kgservice.stores.embedded.records import _compact, _Interner
from kgservice.stores.facts import unit_facts
from kgservice.stores.validate import paused_gc

SNAPSHOT = "graph.pkl"
JOURNAL = "graph.journal"
FORMAT_VERSION = 3
_SNAP_MAGIC = b"KGSNAP3\n"
_SNAP_DATA = b"KGSD"  # a frame of the pickle stream
_SNAP_END = b"KGSE"  # the end frame: (frames, bytes) of the stream, big-endian
_SNAP_END_BODY = struct.Struct(">QQ")
SNAP_FRAME_BYTES = 4 << 20

_JOURNAL_MAGIC = b"KGJOURNAL2\n"
_HEADER = len(_JOURNAL_MAGIC) + 33  # magic + 32 hex chars + "\n"
_FRAME = struct.Struct(">4sII")  # b"KGJR", payload length, crc32(payload)
_FRAME_TAG = b"KGJR"
COMPACT_MIN_BYTES = 16 << 20  # never compact a journal smaller than this

SALVAGE = "`kg doctor --salvage` keeps every intact record"
RESTORE = "`kg restore DUMP --replace --yes` rebuilds the store from a dump (`kg dump`) beside this one"


class _Bad(Exception):
    """A snapshot frame failed its check (turned into StoreDamaged by the caller)."""


def unwritable(path: Path, exc: OSError, outcome: str) -> StoreWriteError:
    """The error for a store file that could not be written (a full disk, a read-only or foreign
    directory): names the file, says what ``outcome`` it had for the store, and what to do."""
    err = StoreWriteError(f"cannot write {path}: {exc.strerror or exc}; {outcome}. Free space or make "
                          f"{path.parent} writable, then run the same command again")
    err.errno = exc.errno  # a full disk (ENOSPC) is told apart from a read-only one: HTTP 507 / 403-ish hints
    return err


def unreadable(path: Path, exc: OSError) -> ServiceFileError:
    """The error for a store file that exists but cannot be read (no permission, an I/O error):
    nothing is read or written until it can be."""
    where = Path(exc.filename) if exc.filename else path
    return ServiceFileError(f"cannot read the embedded store's {where}: {exc.strerror or exc}; nothing was changed. "
                            f"Make it readable (and {where.parent} writable) for this user, then run the same "
                            "command again", path=where, errno=exc.errno)


# -- snapshot framing ---------------------------------------------------------------------

class _FramedWriter:
    """File-like sink for ``pickle.dump``: cuts the stream into checksummed frames."""

    def __init__(self, fh: Any) -> None:
        self.fh = fh
        self.buf = bytearray()
        self.frames = 0
        self.bytes = 0

    def write(self, b: Any) -> int:
        self.buf += b
        while len(self.buf) >= SNAP_FRAME_BYTES:
            self._emit(bytes(self.buf[:SNAP_FRAME_BYTES]))
            del self.buf[:SNAP_FRAME_BYTES]
        return len(b)

    def _emit(self, payload: bytes, tag: bytes = _SNAP_DATA) -> None:
        self.fh.write(_FRAME.pack(tag, len(payload), zlib.crc32(payload)))
        self.fh.write(payload)
        if tag == _SNAP_DATA:
            self.frames += 1
            self.bytes += len(payload)

    def finish(self) -> None:
        if self.buf:
            self._emit(bytes(self.buf))
            self.buf.clear()
        self._emit(_SNAP_END_BODY.pack(self.frames, self.bytes), _SNAP_END)


class _FramedReader(io.RawIOBase):
    """The pickle stream of a format 3 snapshot, each frame checked before any byte is served."""

    def __init__(self, fh: Any) -> None:
        self.fh = fh
        self.cur = b""
        self.pos = 0
        self.frames = 0
        self.bytes = 0
        self.ended = False

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while self.pos >= len(self.cur):
            if not self._next():
                return 0
        n = min(len(b), len(self.cur) - self.pos)
        b[:n] = self.cur[self.pos:self.pos + n]
        self.pos += n
        return n

    def _next(self) -> bool:
        if self.ended:
            return False
        at = self.fh.tell()
        head = self.fh.read(_FRAME.size)
        if len(head) < _FRAME.size:
            raise _Bad(f"truncated at byte {at} (no end record)")
        tag, length, crc = _FRAME.unpack(head)
        if tag not in (_SNAP_DATA, _SNAP_END):
            raise _Bad(f"not a frame at byte {at}")
        payload = self.fh.read(length)
        if len(payload) < length:
            raise _Bad(f"truncated at byte {at} (no end record)")
        if zlib.crc32(payload) != crc:
            raise _Bad(f"the frame at byte {at} fails its checksum")
        if tag == _SNAP_END:
            if length != _SNAP_END_BODY.size or _SNAP_END_BODY.unpack(payload) != (self.frames, self.bytes):
                raise _Bad(f"the end record at byte {at} does not match the frames before it")
            if self.fh.read(1):
                raise _Bad(f"data after the end record at byte {at}")
            self.ended = True
            return False
        self.cur, self.pos = payload, 0
        self.frames += 1
        self.bytes += length
        return True

    def finish(self) -> None:
        """Check every remaining frame up to the end record (the pickle may stop before it)."""
        if (self.pos < len(self.cur) and self.cur[self.pos:].strip(b"\0")) or self._next():
            raise _Bad("data after the pickled state")


def read_snapshot(path: Path) -> tuple[_Graph, str | None]:
    """(graph, previous epoch or None) from a snapshot file; :class:`StoreDamaged` if it cannot be trusted."""
    def damaged(detail: str) -> StoreDamaged:
        return StoreDamaged(f"cannot read embedded store snapshot {path}: {detail}", kind="damaged",
                            fix=f"{RESTORE}; or {SALVAGE} (the journal's batches since the last snapshot; "
                                "the snapshot's own units are lost)")

    try:
        fh = path.open("rb")
    except OSError as exc:
        raise unreadable(path, exc) from None
    with fh:
        head = fh.read(len(_SNAP_MAGIC))
        if head == _SNAP_MAGIC:
            reader = _FramedReader(fh)
            try:
                version, state, meta = pickle.load(io.BufferedReader(reader, 1 << 20))
                reader.finish()
            except _Bad as exc:
                raise damaged(str(exc)) from None
            except Exception as exc:  # frames intact but not our pickle: another program wrote it
                raise damaged(f"{type(exc).__name__}: {exc}") from None
            if version != FORMAT_VERSION:
                raise StoreError(f"{path} has store format {version}, this kgservice reads {FORMAT_VERSION}")
            return _Graph.restore(state), meta.get("prev_epoch")
        fh.seek(0)
        try:
            version, state = pickle.load(fh)  # format 1 / 2: a bare pickle, no checksum
        except Exception as exc:  # a torn or foreign file must not be silently replaced
            raise damaged(f"{type(exc).__name__}: {exc}") from None
    if version == 1:
        return JournaledStore._migrate_v1(state), None
    if version != 2:
        raise StoreError(f"{path} has store format {version}, this kgservice reads {FORMAT_VERSION}")
    return _Graph.restore(state), None


def _journal_damaged(path: Path, detail: str) -> StoreDamaged:
    return StoreDamaged(f"{path} is damaged: {detail}", kind="damaged",
                        fix=f"{SALVAGE} (the damaged batch is lost: re-ingest its files afterwards); or {RESTORE}")


# -- journal framing --------------------------------------------------------------------

def _read_journal(path: Path, start: int | None = None) -> tuple[str | None, list[bytes], int, int]:
    """(epoch, payloads from ``start``, end of the last whole record, file size).
    epoch None = no journal. A torn last record is left out; damage before good records raises."""
    try:
        with path.open("rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return None, [], 0, 0
    except OSError as exc:
        raise unreadable(path, exc) from None
    if len(data) < _HEADER or not data.startswith(_JOURNAL_MAGIC):
        if len(data) < _HEADER and _JOURNAL_MAGIC.startswith(data[: len(_JOURNAL_MAGIC)]):
            return None, [], 0, len(data)  # header itself torn: a journal that never held a batch
        raise _journal_damaged(path, "its header is not a kgservice journal header")
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
            raise _journal_damaged(path, f"the record at byte {pos} is not the last one and fails its checksum")
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
    _prev_epoch: str | None = None

    # -- persistence ----------------------------------------------------------
    def _sig(self) -> tuple | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise unreadable(self.path, exc) from None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _load(self) -> _Graph:
        self._loads = getattr(self, "_loads", 0) + 1  # a reload replaces the whole graph (local_generation)
        with paused_gc():
            sig = self._sig()
            if sig is None:
                g, self._prev_epoch = _Graph(), None
                self._check_not_orphaned()
            else:
                g, self._prev_epoch = read_snapshot(self.path)
            self._snap_sig = sig
            self._snap_bytes = sig[2] if sig else 0
            self._journal_end = 0
            self._journal_size = 0
            self._replay(g)
            return g

    def _check_not_orphaned(self) -> None:
        """No snapshot: fine for a store that never compacted (journal epoch zero), but a journal
        that continues a snapshot means the snapshot is missing - its units must not vanish."""
        try:
            with self.journal.open("rb") as fh:
                head = fh.read(_HEADER)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise unreadable(self.journal, exc) from None
        if len(head) < _HEADER or not head.startswith(_JOURNAL_MAGIC):
            return  # torn or foreign: _replay reports it
        epoch = head[len(_JOURNAL_MAGIC):_HEADER - 1].decode("ascii", "replace")
        if epoch != _NO_EPOCH:
            raise StoreDamaged(
                f"embedded store snapshot {self.path} is missing, but {self.journal} continues a snapshot "
                f"(epoch {epoch[:12]}); writes are refused so that journal is not overwritten", kind="missing",
                fix=f"Put {SNAPSHOT} back from a backup; or {RESTORE}; or {SALVAGE} (the journal's units; the "
                    "missing snapshot's are lost)")

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
            if payloads and epoch is not None and self._prev_epoch is not None and epoch != self._prev_epoch:
                raise _journal_damaged(self.journal, f"it continues epoch {epoch[:12]}, but the snapshot is epoch "
                                                     f"{g.epoch[:12]} (and its previous one {self._prev_epoch[:12]})")
            self._journal_end, self._journal_size = 0, size  # stale: its batches are in the snapshot
            return
        for p in payloads:
            try:
                batch = pickle.loads(p)
            except Exception as exc:  # the checksum held, so another program wrote it
                raise _journal_damaged(self.journal, f"a batch cannot be read ({type(exc).__name__}: {exc})") from None
            g.apply_batch(batch)
        self._journal_end, self._journal_size = end, size

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        try:
            lock = (self.dir / ".lock").open("a")
        except OSError as exc:
            raise unwritable(self.dir / ".lock", exc, "nothing was changed") from None
        with lock:
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
        with replaced(self.journal, tmp=self.journal.with_suffix(".jtmp")) as fh:
            fh.write(_JOURNAL_MAGIC + epoch.encode("ascii") + b"\n")
        self._journal_end = self._journal_size = _HEADER

    def _append(self, records: Any) -> None:
        """Make a batch durable: one framed record, fsynced. On failure the journal is as before."""
        try:
            self._append_frame(records)
        except OSError as exc:
            raise unwritable(self.journal, exc, "this batch was not stored (the store is as before)") from None

    def _append_frame(self, records: Any) -> None:
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
        try:
            self._write_snapshot_file()
        except StoreWriteError:
            raise
        except OSError as exc:
            raise unwritable(self.path, exc, "the store is as before") from None

    def _write_snapshot_file(self) -> None:
        epoch = uuid.uuid4().hex
        old_epoch = self.s.epoch
        self.s.epoch = epoch
        try:
            with paused_gc(), replaced(self.path, tmp=self.path.with_suffix(".tmp"), sync_dir=True) as fh:
                fh.write(_SNAP_MAGIC)
                w = _FramedWriter(fh)
                pickle.dump((FORMAT_VERSION, self.s.dump(), {"prev_epoch": old_epoch}), w,
                            protocol=pickle.HIGHEST_PROTOCOL)
                w.finish()
        except BaseException:
            self.s.epoch = old_epoch
            raise
        self._prev_epoch = old_epoch
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

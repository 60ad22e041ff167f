"""Getting an embedded store back: swapping in a store directory built beside the current one
(``kg restore --replace``, ``kg doctor --salvage``; kgservice.admin.recover drives them), and
reading every record of a damaged directory that still checks out."""

from __future__ import annotations

import fcntl
import os
import pickle
import shutil
import time
import zlib
from pathlib import Path
from typing import Any

from kgservice.disk import fsync_dir
from kgservice.errors import StoreDamaged, StoreError
from kgservice.stores.embedded.journal import (_FRAME, _FRAME_TAG, _HEADER, _JOURNAL_MAGIC, JOURNAL, SNAPSHOT,
                                               read_snapshot, unreadable, unwritable)
from kgservice.stores.embedded.graph import split_batch
from kgservice.stores.validate import paused_gc


# -- swapping a store directory built beside this one (kgservice.admin.recover) -----------------
COMPLETE = "COMPLETE"


def write_complete_marker(d: Path) -> None:
    try:
        with (d / COMPLETE).open("wb") as fh:
            fh.write(b"complete\n")
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        raise unwritable(d / COMPLETE, exc, "the store is as before") from None
    fsync_dir(d)


def swap_in(target: Path, new: Path, keep_old: Path | None = None) -> None:
    """Replace ``target`` by the complete directory ``new``; the old one goes to ``keep_old``
    (kept) or is deleted. Writers are held off by the old store's lock while the names change."""
    if not (new / COMPLETE).exists():
        raise StoreError(f"{new} is not a complete store; not swapped in")
    old = keep_old or target.with_name(f"{target.name}.replaced-{os.getpid()}-{int(time.time())}")
    lock = None
    if target.exists():
        try:
            lock = (target / ".lock").open("a")
        except OSError as exc:
            raise unwritable(target / ".lock", exc, "the store is as before") from None
        fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        from kgservice.stores.changelog import carry_version

        carry_version(target, new)  # the version grows on across the swap: every reader sees a newer one and clears
        try:
            if target.exists():
                os.rename(target, old)
        except OSError as exc:
            raise unwritable(target, exc, "the store is as before") from None
        try:
            os.rename(new, target)
        except OSError as exc:  # the old store is aside: the next open moves the complete new one in
            raise unwritable(target, exc, f"the complete new store is in {new} (the next command that opens the "
                                          f"store moves it into place), the old one in {old}") from None
        fsync_dir(target.parent)
    finally:
        if lock is not None:
            fcntl.flock(lock, fcntl.LOCK_UN)
            lock.close()
    (target / COMPLETE).unlink(missing_ok=True)
    if keep_old is None:
        shutil.rmtree(old, ignore_errors=True)


def finish_interrupted_swap(target: Path) -> None:
    """A swap that stopped between its two renames: move the complete new store into place.
    Then remove what killed rebuilds left (:func:`abandoned_builds`)."""
    if not target.exists():
        for cand in sorted(target.parent.glob(f"{target.name}.building-*"), reverse=True):
            if (cand / COMPLETE).exists():
                try:
                    os.rename(cand, target)
                    (target / COMPLETE).unlink(missing_ok=True)
                except OSError as exc:
                    raise unwritable(target, exc, f"the complete store in {cand} was not moved into place") from None
                fsync_dir(target.parent)
                break
    if target.exists():
        remove_abandoned_builds(target)


def _builder_alive(cand: Path) -> bool:
    """Whether the process named in ``<graph>.building-<pid>-<time>`` still runs (it may still
    be writing the folder). Unparseable names count as alive: never delete what we cannot place."""
    try:
        pid = int(cand.name.rsplit(".building-", 1)[1].split("-", 1)[0])
    except (IndexError, ValueError):
        return True
    from kgservice.processes import alive

    return alive(pid)


def abandoned_builds(target: Path) -> list[Path]:
    """Store folders built beside ``target`` by a restore or salvage that was killed: their
    builder is gone and the store is in place, so nothing will ever finish or swap them in
    (a complete one is swapped in only while ``target`` is missing)."""
    if not target.exists():
        return []
    return [c for c in sorted(target.parent.glob(f"{target.name}.building-*"))
            if c.is_dir() and not _builder_alive(c)]


def remove_abandoned_builds(target: Path) -> list[str]:
    """Delete :func:`abandoned_builds`; the names removed (best effort: a folder that cannot be
    removed now is tried again on the next open)."""
    gone = []
    for cand in abandoned_builds(target):
        shutil.rmtree(cand, ignore_errors=True)
        if not cand.exists():
            gone.append(cand.name)
    return gone


# -- salvage -------------------------------------------------------------------------------

def _intact_frames(data: bytes, start: int) -> tuple[list[bytes], list[str]]:
    """Every journal record from ``start`` whose checksum holds; damaged stretches are skipped
    (the next frame is found by its tag and a checksum that holds)."""
    payloads: list[bytes] = []
    notes: list[str] = []
    pos = start
    while pos + _FRAME.size <= len(data):
        tag, length, crc = _FRAME.unpack_from(data, pos)
        end = pos + _FRAME.size + length
        if tag == _FRAME_TAG and end <= len(data) and zlib.crc32(data[pos + _FRAME.size:end]) == crc:
            payloads.append(data[pos + _FRAME.size:end])
            pos = end
            continue
        nxt = data.find(_FRAME_TAG, pos + 1)
        while nxt != -1:
            t2, l2, c2 = _FRAME.unpack_from(data, nxt) if nxt + _FRAME.size <= len(data) else (b"", 0, 0)
            e2 = nxt + _FRAME.size + l2
            if t2 == _FRAME_TAG and e2 <= len(data) and zlib.crc32(data[nxt + _FRAME.size:e2]) == c2:
                break
            nxt = data.find(_FRAME_TAG, nxt + 1)
        if nxt == -1:
            if data[pos:].strip(b"\0"):
                notes.append(f"journal: bytes {pos}..{len(data)} hold no intact record (a torn or damaged last batch)")
            break
        notes.append(f"journal: bytes {pos}..{nxt} damaged: one batch lost")
        pos = nxt
    return payloads, notes


def read_intact(store_dir: Path) -> tuple[dict[str, tuple], dict[str, str], list[str], dict[str, str]]:
    """(unit records by id, display labels, notes, duplicate aliases): everything in a store directory that still
    checks out (:func:`read_intact_all` without the lifecycle records)."""
    return read_intact_all(store_dir)[:4]  # type: ignore[return-value]


def read_intact_all(store_dir: Path) -> tuple[dict[str, tuple], dict[str, str], list[str], dict[str, str], Any]:
    """(live unit records by id, display labels, notes, duplicate aliases, lifecycle): everything
    in a store directory that still checks out - the snapshot if it verifies, and every journal
    record whose checksum holds, of any epoch, replayed in order (units are immutable, so a
    record also in the snapshot is the same unit; a lifecycle record's retractions take units
    out and its undo puts them back, so a retracted unit does not come back live). The
    lifecycle is a namespace of ``documents`` (id -> record dict), ``retracted`` (id -> (unit
    record, change id, when, reason)) and ``changes`` (record dicts, oldest first, each once)."""
    from types import SimpleNamespace

    from kgservice.stores.embedded.lifecycle import apply_life

    units: dict[str, tuple] = {}
    labels: dict[str, str] = {}
    aliases: dict[str, str] = {}
    notes: list[str] = []
    life_state = SimpleNamespace(units=units, documents={}, retracted={}, changes=[], stated={}, superseded_by={},
                                 generation=0)
    snap, journal = store_dir / SNAPSHOT, store_dir / JOURNAL
    if snap.exists():
        try:
            with paused_gc():
                g, _prev = read_snapshot(snap)
            units.update(g.units)
            labels.update(g.labels)
            aliases.update(g.aliases)
            life_state.documents.update(g.documents)
            life_state.retracted.update(g.retracted)
            life_state.changes.extend(g.changes)
            notes.append(f"snapshot: intact, {len(g.units)} unit(s) kept")
        except StoreDamaged as exc:
            notes.append(f"snapshot: {exc.detail}; its units are lost (restore them from a dump)")
    else:
        notes.append("snapshot: none")
    try:
        data = journal.read_bytes()
    except FileNotFoundError:
        data = b""
    except OSError as exc:
        raise unreadable(journal, exc) from None
    if data:
        start = _HEADER if data.startswith(_JOURNAL_MAGIC) else 0
        if start == 0:
            notes.append("journal: header damaged; records searched by their checksums")
        payloads, jnotes = _intact_frames(data, start)
        notes += jnotes
        kept = 0
        for p in payloads:
            try:
                batch = pickle.loads(p)
            except Exception as exc:
                notes.append(f"journal: a record with a good checksum does not unpickle ({type(exc).__name__}); skipped")
                continue
            records, batch_aliases = split_batch(batch)
            life = batch.get("life") if isinstance(batch, dict) else None
            if life is not None:  # as _Graph.apply_batch: retractions, then units, then records
                ch = life["change"]
                for uid in life.get("retract", ()):
                    if uid in units:
                        life_state.retracted[uid] = (units.pop(uid), ch["id"], ch["at"], ch.get("reason"))
            for dup, kept_in in batch_aliases.items():
                aliases.setdefault(dup, kept_in)
            for rec, facts in records:
                for nid, label, _kind in facts[1]:
                    labels.setdefault(nid, label)  # the first surface form, as the live store keeps it
                if rec[0] not in units:
                    units[rec[0]] = rec
                    kept += 1
            if life is not None:
                apply_life(life_state, life)
        notes.append(f"journal: {len(payloads)} intact record(s), {kept} unit(s) not already in the snapshot")
    seen: set[str] = set()
    changes = [c for c in life_state.changes if not (c["id"] in seen or seen.add(c["id"]))]  # type: ignore[func-returns-value]
    life_state.changes = changes
    if life_state.documents or life_state.retracted or changes:
        notes.append(f"lifecycle: {len(life_state.documents)} document(s), {len(life_state.retracted)} retracted "
                     f"unit(s), {len(changes)} change(s) kept")
    return units, labels, notes, aliases, life_state

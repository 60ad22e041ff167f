"""Batch validation shared by every backend: a batch is checked whole before anything is written."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone

from kgservice.model import Unit
from kgservice.notation.serializer import format_unit
from kgservice.stores.base import IngestConflict


def canonical(unit: Unit) -> str:
    """What makes two units "the same fact": their notation, without provenance fields."""
    return format_unit(unit)


def prepare_batch(
    units: Sequence[Unit],
    existing: Callable[[Iterable[str]], dict[str, Unit]],
) -> tuple[list[Unit], int]:
    """Return (new units stamped with ingested_at, number already stored unchanged).

    Raises :class:`IngestConflict` naming each problem: an id reused for a different fact,
    a ``supersedes`` reference to a unit that exists nowhere, a supersession cycle.
    """
    problems: list[str] = []
    by_id: dict[str, Unit] = {}
    for u in units:
        prev = by_id.get(u.id)
        if prev is not None and canonical(prev) != canonical(u):
            problems.append(f"unit #{u.id} appears twice in the batch with different content")
        by_id.setdefault(u.id, u)
    stored = existing(list(by_id) + [s for u in by_id.values() for s in u.supersedes])
    new: list[Unit] = []
    unchanged = 0
    for uid, u in by_id.items():
        old = stored.get(uid)
        if old is None:
            new.append(u)
        elif canonical(old) == canonical(u):
            unchanged += 1
        else:
            problems.append(
                f"unit #{uid} already exists with different content (from {old.doc or 'unknown doc'}): "
                f"{canonical(old).splitlines()[0]!r}; give the new fact another id"
            )
    for u in new:
        for ref in u.supersedes:
            if ref == u.id:
                problems.append(f"unit #{u.id} supersedes itself")
            elif ref not in by_id and ref not in stored:
                problems.append(f"unit #{u.id} supersedes #{ref}, which is neither in this batch nor stored")
    problems.extend(_cycles({u.id: u.supersedes for u in new}))
    if problems:
        raise IngestConflict("batch rejected, nothing stored:\n  " + "\n  ".join(problems))
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return [u if u.ingested_at else u.model_copy(update={"ingested_at": stamp}) for u in new], unchanged


def _cycles(supersedes: dict[str, tuple[str, ...]]) -> list[str]:
    """Supersession cycles among new units (stored units can only point at stored units)."""
    state: dict[str, int] = {}
    found: list[str] = []

    def visit(uid: str, path: list[str]) -> None:
        state[uid] = 1
        for ref in supersedes.get(uid, ()):
            if ref not in supersedes or ref == uid:
                continue
            if state.get(ref) == 1:
                cyc = path[path.index(ref):] + [ref] if ref in path else [uid, ref]
                found.append("supersession cycle: " + " -> ".join(f"#{c}" for c in cyc))
            elif ref not in state:
                visit(ref, path + [ref])
        state[uid] = 2

    for uid in sorted(supersedes):
        if uid not in state:
            visit(uid, [uid])
    return found

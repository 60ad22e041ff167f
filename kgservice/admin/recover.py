"""Rebuilding a store of files *beside* the current one, then swapping it in: used by
``kg restore --replace`` and ``kg doctor --salvage``. The store does the file work (reading its
intact records, building beside, the swap: ``capabilities(settings).files``,
:class:`kgservice.stores.embedded.files.EmbeddedFiles`); this module decides what goes in.

The old directory stays untouched until the new one is complete (every batch journaled and
fsynced, labels set, a ``COMPLETE`` marker written); only then two renames swap them. A
crash between the two renames leaves no store directory and a complete new one beside it,
which :func:`finish_interrupted_swap` (called when the store opens) moves into place. So a
full disk, a kill or a bad batch can cost the *new* store, never the old one.

Space is checked first: the new store needs about as much room as the old one, beside it.
Only the embedded graph is built beside; vectors are derived data and are re-embedded after
the swap (a failure there leaves a consistent graph and ``kg doctor --repair`` finishes it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgservice.disk import free_bytes
from kgservice.errors import ReadOnlyError, ServiceError, StoreError
from kgservice.model import Unit
from kgservice.stores.factory import capabilities

if TYPE_CHECKING:
    from kgservice.parts import Parts

# measured: a store takes about 0.4x its dump per file and about 0.8x at the peak of a
# compaction (journal + new snapshot); 1.2x leaves room
STORE_BYTES_PER_DUMP_BYTE = 1.2
SLACK_BYTES = 4 << 20


class NotEnoughSpace(ServiceError, OSError):
    """Refused before anything was written: the new store would not fit beside the old one."""


def check_space(where: Path, need: int, what: str) -> None:
    probe = where if where.exists() else where.parent
    while not probe.exists():
        probe = probe.parent
    free = free_bytes(probe)
    if free < need:
        raise NotEnoughSpace(
            f"{what} needs about {_mb(need)} free in {probe} (the new store is built beside the old one, which "
            f"stays until the new one is complete); only {_mb(free)} is free. Nothing was changed: free some "
            "space (or use a data directory on a larger disk) and run it again")


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def reset_caches(parts: Parts) -> str:
    """The query caches describe the old store: delete their file (they rebuild themselves)."""
    from kgservice.caches import CACHE_FILE

    p = Path(parts.settings.kb_dir) / CACHE_FILE
    for q in (p, p.with_name(p.name + "-journal"), p.with_name(p.name + "-wal")):
        try:
            q.unlink(missing_ok=True)
        except OSError as exc:
            return f"failed: {exc}"
    return "reset"


def drop_dangling(units: Iterable[Unit], known: Iterable[str] = ()) -> tuple[list[Unit], list[str]]:
    """Units whose supersedes / unit references all exist among them or in ``known`` (archived
    units: a live unit may supersede a retracted one), repeated until stable (dropping one can
    strand another), and the ids dropped."""
    keep = {u.id: u for u in units}
    archived = set(known)
    dropped: list[str] = []
    changed = True
    while changed:
        changed = False
        for uid, u in list(keep.items()):
            refs = list(u.supersedes) + [m.value.unit for m in u.mods if m.value.unit is not None]
            if any(r not in keep and r not in archived for r in refs):
                del keep[uid]
                dropped.append(uid)
                changed = True
    return list(keep.values()), sorted(dropped)


def salvage(parts: Parts, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """``kg doctor --salvage``: a new embedded store from every intact record of the current one,
    swapped in; the damaged directory is kept beside it (``graph.damaged-<time>``)."""
    from kgservice.stores.validate import unit_text_problems

    if parts.settings.read_only:
        raise ReadOnlyError("this kgservice is configured read-only (KG_READ_ONLY); kg doctor --salvage refused")
    files = capabilities(parts.settings).files
    if files is None:
        raise StoreError("kg doctor --salvage is for the embedded store; Neo4j keeps its own transaction log "
                         "(restore a damaged database with `kg restore DUMP --replace --yes`)")
    target = files.graph
    parts.forget_opened()
    intact = files.read_intact()
    units, labels, notes, aliases = intact.units, intact.labels, intact.notes, intact.aliases
    invalid = sorted(u.id for u in units if unit_text_problems(u))
    units = [u for u in units if u.id not in set(invalid)]
    docs, archived, history = salvaged_lifecycle(intact.lifecycle, set(), files.unit_from)
    units, dangling = drop_dangling(units, known={r.unit.id for r in archived})
    units = dependency_order(units)
    need = sum(f.stat().st_size for f in target.glob("*") if f.is_file())
    check_space(target, need + SLACK_BYTES, "kg doctor --salvage")
    kept_ids = {u.id for u in units}
    aliases = {d: k for d, k in aliases.items() if k in kept_ids and d not in kept_ids}
    new, _relabeled = files.build_beside(units, labels, progress, aliases=aliases,
                                         lifecycle=(docs, [r for r in archived if r.unit.id not in kept_ids], history))
    kept = target.with_name(f"{target.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}")
    files.swap_in(new, keep_old=kept)
    return {"units_kept": len(units), "units_dropped_invalid": invalid, "units_dropped_dangling": dangling,
            "notes": notes, "damaged_files_kept_in": str(kept), "caches": reset_caches(parts)}


def salvaged_lifecycle(life: Any, kept: set[str],
                       unit_from: Callable[[Any], Unit]) -> tuple[list[Any], list[Any], list[Any]]:
    """The lifecycle records salvage read (documents, retracted units, changes) as
    ``restore_lifecycle`` takes them; an archived unit whose record does not validate is left
    out (it cannot be undone into the graph), documents and history are kept whole.
    ``unit_from``: the store's record -> unit."""
    from kgservice.lifecycle.model import ChangeRecord, DocumentRecord, RetractedUnit

    docs = [DocumentRecord.model_validate(r) for _, r in sorted(life.documents.items())]
    retracted = []
    for uid, (rec, change, at, reason) in life.retracted.items():
        if uid in kept:
            continue
        try:
            retracted.append(RetractedUnit(unit=unit_from(rec), change=change, at=at, reason=reason))
        except (ValueError, TypeError, IndexError, KeyError):  # a damaged archived record: the rest restores
            continue
    return docs, retracted, [ChangeRecord.model_validate(c) for c in life.changes]


def dependency_order(units: Iterable[Unit]) -> list[Unit]:
    """Units sorted by (ingested_at, id), moved after every unit they supersede or refer to."""
    by_id = {u.id: u for u in units}
    ordered: list[Unit] = []
    state: dict[str, int] = {}
    for start in sorted(by_id.values(), key=lambda u: (u.ingested_at or "", u.id)):
        if start.id in state:
            continue
        stack: list[tuple[Unit, list[str]]] = [(start, _refs(start))]
        state[start.id] = 1
        while stack:
            u, refs = stack[-1]
            while refs and (refs[-1] not in by_id or refs[-1] in state):
                refs.pop()  # unknown ids are the validator's business; visited ones are placed (or cyclic)
            if refs:
                nxt = by_id[refs.pop()]
                state[nxt.id] = 1
                stack.append((nxt, _refs(nxt)))
                continue
            stack.pop()
            state[u.id] = 2
            ordered.append(u)
    return ordered


def _refs(u: Unit) -> list[str]:
    refs = list(u.supersedes) + [m.value.unit for m in u.mods if m.value.unit is not None]
    return sorted(set(refs), reverse=True)

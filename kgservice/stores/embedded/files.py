"""The embedded store as files, for the admin commands that work on it while it is closed or
damaged: ``kg doctor --salvage`` (read every intact record), ``kg restore --replace`` (build a new
store beside the old one, swap it in), ``kg doctor``'s checks of the SQLite files kept beside it,
and the CLI's look at the key file beside a running server. They reach it through
:func:`kgservice.stores.factory.capabilities` (``files``), so no module outside ``stores/`` names
the embedded store's files or formats.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgservice.model import Unit

CHUNK = 5000  # units per ingest batch while building beside


@dataclass
class IntactRecords:
    """What :meth:`EmbeddedFiles.read_intact` found: the live units, display labels, notes on
    what was skipped, duplicate aliases, and the lifecycle records (documents, retracted units
    as raw records, changes)."""

    units: list[Unit]
    labels: dict[str, str]
    notes: list[str]
    aliases: dict[str, str]
    lifecycle: Any


class EmbeddedFiles:
    """The files of the embedded store kept under ``data_dir`` (the graph in ``graph/``)."""

    def __init__(self, data_dir: Path | str) -> None:
        self.data_dir = Path(data_dir)

    @property
    def graph(self) -> Path:
        """The store directory (snapshot, journal, change log)."""
        return self.data_dir / "graph"

    def service_files(self) -> list[Path]:
        """The SQLite files kept beside the graph: job queue, API keys, shared state, change log."""
        from kgservice.stores.changelog import CHANGES_FILE
        from kgservice.stores.embedded.jobs import JOBS_FILE
        from kgservice.stores.embedded.keys import KEYS_FILE
        from kgservice.stores.embedded.shared import SHARED_FILE

        return [self.data_dir / JOBS_FILE, self.data_dir / KEYS_FILE, self.data_dir / SHARED_FILE,
                self.graph / CHANGES_FILE]

    def has_active_admin(self) -> bool:
        """An active admin key in the key file, read without opening the store (a running server
        may own it); an unreadable file counts as yes."""
        from kgservice.stores.embedded.keys import has_active_admin

        return has_active_admin(self.data_dir)

    def read_intact(self) -> IntactRecords:
        """Every record of the store that still checks out (the snapshot if it verifies, every
        journal record whose checksum holds), units as models; nothing is opened for writing."""
        from kgservice.stores.embedded.recovery import read_intact_all

        recs, labels, notes, aliases, life = read_intact_all(self.graph)
        return IntactRecords([self.unit_from(r) for r in recs.values()], labels, notes, aliases, life)

    @staticmethod
    def unit_from(record: Any) -> Unit:
        """A unit from its stored record (an archived unit's, in the lifecycle records)."""
        from kgservice.stores.embedded.records import _unit_from

        return _unit_from(record)

    def build_beside(self, units: Sequence[Unit], labels: dict[str, str],
                     progress: Callable[[int], None] | None = None,
                     aliases: dict[str, str] | None = None,
                     lifecycle: tuple[Sequence[Any], Sequence[Any], Sequence[Any]] | None = None) -> tuple[Path, int]:
        """(a complete new store directory next to the graph holding ``units`` (dependency order)
        with ``labels``, duplicate ``aliases`` and the ``lifecycle`` records (documents, retracted
        units, changes: GraphStore.restore_lifecycle's arguments), how many labels differed from the
        derived ones); removed if anything fails."""
        from kgservice.stores.embedded.recovery import write_complete_marker
        from kgservice.stores.embedded.store import EmbeddedStore

        target = self.graph
        new = target.with_name(f"{target.name}.building-{os.getpid()}-{int(time.time())}")
        shutil.rmtree(new, ignore_errors=True)
        try:
            store = EmbeddedStore(new)
            if lifecycle is not None and lifecycle[1]:  # first: a live unit may supersede an archived one
                store.restore_lifecycle([], lifecycle[1], [])
            for i in range(0, len(units), CHUNK):
                store.ingest(units[i:i + CHUNK])
                if progress is not None:
                    progress(len(units[i:i + CHUNK]))
            have = {n.id: n.label for n in store.get_nodes(list(labels))}
            relabel = {k: v for k, v in labels.items() if k in have and have[k] != v}
            if relabel:
                store.relabel_nodes(relabel)
            if aliases:
                store.add_aliases(aliases)
            if lifecycle is not None:
                store.restore_lifecycle(*lifecycle)
            store.compact()  # one verified snapshot, so the swapped-in store opens fast
            store.close()
            write_complete_marker(new)
        except BaseException:
            shutil.rmtree(new, ignore_errors=True)
            raise
        return new, len(relabel)

    def swap_in(self, new: Path, keep_old: Path | None = None) -> None:
        """Replace the graph directory by the complete directory ``new``; the old one goes to
        ``keep_old`` (kept) or is deleted."""
        from kgservice.stores.embedded.recovery import swap_in

        swap_in(self.graph, new, keep_old=keep_old)

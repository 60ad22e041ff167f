"""A Neo4j store whose reads come from lagging secondaries: a stand-in for a Neo4j cluster
(Enterprise / Aura), which cannot run here, to test read-your-writes on one Community server.

What it models, after what a cluster's secondaries do: every committed write transaction is
one position in the leader's log (:class:`Replication`, shared by the stores of one test: its
"servers"). A secondary has applied the log up to its own position, and a read routed to it sees
the store as it was there. A read that presents a bookmark for a position the secondary has
not reached is served once it has (a secondary waits for the bookmark); a read without one is
served at whatever position the secondary is at. Leader-routed reads and writes see everything.
The lag is deterministic: a secondary moves only when a presented bookmark makes it, or when
the test calls :meth:`Replication.catch_up` - never with time.

The store as it was at a position is the real store with what later transactions *created*
left out: units and jobs created after it are not found, and the change version is the one at
that position. Later changes to things that already existed (a job's status, a retraction)
are not held back; the tests here depend only on creation.

Bookmarks are ``lag.<position>`` tokens instead of the database's: a write transaction's
bookmark is its position, a read's is the position it was served at; they travel through the
store's own machinery (the process bookmark manager, the request's bookmarks, the bookmark of a
request's writes), and are kept from the real database, which would refuse them.

``honour_bookmarks=False`` makes secondaries ignore presented bookmarks, and
``leader_reads=False`` serves leader-routed reads from secondaries: the code before causal
consistency, on a cluster (the tests show their failures with them).
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass, field
from typing import Any

from kgservice.stores import causal
from kgservice.stores.neo4j import Neo4jStore
from kgservice.stores.neo4j.connection import _LEADER

PREFIX = "lag."


@dataclass
class Entry:
    units: set[str] = field(default_factory=set)  # created by this transaction
    jobs: set[str] = field(default_factory=set)
    version: int = 0  # the change version after it


class Replication:
    """The leader's log of write transactions and the position of each secondary."""

    def __init__(self, secondaries: int = 1, version: int = 0):
        self.log: list[Entry] = []
        self.applied = [0] * secondaries
        self.start_version = version
        self.lock = threading.Lock()
        self._next = itertools.cycle(range(secondaries))
        self.served: list[tuple[int, int]] = []  # (secondary, position) per lagging read

    @property
    def head(self) -> int:
        with self.lock:
            return len(self.log)

    def commit(self, entry: Entry) -> int:
        with self.lock:
            self.log.append(entry)
            return len(self.log)

    def route(self, presented: int, secondary: int | None = None) -> int:
        """The position a read is served at: the next secondary (or the one named), once it has
        applied ``presented``."""
        with self.lock:
            i = next(self._next) if secondary is None else secondary
            self.applied[i] = max(self.applied[i], min(presented, len(self.log)))
            self.served.append((i, self.applied[i]))
            return self.applied[i]

    def catch_up(self, secondary: int | None = None) -> None:
        with self.lock:
            for i in range(len(self.applied)) if secondary is None else [secondary]:
                self.applied[i] = len(self.log)

    def hidden(self, position: int) -> tuple[set[str], int]:
        """What reads at ``position`` do not see (ids created later) and its change version."""
        with self.lock:
            later = self.log[position:]
            version = self.log[position - 1].version if position else self.start_version
        return {i for e in later for i in (*e.units, *e.jobs)}, version


def _mentions(row: Any, hidden: set[str]) -> bool:
    for key, value in dict(row).items():
        if isinstance(value, str):
            if value in hidden and key in ("id", "unit"):
                return True
            if key == "json" and value.startswith("{") and json.loads(value).get("id") in hidden:
                return True
        elif isinstance(value, dict) and value.get("id") in hidden:
            return True
    return False


class _Filtered:
    """The store's bookmark manager with the ``lag.`` tokens kept from the database."""

    def __init__(self, inner: Any):
        self.inner = inner

    def update_bookmarks(self, previous: Any, new: Any) -> None:
        self.inner.update_bookmarks([b for b in previous if not b.startswith(PREFIX)], new)

    def get_bookmarks(self) -> Any:
        return {b for b in self.inner.get_bookmarks() if not b.startswith(PREFIX)}


class LaggingNeo4j(Neo4jStore):
    """A :class:`Neo4jStore` on a :class:`Replication` (set ``replication`` after connecting)."""

    replication: Replication | None = None
    secondary: int | None = None  # a server whose reads all go to one secondary (else: round robin)
    honour_bookmarks = True
    leader_reads = True

    def __init__(self, *a: Any, **kw: Any):
        super().__init__(*a, **kw)
        from neo4j.api import BookmarkManager

        class Manager(_Filtered, BookmarkManager):
            pass

        self.bookmarks = Manager(self.bookmarks)
        self.chain = 0  # the process bookmark manager's position (its own writes and reads)
        self._creating = threading.local()

    # -- reads ------------------------------------------------------------------------------
    def _presented(self) -> int:
        if not self.honour_bookmarks:
            return 0
        asked = [int(b[len(PREFIX):]) for b in causal.after() if b.startswith(PREFIX)]
        return max([self.chain, *asked])

    def read(self, name: str, **params: Any) -> list[Any]:
        rep = self.replication
        if rep is None or (_LEADER.get() and self.leader_reads):
            return super().read(name, **params)
        position = rep.route(self._presented(), self.secondary)
        hidden, version = rep.hidden(position)
        rows = super().read(name, **params)
        if self.honour_bookmarks:
            self.chain = max(self.chain, position)  # the read's bookmark joins the process chain
        if name == "changes_version":
            return [{"version": version}]
        if rows and set(dict(rows[0])) == {"rows"}:  # a bulk read (get_*_bulk): one record of [id, ...] rows
            return [{"rows": [x for x in r["rows"] if x[0] not in hidden]} for r in rows]
        return [r for r in rows if not _mentions(r, hidden)]

    # -- writes -----------------------------------------------------------------------------
    def _wrote(self, session: Any) -> None:
        rep = self.replication
        if rep is None:
            return super()._wrote(session)
        entry = Entry(units=getattr(self._creating, "units", set()), jobs=getattr(self._creating, "jobs", set()))
        self._creating.units, self._creating.jobs = set(), set()
        from kgservice.stores.neo4j.connection import Neo4jConnection

        entry.version = int(Neo4jConnection.read(self, "changes_version")[0]["version"])
        position = rep.commit(entry)
        if self.honour_bookmarks:
            self.chain = max(self.chain, position)
        causal.wrote(self, (f"{PREFIX}{position}",))

    def write(self, name: str, **params: Any) -> list[dict[str, Any]]:
        if name == "jobs_submit":
            self._creating.jobs = {params["id"]}
        return super().write(name, **params)

    def ingest(self, units: Any, progress: Any = None) -> Any:
        # the batch's ids not stored yet (read on the leader): its transaction creates them (a
        # duplicate merged away is not stored, so hiding its id hides nothing)
        existed = {r["id"] for r in Neo4jStore.read(self, "get_units", ids=[u.id for u in units])}
        self._creating.units = {u.id for u in units} - existed
        return super().ingest(units, progress)

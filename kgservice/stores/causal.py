"""Read-your-writes across servers: the bookmarks a request waits for and the bookmark of its writes.

On a Neo4j cluster reads go to secondaries, which apply the leader's transactions some time
after they commit. A *bookmark* names a committed transaction; a read that presents it is
served from a member that has applied it (the member waits until it has). Three things use that:

* a **process bookmark manager** (:class:`~kgservice.stores.neo4j.bookmarks.ProcessBookmarks`, one per store connection) given to
  every session, reads and writes: each query starts at least where the process's last query
  ended, so a version read and the data read after it are chained (a cache entry is never
  stamped with a version newer than the data it was built from), and a server sees its own writes;
* the bookmarks of the **request** (:func:`reading_after`, set from the ``X-KG-Bookmark`` header):
  every query made for that request, on any thread, waits for them, so a job submitted on one
  server and read on another is found;
* the bookmark of the request's **writes** (:func:`capturing`), returned to the client in the
  ``X-KG-Bookmark`` response header and a ``bookmark`` field.

A request that presents no bookmark asked for no particular write, so a server may answer it as a
cluster secondary would, from a result of the previous store version while it catches up with a
newer one (:func:`accepting_stale`, bounded: docs/jobs-and-caches.md); one with a bookmark never.

A bookmark travels as one opaque token: the store's bookmark strings joined by ``,`` (Neo4j's
are printable ASCII without commas). The embedded store is owned by one process and needs
none: its bookmark is None and a presented token is accepted and ignored.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from kgservice.errors import InvalidArgument

HEADER = "X-KG-Bookmark"
MAX_TOKEN = 4096  # characters: a few bookmarks of a few hundred characters each
MAX_PARTS = 16
_PART = re.compile(r"[A-Za-z0-9:+/=_.\-]{1,1024}")


@dataclass
class Captured:
    """The bookmarks of the writes made while :func:`capturing` was active (any thread that
    inherited the context): the newest per store connection."""

    parts: dict[int, tuple[str, ...]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def bookmark(self) -> str | None:
        """The token a client sends back to read these writes, or None (nothing written, or a
        store that needs no bookmarks)."""
        with self.lock:
            values = sorted({v for vs in self.parts.values() for v in vs})
        return ",".join(values) if values else None


_after: ContextVar[tuple[str, ...]] = ContextVar("kg_read_after", default=())
_captured: ContextVar[Captured | None] = ContextVar("kg_write_bookmarks", default=None)
_stale_ok: ContextVar[bool] = ContextVar("kg_stale_ok", default=False)


def parse(token: str | None, where: str = HEADER) -> tuple[str, ...]:
    """A client's token as bookmark strings; a malformed one is an input error naming ``where``
    (it never reaches the database, so it cannot fail anyone else's reads)."""
    if token is None or not token.strip():
        return ()
    if len(token) > MAX_TOKEN:
        raise InvalidArgument(f"{where}: a bookmark token of {len(token)} characters is longer than {MAX_TOKEN}; "
                         "send back the token a write returned, unchanged")
    parts = tuple(sorted({p.strip() for p in token.split(",") if p.strip()}))
    if len(parts) > MAX_PARTS or not all(_PART.fullmatch(p) for p in parts):
        raise InvalidArgument(f"{where}: {token[:60]!r} is not a bookmark token; send back the "
                         f"{HEADER} value a write returned, unchanged")
    return parts


@contextmanager
def reading_after(bookmarks: Iterable[str]) -> Iterator[None]:
    """Every store query in this context (and threads that inherit it) waits for ``bookmarks``."""
    token = _after.set(tuple(_after.get()) + tuple(bookmarks))
    try:
        yield
    finally:
        _after.reset(token)


def after() -> tuple[str, ...]:
    """The bookmarks the current request waits for."""
    return _after.get()


@contextmanager
def accepting_stale(allowed: bool = True) -> Iterator[None]:
    """In this context a read may be answered from the previous store version's cached result
    (bounded staleness, as a cluster secondary serves): a server sets it for a request that
    presented no bookmark. The library, the CLI and a request with a bookmark never set it."""
    token = _stale_ok.set(allowed)
    try:
        yield
    finally:
        _stale_ok.reset(token)


def stale_allowed() -> bool:
    """True when the current request accepts a stale reply: it said so and waits for no bookmark."""
    return _stale_ok.get() and not _after.get()


@contextmanager
def capturing() -> Iterator[Captured]:
    """Collect the bookmarks of the writes made in this context (the caller reads
    ``.bookmark`` afterwards). Nested: the outer capture sees the inner writes too."""
    outer = _captured.get()
    got = Captured()
    token = _captured.set(got)
    try:
        yield got
    finally:
        _captured.reset(token)
        if outer is not None:
            with got.lock:
                parts = dict(got.parts)
            with outer.lock:
                outer.parts.update(parts)


def wrote(source: object, bookmarks: Iterable[str]) -> None:
    """Record the bookmarks a write transaction of ``source`` (a store connection) ended with."""
    got = _captured.get()
    values = tuple(bookmarks)
    if got is None or not values:
        return
    with got.lock:
        got.parts[id(source)] = values


def written() -> str | None:
    """The token of the writes made so far in the current capture (None: none, or no capture)."""
    got = _captured.get()
    return None if got is None else got.bookmark


def pass_on(token: str | None) -> None:
    """Add a token read from the store (a job's result) to the current capture: a reply that
    shows a job done carries the bookmark of the job's writes."""
    got = _captured.get()
    if got is None or not token:
        return
    try:
        values = parse(token)
    except InvalidArgument:
        return
    with got.lock:
        got.parts[0] = values

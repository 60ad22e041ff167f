"""The interpreter's thread switch interval while a background refresh runs.

A stale reply (:meth:`kgservice.caches.store.Caches.front_stale`) is a dictionary lookup, but the
thread serving it still needs the interpreter lock, and the background refresh beside it (the
change-log replay, the derived indexes' patch, the recomputed answer) is Python code that keeps
the lock between forced switches. CPython hands the lock to a waiting thread only after the
switch interval (5 ms by default), and a request waits that long again at every blocking call it
returns from (a socket read, a sleep). So while a refresh runs, the process switches threads
more often: the requests it serves meanwhile wait a fraction of a millisecond per hand-over
instead of up to 5 ms, at the cost of more switches for the refresh. The interval is process
wide; the previous one comes back when the last refresh in the process ends.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

REFRESH_SWITCH_INTERVAL = 0.0005  # seconds (CPython's default is 0.005)

_lock = threading.Lock()
_active = 0
_saved: float | None = None


@contextmanager
def prompt_switching(interval: float = REFRESH_SWITCH_INTERVAL) -> Iterator[None]:
    """Lower the switch interval to ``interval`` (never raise it) while the block runs; nested
    and concurrent blocks (several caches in one process) share one setting, restored when the
    last one ends."""
    global _active, _saved
    with _lock:
        if _active == 0:
            _saved = sys.getswitchinterval()
            if interval < _saved:
                sys.setswitchinterval(interval)
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _saved is not None:
                sys.setswitchinterval(_saved)
                _saved = None

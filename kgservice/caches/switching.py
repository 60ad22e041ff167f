"""Sharing the interpreter between a background refresh and the requests served meanwhile.

A stale reply (:meth:`kgservice.caches.store.Caches.front_stale`) is a dictionary lookup, but the
thread serving it still needs the interpreter lock, and the background refresh beside it (the
change-log replay, the derived indexes' patch, the recomputed answer) is Python code that keeps
the lock between forced switches. Two threads wanting the lock get about half of it each, so on
their own the requests answered during a refresh run at half speed or worse, and on loaded cores
their queue grows. While a refresh runs (:func:`in_background`):

* the refresh **steps aside** when a request arrives (:func:`serving` marks one): at its next
  Python call it sleeps until no request is being served, for at most ``STEP_ASIDE_MAX`` per
  arrival. So a request gets the interpreter to itself, and one that waits on the refresh (a
  lock the replay holds) loses at most that much; a refresh is slowed by the requests, never
  stopped by them (and the staleness bound still holds: past it an ask computes in the
  foreground).
* the process switches threads every 0.5 ms instead of CPython's 5 ms, so the hand-over to an
  arriving request is prompt. The interval is process wide; the previous one comes back when
  the last refresh in the process ends.

The cost: the refresh thread runs with a profile hook (one comparison per Python call when no
request is in flight).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

REFRESH_SWITCH_INTERVAL = 0.0005  # seconds (CPython's default is 0.005)
STEP_ASIDE_MAX = 0.02  # seconds a refresh waits for the requests in flight, per arriving request
STEP_ASIDE_POLL = 0.0005  # seconds between two looks while it waits

_lock = threading.Lock()
_active = 0
_saved: float | None = None
_serving = 0  # requests being served now (threads inside serving())
_arrivals = 0  # requests that entered serving() so far
_stepped_for = 0  # the arrival the refresh last stepped aside for
steps_aside = 0  # times a refresh stepped aside (tests, the bench)


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


@contextmanager
def serving() -> Iterator[None]:
    """Mark a request being served: a background refresh steps aside for it."""
    global _serving, _arrivals
    with _lock:
        _serving += 1
        _arrivals += 1
    try:
        yield
    finally:
        with _lock:
            _serving -= 1


def _step_aside(frame: Any, event: str, arg: Any) -> None:
    """The refresh thread's profile hook: on a request's arrival, sleep (the lock released)
    until no request is served or ``STEP_ASIDE_MAX`` has passed; once per arrival."""
    global _stepped_for, steps_aside
    if _serving and _arrivals != _stepped_for:
        _stepped_for = _arrivals
        steps_aside += 1
        deadline = time.monotonic() + STEP_ASIDE_MAX
        while _serving and time.monotonic() < deadline:
            time.sleep(STEP_ASIDE_POLL)


@contextmanager
def in_background() -> Iterator[None]:
    """Run the block (a refresh, in its own thread) behind the requests: it steps aside for
    each arriving one, and the process switches threads promptly while it runs."""
    with prompt_switching():
        previous = sys.getprofile()
        sys.setprofile(_step_aside)
        try:
            yield
        finally:
            sys.setprofile(previous)

"""``kg worker`` over every workspace of the deployment: one :class:`Worker` per workspace, each
on its own knowledge base, claimed from in turn, so a job always runs in the workspace it was
submitted to and one busy workspace cannot starve the others (one job per workspace per turn).
Workspaces made while it runs are picked up at the next turn with nothing to do."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kgservice.config import Settings
from kgservice.errors import InputError


class AllWorkspaces:
    """Run the queued jobs of every workspace (``kg worker`` with no workspace named)."""

    def __init__(self, settings: Settings, *, start: Callable[[Settings], tuple[Any, Callable[[], None]]],
                 skip: Callable[[Settings], str | None], log: Callable[[str], None]) -> None:
        """``start(settings)``: (the :class:`Worker` of that workspace, what closes what it opened);
        ``skip(settings)``: why a workspace is not this worker's to run (a server owns it), or None."""
        self.settings, self.start, self.skip, self.log = settings, start, skip, log
        self.stop = threading.Event()
        self.workers: dict[str, Any] = {}
        self._closers: dict[str, Callable[[], None]] = {}
        self._skipped: set[str] = set()

    def _refresh(self) -> None:
        from kgservice.workspaces import list_workspaces

        for name in list_workspaces(self.settings):
            if name in self.workers or name in self._skipped:
                continue
            ws = replace(self.settings, workspace=name)
            why = self.skip(ws)
            if why is not None:
                self._skipped.add(name)
                self.log(f"workspace {name}: skipped ({why})")
                continue
            try:
                worker, closer = self.start(ws)
            except InputError as exc:  # deleted since the listing: not this turn's to run
                self.log(f"workspace {name}: not run ({exc})")
                continue
            self._closers[name] = closer
            worker.stop = self.stop  # one stop for all: finish the job in hand, then exit
            self.workers[name] = worker

    def run_forever(self, poll_s: float, *, drain: bool = False, max_jobs: int | None = None) -> int:
        """Turns over every workspace's queue until stopped (``drain``: until a turn claims nothing)."""
        n = 0
        listing_down = False
        while not self.stop.is_set() and (max_jobs is None or n < max_jobs):
            try:
                self._refresh()
                listing_down = False
            except Exception as exc:  # a store outage: the workers known so far wait it out themselves
                from kgservice.outage import is_outage

                if not is_outage(exc):
                    raise
                if not listing_down:
                    self.log(f"the store is unavailable ({type(exc).__name__}): running the workspaces known so "
                             "far, new ones once it answers again")
                listing_down = True
            claimed = 0
            for name, worker in list(self.workers.items()):
                if self.stop.is_set() or (max_jobs is not None and n >= max_jobs):
                    break
                try:
                    got = worker.run_forever(poll_s, drain=True, max_jobs=1)
                except InputError as exc:  # the workspace was deleted under it: the others go on
                    self._drop(name, exc)
                    continue
                claimed += got
                n += got
            if claimed == 0:
                if drain:
                    break
                self.stop.wait(poll_s)
        return n

    def _drop(self, name: str, why: Exception) -> None:
        """Stop running a workspace deleted while this worker ran it (``kg workspaces delete``
        refuses only while a server serves it, and a worker is no server): its store now refuses
        to open, which is the input error of a name nobody made, not an outage to wait out. The
        whole worker used to exit 2 on it, leaving every other workspace's jobs unrun."""
        self.workers.pop(name, None)
        closer = self._closers.pop(name, None)
        self.log(f"workspace {name}: no longer run ({why})")
        if closer is not None:
            try:
                closer()
            except Exception as exc:  # closing what a deleted workspace left open: nothing to keep
                self.log(f"workspace {name}: closing it failed ({type(exc).__name__}: {exc})")

    def close(self) -> None:
        for closer in self._closers.values():
            closer()

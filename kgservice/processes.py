"""Whether a process that left its id in a file still runs: a store folder being built beside the
embedded store (``<graph>.building-<pid>-<time>``), a writer's note that it owes vectors
(:mod:`kgservice.vectors.owed`). One definition, so both judge a dead writer alike."""

from __future__ import annotations

import os
from pathlib import Path


def started(pid: int) -> str:
    """The process's start time (Linux ``/proc/<pid>/stat`` field 22), so a recycled pid is not
    taken for the process that wrote it; "" where it cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def alive(pid: int, start: str = "") -> bool:
    """Whether ``pid`` runs (and, with ``start``, is the process that started then). A process of
    another user counts as alive: it cannot be signalled, but it may still be writing."""
    if pid == os.getpid():
        return not start or started(pid) in ("", start)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return not start or started(pid) in ("", start)

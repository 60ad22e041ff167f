"""Kill a child process at a known moment of a lifecycle change: the child runs with
``KG_TEST_LIFECYCLE_PAUSE=<point>:<marker>`` (kgservice.stores.base.pause_point), writes the
marker there and waits; this sends it SIGKILL. The deadline bounds a hang only."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from kgservice.stores.base import PAUSE_ENV

ROOT = Path(__file__).resolve().parents[2]


def pause_env(env: dict[str, str], point: str, marker: Path) -> dict[str, str]:
    """``env`` (on top of this process's) with the pause at ``point`` and this checkout first on the path."""
    return {**os.environ, **env, PAUSE_ENV: f"{point}:{marker}",
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def kill_when_paused(code: str, args: list[str], env: dict[str, str], marker: Path, what: str) -> None:
    """Run ``python -c code *args`` with ``env`` and SIGKILL it once it has reached the pause."""
    child = subprocess.Popen([sys.executable, "-c", code, *args], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while not marker.exists():
            assert child.poll() is None, f"{what} finished without pausing: {child.stdout.read()!r}"
            assert time.monotonic() < deadline, f"{what} never reached its pause"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL

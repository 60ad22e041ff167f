"""Disk helpers shared by every layer that writes files: free-space probes for the layers that
refuse to write near a full disk (the vector store's memory-mapped files, ``kg salvage``'s copy
of a damaged store), one definition so they agree on which file system they measure; and the
directory sync that makes a file's creation, rename or removal durable."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def free_bytes(path: Path | str) -> int:
    """Free space on the file system that holds ``path`` (its nearest existing parent is measured,
    so a directory about to be created is measured where it will be).

    >>> free_bytes("/no/such/dir/yet") == free_bytes("/")
    True
    """
    probe = Path(path)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return shutil.disk_usage(probe).free


def fsync_dir(d: Path | str) -> None:
    """Make a creation, rename or removal inside ``d`` durable (best effort where directories
    cannot be opened)."""
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)

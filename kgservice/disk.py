"""Free-space probes shared by every layer that refuses to write near a full disk (the vector
store's memory-mapped files, ``kg salvage``'s copy of a damaged store): one definition, so
they agree on which file system they measure."""

from __future__ import annotations

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

"""The graphify mirror (graph.json) built once per store version by one process, for every server.

Each ``kg serve`` used to export the whole graph, with its communities, whenever the store's
change-log version moved: with N servers, every change cost N full scans. Now the mirror is a
store-kept artefact keyed by the version it was built at. A server that needs version V reads
the stored mirror when it is V or later; else it asks for the lease to build V (a compare-and-set
in the store, :meth:`MirrorArtefact.claim`): one server gets it, builds, and publishes (a second
compare-and-set: refused if a mirror as new is already there, or the lease passed to another);
the others wait for it, as requests inside one process wait for one build of an index
(:class:`kgservice.stores.versioned.VersionedIndex`). A builder that fails gives the lease back;
one that dies holds it until it ends (``lease_s``), then another server builds.

The version is read before the build, so a stored mirror never claims newer data than it saw (a
change committed during the build moves the version and the next request builds again).
A read-only server reads stored mirrors and builds what is missing for itself only.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from kgservice.disk import replaced, writing
from kgservice.stores.shared import MirrorState

CHUNK_BYTES = 4 << 20  # one (:KgMirrorChunk) holds this much of the gzip'd mirror


class MirrorArtefact(Protocol):
    def state(self) -> MirrorState | None: ...
    def claim(self, owner: str, version: int, lease_s: float) -> bool: ...
    def publish(self, owner: str, version: int, digest: str, chunks: list[bytes]) -> bool: ...
    def release(self, owner: str) -> None: ...
    def chunks(self, version: int) -> list[bytes]: ...


def encode(data: dict[str, Any]) -> bytes:
    """graph.json's bytes, as :func:`kgservice.export.graphjson.write_graph_json` writes them."""
    return json.dumps(data, ensure_ascii=False, indent=None, separators=(",", ":")).encode("utf-8")


def write_bytes(path: Path, raw: bytes) -> None:
    """Atomically: a reader never sees a half-written mirror."""
    path = Path(path)
    with writing(path, "the graph export"):
        path.parent.mkdir(parents=True, exist_ok=True)
        with replaced(path) as fh:
            fh.write(raw)


class SharedMirror:
    """Brings ``path`` to the mirror of a store version, building it only when no other process
    has it or is building it. ``builds`` / ``loads`` count what this process did (/metrics)."""

    def __init__(self, artefact: MirrorArtefact, build: Callable[[], dict[str, Any]], owner: str, *,
                 read_only: bool = False, lease_s: float = 300.0, poll_s: float = 0.25):
        self.artefact, self._build, self.owner = artefact, build, owner
        self.read_only, self.lease_s, self.poll_s = read_only, lease_s, poll_s
        self.builds = 0
        self.loads = 0

    def fetch(self, path: Path, version: int) -> str:
        """``path`` holds a mirror of ``version`` or later; returns "loaded" or "built"."""
        while True:
            st = self.artefact.state()
            if st is not None and st.version is not None and st.version >= version:
                raw = self._load(st)
                if raw is not None:
                    write_bytes(path, raw)
                    self.loads += 1
                    return "loaded"
                return self._build_here(path, version, publish=False)  # pieces lost (a wipe): ours only
            if self.read_only:
                return self._build_here(path, version, publish=False)
            if self.artefact.claim(self.owner, version, self.lease_s):
                return self._build_here(path, version, publish=True)
            time.sleep(self.poll_s)  # another server holds the lease for this version: wait for its publish

    def _load(self, st: MirrorState) -> bytes | None:
        assert st.version is not None
        pieces = self.artefact.chunks(st.version)
        if not pieces or len(pieces) != st.chunks:
            return None
        try:
            raw = gzip.decompress(b"".join(pieces))
        except (OSError, EOFError):
            return None
        return raw if hashlib.sha256(raw).hexdigest() == st.digest else None

    def _build_here(self, path: Path, version: int, *, publish: bool) -> str:
        try:
            raw = encode(self._build())
            write_bytes(path, raw)
            self.builds += 1
            if publish:
                packed = gzip.compress(raw, compresslevel=6)
                chunks = [packed[i:i + CHUNK_BYTES] for i in range(0, len(packed), CHUNK_BYTES)] or [b""]
                self.artefact.publish(self.owner, version, hashlib.sha256(raw).hexdigest(), chunks)
        except BaseException:
            if publish:
                try:
                    self.artefact.release(self.owner)
                except Exception:  # the store is down: the lease ends by itself
                    pass
            raise
        return "built"

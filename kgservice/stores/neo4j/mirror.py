"""The graphify mirror kept in Neo4j (``(:KgMeta {id: 'graphify_mirror'})`` and its
``(:KgMirrorChunk)`` pieces) through the store's named Cypher (``mirror_*.cypher``): a lease to
build one version and a compare-and-set to publish it, so of the servers sharing the database one
builds each version and the others read it (:mod:`kgservice.export.shared_mirror`)."""

from __future__ import annotations

from typing import Any

from kgservice.stores.shared import MirrorState


class Neo4jMirrorArtefact:
    def __init__(self, store: Any):
        self.store = store

    def state(self) -> MirrorState | None:
        rows = self.store.read("mirror_state")
        if not rows:
            return None
        r = rows[0]
        return MirrorState(version=r["version"], digest=r["digest"], chunks=r["chunks"], owner=r["owner"],
                           building=r["building"], leased=bool(r["leased"]))

    def claim(self, owner: str, version: int, lease_s: float) -> bool:
        rows = self.store.write("mirror_claim", owner=owner, version=version, lease_ms=int(lease_s * 1000))
        return bool(rows and rows[0]["granted"])

    def publish(self, owner: str, version: int, digest: str, chunks: list[bytes]) -> bool:
        rows = self.store.write("mirror_publish", owner=owner, version=version, digest=digest, chunks=chunks)
        return bool(rows and rows[0]["published"])

    def release(self, owner: str) -> None:
        self.store.write("mirror_release", owner=owner)

    def chunks(self, version: int) -> list[bytes]:
        return [bytes(r["data"]) for r in self.store.read("mirror_chunks", version=version)]

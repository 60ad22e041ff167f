"""The live ``kg serve`` processes of one Neo4j database: ``(:KgServer)`` heartbeats through the
store's named Cypher (``servers_*.cypher``). The server layer (:mod:`kgservice.server.peers`)
beats and counts; a process that stops cleanly leaves, one that dies drops out when its lease ends."""

from __future__ import annotations

from typing import Any


class Neo4jServerRegistry:
    def __init__(self, store: Any):
        self.store = store

    def beat(self, server_id: str, name: str, lease_s: float, forget_s: float, serves: str = "*") -> int:
        """Renew this server's lease; how many servers are live now (this one included).
        ``serves``: the one workspace it serves, or ``*`` for every workspace of the deployment
        (``kg workspaces rename/delete`` are refused under either)."""
        rows = self.store.write("servers_beat", id=server_id, server_name=name, lease_ms=int(lease_s * 1000),
                                forget_ms=int(forget_s * 1000), serves=serves)
        return int(rows[0]["live"])

    def live(self) -> int:
        return int(self.store.read("servers_live")[0]["live"])

    def leave(self, server_id: str) -> None:
        self.store.write("servers_leave", id=server_id)

"""How many ``kg serve`` processes share this store, so each enforces its share of the limits.

``KG_RATE_LIMIT`` / ``KG_RATE_BURST`` (per key) and ``KG_AUTH_FAIL_RATE`` / ``KG_AUTH_FAIL_BURST``
(per client address) are limits for the whole deployment, which is what a deployer setting "20
requests a second per key" expects: with N servers behind a balancer each server lets through
1/N of them. N comes from the store: every server renews a heartbeat there every
:data:`HEARTBEAT_S` seconds (a lease of :data:`LEASE_S`), and counts the live ones. A balancer
that spreads requests evenly (round robin, least connections) then admits the setting across
the deployment; one that pins a client to one server admits 1/N of it for that client.

Why not one shared counter in the store: it would cost a write transaction per request (on a
cluster, a consensus round on the leader, and transaction log that grows with traffic), where
this costs one small write per server every ten seconds. A store outage keeps the last count.

A server that stops cleanly removes its heartbeat; one that dies drops out when its lease ends,
so for up to a minute the others keep a share too small (stricter, never looser). A read-only
server (``KG_READ_ONLY``) cannot write a heartbeat: it counts the others and itself.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from typing import Any

HEARTBEAT_S = 10.0  # seconds between heartbeats
LEASE_S = 60.0  # a heartbeat counts for this long (six missed beats: a loaded machine is not "gone")
FORGET_S = 3600.0  # heartbeats whose lease ended this long ago are deleted

log = logging.getLogger("kgservice.server.peers")


class Peers:
    def __init__(self, registry: Any, read_only: bool = False, serves: str = "*"):
        self.registry = registry  # None: this server owns its store (embedded): alone by definition
        self.read_only = read_only
        self.serves = serves  # the one workspace this server serves, or "*": every workspace
        self.id = uuid.uuid4().hex
        self.name = f"{socket.gethostname()}:{os.getpid()}"
        self.count = 1
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def share(self) -> int:
        """How many servers the limits are shared out among (>= 1)."""
        return max(1, self.count)

    def beat(self) -> None:
        """Renew this server's heartbeat and count the live servers (the thread calls it)."""
        if self.registry is None:
            return
        try:
            if self.read_only:
                self.count = self.registry.live() + 1
            else:
                self.count = self.registry.beat(self.id, self.name, LEASE_S, FORGET_S, serves=self.serves)
        except Exception as exc:  # the store is down: keep the last count, say so once per beat
            log.warning("server heartbeat failed (%s: %s); the rate limits keep the share of %d server(s)",
                        type(exc).__name__, exc, self.count)

    def start(self) -> None:
        if self.registry is None or self._thread is not None:
            return

        def run() -> None:  # the first beat at once, off the event loop (the port opens meanwhile)
            self.beat()
            while not self._stop.wait(HEARTBEAT_S):
                self.beat()

        self._thread = threading.Thread(target=run, name="kg-peers", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop beating and take this server's heartbeat away (the others' share grows at once)."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        if not self.read_only:
            try:
                self.registry.leave(self.id)
            except Exception:  # the store is down: the lease ends by itself
                pass

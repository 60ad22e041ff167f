"""A small round-robin HTTP load balancer on loopback, the stand-in for nginx / an ALB in the
multi-server tests (none is installed here): each request goes to the next backend in turn,
over a connection of its own from ``source`` (127.0.0.2 by default: the address the servers
are told to trust), with what a TLS-terminating balancer adds:

* ``X-Forwarded-For``: whatever the client sent, then the client's own address;
* ``X-Forwarded-Proto: https`` (it stands for a balancer that terminated TLS);
* ``X-Request-ID``: kept when the client sent one, else ``lb-<n>``.

One request per client connection (``Connection: close`` both ways); bodies by Content-Length
(what httpx sends). ``served`` lists the backend index of each request, in order, so a test can
say which server answered."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

HOP = {b"connection", b"keep-alive", b"proxy-connection", b"te", b"trailer", b"transfer-encoding", b"upgrade"}


class RoundRobin:
    def __init__(self, backends: Sequence[tuple[str, int]], source: str = "127.0.0.2", proto: str = "https"):
        self.backends = list(backends)
        self.source = source
        self.proto = proto
        self.served: list[int] = []
        self.port = 0
        self._n = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="round-robin", daemon=True)

    def __enter__(self) -> "RoundRobin":
        self._thread.start()
        assert self._ready.wait(30), "the proxy did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            line, *raw = head[:-4].split(b"\r\n")
            headers = [tuple(h.split(b":", 1)) for h in raw]
            headers = [(k.strip(), v.strip()) for k, v in headers]
            length = next((int(v) for k, v in headers if k.lower() == b"content-length"), 0)
            body = await reader.readexactly(length) if length else b""
            n, self._n = self._n, self._n + 1
            index = n % len(self.backends)
            self.served.append(index)
            peer = writer.get_extra_info("peername")[0]
            sent_for = [v for k, v in headers if k.lower() == b"x-forwarded-for"]
            rid = next((v for k, v in headers if k.lower() == b"x-request-id"), f"lb-{n}".encode())
            kept = [(k, v) for k, v in headers
                    if k.lower() not in HOP | {b"x-forwarded-for", b"x-forwarded-proto", b"x-request-id"}]
            forwarded = b", ".join([*sent_for, peer.encode()])
            kept += [(b"X-Forwarded-For", forwarded), (b"X-Forwarded-Proto", self.proto.encode()),
                     (b"X-Request-ID", rid), (b"Connection", b"close")]
            host, port = self.backends[index]
            up_reader, up_writer = await asyncio.open_connection(host, port, local_addr=(self.source, 0))
            up_writer.write(line + b"\r\n" + b"".join(k + b": " + v + b"\r\n" for k, v in kept) + b"\r\n" + body)
            await up_writer.drain()
            while chunk := await up_reader.read(65536):
                writer.write(chunk)
                await writer.drain()
            up_writer.close()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

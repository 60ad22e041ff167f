"""The page's static files, cached by content hash and sent compressed.

Every file under ``static/`` is named in the pages by ``asset(path)``: ``/ui/static/PATH?v=HASH``,
the first 16 hex digits of its SHA-256. A request carrying the current hash may be kept by the
browser for a year (``immutable``): a changed file has a new hash, so a new URL. A request without
it (or with an old one) gets ``no-cache`` and an ETag, so the browser checks before reusing it.
Text files (scripts, styles, maps, SVG) go gzip-compressed to a client that accepts it, compressed
once and kept in memory; the vendored libraries are most of the page's weight (Explore: 459 KB).

Only files present when the server starts are served; a path outside ``static/`` (``..``, an
absolute path) is simply not in the table, so it is a 404.
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
import threading
from dataclasses import dataclass
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response

COMPRESSIBLE = (".js", ".css", ".map", ".svg", ".json", ".txt", ".html")
YEAR = 365 * 24 * 3600
PREFIX = "/ui/static/"


@dataclass
class Asset:
    path: Path
    digest: str  # the first 16 hex digits of the content's SHA-256: the URL's ?v=
    media_type: str
    body: bytes | None = None
    gzipped: bytes | None = None  # None: not compressed yet (or not worth it: see Assets.gzipped)


class Assets:
    """The table of static files, hashed once at start-up (bodies read and compressed on first
    use, so a server that never serves Swagger's 1.8 MB bundle never holds it)."""

    def __init__(self, root: Path):
        self.root = root
        self._lock = threading.Lock()
        self.table: dict[str, Asset] = {}
        for f in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = f.relative_to(root).as_posix()
            digest = hashlib.sha256(f.read_bytes()).hexdigest()[:16]
            media = mimetypes.guess_type(f.name)[0] or "application/octet-stream"
            if media.startswith("text/") or media in ("application/javascript", "application/json"):
                media += "; charset=utf-8"
            self.table[rel] = Asset(f, digest, media)

    def url(self, rel: str) -> str:
        """The URL of ``rel`` (relative to static/) with its content hash; a missing file is a
        programming error, raised when the template renders."""
        return f"{PREFIX}{rel}?v={self.table[rel].digest}"

    def _bodies(self, a: Asset, want_gzip: bool) -> bytes:
        with self._lock:
            if a.body is None:
                a.body = a.path.read_bytes()
            if want_gzip and a.gzipped is None and a.path.suffix in COMPRESSIBLE:
                packed = gzip.compress(a.body, compresslevel=9, mtime=0)
                a.gzipped = packed if len(packed) < len(a.body) else b""
            return a.gzipped if want_gzip and a.gzipped else a.body

    async def serve(self, request: Request) -> Response:
        rel = request.path_params["path"]
        a = self.table.get(rel)
        if a is None or request.method not in ("GET", "HEAD"):
            return Response("Not Found", status_code=404, media_type="text/plain")
        etag = f'"{a.digest}"'
        cache = (f"public, max-age={YEAR}, immutable" if request.query_params.get("v") == a.digest
                 else "no-cache")
        headers = {"cache-control": cache, "etag": etag, "vary": "Accept-Encoding"}
        if etag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers=headers)
        accepts = "gzip" in request.headers.get("accept-encoding", "").lower()
        from starlette.concurrency import run_in_threadpool

        body = await run_in_threadpool(self._bodies, a, accepts and a.path.suffix in COMPRESSIBLE)
        if accepts and a.gzipped and body is a.gzipped:
            headers["content-encoding"] = "gzip"
        if request.method == "HEAD":
            return Response(status_code=200, headers={**headers, "content-length": str(len(body))},
                            media_type=a.media_type)
        return Response(body, headers=headers, media_type=a.media_type)

"""``kg ingest --server URL`` and ``kg ask --server URL``: the same work, done by a running
server through its REST API.

Beside an embedded ``kg serve`` nothing else may write its data directory, and a team's
Neo4j server is often reached only through the service; so the command can send what it
would have ingested to ``POST /v1/ingest`` (one job per file, with the caller's API key),
wait for each job and print what it stored. An idempotency key per file content makes a
re-run after a dropped connection resubmit nothing new.

A question sent to ``POST /v1/ask`` is answered by a process that has its embedder, indexes
and model client loaded already: the asking process loads none of them (no knowledge base,
no numpy), so a question costs the CLI's start and one request.
"""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgservice.errors import InputError, ServiceError

POLL_S = 0.3
DONE = ("done", "failed", "cancelled")


class RemoteError(ServiceError):
    """The server failed or could not be reached (exit 1)."""


class RemoteRefused(InputError):
    """The server refused the request as given: key, role, or the payload (exit 2)."""


@dataclass
class Submitted:
    path: Path
    job_id: str
    job: dict[str, Any] | None = None
    bookmark: str | None = None  # the 202's X-KG-Bookmark: the polls wait for it on any server


def _payloads(paths: Sequence[Path], mode: str | None) -> list[tuple[Path, dict[str, Any]]]:
    from kgservice.convert import format_of
    from kgservice.pipeline.ingest import check_mode, mode_for, split_inputs

    check_mode(mode)
    units, texts = split_inputs(paths)
    out: list[tuple[Path, dict[str, Any]]] = []
    for f in [*units, *texts]:
        if f in texts and format_of(f) is not None:  # a PDF, DOCX ...: sent as it is, converted by the server
            from kgservice.convert.source import source_of
            from kgservice.disk import read_input

            data = read_input(f)
            source_of(data, f, keep_original=False)  # an unreadable file is named here, before anything is sent
            out.append((f, {"file": base64.b64encode(data).decode("ascii"), "mode": mode_for(f, mode),
                            "doc": f.name}))
            continue
        try:
            body = f.read_text("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{f}: file is not valid UTF-8 (byte {exc.start})") from None
        if not body.strip():
            raise InputError(f"{f}: the file is empty")
        doc = f.name
        if f in units:
            out.append((f, {"units": body, "doc": doc}))
        else:
            out.append((f, {"text": body, "mode": mode_for(f, mode), "doc": doc}))
    return out


def _detail(r: Any) -> str:
    try:
        data = r.json()
        detail = data.get("detail", data) if isinstance(data, dict) else data
    except ValueError:
        detail = r.text
    return str(detail)[:2000]


def _check(r: Any, what: str, server: str) -> Any:
    if r.status_code < 400:
        return r.json()
    if r.status_code in (400, 401, 403, 404, 409, 413, 422):
        raise RemoteRefused(f"{server} refused {what} ({r.status_code}): {_detail(r)}")
    raise RemoteError(f"{server} failed {what} ({r.status_code}): {_detail(r)}")


def _base(server: str) -> str:
    base = server.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise InputError(f"--server must be an http:// or https:// URL, got {server!r}")
    return base


class _Reply:
    """What :func:`_check` reads of a response (httpx's names), for a reply read with http.client."""

    def __init__(self, status: int, body: bytes) -> None:
        self.status_code, self.text = status, body.decode("utf-8", "replace")

    def json(self) -> Any:
        import json

        return json.loads(self.text)


def ask_remote(server: str, key: str | None, body: dict[str, Any], *, timeout: float = 600.0,
               on_event: Callable[[str, dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """``POST /v1/ask`` on a running server: its JSON reply. ``key``: a reader key (none for a
    server started with ``--no-auth``). The standard library's HTTP client, not httpx: one
    request does not need a connection pool, and httpx's import (HTTP/2, async backends) costs
    more CPU than the rest of this command.

    With ``on_event`` the answer is asked for as a stream (``Accept: text/event-stream``):
    ``on_event(kind, data)`` gets each ``round`` and ``answer_*`` event as the server sends it
    (the answer's text while the model writes it), and the reply returned is the one the JSON
    request gives: the checked ``answer`` event's fields with ``rounds`` from the round events."""
    import http.client
    import json
    from urllib.parse import urlsplit

    base = _base(server)
    url = urlsplit(base)
    headers = {"Content-Type": "application/json",
               "Accept": "text/event-stream" if on_event is not None else "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    conn_type = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
    streamed: dict[str, Any] | None = None
    try:
        conn = conn_type(url.hostname or "", url.port, timeout=timeout)
        try:
            conn.request("POST", url.path.rstrip("/") + "/v1/ask", body=json.dumps(body).encode("utf-8"),
                         headers=headers)
            r = conn.getresponse()
            if on_event is not None and r.status == 200 and r.getheader("content-type", "").startswith("text/event-stream"):
                streamed = _read_answer_stream(r, base, on_event)
            else:
                reply = _Reply(r.status, r.read())
        finally:
            conn.close()
    except (OSError, http.client.HTTPException) as exc:
        raise RemoteError(f"cannot reach {base} ({type(exc).__name__}: {exc}); is `kg serve` running there?") from None
    if streamed is not None:
        return streamed
    try:
        return _check(reply, "the question", base)
    except ValueError:  # not JSON: not a kg serve
        raise RemoteError(f"{base} did not answer as kg serve does (HTTP {reply.status_code}): "
                          f"{reply.text[:300]}") from None


def _sse_events(lines: Iterator[bytes]) -> Iterator[tuple[str, str]]:
    """(event, data) of each block of a server-sent event stream, as its blank line arrives."""
    kind = "message"
    data: list[str] = []
    for raw in lines:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data:
                yield kind, "\n".join(data)
            kind, data = "message", []
        elif line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))


def _read_answer_stream(r: Any, base: str, on_event: Callable[[str, dict[str, Any]], None]) -> dict[str, Any]:
    """The SSE answer (``POST /v1/ask``'s events) read as it comes; the JSON reply's shape at its end."""
    import json

    rounds: list[dict[str, Any]] = []
    for kind, data in _sse_events(iter(r.readline, b"")):
        try:
            d = json.loads(data)
        except ValueError:
            raise RemoteError(f"{base} sent an event that is not JSON ({kind}): {data[:300]}") from None
        if kind == "round":
            rounds.append(d)
            on_event(kind, d)
        elif kind.startswith("answer_"):
            on_event(kind, d)
        elif kind == "answer":
            return {**d, "rounds": rounds}
        elif kind == "error":
            status = int(d.get("status") or 500)
            cls = RemoteRefused if status in (400, 401, 403, 404, 409, 413, 422) else RemoteError
            raise cls(f"{base} failed the question ({status}): {d.get('detail', '')}")
    raise RemoteError(f"{base} ended the answer's stream before the checked answer; ask again")


def ingest_remote(server: str, key: str | None, paths: Sequence[Path], mode: str | None = None, *,
                  timeout: float = 600.0, wait: bool = True) -> list[Submitted]:
    """Submit every file (all are read and checked first: a bad path submits nothing), then wait
    for each job until it is done, failed or cancelled (``timeout`` seconds in all)."""
    import httpx

    if not key:
        raise InputError("--server needs an API key with the writer role: --key KEY or KG_API_KEY "
                         "(an admin makes one with `kg keys create --role writer` or POST /v1/admin/keys)")
    base = _base(server)
    items = _payloads(paths, mode)
    headers = {"Authorization": f"Bearer {key}"}
    done: list[Submitted] = []
    try:
        with httpx.Client(base_url=base, headers=headers, timeout=60) as http:
            for path, payload in items:
                idem = "kg-ingest-" + hashlib.sha256(repr(sorted(payload.items())).encode("utf-8")).hexdigest()[:32]
                r = http.post("/v1/ingest", json=payload, headers={"Idempotency-Key": idem})
                accepted = _check(r, f"{path}", base)
                done.append(Submitted(path, accepted["job_id"], bookmark=accepted.get("bookmark")))
            if not wait:
                return done
            deadline = time.monotonic() + timeout
            for s in done:
                while True:
                    wait_for = {"X-KG-Bookmark": s.bookmark} if s.bookmark else {}  # behind a balancer: no 404
                    s.job = _check(http.get(f"/v1/jobs/{s.job_id}", headers=wait_for),
                                   f"the status of job {s.job_id}", base)
                    if s.job["status"] in DONE:
                        break
                    if time.monotonic() > deadline:
                        raise RemoteError(f"job {s.job_id} ({s.path}) is still {s.job['status']} after {timeout:.0f} s; "
                                          f"follow it with GET {base}/v1/jobs/{s.job_id}")
                    time.sleep(POLL_S)
    except httpx.HTTPError as exc:
        raise RemoteError(f"cannot reach {base} ({type(exc).__name__}: {exc}); is `kg serve` running there?") from None
    return done


# A document job's result is the change's report (``added``, ``unchanged``, ...) plus the
# ``units_*`` names a unit job's result has: printed once, under the latter.
_TWINS = {"added": "units_added", "unchanged": "units_unchanged"}
_ALWAYS = ("units_added", "units_unchanged")  # the rest only when not 0: a job's result has a dozen counters


def summary_line(s: Submitted) -> str:
    job = s.job or {}
    status = job.get("status", "queued")
    if status == "done":
        r = job.get("result") or {}
        counts = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in r.items()
                           if isinstance(v, (int, float)) and not isinstance(v, bool)
                           and _TWINS.get(k) not in r and (v or k in _ALWAYS))
        return f"{s.path}: done (job {s.job_id}){': ' + counts if counts else ''}"
    if status == "failed":
        return f"{s.path}: failed (job {s.job_id}, attempt {job.get('attempts')}): {job.get('error')}"
    return f"{s.path}: {status} (job {s.job_id})"


__all__ = ["RemoteError", "RemoteRefused", "Submitted", "ask_remote", "ingest_remote", "summary_line"]

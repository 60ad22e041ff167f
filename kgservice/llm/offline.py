"""``kgoffline/...``: a deterministic offline provider, called directly by the LLM client.

**This is a scripted stand-in for a real model, not a model.** It exists so that tests and
the demo run the real code path (request -> provider -> JSON -> pydantic -> repair/retry)
with no network and no API key, and give the same answer every time.

:func:`completion` takes the same ``model`` / ``messages`` arguments as
``litellm.completion`` and returns a reply of the same shape (``choices[0].message.content``,
``usage``), so :class:`kgservice.llm.client.LLM` treats both alike; it is called directly
rather than registered as a litellm provider, so a process that only talks to the stand-ins
never imports litellm (seconds of CPU: most of an uncached offline ``kg ask``). Its errors
(:class:`ProviderError` subclasses named as litellm names its own: ``Timeout``,
``APIConnectionError``...) say whether retrying can help (``transient``).
Replies are decided, in this order:

1. **Task overrides** (tests only): ``SCRIPT.override_task("answer", fn)`` answers every
   request of that task with ``fn(payload)`` — used to play a misbehaving model.
2. **Recordings**: a table keyed by :func:`kgservice.llm.keys.request_key` (sha256 of the
   request's roles and texts). Loaded from ``kgservice/llm/recordings/*.jsonl``, from
   ``KG_LLM_RECORDINGS`` files, or added in code (``SCRIPT.add``). A line is
   ``{"key": ..., "response": "..."}`` or ``{"key": ..., "responses": ["...", {"error": "timeout"}]}``
   (replies are used in order, the last one repeats; ``error`` is one of ``timeout``,
   ``connection``, ``rate_limit``, ``server``, ``bad_request`` and raises the matching
   error). ``KG_LLM_RECORD=file.jsonl`` writes such lines from any model, hosted ones
   included, so a real model's replies can be replayed offline.
3. A health check (``{"task": "ping"}``, :mod:`kgservice.llm.check`) gets ``{"ok": true}``.
4. Otherwise the variant decides:

   * ``kgoffline/scripted`` — **fails loudly** (:class:`NotFoundError`, not retried),
     naming the request key, so a test can never silently get a made-up answer.
   * ``kgoffline/rules`` — for the demo only: :mod:`kgservice.llm.rules`, a documented,
     deterministic rule-based responder (a pattern extractor for simple declarative
     sentences, a coverage-rule drill-down judge, an answer that restates the selected
     units, written in the answer prompt's text format). It understands little; anything it
     cannot parse it leaves out. A task override's dict is sent as JSON: an answer scripted
     that way plays a model replying in the earlier JSON format, which is still read.

With ``stream=True`` the same reply comes token by token (:func:`pieces`), in chunks shaped as
litellm streams them (``choices[0].delta.content``, ``usage`` on the last);
``KG_OFFLINE_STREAM_DELAY`` (seconds, default 0) makes the stand-in wait before each token, to
play a slowly streaming model in the streaming tests and benchmark.

Token usage is counted with the cl100k tokenizer (tiktoken, reading the table litellm ships,
so no download) and OpenAI's per-message overhead — the figures litellm's ``token_counter``
gives — so the per-query token figures have the same unit as a hosted model's.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgservice.errors import InputFileError, InvalidArgument
from kgservice.llm.keys import request_key

PROVIDER = "kgoffline"
VARIANTS = {
    "scripted": "recordings only; a request with no recording fails loudly",
    "rules": "recordings first, then the rule-based demo responder (kgservice.llm.rules)",
}
RECORDINGS_DIR = Path(__file__).with_name("recordings")

Reply = str | dict[str, str]


class Script:
    """The scripted table: request key -> replies, plus per-task overrides for tests."""

    def __init__(self) -> None:
        self._replies: dict[str, list[Reply]] = {}
        self._overrides: dict[str, Callable[[dict[str, Any]], Any]] = {}
        self._loaded: dict[Path, int] = {}
        self._lock = threading.Lock()

    def add(self, key: str, *replies: Reply) -> None:
        if not replies:
            raise InvalidArgument("add() needs at least one reply")
        with self._lock:
            self._replies[key] = list(replies)

    def load(self, path: Path) -> int:
        """Read a JSONL recording file (again only if it changed); returns lines read."""
        path = Path(path)
        if not path.exists():
            raise InputFileError(f"LLM recording file not found: {path}")
        stamp = path.stat().st_mtime_ns
        if self._loaded.get(path) == stamp:
            return 0
        n = 0
        for lineno, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith("//"):
                continue
            try:
                rec = json.loads(line)
                key = rec["key"]
                replies = rec["responses"] if "responses" in rec else [rec["response"]]
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise InputFileError(f"{path}:{lineno}: not a recording line ({exc})") from None
            self.add(key, *replies)
            n += 1
        self._loaded[path] = stamp
        return n

    def take(self, key: str) -> Reply | None:
        with self._lock:
            queue = self._replies.get(key)
            if not queue:
                return None
            return queue.pop(0) if len(queue) > 1 else queue[0]

    def override_task(self, task: str, fn: Callable[[dict[str, Any]], Any]) -> None:
        self._overrides[task] = fn

    def override_for(self, task: str | None) -> Callable[[dict[str, Any]], Any] | None:
        return self._overrides.get(task or "")

    def clear(self) -> None:
        with self._lock:
            self._replies.clear()
            self._overrides.clear()
            self._loaded.clear()

    def has_replies(self) -> bool:
        """Whether anything is scripted: a recorded reply or a task override."""
        with self._lock:
            return bool(self._replies or self._overrides)


SCRIPT = Script()


def load_recordings(paths: Iterable[Path]) -> None:
    for p in paths:
        SCRIPT.load(Path(p))


def payload_of(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON input object every kgservice request carries in its first user message."""
    for m in messages:
        if m.get("role") == "user":
            try:
                data = json.loads(m.get("content") or "")
            except json.JSONDecodeError:
                return {}
            return data if isinstance(data, dict) else {}
    return {}


class ProviderError(Exception):
    """A failure the stand-in plays (or a request it cannot serve); ``transient`` says whether
    retrying could help, as litellm's error classes do for a hosted model."""

    transient = False

    def __init__(self, message: str, model: str = ""):
        super().__init__(message)
        self.model = model


class Timeout(ProviderError):
    transient = True


class APIConnectionError(ProviderError):
    transient = True


class RateLimitError(ProviderError):
    transient = True


class InternalServerError(ProviderError):
    transient = True


class BadRequestError(ProviderError):
    pass


class NotFoundError(ProviderError):
    pass


_ERRORS: dict[str, type[ProviderError]] = {
    "timeout": Timeout,
    "connection": APIConnectionError,
    "rate_limit": RateLimitError,
    "server": InternalServerError,
    "bad_request": BadRequestError,
}


# --- the reply, shaped like litellm's (what the client reads of it) ---------------------------

@dataclass
class Message:
    content: str
    role: str = "assistant"


@dataclass
class Choice:
    message: Message
    index: int = 0
    finish_reason: str = "stop"


@dataclass
class Usage:
    prompt_tokens: int
    completion_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class Response:
    model: str
    choices: list[Choice]
    usage: Usage = field(default_factory=lambda: Usage(0, 0))


# --- token counts ---------------------------------------------------------------------------

_ENCODING: list[Any] = []  # [cl100k encoding or None], filled on first use
_ENCODING_LOCK = threading.Lock()


def tokenizer() -> Any:
    """The cl100k tokenizer, read offline from the table litellm ships (its own token counter
    reads the same file), or None when tiktoken or the table is missing."""
    with _ENCODING_LOCK:
        if not _ENCODING:
            _ENCODING.append(_load_encoding())
        return _ENCODING[0]


_CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def _load_encoding() -> Any:
    import hashlib
    import importlib.util
    import os

    try:
        spec = importlib.util.find_spec("litellm")
        if spec is None or not spec.submodule_search_locations:
            return None
        tables = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
        # tiktoken's cache file name; without it tiktoken would download the table: never here
        if not (tables / hashlib.sha1(_CL100K_URL.encode()).hexdigest()).is_file():
            return None
        import tiktoken

        saved = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = str(tables)  # what litellm sets at its import, for the same file
        try:
            return tiktoken.get_encoding("cl100k_base")
        finally:
            if saved is None:
                os.environ.pop("TIKTOKEN_CACHE_DIR", None)
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = saved
    except Exception:  # noqa: BLE001 - no tokenizer: counted by characters below
        return None


def _count(enc: Any, text: str) -> int:
    return len(enc.encode(text, disallowed_special=())) if enc is not None else (len(text) + 3) // 4


def _tokens(messages: list[dict[str, Any]], content: str) -> tuple[int, int]:
    """(prompt, completion) tokens: OpenAI's chat formula (3 per message, 1 per name, 3 to prime
    the reply), which is what ``litellm.token_counter`` returns for these requests."""
    enc = tokenizer()
    prompt = 3
    for m in messages:
        prompt += 3
        for k, v in m.items():
            prompt += _count(enc, str(v)) + (1 if k == "name" else 0)
    return prompt, _count(enc, content)


# --- the provider -------------------------------------------------------------------------------

_PACKAGED_LOCK = threading.Lock()


def _load_packaged() -> None:
    """The packaged recordings, read once (again after ``SCRIPT.clear()``, or when a file changed)."""
    if RECORDINGS_DIR.is_dir():
        with _PACKAGED_LOCK:
            for path in sorted(RECORDINGS_DIR.glob("*.jsonl")):
                SCRIPT.load(path)


def completion(model: str, messages: list[dict[str, Any]], stream: bool = False, **_options: Any) -> Any:
    """One request to ``kgoffline/<variant>``: the reply (with ``stream``, an iterator of its
    chunks: :func:`streamed`), or the :class:`ProviderError` a recording or the variant decides,
    raised before any chunk. Options a hosted model takes (temperature, timeout, response
    format...) change nothing here and are ignored."""
    variant = model.split("/", 1)[-1]
    full = f"{PROVIDER}/{variant}"
    if not model.startswith(f"{PROVIDER}/") or variant not in VARIANTS:
        raise NotFoundError(f"unknown offline model {full!r}; known: " + ", ".join(f"{PROVIDER}/{v}" for v in VARIANTS),
                            full)
    _load_packaged()
    payload = payload_of(messages)
    task = payload.get("task")
    override = SCRIPT.override_for(task)
    if override is not None:
        reply: Reply | None = _as_text(override(payload))
    else:
        reply = SCRIPT.take(request_key(messages))
    if reply is None and task == "ping":
        reply = '{"ok": true}'  # a health check (kgservice.llm.check), not an answer: every variant replies
    if reply is None:
        if variant != "rules":
            raise NotFoundError(
                f"{full}: no recorded response for this request (task {task!r}, key "
                f"{request_key(messages)}). The scripted provider never invents answers: record one "
                f"(KG_LLM_RECORD with a real model, or SCRIPT.add), use KG_LLM_MODEL=kgoffline/rules "
                f"for the rule-based demo stand-in, or configure a hosted model.", full)
        from kgservice.llm import rules

        reply = rules.respond(payload)
    if isinstance(reply, dict):
        kind = reply.get("error", "")
        error = _ERRORS.get(kind)
        if error is None:
            raise BadRequestError(f"recording has unknown error kind {kind!r}", full)
        raise error(f"{full}: scripted {kind} error", full)
    prompt_tokens, completion_tokens = _tokens(messages, reply)
    if stream:
        return streamed(full, reply, Usage(prompt_tokens, completion_tokens))
    return Response(model=full, choices=[Choice(Message(reply))], usage=Usage(prompt_tokens, completion_tokens))


# --- streaming --------------------------------------------------------------------------------

@dataclass
class Delta:
    content: str | None
    role: str = "assistant"


@dataclass
class StreamChoice:
    delta: Delta
    index: int = 0
    finish_reason: str | None = None


@dataclass
class Chunk:
    """One piece of a streamed reply, shaped as litellm streams a hosted model's."""

    model: str
    choices: list[StreamChoice]
    usage: Usage | None = None


def streamed(model: str, reply: str, usage: Usage) -> Iterator[Chunk]:
    """The reply token by token (:func:`pieces`), each after :func:`stream_delay` seconds, the
    token counts on the last chunk (as a hosted model sends them with ``include_usage``)."""
    delay = stream_delay()
    parts = pieces(reply)
    for i, part in enumerate(parts):
        if delay:
            time.sleep(delay)
        last = i == len(parts) - 1
        yield Chunk(model, [StreamChoice(Delta(part), finish_reason="stop" if last else None)], usage if last else None)


_PIECE = re.compile(r"\s*(?:\w+|[^\w\s])", re.S)


def pieces(reply: str) -> list[str]:
    """The reply cut into the tokens a model would stream it in: the cl100k tokenizer
    (:func:`tokenizer`), bytes held back until they form whole characters, so each piece is
    text; word-sized pieces if the tokenizer cannot be had. Joined back they are the reply,
    character for character."""
    enc = tokenizer()
    if enc is not None:
        out: list[str] = []
        held = b""
        for t in enc.encode(reply, disallowed_special=()):
            held += enc.decode_single_token_bytes(t)
            try:
                text = held.decode("utf-8")
            except UnicodeDecodeError:
                continue  # a character split across tokens: wait for the rest of it
            out.append(text)
            held = b""
        if not held and "".join(out) == reply:
            return out or [""]
    out = _PIECE.findall(reply)
    tail = reply[sum(map(len, out)):]  # trailing blanks
    return out + [tail] if tail else (out or [""])


def stream_delay() -> float:
    """Seconds the offline stand-in waits before each streamed token (``KG_OFFLINE_STREAM_DELAY``,
    default 0): a slow model, for the streaming tests and benchmark."""
    raw = os.environ.get("KG_OFFLINE_STREAM_DELAY", "").strip()
    if not raw:
        return 0.0
    try:
        value = float(raw)
    except ValueError:
        raise InvalidArgument(f"KG_OFFLINE_STREAM_DELAY must be a number of seconds, got {raw!r}") from None
    if not 0 <= value <= 10:
        raise InvalidArgument(f"KG_OFFLINE_STREAM_DELAY must be 0..10 seconds, got {raw!r}")
    return value


def _as_text(value: Any) -> Reply:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and set(value) == {"error"}:
        return value
    return json.dumps(value, ensure_ascii=False)

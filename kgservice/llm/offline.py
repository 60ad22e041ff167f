"""``kgoffline/...``: a deterministic offline provider registered with litellm.

**This is a scripted stand-in for a real model, not a model.** It exists so that tests and
the demo run the real code path (``litellm.completion`` -> provider -> JSON -> pydantic ->
repair/retry) with no network and no API key, and give the same answer every time.

It is registered through ``litellm.custom_provider_map`` as a ``litellm.CustomLLM``
subclass, so ``litellm.completion(model="kgoffline/<variant>", ...)`` reaches it.
Replies are decided, in this order:

1. **Task overrides** (tests only): ``SCRIPT.override_task("answer", fn)`` answers every
   request of that task with ``fn(payload)`` — used to play a misbehaving model.
2. **Recordings**: a table keyed by :func:`kgservice.llm.keys.request_key` (sha256 of the
   request's roles and texts). Loaded from ``kgservice/llm/recordings/*.jsonl``, from
   ``KG_LLM_RECORDINGS`` files, or added in code (``SCRIPT.add``). A line is
   ``{"key": ..., "response": "..."}`` or ``{"key": ..., "responses": ["...", {"error": "timeout"}]}``
   (replies are used in order, the last one repeats; ``error`` is one of ``timeout``,
   ``connection``, ``rate_limit``, ``server``, ``bad_request`` and raises the matching
   litellm exception). ``KG_LLM_RECORD=file.jsonl`` writes such lines from any model,
   hosted ones included, so a real model's replies can be replayed offline.
3. A health check (``{"task": "ping"}``, :mod:`kgservice.llm.check`) gets ``{"ok": true}``.
4. Otherwise the variant decides:

   * ``kgoffline/scripted`` — **fails loudly** (litellm ``NotFoundError``, not retried),
     naming the request key, so a test can never silently get a made-up answer.
   * ``kgoffline/rules`` — for the demo only: :mod:`kgservice.llm.rules`, a documented,
     deterministic rule-based responder (a pattern extractor for simple declarative
     sentences, a coverage-rule drill-down judge, an answer that restates the selected
     units). It understands little; anything it cannot parse it leaves out.

Token usage is counted with ``litellm.token_counter`` (its bundled tokenizer, offline) so
the per-query token figures have the same unit as a hosted model's.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import litellm
from litellm import CustomLLM
from litellm.types.utils import Usage

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


_ERRORS: dict[str, Callable[[str, str], Exception]] = {
    "timeout": lambda msg, model: litellm.Timeout(message=msg, model=model, llm_provider=PROVIDER),
    "connection": lambda msg, model: litellm.APIConnectionError(message=msg, model=model, llm_provider=PROVIDER),
    "rate_limit": lambda msg, model: litellm.RateLimitError(message=msg, model=model, llm_provider=PROVIDER),
    "server": lambda msg, model: litellm.InternalServerError(message=msg, model=model, llm_provider=PROVIDER),
    "bad_request": lambda msg, model: litellm.BadRequestError(message=msg, model=model, llm_provider=PROVIDER),
}


def _tokens(messages: list[dict[str, Any]], content: str) -> tuple[int, int]:
    try:
        return (int(litellm.token_counter(messages=messages)), int(litellm.token_counter(text=content)))
    except Exception:  # pragma: no cover - the bundled tokenizer is always there
        chars = sum(len(str(m.get("content", ""))) for m in messages)
        return (chars + 3) // 4, (len(content) + 3) // 4


class OfflineLLM(CustomLLM):
    """The litellm custom handler behind ``kgoffline/<variant>``."""

    def completion(self, model: str, messages: list, api_base: str, custom_prompt_dict: dict, model_response: Any,
                   print_verbose: Callable, encoding: Any, api_key: Any, logging_obj: Any, optional_params: dict,
                   acompletion: Any = None, litellm_params: Any = None, logger_fn: Any = None, headers: Any = None,
                   timeout: Any = None, client: Any = None) -> Any:
        variant = model.split("/", 1)[-1]
        full = f"{PROVIDER}/{variant}"
        if variant not in VARIANTS:
            raise litellm.NotFoundError(message=f"unknown offline model {full!r}; known: "
                                        + ", ".join(f"{PROVIDER}/{v}" for v in VARIANTS), model=full, llm_provider=PROVIDER)
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
                raise litellm.NotFoundError(
                    message=(f"{full}: no recorded response for this request (task {task!r}, key "
                             f"{request_key(messages)}). The scripted provider never invents answers: record one "
                             f"(KG_LLM_RECORD with a real model, or SCRIPT.add), use KG_LLM_MODEL=kgoffline/rules "
                             f"for the rule-based demo stand-in, or configure a hosted model."),
                    model=full, llm_provider=PROVIDER)
            from kgservice.llm import rules

            reply = rules.respond(payload)
        if isinstance(reply, dict):
            kind = reply.get("error", "")
            make = _ERRORS.get(kind)
            if make is None:
                raise litellm.BadRequestError(message=f"recording has unknown error kind {kind!r}", model=full,
                                              llm_provider=PROVIDER)
            raise make(f"{full}: scripted {kind} error", full)
        prompt_tokens, completion_tokens = _tokens(messages, reply)
        model_response.choices[0].message.content = reply
        model_response.model = full
        model_response.usage = Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                                     total_tokens=prompt_tokens + completion_tokens)
        return model_response


def _as_text(value: Any) -> Reply:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and set(value) == {"error"}:
        return value
    return json.dumps(value, ensure_ascii=False)


_HANDLER = OfflineLLM()


def register(litellm_module: Any = litellm) -> None:
    """Add the provider to ``litellm.custom_provider_map`` (once) and load packaged recordings."""
    current = list(getattr(litellm_module, "custom_provider_map", None) or [])
    if not any(entry.get("provider") == PROVIDER for entry in current):
        current.append({"provider": PROVIDER, "custom_handler": _HANDLER})
        litellm_module.custom_provider_map = current
    if RECORDINGS_DIR.is_dir():
        for path in sorted(RECORDINGS_DIR.glob("*.jsonl")):
            SCRIPT.load(path)

"""``LLM.complete_json(messages, schema_model, purpose)``: the only place kgservice talks to a model.

* Every request to a model goes through ``litellm.completion`` (``KG_LLM_MODEL=openai/gpt-4o-mini``
  and litellm's usual key variables); the offline stand-ins ``kgoffline/...``
  (:mod:`kgservice.llm.offline`, for tests and the demo) are called directly with the same
  arguments and reply shape, so litellm is imported only when a real model is called.
* Provider errors and timeouts are retried with exponential backoff (tenacity); errors
  that retrying cannot fix (bad request, auth, no recording) fail at once.
* The reply must be one JSON object valid for ``schema_model`` (pydantic) and for an
  optional ``validate`` callback (or, for a step that passes ``parse``, the text format its
  prompt asks for: the answer's, :mod:`kgservice.answer.reply`). If it is not, the model is shown its reply and the
  error and asked again (``repair_attempts`` times); then :class:`LLMOutputError` says
  what was wrong. Nothing half-valid is ever returned.
* Calls and tokens are counted per *purpose*. The purposes are fixed
  (:data:`PURPOSES`); at query time only ``key_nodes``, ``drilldown`` and ``answer`` exist
  (DESIGN §5, invariant 4), which the tests check by counting calls at the provider boundary
  (:func:`provider_completion`).
* Given a :class:`StreamSink`, the reply is streamed (``stream=True``): the sink sees every
  provider try begin, each piece of text as it arrives, and the verdict on the whole reply
  (valid, or the problems sent back to the model), so a page can show the text at once and
  still never keep a reply that failed the check.
"""

from __future__ import annotations

from kgservice.errors import ConfigError, InvalidArgument, ServiceError
from kgservice.llm.keys import request_key  # noqa: F401 (re-exported)
import json
import os
import re
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

PURPOSES: dict[str, str] = {
    "extract": "ingest (DESIGN §3): text -> units",
    "merge_confirm": "ingest (DESIGN §3): is a new label the same concept as its near-duplicate node? (ambiguous cases only)",
    "key_nodes": "query 4.1: question -> key nodes + key predicates (same extraction path as ingest)",
    "drilldown": "query 4.4: select relevant units, enough?, next seeds and mode, drift",
    "answer": "query 4.5: answer from the hit units only, citing unit ids",
}
QUERY_PURPOSES = frozenset({"key_nodes", "drilldown", "answer"})

M = TypeVar("M", bound=BaseModel)


class StreamSink(Protocol):
    """Who watches a streamed reply (:meth:`LLM.complete_json` with ``stream=``)."""

    def begin(self, attempt: int) -> None:
        """A provider request starts (1, 2, ...: a retry or a repair request counts too);
        what earlier attempts streamed is void."""

    def delta(self, text: str) -> None:
        """The next piece of the reply's text."""

    def checked(self, problems: list[str]) -> None:
        """The whole reply was parsed and validated: no problems = accepted."""


class LLMError(ServiceError, RuntimeError):
    """The LLM step failed; the message says which step, which model and why."""


class LLMProviderError(LLMError):
    """The provider failed (after retries for transient errors, at once for the rest)."""


class LLMOutputError(LLMError):
    """The model's reply stayed invalid after every repair attempt."""

    def __init__(self, message: str, problems: list[str]):
        super().__init__(message)
        self.problems = problems


@dataclass
class PurposeUsage:
    calls: int = 0  # litellm.completion invocations, failed ones included
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0  # provider errors that were retried
    repairs: int = 0  # follow-up requests after an invalid reply
    failures: int = 0  # complete_json calls that raised

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class Usage:
    by_purpose: dict[str, PurposeUsage] = field(default_factory=dict)

    def of(self, purpose: str) -> PurposeUsage:
        return self.by_purpose.setdefault(purpose, PurposeUsage())

    @property
    def calls(self) -> int:
        return sum(u.calls for u in self.by_purpose.values())

    @property
    def total_tokens(self) -> int:
        return sum(u.total_tokens for u in self.by_purpose.values())

    def snapshot(self) -> "Usage":
        return Usage({k: PurposeUsage(**asdict(v)) for k, v in self.by_purpose.items()})

    def since(self, before: "Usage") -> "Usage":
        out = Usage()
        for k, v in self.by_purpose.items():
            b = before.by_purpose.get(k, PurposeUsage())
            d = PurposeUsage(**{f: getattr(v, f) - getattr(b, f) for f in asdict(v)})
            if any(asdict(d).values()):
                out.by_purpose[k] = d
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "prompt_tokens": sum(u.prompt_tokens for u in self.by_purpose.values()),
            "completion_tokens": sum(u.completion_tokens for u in self.by_purpose.values()),
            "total_tokens": self.total_tokens,
            "by_purpose": {k: {**asdict(v), "total_tokens": v.total_tokens} for k, v in sorted(self.by_purpose.items())},
        }


_LITELLM_LOCK = threading.Lock()


def ensure_litellm() -> Any:
    """Import litellm (lazily: it takes seconds of CPU) with no network at import. Safe to
    call many times. Only a real model needs it: the offline stand-ins do not."""
    with _LITELLM_LOCK:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        # litellm's own pydantic models warn about TypedDict ReadOnly items (at import and first use)
        warnings.filterwarnings("ignore", message=r".*`ReadOnly` qualifier.*", category=UserWarning)
        import litellm

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        return litellm


def is_offline_model(model: str | None) -> bool:
    """A ``kgoffline/*`` stand-in (:mod:`kgservice.llm.offline`), served in process without litellm."""
    return str(model or "").startswith("kgoffline/")


def provider_completion(**kwargs: Any) -> Any:
    """The one call that reaches a model: ``litellm.completion(**kwargs)``, or the offline
    stand-in's :func:`~kgservice.llm.offline.completion` (same arguments, same reply shape)
    for a ``kgoffline/*`` model. Both providers are looked up at call time, so a test that
    counts calls replaces them on their modules."""
    if is_offline_model(kwargs.get("model")):
        from kgservice.llm import offline

        return offline.completion(**kwargs)
    return ensure_litellm().completion(**kwargs)


def _transient(exc: BaseException) -> bool:
    from kgservice.llm.offline import ProviderError

    if isinstance(exc, ProviderError):
        return exc.transient
    import sys

    litellm = sys.modules.get("litellm")
    if litellm is None:  # litellm never ran, so this is not one of its errors
        return isinstance(exc, TimeoutError)
    permanent = (litellm.BadRequestError, litellm.AuthenticationError, litellm.NotFoundError,
                 litellm.PermissionDeniedError, litellm.UnprocessableEntityError)
    if isinstance(exc, permanent):
        return False
    transient = (litellm.Timeout, litellm.APIConnectionError, litellm.RateLimitError,
                 litellm.ServiceUnavailableError, litellm.InternalServerError)
    if isinstance(exc, transient):
        return True
    if isinstance(exc, litellm.APIError):
        return int(getattr(exc, "status_code", 500) or 500) >= 500
    return isinstance(exc, TimeoutError)


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def json_text(content: str) -> str:
    """The JSON object in a reply: code fences and prose around one object are tolerated.
    A reply that *is* something else (an array, a string) is left alone, so the schema
    rejects it instead of an object being cut out of it."""
    m = _FENCE.match(content)
    if m:
        content = m.group(1)
    content = content.strip()
    if content[:1] not in ("{", "[", '"') and not content[:1].isdigit() and not content.startswith(("null", "true", "false")):
        start, end = content.find("{"), content.rfind("}")
        if start != -1 and end > start:
            content = content[start:end + 1]
    return content


def _problems(exc: Exception) -> list[str]:
    if isinstance(exc, ValidationError):
        out = []
        for e in exc.errors()[:12]:
            loc = ".".join(str(p) for p in e.get("loc", ())) or "(top level)"
            out.append(f"{loc}: {e.get('msg')}")
        return out
    return [str(exc)]


REPAIR_PROMPT = (
    "Your reply above is not valid. Problems:\n{problems}\n"
    "Reply again with only the corrected JSON object (no prose, no code fence), following the same instructions."
)


REPAIR_TEXT = "Your reply above is not valid. Problems:\n{problems}\n{ask}"


class _Numbered:
    """A sink whose ``begin`` numbers the provider requests of one ``complete_json`` call."""

    def __init__(self, sink: StreamSink):
        self.sink, self.n = sink, 0

    def begin(self, attempt: int) -> None:
        self.n += 1
        self.sink.begin(self.n)

    def delta(self, text: str) -> None:
        self.sink.delta(text)

    def checked(self, problems: list[str]) -> None:
        self.sink.checked(problems)


class LLM:
    """One configured model; keeps call and token counts per purpose for its lifetime."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        retry_wait: float = 1.0,
        repair_attempts: int = 2,
        temperature: float = 0.0,
        recordings: Sequence[Path] = (),
        record_to: Path | None = None,
        completion_kwargs: dict[str, Any] | None = None,
        health: Any = None,
    ):
        if not model:
            raise ConfigError("no LLM model configured (KG_LLM_MODEL)")
        self.model = model
        self.api_base = api_base
        self.timeout = float(timeout)
        self.max_retries = max(0, int(max_retries))
        self.retry_wait = max(0.0, float(retry_wait))
        self.repair_attempts = max(0, int(repair_attempts))
        self.temperature = temperature
        self.recordings = tuple(Path(p) for p in recordings)
        self.record_to = Path(record_to) if record_to else None
        self.completion_kwargs = dict(completion_kwargs or {})
        # told how every provider call ended (kgservice.llm.health.ModelHealth: what /readyz reports)
        self.health = health
        self.usage = Usage()
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Any, health: Any = None) -> "LLM":
        return cls(
            settings.llm_model,
            api_base=getattr(settings, "llm_api_base", None),
            timeout=getattr(settings, "llm_timeout", 60.0),
            max_retries=getattr(settings, "llm_max_retries", 3),
            retry_wait=getattr(settings, "llm_retry_wait", 1.0),
            repair_attempts=getattr(settings, "llm_repair_attempts", 2),
            recordings=getattr(settings, "llm_recordings", ()),
            record_to=getattr(settings, "llm_record", None),
            health=health,
        )

    @property
    def is_offline(self) -> bool:
        return is_offline_model(self.model)

    # -- the one public call ------------------------------------------------------
    def complete_json(
        self,
        messages: Sequence[dict[str, str]],
        schema_model: type[M],
        purpose: str,
        *,
        validate: Callable[[M], None] | None = None,
        stream: StreamSink | None = None,
        parse: Callable[[str], M] | None = None,
        repair_prompt: str = "",
    ) -> M:
        """Ask the model for one JSON object valid for ``schema_model`` (and ``validate``,
        which raises ``ValueError`` with a readable message when the object is wrong).
        With ``stream`` the reply is streamed to it as it arrives (``stream=True``: litellm's
        streaming for a hosted model, the offline stand-in's own for ``kgoffline/*``);
        the object returned is still only the validated whole. A step whose prompt asks for
        a reply in a text format of its own passes ``parse`` (reply text -> object, raising
        ``ValueError``): then no JSON response format is requested and a repair request
        ends with ``repair_prompt`` instead of asking for a JSON object."""
        if purpose not in PURPOSES:
            raise InvalidArgument(f"unknown LLM purpose {purpose!r}; known: {', '.join(PURPOSES)}")
        conversation = [dict(m) for m in messages]
        problems: list[str] = []
        if stream is not None:
            stream = _Numbered(stream)
        for attempt in range(self.repair_attempts + 1):
            if attempt:
                self.usage.of(purpose).repairs += 1
            content = self._complete(conversation, None if parse else schema_model, purpose, stream)
            try:
                obj = parse(content) if parse else schema_model.model_validate_json(json_text(content))
                if validate is not None:
                    validate(obj)
                if stream is not None:
                    stream.checked([])
                return obj
            except (ValidationError, ValueError) as exc:
                problems = _problems(exc)
                if stream is not None:
                    stream.checked(problems)
                conversation = conversation + [
                    {"role": "assistant", "content": content},
                    {"role": "user", "content": (REPAIR_TEXT if parse else REPAIR_PROMPT).format(
                        problems="\n".join(f"- {p}" for p in problems), ask=repair_prompt)},
                ]
        self.usage.of(purpose).failures += 1
        raise LLMOutputError(
            f"LLM step '{purpose}' ({self.model}): reply still invalid after {self.repair_attempts + 1} attempt(s) "
            f"({self.repair_attempts} repair request(s)); last problems: " + "; ".join(problems),
            problems,
        )

    # -- provider call with retries ------------------------------------------------
    def _response_format(self, schema_model: type[BaseModel]) -> dict[str, Any] | None:
        if self.is_offline:
            return {"type": "json_object"}
        litellm = ensure_litellm()
        try:
            if litellm.supports_response_schema(model=self.model):
                return {"type": "json_schema", "json_schema": {
                    "name": schema_model.__name__, "schema": schema_model.model_json_schema(), "strict": False}}
            params = litellm.get_supported_openai_params(model=self.model) or []
            if "response_format" in params:
                return {"type": "json_object"}
        except Exception:  # unknown model in litellm's tables: the prompt alone asks for JSON
            pass
        return None

    def _complete(self, messages: list[dict[str, str]], schema_model: type[BaseModel] | None, purpose: str,
                  stream: StreamSink | None = None) -> str:
        from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential, wait_none

        kwargs: dict[str, Any] = dict(
            model=self.model,
            messages=messages,
            temperature=self.temperature,
            timeout=self.timeout,
            num_retries=0,  # tenacity below is the only retry layer
            drop_params=True,
            **self.completion_kwargs,
        )
        if not self.is_offline:
            kwargs.setdefault("max_retries", 0)  # nor the provider's own client (OpenAI's retries twice by itself)
        if self.api_base:
            kwargs["api_base"] = self.api_base
        fmt = self._response_format(schema_model) if schema_model is not None else None
        if fmt is not None:
            kwargs["response_format"] = fmt
        if self.is_offline and self.recordings:
            from kgservice.llm import offline

            offline.load_recordings(self.recordings)
        usage = self.usage.of(purpose)
        if stream is not None:
            kwargs["stream"] = True
            kwargs["stream_options"] = {"include_usage": True}  # dropped (drop_params) where unsupported

        tries = 0

        def before_sleep(state: Any) -> None:
            usage.retries += 1

        wait = wait_exponential(multiplier=self.retry_wait, max=30) if self.retry_wait > 0 else wait_none()
        try:
            for attempt in Retrying(retry=retry_if_exception(_transient), stop=stop_after_attempt(self.max_retries + 1),
                                    wait=wait, reraise=True, before_sleep=before_sleep):
                with attempt:
                    with self._lock:
                        usage.calls += 1
                    tries += 1
                    resp = provider_completion(**kwargs)
                    if stream is not None:
                        resp = self._streamed(resp, messages, stream)
        except Exception as exc:
            usage.failures += 1
            if self.health is not None:
                self.health.called(self.model, purpose, exc)
            kind = "error" if not _transient(exc) else f"error after {tries} attempt(s)"
            raise LLMProviderError(f"LLM step '{purpose}' ({self.model}): provider {kind}: "
                                   f"{type(exc).__name__}: {exc}") from exc
        if self.health is not None:
            self.health.called(self.model, purpose, None)
        content = (resp.choices[0].message.content or "") if resp.choices else ""
        u = getattr(resp, "usage", None)
        with self._lock:
            usage.prompt_tokens += int(getattr(u, "prompt_tokens", 0) or 0)
            usage.completion_tokens += int(getattr(u, "completion_tokens", 0) or 0)
        if self.record_to is not None:
            self._record(messages, purpose, content)
        return content

    def _streamed(self, chunks: Any, messages: list[dict[str, str]], stream: StreamSink) -> Any:
        """Read a streamed reply through, handing each piece of text to ``stream``; the whole
        reply as one response (the token counts from the last chunk that has them, else — a
        hosted model that sends none — litellm's ``stream_chunk_builder``, which counts them).
        A stream that breaks off raises the provider's error, retried as any other (the sink
        then sees a new attempt begin); one that ends with no chunk at all is an error."""
        from kgservice.llm import offline

        stream.begin(0)  # numbered by _Numbered
        seen, parts, usage = [], [], None
        for chunk in chunks:
            seen.append(chunk)
            usage = getattr(chunk, "usage", None) or usage
            choices = getattr(chunk, "choices", None) or []
            piece = getattr(getattr(choices[0], "delta", None), "content", None) if choices else None
            if piece:
                parts.append(piece)
                stream.delta(piece)
        if not seen:
            raise ValueError("the provider's stream ended with no reply")
        if usage is None and not self.is_offline:
            usage = getattr(ensure_litellm().stream_chunk_builder(seen, messages=messages), "usage", None)
        counts = offline.Usage(int(getattr(usage, "prompt_tokens", 0) or 0), int(getattr(usage, "completion_tokens", 0) or 0))
        return offline.Response(model=self.model, choices=[offline.Choice(offline.Message("".join(parts)))], usage=counts)

    def _record(self, messages: list[dict[str, str]], purpose: str, content: str) -> None:
        """Append (request hash, response) — never the request text, which may hold source sentences."""
        line = json.dumps({"key": request_key(messages), "purpose": purpose, "model": self.model, "response": content},
                          ensure_ascii=False)
        assert self.record_to is not None
        self.record_to.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, self.record_to.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

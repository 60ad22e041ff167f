"""Is the answering model usable? What ``kg serve`` asks once at start (in the background,
:mod:`kgservice.llm.health`) and ``/readyz`` reports.

Three answers a team needs before the first question fails:

- ``not configured``: nobody chose a model, so answers are retrieval-only (the top grounded
  units, cited; :mod:`kgservice.answer.retrieval_only`) and the detail says how to set one;
- ``ok``: one tiny request (``{"task": "ping"}``) reached the model and it replied;
- ``unreachable``: that request failed (no network, wrong key, unknown model, timeout): ``ask``
  and text ingest will fail the same way, reads and unit ingest are unaffected.

The request takes the path of every other call (:func:`kgservice.llm.client.provider_completion`:
litellm for a real model, the offline ``kgoffline/*`` stand-ins directly, which reply to a ping;
a test makes one fail with ``SCRIPT.override_task("ping", ...)``). It waits at most the answering
timeout (``KG_LLM_TIMEOUT``) for one attempt: a slow local model that answers within the timeout
is ``ok`` here as it is for questions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgservice.errors import InputError

if TYPE_CHECKING:
    from kgservice.config import Settings

PING_TASK = "ping"
_PACKAGED = Path(__file__).with_name("recordings")


# key-like tokens a provider may echo in an error (a partial API key is still a key)
_SECRETS = re.compile(r"\b(sk|rk|pk|kg|key|api[_-]?key)[-_][A-Za-z0-9_\-*]{6,}", re.I)


def _redact(text: str) -> str:
    return _SECRETS.sub(lambda m: m.group(1) + "-***", text)


@dataclass(frozen=True)
class ModelStatus:
    state: str  # "ok" | "not configured" | "unreachable" | "not checked" | "checking"
    model: str
    answers: str  # "model" | "retrieval-only"
    detail: str = ""
    # what the state comes from: "configuration", "start-up check", "last call (<purpose>)"
    source: str = "configuration"
    at: str = ""  # when that was found out (UTC, ISO 8601); "" for the configuration

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def no_model_configured(settings: Settings, model: str | None) -> bool:
    """True when the answering model is the default and nobody chose it."""
    from kgservice.config import DEFAULT_LLM_MODEL

    return model == DEFAULT_LLM_MODEL and not settings.llm_model_chosen


def configured_status(settings: Settings) -> ModelStatus:
    """What is known without calling the model: unconfigured (retrieval-only), or not checked yet."""

    model = settings.llm_model
    if no_model_configured(settings, model):
        return ModelStatus("not configured", model, "retrieval-only",
                           "no model configured: answers list the best-matching units, cited; set KG_LLM_MODEL "
                           "(or llm_model in the config file) to a litellm model, or kgoffline/rules for the "
                           "offline stand-in")
    return ModelStatus("not checked", model, "model")


def now_iso() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def unreachable(model: str, exc: BaseException, source: str) -> ModelStatus:
    """The status a failed request leaves: its cause (key-like tokens redacted) and what still works."""
    text = _redact(f"{type(exc).__name__}: {exc}")
    return ModelStatus("unreachable", model, "model",
                       f"{text[:300]} (ask and text ingest will fail until it answers; reads and unit ingest work)",
                       source, now_iso())


def check_model(settings: Settings) -> ModelStatus:
    """:func:`configured_status`, and for a configured model one ping request: one attempt (no
    retries by litellm or by the provider's own client), waiting at most ``llm_timeout``
    (``KG_LLM_TIMEOUT``). Never raises: the failure is the answer."""
    status = configured_status(settings)
    if status.state == "not configured":
        return status
    model = settings.llm_model
    source = "start-up check"
    try:
        from kgservice.llm.client import is_offline_model, provider_completion

        kwargs: dict[str, Any] = dict(
            model=model, timeout=float(settings.llm_timeout), num_retries=0,
            max_tokens=8, temperature=0.0, drop_params=True,
            messages=[{"role": "system", "content": 'Health check: reply with the JSON object {"ok": true}.'},
                      {"role": "user", "content": json.dumps({"task": PING_TASK})}])
        if not is_offline_model(model):
            kwargs["max_retries"] = 0  # the OpenAI-style clients retry twice by themselves: 3 timeouts, not one
        if settings.llm_api_base:
            kwargs["api_base"] = settings.llm_api_base
        resp = provider_completion(**kwargs)
        if not getattr(resp, "choices", None):
            return ModelStatus("unreachable", model, "model", "the model replied with no choices", source, now_iso())
    except Exception as exc:  # every provider failure means the same thing here: not usable now
        return unreachable(model, exc, source)
    return ModelStatus("ok", model, "model", "", source, now_iso())


class NoModelConfigured(InputError):
    """Text sent for extraction while no model is configured: a configuration problem the
    caller can fix (exit 2, HTTP 422), named before anything is stored or queued."""


def _recordings(settings: Settings) -> bool:
    """Recorded replies the default provider would replay: the settings' files, or packaged ones
    (``kgservice.llm.offline.RECORDINGS_DIR``, named here so a refusal does not import litellm)."""
    return bool(settings.llm_recordings) or any(_PACKAGED.glob("*.jsonl"))


def calls_no_model(settings: Settings, model: str | None = None) -> bool:
    """True when answering would call no model at all: nobody chose one (``model``, default the
    configured one, is the unconfigured default) and that default has nothing to replay (no
    ``KG_LLM_RECORDINGS``, no packaged recording, nothing scripted in this process).

    Decided from the settings before the ask pipeline starts, so a question with no model goes
    straight to the retrieval-only answer: no prompt is built, no provider is asked, and the
    LLM library is never imported (the seconds of CPU that were most of a first ``kg ask``)."""
    from kgservice.llm.offline import SCRIPT

    model = settings.llm_model if model is None else model
    return no_model_configured(settings, model) and not _recordings(settings) and not SCRIPT.has_replies()


def refuses_text(settings: Settings) -> bool:
    """Whether :func:`refuse_text_without_model` refuses a text under ``settings``: nobody chose a
    model and no recordings are there to replay. A caller that must read the store to name its
    texts (``kg sync``) asks this first, and reads nothing when a model is set."""
    return no_model_configured(settings, settings.llm_model) and not _recordings(settings)


def refuse_text_without_model(settings: Settings, subjects: Sequence[str]) -> None:
    """Raise :class:`NoModelConfigured` when ``subjects`` (the texts that would be extracted,
    named as the caller knows them: file paths, a request's field) are not empty and nobody
    chose a model.

    The unconfigured default (``kgoffline/scripted``) has no recorded response for a new text,
    so extraction would certainly fail: ``kg ingest`` found that out only after its unit files
    were stored, and the server only in a job that failed after it had been accepted. ``kg
    ingest``, the server's job submission and a document's replacement all ask here first, so
    they refuse alike and with the same words. An explicitly chosen model is never refused
    here (its failures stay loud), nor the default when recordings are there to replay
    (``KG_LLM_RECORDINGS``, or packaged ones): they may hold this text's replies."""

    if subjects and refuses_text(settings):
        raise NoModelConfigured(
            f"text needs a model to extract units, and none is configured ({settings.llm_model} has no "
            f"recorded response for {', '.join(subjects)}); set KG_LLM_MODEL (or llm_model in the config file, "
            "or --llm of kg ingest / kg sync) to a litellm model, or kgoffline/rules for the offline stand-in; unit "
            "notation (.units files, or 'units' instead of 'text' in a request) needs no model")


__all__ = ["ModelStatus", "NoModelConfigured", "PING_TASK", "calls_no_model", "check_model", "configured_status",
           "refuse_text_without_model", "refuses_text"]

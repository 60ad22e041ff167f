"""Is the answering model usable? What ``kg serve`` asks once at start and ``/readyz`` reports.

Three answers a team needs before the first question fails:

- ``not configured``: nobody chose a model, so answers are retrieval-only (the top grounded
  units, cited; :mod:`kgservice.answer.retrieval_only`) and the detail says how to set one;
- ``ok``: one tiny request (``{"task": "ping"}``) reached the model and it replied;
- ``unreachable``: that request failed (no network, wrong key, unknown model, timeout): ``ask``
  and text ingest will fail the same way, reads and unit ingest are unaffected.

The request goes through ``litellm.completion`` like every other call, so the offline
``kgoffline/*`` providers answer it in tests (they reply to a ping; a test makes one fail
with ``SCRIPT.override_task("ping", ...)``).
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
CHECK_TIMEOUT_S = 10.0  # at most this long at server start, whatever the answering timeout is


# key-like tokens a provider may echo in an error (a partial API key is still a key)
_SECRETS = re.compile(r"\b(sk|rk|pk|kg|key|api[_-]?key)[-_][A-Za-z0-9_\-*]{6,}", re.I)


def _redact(text: str) -> str:
    return _SECRETS.sub(lambda m: m.group(1) + "-***", text)


@dataclass(frozen=True)
class ModelStatus:
    state: str  # "ok" | "not configured" | "unreachable" | "not checked"
    model: str
    answers: str  # "model" | "retrieval-only"
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def configured_status(settings: Settings) -> ModelStatus:
    """What is known without calling the model: unconfigured (retrieval-only), or not checked yet."""
    from kgservice.answer.retrieval_only import no_model_configured

    model = settings.llm_model
    if no_model_configured(settings, model):
        return ModelStatus("not configured", model, "retrieval-only",
                           "no model configured: answers list the best-matching units, cited; set KG_LLM_MODEL "
                           "(or llm_model in the config file) to a litellm model, or kgoffline/rules for the "
                           "offline stand-in")
    return ModelStatus("not checked", model, "model")


def check_model(settings: Settings) -> ModelStatus:
    """:func:`configured_status`, and for a configured model one ping request (bounded by
    :data:`CHECK_TIMEOUT_S`, no retries). Never raises: the failure is the answer."""
    status = configured_status(settings)
    if status.state == "not configured":
        return status
    model = settings.llm_model
    try:
        from kgservice.llm.client import ensure_litellm

        litellm = ensure_litellm()
        kwargs: dict[str, Any] = dict(
            model=model, timeout=min(float(getattr(settings, "llm_timeout", 60.0)), CHECK_TIMEOUT_S), num_retries=0,
            max_tokens=8, temperature=0.0, drop_params=True,
            messages=[{"role": "system", "content": 'Health check: reply with the JSON object {"ok": true}.'},
                      {"role": "user", "content": json.dumps({"task": PING_TASK})}])
        if getattr(settings, "llm_api_base", None):
            kwargs["api_base"] = settings.llm_api_base
        resp = litellm.completion(**kwargs)
        if not getattr(resp, "choices", None):
            return ModelStatus("unreachable", model, "model", "the model replied with no choices")
    except Exception as exc:  # every provider failure means the same thing here: not usable now
        text = _redact(f"{type(exc).__name__}: {exc}")
        return ModelStatus("unreachable", model, "model",
                           f"{text[:300]} (ask and text ingest will fail until it answers; reads and unit "
                           "ingest work)")
    return ModelStatus("ok", model, "model")


class NoModelConfigured(InputError):
    """Text sent for extraction while no model is configured: a configuration problem the
    caller can fix (exit 2, HTTP 422), named before anything is stored or queued."""


def _recordings(settings: Settings) -> bool:
    """Recorded replies the default provider would replay: the settings' files, or packaged ones
    (``kgservice.llm.offline.RECORDINGS_DIR``, named here so a refusal does not import litellm)."""
    return bool(settings.llm_recordings) or any(_PACKAGED.glob("*.jsonl"))


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
    from kgservice.answer.retrieval_only import no_model_configured

    if subjects and no_model_configured(settings, settings.llm_model) and not _recordings(settings):
        raise NoModelConfigured(
            f"text needs a model to extract units, and none is configured ({settings.llm_model} has no "
            f"recorded response for {', '.join(subjects)}); set KG_LLM_MODEL (or llm_model in the config file, "
            "or kg ingest's --llm) to a litellm model, or kgoffline/rules for the offline stand-in; unit "
            "notation (.units files, or 'units' instead of 'text' in a request) needs no model")


__all__ = ["CHECK_TIMEOUT_S", "ModelStatus", "NoModelConfigured", "PING_TASK", "check_model", "configured_status",
           "refuse_text_without_model"]

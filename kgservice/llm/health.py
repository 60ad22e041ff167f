"""The answering model's health as one knowledge base has seen it: what ``/readyz`` reports.

A start-up check (:func:`kgservice.llm.check.check_model`, one ping) says whether the model
answered when the server started; it runs in the background, so the server listens while a
slow or silent model is still being asked (``checking``). After that, every real call the
knowledge base's LLM clients make reports here (:meth:`ModelHealth.called`): a reply, even an
invalid one, is ``ok``; a provider error that retrying did not cure is ``unreachable`` with its
cause. The status shown is the newest of those, so a model that was down at start and answers
now is reported ``ok`` after the first successful ask, and one that stops answering is reported
``unreachable`` after the first ask it fails — the start-up check is never the last word.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from kgservice.llm.check import ModelStatus, configured_status, now_iso, unreachable

if TYPE_CHECKING:
    from kgservice.config import Settings


class ModelHealth:
    """The newest known status of one knowledge base's answering model (thread-safe)."""

    def __init__(self, settings: Settings):
        self._settings = settings
        self._lock = threading.Lock()
        self._status: ModelStatus | None = None
        self._calls = 0  # real calls reported so far: a check that started before one must not overwrite it

    def status(self) -> ModelStatus:
        """The newest status; before any check or call, what the configuration alone says."""
        with self._lock:
            return self._status or configured_status(self._settings)

    def checking(self) -> int:
        """A start-up check begins: reported as ``checking`` until it (or a real call) ends.
        Returns the token :meth:`checked` takes."""
        base = configured_status(self._settings)
        with self._lock:
            if self._calls == 0 and base.state != "not configured":
                self._status = ModelStatus("checking", base.model, base.answers,
                                           f"the start-up check is waiting for the model (at most "
                                           f"KG_LLM_TIMEOUT = {self._settings.llm_timeout:g} s)",
                                           "start-up check", now_iso())
            return self._calls

    def checked(self, status: ModelStatus, token: int) -> None:
        """The start-up check's outcome, unless a real call reported since it began (newer)."""
        with self._lock:
            if self._calls == token:
                self._status = status

    def called(self, model: str, purpose: str, error: BaseException | None) -> None:
        """A real call to ``model`` ended: ``error`` None means the model replied."""
        if model != self._settings.llm_model:  # a per-run model (--llm) says nothing about the configured one
            return
        source = f"last call ({purpose})"
        status = (ModelStatus("ok", model, "model", "", source, now_iso()) if error is None
                  else unreachable(model, error, source))
        with self._lock:
            self._calls += 1
            self._status = status


__all__ = ["ModelHealth"]

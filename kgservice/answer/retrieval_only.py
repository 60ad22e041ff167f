"""The answer when no model is configured: the top grounded units, as sentences, cited.

Out of the box the model is ``kgoffline/scripted``, which has no recorded response for a new
question. Failing every first question with "no recorded response" tells a newcomer nothing
about the graph; answering from the no-LLM retrieval (:mod:`kgservice.expansion.retrieve`)
does, and says plainly that no model wrote the answer and how to configure one. Only the
unconfigured default falls back: a model chosen explicitly (``--llm``, ``KG_LLM_MODEL``, the
config file) keeps failing loudly, so a missing recording is never hidden.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kgservice.config import DEFAULT_LLM_MODEL

if TYPE_CHECKING:
    from kgservice.config import Settings
    from kgservice.model import Unit
    from kgservice.stores.base import GraphStore

NO_MODEL_NOTE = (f"no model configured ({DEFAULT_LLM_MODEL} has no recorded response): this answer lists the "
                 "best-matching units of the graph, not a model's answer; set KG_LLM_MODEL (or --llm, or "
                 "llm_model in the config file) to a litellm model, or kgoffline/rules for the offline stand-in")
TOP_UNITS = 3
_MARKUP = re.compile(r"[{}\[\]]")


def no_model_configured(settings: Settings, model: str | None) -> bool:
    """True when the answering model is the default and nobody chose it."""
    return model == DEFAULT_LLM_MODEL and not settings.llm_model_chosen


def unit_sentence(unit: Unit) -> str:
    """A unit's subject, predicate and arguments, without the notation's brackets, as one sentence."""
    from kgservice.notation.serializer import format_value

    args = [" ".join(_MARKUP.sub(" ", format_value(a)).split()) for a in unit.args]
    listed = args[0] if len(args) == 1 else ", ".join(args[:-1]) + " and " + args[-1]
    text = f"{unit.subject} {unit.predicate} {listed}"
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def retrieval_only_units(retrieve: Callable[[str], Any], store: GraphStore, question: str,
                         top: int = TOP_UNITS) -> list[Unit]:
    """The ``top`` best units of the no-LLM retrieval (``retrieve``: the question to a ranking
    with ``units``, ``entry`` and ``lexical``), best first, read from ``store``; none when the
    question names no node and none of its words is in a unit.

    The retrieval always ranks something (the question's nearest node vectors), so "What is
    the capital of France?" over a graph about Python got three Monty Python units as its
    answer and "not in the graph" never showed. A vector neighbour alone is too weak to claim
    the question is about the graph — the rule the drill-down's entry fallback keeps
    (:func:`kgservice.pipeline.asking.entry_fallback`)."""
    found = retrieve(question)
    if not found.entry.named and not found.lexical:
        return []
    ranked = [u.id for u in found.units[:top]]
    by_id = {u.id: u for u in store.get_units(ranked)}
    return [by_id[i] for i in ranked if i in by_id]

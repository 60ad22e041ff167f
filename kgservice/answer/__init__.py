"""The grounded answer of DESIGN §4.5 and its validator (invariant 3).

The names below load from :mod:`kgservice.answer.grounded` on first use (PEP 562), so a caller
that needs only a light submodule (``kgservice.answer.sources``'s formatting, the retrieval-only
note: ``kg ask --server`` prints a server's answer with them) does not load the pipeline's
modules, pydantic's and numpy with them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kgservice.answer.grounded import (
        NOT_IN_GRAPH_EN,
        NOT_IN_GRAPH_ZH,
        Answer,
        AnswerOut,
        CitedSentence,
        answer_messages,
        chain_sentence,
        cite_chains,
        grounded_answer,
        not_in_graph,
        sentence_problems,
        unit_vocabulary,
        validate_answer,
    )

__all__ = ["NOT_IN_GRAPH_EN", "NOT_IN_GRAPH_ZH", "Answer", "AnswerOut", "CitedSentence", "answer_messages", "chain_sentence", "cite_chains",
           "grounded_answer", "not_in_graph", "sentence_problems", "unit_vocabulary", "validate_answer"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from kgservice.answer import grounded

        return getattr(grounded, name)
    raise AttributeError(f"module 'kgservice.answer' has no attribute {name!r}")

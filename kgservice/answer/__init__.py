"""The grounded answer of DESIGN §4.5 and its validator (invariant 3)."""

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

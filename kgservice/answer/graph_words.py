"""What the graph states, read for the relevance floor (:mod:`kgservice.answer.floor`): the
stems of every unit's words and the text of the units around a node. The no-model answer and
the model-backed path ask the floor the same questions through these, so one rule decides
"not in the graph" on both. Functions of the parts they read (the store, the BM25 unit index,
the label index), not of a knowledge base."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from kgservice.answer.floor import lacking, missing_names, stem_counts, unqualified
from kgservice.answer.shape import asked, stem

if TYPE_CHECKING:
    from kgservice.entry.match import LabelIndex
    from kgservice.stores.base import GraphStore

NEAR_UNITS = 200  # units read around each contained node for the numbers near a concept


def graph_stems(unit_index: Any) -> Mapping[str, int]:
    """:func:`kgservice.answer.floor.stem_counts` of a BM25 unit index, computed once per index
    and, for an index patched from the change log, from the previous one's counts and the words
    the patch changed (:meth:`kgservice.expansion.lexical.UnitIndex.derived`): recounting every
    word of the store after each ingest elsewhere stalled the next question by the store's size."""
    derived = getattr(unit_index, "derived", None)
    if derived is not None:
        return derived(stem)  # type: ignore[no-any-return]
    return stem_counts(unit_index.postings)


def known_in(unit_index: Any) -> Callable[[str], bool]:
    """Is this stem in any unit of the graph?"""
    df = graph_stems(unit_index)
    return lambda s: df.get(s, 0) > 0


def stem_uses(unit_index: Any, word: str) -> int:
    """How many units use ``word`` in any form (its stem): whether a question word the labels
    lack is the graph's word all the same (:mod:`kgservice.entry.spelling`)."""
    return graph_stems(unit_index).get(stem(word), 0)


def nearby_text(store: GraphStore, nodes: list[str]) -> str:
    """The words of the units that mention these nodes (at most :data:`NEAR_UNITS` each)."""
    from kgservice.expansion.lexical import unit_text

    near = store.mentions_of(nodes)
    ids = sorted({u for n in nodes for u in near.get(n, [])[:NEAR_UNITS]})
    return " ".join(unit_text(u) for u in store.get_units(ids))


def concept_lacking(label: str, store: GraphStore, unit_index: Any, labels: LabelIndex) -> tuple[list[str], list[str]]:
    """:func:`kgservice.answer.floor.lacking` over this graph."""
    return lacking(label, labels, known_in(unit_index), lambda nodes: nearby_text(store, nodes))


def names_missing(question: str, store: GraphStore, unit_index: Any, labels: LabelIndex) -> tuple[str, ...]:
    """The question's names the graph lacks (:func:`kgservice.answer.floor.missing_names`):
    none of their words in any unit, or held only in a broader form; a name's bracketed
    qualifier is no part of it (:func:`kgservice.answer.floor.unqualified`), as in the no-model
    answer's floor."""
    return missing_names(asked(unqualified(question)), known_in(unit_index),
                         lambda name: bool(concept_lacking(name, store, unit_index, labels)[1]))

"""Entry nodes from a question without an LLM: names (label n-grams) fused with vector search,
weighted by specificity. See :mod:`.match` (pure) and :mod:`.step` (store + vectors)."""

from kgservice.entry.match import LabelIndex, Span, fuse_entries, specificity, tokens
from kgservice.entry.step import EntryFinder, EntryNode, EntryParams, EntryResult, entry_nodes

__all__ = ["EntryFinder", "EntryNode", "EntryParams", "EntryResult", "LabelIndex", "Span", "entry_nodes",
           "fuse_entries", "specificity", "tokens"]

"""Text -> units through the LLM (DESIGN §3), and the same path for a question's key nodes (§4.1)."""

from kgservice.extraction.chunking import Chunk, chunk_text, split_sentences
from kgservice.extraction.extract import (
    MODES,
    KeyQuery,
    extract_key_query,
    extract_text,
    extraction_messages,
    key_query,
    no_source_mirrors,
)
from kgservice.extraction.resolve import Resolution, Resolver
from kgservice.extraction.schema import Extraction, SameConcept, XMod, XUnit, XValue, to_units

__all__ = [
    "MODES", "Chunk", "Extraction", "KeyQuery", "Resolution", "Resolver", "SameConcept", "XMod", "XUnit", "XValue",
    "chunk_text", "extract_key_query", "extract_text", "extraction_messages", "key_query", "no_source_mirrors",
    "split_sentences", "to_units",
]

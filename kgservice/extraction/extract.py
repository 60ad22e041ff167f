"""The one extraction path (DESIGN §3 and §4.1, invariant 1).

:func:`extract_text` turns a text into a validated :class:`Extraction`. Ingest calls it per
chunk in mode ``summary`` or ``detail`` (purpose ``extract``); the query pipeline calls the
same function on the question in mode ``query`` (purpose ``key_nodes``) and reads the key
nodes and key predicates off the result with :func:`key_query`. Node ids on both sides come
from :func:`kgservice.ids.node_id`, so a label typed at query time lands on the node written
at ingest time.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any

from kgservice.errors import InvalidArgument
from kgservice.extraction.chunking import split_sentences
from kgservice.extraction.schema import Extraction
from kgservice.families import Lexicon
from kgservice.ids import node_id
from kgservice.llm import LLM, Prompt, load_prompt

MODES = ("summary", "detail", "query")
PROMPT_FILE = "extract_v1.md"


def extract_prompt() -> Prompt:
    return load_prompt("kgservice.extraction", PROMPT_FILE)


def extraction_messages(text: str, mode: str, *, section: str | None = None,
                        feedback: str | None = None) -> list[dict[str, str]]:
    if mode not in MODES:
        raise InvalidArgument(f"extraction mode must be one of {', '.join(MODES)}, got {mode!r}")
    payload: dict[str, Any] = {"task": "extract", "mode": mode, "text": text}
    if section:
        payload["section"] = section
    if feedback:
        payload["feedback"] = feedback
    return [
        {"role": "system", "content": extract_prompt().render(mode)},
        {"role": "user", "content": json.dumps(payload, ensure_ascii=False)},
    ]


def extract_text(llm: LLM, text: str, mode: str, *, purpose: str = "extract", section: str | None = None,
                 feedback: str | None = None) -> Extraction:
    """Text -> validated extraction. Ingest modes also reject any field that mirrors a source
    sentence (invariant 6); the model is shown the problem and asked again."""
    messages = extraction_messages(text, mode, section=section, feedback=feedback)
    validate = None if mode == "query" else no_source_mirrors(text)
    return llm.complete_json(messages, Extraction, purpose, validate=validate)


# --- invariant 6: units carry unit text, never the source sentence --------------------------

def _norm(s: str) -> str:
    s = unicodedata.normalize("NFKC", s).casefold()
    s = re.sub(r"[^\w\s]", " ", s)
    return re.sub(r"\s+", " ", s).strip()


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def _substantial(s: str) -> bool:
    """Long enough to be a statement: 3+ words, or 6+ characters of CJK text."""
    return len(s.split()) >= 3 or (bool(_CJK.search(s)) and len(s.replace(" ", "")) >= 6)


def no_source_mirrors(text: str):
    """A validator: no unit field may equal a source sentence, or copy a clause of 8+ words."""
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))  # not headings
    sentences = {n for n in (_norm(s) for s in split_sentences(body.replace("\n", " \n "))) if _substantial(n)}
    sentences |= {n for n in (_norm(line) for line in body.splitlines()) if _substantial(n)}
    whole = _norm(text)

    def validate(ex: Extraction) -> None:
        bad = []
        for i, u in enumerate(ex.units):
            for f in u.text_fields():
                n = _norm(f)
                if n in sentences or (len(n.split()) >= 8 and n in whole):
                    bad.append(f"units[{i}]: {f[:60]!r} copies the source text; write a short label or value instead")
        if bad:
            raise ValueError("; ".join(bad[:5]))

    return validate


# --- key nodes and key predicates of a question (DESIGN §4.1) -------------------------------

@dataclass
class KeyQuery:
    nodes: list[dict[str, str]] = field(default_factory=list)  # {"label", "id"}
    predicates: list[dict[str, str]] = field(default_factory=list)  # {"predicate", "family", "kind"}

    @property
    def node_ids(self) -> list[str]:
        return [n["id"] for n in self.nodes]

    @property
    def families(self) -> set[str]:
        return {p["family"] for p in self.predicates}

    @property
    def kinds(self) -> set[str]:
        return {p["kind"] for p in self.predicates}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "KeyQuery":
        return cls(nodes=list(d.get("nodes") or []), predicates=list(d.get("predicates") or []))


def key_query(ex: Extraction, lexicon: Lexicon) -> KeyQuery:
    nodes = [{"label": lbl, "id": node_id(lbl)} for lbl in ex.node_labels()]
    preds: dict[str, dict[str, str]] = {}
    for u in ex.units:
        # "?" is the unknown the question asks for, a concept as often as a value
        info = lexicon.resolve(u.predicate, object_is_literal=u.args[0].literal not in (None, "?"))
        preds.setdefault(node_id(u.predicate), {"predicate": u.predicate, "family": info.base, "kind": info.kind})
    return KeyQuery(nodes=nodes, predicates=list(preds.values()))


def extract_key_query(llm: LLM, lexicon: Lexicon, question: str, feedback: str | None = None) -> KeyQuery:
    """Step 4.1: the question through the same extraction path, purpose ``key_nodes``."""
    return key_query(extract_text(llm, question, "query", purpose="key_nodes", feedback=feedback), lexicon)

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
PROMPT_FILE = "extract_v2.md"


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


# a value written as the text writes it is a literal, never a copy: an e-mail address, a URL,
# a version or a number with or without its unit ("bug-gzip@gnu.org", "https://www.gnu.org/x",
# "v1.2.3", "14 to 18 in (36 to 46 cm)")
_LITERAL_TOKEN = re.compile(r"^[<(\[\"']*(\S+@\S+\.\w+|\w+://\S+|www\.\S+|v?\d[\w.,:/%°+\-]*)[>)\].,;:\"']*$", re.I)
_WORDY = re.compile(r"[^\W\d_]{2,}")


def _statement(raw: str) -> bool:
    """A sentence is worth guarding when it states something in words: 3+ words of letters
    that are not literal values, or 6+ characters of CJK text.

    >>> _statement("<bug-gzip@gnu.org>."), _statement("See https://x.org/a for 1.2.3"), _statement("Cats are mammals.")
    (False, False, True)
    """
    if _CJK.search(raw):
        return len(re.sub(r"\s", "", raw)) >= 6
    words = [t for t in raw.split() if not _LITERAL_TOKEN.match(t) and _WORDY.search(t)]
    return len(words) >= 3


def no_source_mirrors(text: str):
    """A validator: no unit field may be a whole source sentence (or line) that states
    something in words, nor hold one whole. Shorter stretches of the text are what a unit is
    made of: a quantity with its unit or a range ("14 to 18 in (36 to 46 cm)"), an e-mail
    address, a URL, a version, a title — literals are written as the text writes them.

    >>> check = no_source_mirrors("Olympia received 14 to 18 in (36 to 46 cm). Mail <bug-gzip@gnu.org>.")
    >>> check(Extraction.model_validate({"units": [
    ...     {"subject": "Olympia", "predicate": "received", "args": [{"literal": "14 to 18 in (36 to 46 cm)"}]},
    ...     {"subject": "bug reports", "predicate": "sent to", "args": [{"literal": "bug-gzip@gnu.org"}]}]}))
    >>> check(Extraction.model_validate({"units": [
    ...     {"subject": "Olympia", "predicate": "states", "args": [{"literal": "Olympia received 14 to 18 in (36 to 46 cm)"}]}]}))
    Traceback (most recent call last):
    ...
    ValueError: units[0]: 'Olympia received 14 to 18 in (36 to 46 cm)' copies the source text (a whole sentence); write a short label or value instead
    """
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))  # not headings
    # sentences inside each paragraph (a wrapped line is joined to the next), and whole lines
    raw = [x for para in re.split(r"\n\s*\n", body) for x in split_sentences(" ".join(para.split()))]
    raw += body.splitlines()
    sentences = {n for n in (_norm(s) for s in raw if _statement(s)) if n}
    long_ones = [n for n in sentences if len(n.split()) >= 5]

    def validate(ex: Extraction) -> None:
        bad = []
        for i, u in enumerate(ex.units):
            for f in u.text_fields():
                n = _norm(f)
                if n in sentences or any(len(n) > len(s) and f" {s} " in f" {n} " for s in long_ones):
                    bad.append(f"units[{i}]: {f[:60]!r} copies the source text (a whole sentence); "
                               "write a short label or value instead")
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

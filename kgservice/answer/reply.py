"""The answer reply's text format (answer prompt v4), read whole or line by line.

The prompt asks for plain text, so that the short answer is the reply's very first tokens
(a JSON object put ``{"found": true, "answer": "`` — nine tokens — before it, which a model
streaming 10 tokens a second takes most of a second to write)::

    January 1950
    January 1950 brought 57.2 in of snow. [u-a1]
    So January 1950 brought more snow than the 1916 snow event. [u-a1, u-b2]

Line 1 is the short answer; each further line one sentence ending with the ids it cites in
square brackets; the one line ``NOT FOUND`` says the units do not answer. A reply that is a
JSON object (the version 3 format, ``{"found": ..., "answer": ..., "sentences": [...]}``)
is read as before, so replies recorded or scripted in that format keep working.

What the reader forgives, because it costs nothing to: blank lines, code-fence lines, a
full stop after the brackets instead of before, several bracket groups at the end of a line,
quotes or backticks around an id. What it does not: a sentence line without its brackets (it
cites nothing, which the grounded check refuses and the model is asked to repair).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

class CitedSentence(BaseModel):
    text: str
    cites: list[str] = Field(default_factory=list)


class AnswerOut(BaseModel):
    """An answer as the model gave it, before the grounded check."""

    found: bool
    # the short answer (a name, number, date or few words) a gold answer is compared to, as a
    # reader of the sentences would say it; the sentences are the answer with its citations
    answer: str = ""
    sentences: list[CitedSentence] = Field(default_factory=list)


NOT_FOUND = "NOT FOUND"
# a run of bracket groups at the end of a line, with an optional full stop after them
_CITES_AT_END = re.compile(r"((?:\s*\[[^\[\]\n]*\])+)\s*([.。!?！？]?)\s*$")
_GROUP = re.compile(r"\[([^\[\]\n]*)\]")
_ID = re.compile(r"[^\s,;，、\"'`]+")
REPAIR_ASK = ("Reply again with only the corrected answer in the same plain-text format: the short answer "
              "alone on line 1, then one sentence per line ending with its unit ids in square brackets, "
              "or the one line NOT FOUND.")


def is_json_reply(text: str) -> bool:
    """Whether a reply (or the start of one) is a JSON object, the version 3 format: its
    first line that carries text has a ``{`` (prose before the object is tolerated, as
    :func:`kgservice.llm.client.json_text` tolerates it; a short answer has no brace)."""
    lines = content_lines(text)
    return bool(lines) and "{" in lines[0]


def is_not_found(line: str) -> bool:
    """Whether a complete first line is the "not in the units" marker."""
    return line.strip().strip(".。").strip().upper() == NOT_FOUND


def may_be_not_found(partial: str) -> bool:
    """Whether a first line not yet complete may still turn out to be the marker (so a
    stream holds it back rather than showing "NOT FOU" as an answer)."""
    head = partial.strip().upper()
    return NOT_FOUND.startswith(head) or (head.startswith(NOT_FOUND) and not head[len(NOT_FOUND):].strip(". 。"))


def content_lines(text: str) -> list[str]:
    """The lines of a reply that carry text: blank lines and code-fence lines dropped."""
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("```")]


def split_cites(line: str) -> tuple[str, list[str]]:
    """A sentence line as (text, cited ids): the bracket groups at its end are the citations.

    >>> split_cites("January 1950 brought 57.2 in of snow. [u-a1, u-b2]")
    ('January 1950 brought 57.2 in of snow.', ['u-a1', 'u-b2'])
    >>> split_cites("So A brought more than B [u-1] [`u-2`].")
    ('So A brought more than B.', ['u-1', 'u-2'])
    >>> split_cites("No citation here.")
    ('No citation here.', [])
    """
    m = _CITES_AT_END.search(line)
    if m is None:
        return line.strip(), []
    cites = [c for g in _GROUP.findall(m.group(1)) for c in _ID.findall(g)]
    text = line[:m.start()].rstrip()
    stop = m.group(2)
    if stop and not re.search(r"[.。!?！？]$", text):
        text += stop
    return text, list(dict.fromkeys(cites))


def parse_reply(text: str) -> AnswerOut:
    """The answer a whole reply gives, in either format; ``ValueError`` (the problem the model
    is shown) when it is neither."""
    if is_json_reply(text):
        from kgservice.llm.client import json_text

        return AnswerOut.model_validate_json(json_text(text))
    lines = content_lines(text)
    if not lines:
        raise ValueError("the reply is empty: write the short answer on line 1, or NOT FOUND")
    if is_not_found(lines[0]):
        return AnswerOut(found=False)
    short, _ = split_cites(lines[0])
    sentences = [CitedSentence(text=t, cites=c) for t, c in map(split_cites, lines[1:])]
    return AnswerOut(found=True, answer=short, sentences=sentences)

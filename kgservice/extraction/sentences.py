"""Where the sentences of a text are, as character spans: for laying a converted document out
one sentence a line, and for finding the sentence that states an extracted unit
(:mod:`kgservice.extraction.align`).

A sentence ends at ``.``, ``!`` or ``?`` (and any closing quote or bracket) followed by space
(the next may start in lower case: ``gunzip is ...``), or right after a CJK full stop; a period after
an initial (``Edward F. Knapp``), a dotted abbreviation (``B.S.``, ``U.S.``) or a title or
reference (``St.``, ``No. 5``) ends none unless the next word opens a sentence ("born in the
U.S. He moved"): chunking's rule, one for both (:func:`kgservice.extraction.chunking.ends_sentence`).
Blank lines, Markdown headings, list items and table rows always end one: they are blocks of
their own.
"""

from __future__ import annotations

import re

from kgservice.extraction.chunking import ends_sentence

_END = re.compile(r"[.!?][\"'”’)\]]*(?=\s)|[。！？]")
_BLOCK_LINE = re.compile(r"\s{0,3}(#{1,6}\s|[-*+•]\s|\d{1,3}[.)]\s)|.*\s\|\s")


def _ends_sentence(text: str, dot: int, after: int) -> bool:
    """Whether the mark at ``dot`` (its match, with any closing quote or bracket, ending at
    ``after``) ends a sentence: never at the end of the text, else chunking's rule
    (:func:`kgservice.extraction.chunking.ends_sentence`) on the words either side."""
    if not text[after:].strip():
        return False
    # the rule reads the last word before the mark and the first after it: a window, not a copy
    # of the whole text at every mark (a word of over 80 characters reads as the text's first)
    return ends_sentence(text[max(0, dot - 80):dot + 1], text[after:after + 200].lstrip())


def blocks(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the paragraphs of ``text``: runs of lines between blank lines,
    a heading, list item or table row being a block alone (with the lines that continue an
    indented list item)."""
    out: list[tuple[int, int]] = []
    start = None
    pos = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        end = pos + len(body)
        if not body.strip():
            if start is not None:
                out.append((start, prev_end))
                start = None
        elif _BLOCK_LINE.match(body) or (start is not None and body.lstrip().startswith("#")):
            if start is not None:
                out.append((start, prev_end))
            start = pos
            if body.lstrip().startswith("#") or " | " in body:
                out.append((pos, end))
                start = None
        elif start is None:
            start = pos
        prev_end = end
        pos += len(line)
    if start is not None:
        out.append((start, prev_end))
    return out


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of every sentence of ``text``, in order, without outer whitespace.

    >>> t = "Edward F. Knapp State Airport is in Berlin. It serves Barre.\\n\\n# Notes\\nIt has a B.S. degree."
    >>> [t[a:b] for a, b in sentence_spans(t)]
    ['Edward F. Knapp State Airport is in Berlin.', 'It serves Barre.', '# Notes', 'It has a B.S. degree.']
    >>> t = "Paris hosts it.吸烟有害。它导致癌症。"
    >>> [t[a:b] for a, b in sentence_spans(t)]
    ['Paris hosts it.吸烟有害。', '它导致癌症。']
    """
    out: list[tuple[int, int]] = []
    for b0, b1 in blocks(text):
        start = b0
        for m in _END.finditer(text, b0, b1):
            if m.end() < b1 and _ends_sentence(text, m.start(), m.end()):
                out.append((start, m.end()))
                start = m.end()
                while start < b1 and text[start].isspace():
                    start += 1
        if start < b1:
            out.append((start, b1))
    return [(a, b) for a, b in out if text[a:b].strip()]


def one_sentence_a_line(paragraph: str) -> str:
    """A paragraph laid out one sentence a line (its inner line breaks become spaces).

    >>> one_sentence_a_line("It is owned by the City of Winner. The airport's FAA\\nidentifier, formerly SFD, was changed.")
    "It is owned by the City of Winner.\\nThe airport's FAA identifier, formerly SFD, was changed."
    """
    flat = re.sub(r"\s+", " ", paragraph).strip()
    return "\n".join(flat[a:b] for a, b in sentence_spans(flat))

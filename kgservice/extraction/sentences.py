"""Where the sentences of a text are, as character spans: for laying a converted document out
one sentence a line, and for finding the sentence that states an extracted unit
(:mod:`kgservice.extraction.align`).

A sentence ends at ``.``, ``!`` or ``?`` (and any closing quote or bracket) followed by space
(the next may start in lower case: ``gunzip is ...``), or right after a CJK full stop; a period after
an initial (``Edward F. Knapp``), a dotted abbreviation (``B.S.``, ``U.S.``) or a common
abbreviation (``St.``, ``e.g.``) ends none. Blank lines, Markdown headings, list items and
table rows always end one: they are blocks of their own.
"""

from __future__ import annotations

import re

_END = re.compile(r"[.!?][\"'”’)\]]*(?=\s)|[。！？]")
_ABBREV = frozenset("""
mr mrs ms dr st mt no nos vs etc e.g i.e eg ie inc ltd co corp jr sr prof gen gov sen rep fig figs al approx
dept est ca cf vol pp ed eds rev univ ave blvd rd jan feb mar apr jun jul aug sep sept oct nov dec
""".split())
_BLOCK_LINE = re.compile(r"\s{0,3}(#{1,6}\s|[-*+•]\s|\d{1,3}[.)]\s)|.*\s\|\s")


def _ends_sentence(text: str, dot: int, after: int) -> bool:
    """Whether the mark at ``dot`` (its match ending at ``after``) ends a sentence."""
    if text[dot] in "。！？":
        return True
    if not text[after:].strip():
        return False
    if text[dot] != ".":
        return True
    word = re.search(r"([\w.]+)$", text[:dot])
    if word is None:
        return True
    w = word.group(1)
    if len(w) == 1 and w.isalpha() and w.isupper():  # an initial
        return False
    if re.fullmatch(r"(?:\w\.)+\w", w):  # B.S / U.S / e.g
        return False
    return w.lower() not in _ABBREV


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

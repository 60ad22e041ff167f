"""Long texts are cut into chunks the model can read whole: at paragraph boundaries, then
sentence boundaries, never inside a sentence unless one sentence alone is too long."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kgservice.errors import InvalidArgument

DEFAULT_MAX_CHARS = 2400  # ~600 tokens of text per request
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？；])")
# A full stop after a title ("Mr."), an initial ("Harris W.", "A. J."), a dotted acronym
# ("U.S.", "e.g.", "a.m.") or an abbreviation a number or name follows ("No. 5", "Jan. 5") is part of
# what follows, not the sentence's end, unless the next word opens a sentence (a pronoun, an
# article, a connective: "born in the U.S. He moved", "plan B. The plan"); "I." is the Roman one
# ("World War I."). After "Jr." / "Inc." / "et al." a sentence ends unless the text goes on in
# lower case, with a bracket or with another such abbreviation.
#: the titles a name follows ("Mr. Cool", "St. Louis"), as a regex alternation: chunking's splitter
#: and the rules extractor's (``kgservice.llm.rules``) both keep a name whole after them
TITLE_ABBREVIATIONS = ("Mr|Mrs|Ms|Dr|St|Mt|Ft|Prof|Gen|Col|Lt|Capt|Sgt|Rev|Gov|Sen|Rep|Hon|Fr|Messrs|Mme|Mlle|Pres|"
                       "Adm|Maj|Cpl|Pvt|Supt|vs")
# abbreviations a number or a name follows (any case: "no. 5", "Vol. 2"), not titles: the rules
# extractor's splitter does not share these (it is frozen with the rules graph built from it)
_REFERENCES = ("No|Nos|Fig|Figs|Vol|Vols|pp|Dept|Univ|est|cf|Ave|Blvd|Rd|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|"
               "Dec")
_NAME_DOT = re.compile(rf"(?:^|[\s(\"'“‘-])(?:(?:{TITLE_ABBREVIATIONS}|Bros|(?i:{_REFERENCES}))\.|(?:[A-Z]\.)+|(?:[a-z]\.){{2,}})$")
_TRAILING = r"Jr|Sr|Inc|Ltd|Co|Corp|approx|ca|etc|eg|ie|al|eds?"
_TRAILING_DOT = re.compile(rf"(?:^|[\s(\"'“‘])(?:{_TRAILING})\.$")
# what goes on after a trailing abbreviation within its sentence: lower case, a bracket, or
# another such abbreviation ("Sons & Co. Ltd.", "Company Ltd. (Prince Line)", "Sr. & Jr.")
_GOES_ON = re.compile(rf"[(\[&]|(?:{_TRAILING})\.")
_OPENER = re.compile(r"(?:He|She|It|They|We|You|His|Her|Its|Their|Our|The|This|That|These|Those|There|Then|A|An|"
                     r"In|On|At|After|Before|When|While|But|And|However|Later|Today)(?![\w.])")
_CJK_END = ("。", "！", "？", "；")


@dataclass(frozen=True)
class Chunk:
    index: int
    text: str
    section: str | None  # the Markdown heading the chunk starts under, if any


def split_sentences(text: str) -> list[str]:
    """Sentences end at . ! ? followed by space, or right after a CJK full stop, but not at
    the full stop of a name's title, initial or acronym (:func:`ends_sentence`).

    >>> split_sentences("It rains. Does it?  Yes!吸烟有害。它导致癌症。")
    ['It rains.', 'Does it?', 'Yes!吸烟有害。', '它导致癌症。']
    >>> split_sentences("Mr. Cool met Harris W. Fawell in the U.S. He left after World War I. It ended.")
    ['Mr. Cool met Harris W. Fawell in the U.S.', 'He left after World War I.', 'It ended.']
    """
    out: list[str] = []
    for piece in (p.strip() for p in _SENTENCE.split(text)):
        if not piece:
            continue
        if out and not ends_sentence(out[-1], piece):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def ends_sentence(before: str, after: str) -> bool:
    """Does the mark ending ``before`` (. ! ? or a CJK full stop) end a sentence, ``after`` being
    the text that follows it? A name's or a reference's full stop ("Mr.", "W.", "U.S.", "No.")
    does not, unless ``after`` opens with a word that starts sentences and no name; "I." does
    (a Roman numeral, "World War I."); after "Jr.", "Inc.", "et al." only lower case, a bracket
    or another such abbreviation goes on.

    One rule for both splitters of prose: chunking's (:func:`split_sentences`: a wrong end only
    moves where a long paragraph may be cut) and the sentence spans of converted documents and
    of alignment (:func:`kgservice.extraction.sentences.sentence_spans`: a wrong end cuts a
    name's sentence in two, a missed one joins two). The rules extractor keeps its own
    (``kgservice.llm.rules._ends_sentence``): the rules graphs the eval reads gold on are built
    from it, and a change there moves their triples.

    >>> names = [("Then Mr.", "Cool sang."), ("Edward F.", "Knapp State Airport"), ("Sons & Co.", "Ltd. Set in it,"),
    ...          ('the album "U.S.A.', "(United State of Atlanta)"), ("isolates (e.g.", "Haida)")]
    >>> references = [("as shown in Fig.", "3 it rises."), ("It is vol.", "2 of the set."), ("Smith et al.", "found it."),
    ...               ("from 7 a.m.", "to 3 a.m.")]
    >>> [ends_sentence(b, a) for b, a in names + references]
    [False, False, False, False, False, False, False, False, False]
    >>> ends = [("in the U.S.", "He moved."), ("in World War I.", "It ended."), ("Sammy Davis Jr.", "He sang."),
    ...         ("at 9 p.m.", "The show ran."), ("by News Corp.", "The paper"), ("Paris hosts it?", "Yes."),
    ...         ("吸烟有害。", "它导致癌症。")]
    >>> [ends_sentence(b, a) for b, a in ends]
    [True, True, True, True, True, True, True]
    """
    if before.endswith(_CJK_END):
        return True
    if _TRAILING_DOT.search(before):
        return not (after[:1].islower() or _GOES_ON.match(after))
    if not _NAME_DOT.search(before) or before.endswith((" I.", "(I.")) or before == "I.":
        return True
    return bool(_OPENER.match(after))


def _pieces(paragraph: str, max_chars: int) -> list[str]:
    if len(paragraph) <= max_chars:
        return [paragraph]
    out: list[str] = []
    cur = ""
    for sent in split_sentences(paragraph):
        while len(sent) > max_chars:  # one enormous "sentence": hard cut, the only place we cut inside one
            if cur:
                out.append(cur)
                cur = ""
            out.append(sent[:max_chars])
            sent = sent[max_chars:]
        if cur and len(cur) + 1 + len(sent) > max_chars:
            out.append(cur)
            cur = sent
        else:
            cur = f"{cur} {sent}".strip()
    if cur:
        out.append(cur)
    return out


def chunk_text(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    """Chunks of at most ``max_chars``, each remembering the Markdown heading it starts under.

    Examples
    --------
    Three short paragraphs fit one chunk; a 340-character paragraph is split between
    sentences (11 sentences of 16 characters + spaces = 186, then the other 9 = 152):

    >>> text = "# Intro\\n\\nFirst paragraph.\\n\\n## Details\\n\\n" + "A sentence here. " * 20
    >>> [(c.index, len(c.text), c.section) for c in chunk_text(text, max_chars=200)]
    [(0, 37, 'Intro'), (1, 186, 'Details'), (2, 152, 'Details')]
    >>> chunk_text("x", max_chars=100)
    Traceback (most recent call last):
    ...
    kgservice.errors.InvalidArgument: max_chars must be at least 200
    """
    if max_chars < 200:
        raise InvalidArgument("max_chars must be at least 200")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.startswith("\ufeff"):
        text = text[1:]
    paragraphs: list[tuple[str, str | None]] = []
    section: str | None = None
    for block in re.split(r"\n\s*\n", text):
        block = block.strip("\n")
        if not block.strip():
            continue
        for line in block.splitlines():
            m = _HEADING.match(line)
            if m:
                section = m.group(1)
        for piece in _pieces(block, max_chars):
            paragraphs.append((piece, section))
    chunks: list[Chunk] = []
    cur: list[str] = []
    cur_section: str | None = None
    size = 0
    for piece, sec in paragraphs:
        if cur and size + 2 + len(piece) > max_chars:
            chunks.append(Chunk(len(chunks), "\n\n".join(cur), cur_section))
            cur, size = [], 0
        if not cur:
            cur_section = sec
        cur.append(piece)
        size += len(piece) + 2
    if cur:
        chunks.append(Chunk(len(chunks), "\n\n".join(cur), cur_section))
    return chunks

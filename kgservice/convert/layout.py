"""Text out of blocks: paragraphs separated by a blank line, pages by one more, and the first
line of each page recorded (the positions a citation names)."""

from __future__ import annotations

from collections.abc import Sequence


def assemble(pages: Sequence[Sequence[str]]) -> tuple[str, list[int]]:
    """(text, first line of each page). Each page is a list of blocks (a block's inner line
    breaks are kept); an empty page starts where the text after it does.

    >>> assemble([["# Title", "Line one\\nline two"], [], ["Page three"]])
    ('# Title\\n\\nLine one\\nline two\\n\\nPage three', [1, 6, 6])
    """
    lines: list[str] = []
    starts: list[int | None] = []
    for blocks in pages:
        if not blocks:
            starts.append(None)
            continue
        if lines:
            lines.append("")
        starts.append(len(lines) + 1)
        for i, block in enumerate(blocks):
            if i:
                lines.append("")
            lines += block.split("\n")
    nxt = len(lines) + 1
    for i in range(len(starts) - 1, -1, -1):  # an empty page starts where the next text does
        start = starts[i]
        if start is None:
            starts[i] = nxt
        else:
            nxt = start
    return "\n".join(lines), [int(x) for x in starts if x is not None]


def heading(text: str, level: int) -> str:
    """A Markdown heading line (levels 1-6), its text on one line."""
    return "#" * max(1, min(level, 6)) + " " + " ".join(text.split())

"""HTML -> text with trafilatura: the page's main text (menus, cookie banners, sidebars and
footers left out), headings as Markdown headings, lists and tables kept, paragraphs one
sentence a line. A page where it finds no main text (a bare fragment) is read whole."""

from __future__ import annotations

import re

from kgservice.convert.formats import UnreadableDocument
from kgservice.convert.layout import assemble
from kgservice.extraction.sentences import blocks, one_sentence_a_line

_KEEP = re.compile(r"\s{0,3}(#{1,6}\s|[-*+]\s|\d{1,3}[.)]\s|\|)")


def _layout(markdown: str) -> list[str]:
    """trafilatura's Markdown as blocks: prose paragraphs one sentence a line, the rest as is."""
    out: list[str] = []
    last = -1
    for a, b in blocks(markdown):
        block = markdown[a:b].strip("\n")
        if _KEEP.match(block) or " | " in block:
            kept = "\n".join(line.rstrip() for line in block.split("\n"))
            if out and last >= 0 and "\n\n" not in markdown[last:a] and _KEEP.match(out[-1].split("\n")[-1]) \
                    and not out[-1].lstrip().startswith("#"):
                out[-1] += "\n" + kept  # the next item of the same list or row of the same table
            else:
                out.append(kept)
        else:
            out.append(one_sentence_a_line(block))
        last = b
    return out

def html_text(data: bytes, name: str) -> tuple[str, list[int]]:
    import trafilatura

    try:
        md = trafilatura.extract(data, output_format="markdown", include_formatting=True, include_tables=True,
                                 include_links=False, include_images=False, include_comments=False)
        if not md or not md.strip():
            md = trafilatura.html2txt(data)
    except (ValueError, TypeError) as exc:
        raise UnreadableDocument(f"{name}: the web page cannot be read ({exc}); save it again from the browser "
                                 "as \"Web page, HTML only\"") from None
    md = re.sub(r"\*\*(.+?)\*\*|__(.+?)__", lambda m: m.group(1) or m.group(2), md or "")  # bold carries no fact
    text, _ = assemble([_layout(md)])
    return text, []

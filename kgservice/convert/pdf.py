"""PDF -> text with pdfminer.six: its layout analysis gives paragraphs (text boxes in reading
order, columns kept apart) and every character's font size, so a line set larger than the
body text becomes a Markdown heading. Lines stay as printed (a citation's lines can be found
on the page); pages are separated by a blank line and their first lines recorded.

Refused, naming the file: a password-protected PDF, one whose pages hold only images (a scan
without a text layer), and a damaged one."""

from __future__ import annotations

import io
from collections import Counter
from typing import Any

from kgservice.convert.formats import UnreadableDocument
from kgservice.convert.layout import assemble, heading

HEADING_RATIO = 1.15  # a line this much larger than the body text is a heading
HEADING_MAX_CHARS = 150


def _size(line: Any) -> float:
    from pdfminer.layout import LTChar

    sizes = Counter(round(c.size, 1) for c in line if isinstance(c, LTChar) and c.get_text().strip())
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _pages(data: bytes, name: str) -> list[list[tuple[str, float, bool]]]:
    """Per page, its text lines as (text, font size, starts a new paragraph); a PDF without any
    text is refused here, as a scan when its pages show images, else as empty."""
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LAParams, LTFigure, LTImage, LTTextContainer, LTTextLine
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFSyntaxError
    from pdfminer.psexceptions import PSException

    def images(obj: Any) -> bool:
        return isinstance(obj, LTImage) or (isinstance(obj, LTFigure) and any(images(o) for o in obj))

    out = []
    with_images = []
    try:
        for page in extract_pages(io.BytesIO(data), laparams=LAParams()):
            rows: list[tuple[str, float, bool]] = []
            shows_images = False
            for box in page:
                if isinstance(box, LTTextContainer):
                    first = True
                    for line in (box if not isinstance(box, LTTextLine) else [box]):
                        if isinstance(line, LTTextLine) and line.get_text().strip():
                            rows.append((line.get_text().strip(), _size(line), first))
                            first = False
                elif images(box):
                    shows_images = True
            out.append(rows)
            with_images.append(shows_images)
    except (PDFPasswordIncorrect, PDFEncryptionError):
        raise UnreadableDocument(f"{name}: the PDF is password-protected (encrypted), so its text cannot be read; "
                                 "save an unprotected copy (open it with the password and print or export it to "
                                 "PDF, or `qpdf --decrypt --password=PASSWORD in.pdf out.pdf`) and ingest that") from None
    except (PDFSyntaxError, PSException, ValueError, KeyError, TypeError, AssertionError) as exc:
        raise UnreadableDocument(f"{name}: the PDF is damaged and cannot be read ({type(exc).__name__}: "
                                 f"{str(exc)[:120] or 'no detail'}); open it in a PDF viewer and save or export "
                                 "it again") from None
    if not any(out):
        scanned = sum(with_images)
        if scanned:
            raise UnreadableDocument(f"{name}: the PDF has no text layer: {scanned} of its {len(out)} page(s) are "
                                     "images only (a scan?); run text recognition on it first (e.g. "
                                     "`ocrmypdf in.pdf out.pdf`) and ingest the result")
        raise UnreadableDocument(f"{name}: the PDF's {len(out)} page(s) hold no text; nothing to ingest")
    return out


def pdf_text(data: bytes, name: str) -> tuple[str, list[int]]:
    pages = _pages(data, name)
    body: Counter[float] = Counter()
    for rows in pages:
        for text, size, _ in rows:
            body[size] += len(text)
    body_size = body.most_common(1)[0][0]
    big = sorted({s for rows in pages for t, s, _ in rows if s >= body_size * HEADING_RATIO and len(t) <= HEADING_MAX_CHARS},
                 reverse=True)
    level = {s: i + 1 for i, s in enumerate(big[:6])}
    out: list[list[str]] = []
    for rows in pages:
        blocks: list[str] = []
        para: list[str] = []
        head: list[str] = []
        head_size = 0.0
        for text, size, new_para in rows:
            is_head = size in level and len(text) <= HEADING_MAX_CHARS
            if head and (not is_head or size != head_size):
                blocks.append(heading(" ".join(head), level[head_size]))
                head = []
            if is_head:
                if para:
                    blocks.append("\n".join(para))
                    para = []
                head.append(text)
                head_size = size
                continue
            if new_para and para:
                blocks.append("\n".join(para))
                para = []
            para.append(text)
        if head:
            blocks.append(heading(" ".join(head), level[head_size]))
        if para:
            blocks.append("\n".join(para))
        out.append(blocks)
    return assemble(out)

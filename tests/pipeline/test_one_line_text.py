"""A text written on one long line is cut into many chunks; aligning a chunk's units to their
sentences read the chunk's whole *lines*, that is the whole text, once per chunk (and counted
line breaks from the start for each sentence): a 100 kB one-line .txt took 36 s with
kgoffline/rules, a 1 MB one printed nothing for minutes (FINDINGS-newcomer F8). Counted here in
characters read, not seconds."""

from __future__ import annotations

from kgservice.config import Settings
from kgservice.extraction import align
from kgservice.extraction.align import sentences
from kgservice.service import KnowledgeBase


def test_a_one_line_text_is_aligned_once_not_once_per_chunk(tmp_path, monkeypatch):
    text = " ".join(f"Tea number {i} is a drink." for i in range(600))  # ~16 kB, one line
    (tmp_path / "tea.txt").write_text(text + "\n", "utf-8")
    read: list[int] = []
    real = align.sentences

    def counting(chunk: str, first_line: int = 1):
        read.append(len(chunk))
        return real(chunk, first_line)

    monkeypatch.setattr(align, "sentences", counting)
    with KnowledgeBase(Settings(data_dir=tmp_path / "kg", embedder="hash:64", llm_model="kgoffline/rules")) as kb:
        _, report = kb.ingest_paths([tmp_path / "tea.txt"])
        doc = kb.document("tea.txt")
        assert report is not None and doc.units and len(doc.chunks) > 3  # cut into several chunks
        assert sum(read) <= len(text)  # it was every chunk x the whole line
        assert set(doc.unit_lines.values()) == {(1, 1)}  # the one line, as before


def test_sentence_lines_count_on_from_the_previous_sentence():
    t = "A is b.\nC is d. E is f.\n\n\nG is h\nand i."
    assert [s.lines for s in sentences(t, 5)] == [(5, 5), (6, 6), (6, 6), (9, 10)]

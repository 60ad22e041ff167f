"""Where a sentence ends (chunking's splitter, and the sentence spans of converted documents
and alignment, which share its rule): not inside a name ("Mr. Cool", "Harris W. Fawell", "A. J.
Cronin", "the U.S. Army") or before the number a reference gives ("Fig. 3", "No. 5"), but after
"World War I." and after an initial or an acronym when the next word opens a sentence ("born in
the U.S. He moved"). Every expected split below is worked out by hand."""

from __future__ import annotations

import pytest

from kgservice.extraction import chunk_text, split_sentences
from kgservice.extraction.sentences import sentence_spans

SENTENCES = [
    ("The Oddventures of Mr. Cool is an album. Harris W. Fawell was born in 1929.",
     ["The Oddventures of Mr. Cool is an album.", "Harris W. Fawell was born in 1929."]),
    ("It was adapted from A. J. Cronin's novel. It is set in World War I. It won.",
     ["It was adapted from A. J. Cronin's novel.", "It is set in World War I.", "It won."]),
    ("Dr. Smith met Mrs. Jones in St. Louis. They married.",
     ["Dr. Smith met Mrs. Jones in St. Louis.", "They married."]),
    ("He was born in the U.S. He moved to Paris in 1950.",
     ["He was born in the U.S.", "He moved to Paris in 1950."]),
    ("The U.S. Army fought there. It lost.", ["The U.S. Army fought there.", "It lost."]),
    ("He chose plan B. The plan failed.", ["He chose plan B.", "The plan failed."]),
    ("He lived on Main St. He left in 1990.", ["He lived on Main St.", "He left in 1990."]),
    ("It rains. Does it?  Yes!吸烟有害。它导致癌症。", ["It rains.", "Does it?", "Yes!吸烟有害。", "它导致癌症。"]),
    ("Henry VIII. The king died.", ["Henry VIII.", "The king died."]),
    ("As shown in Fig. 3 the level rose. It fell in Jan. 2001 again.",
     ["As shown in Fig. 3 the level rose.", "It fell in Jan. 2001 again."]),
    ("Smith et al. found it in vol. 2 of the series. It held.",
     ["Smith et al. found it in vol. 2 of the series.", "It held."]),
    ("Sammy Davis Jr. He sang. Edward F. Knapp State Airport is in Berlin.",
     ["Sammy Davis Jr.", "He sang.", "Edward F. Knapp State Airport is in Berlin."]),
]


@pytest.mark.parametrize(("text", "expected"), SENTENCES)
def test_a_sentence_ends_where_a_reader_ends_it(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


@pytest.mark.parametrize(("text", "expected"), SENTENCES)
def test_the_sentence_spans_end_sentences_where_chunking_does(text: str, expected: list[str]) -> None:
    # one rule (chunking.ends_sentence) for both: the spans used to keep "the U.S. He moved"
    # and "World War I. It won" as one sentence, and chunking cut "Fig." from "3"
    assert [text[a:b] for a, b in sentence_spans(text)] == expected


def test_a_long_paragraph_is_not_cut_between_a_title_and_its_name() -> None:
    # 20 sentences of 31 characters + "Mr. Cool sang." (14): a 640-character paragraph; at 200
    # characters the old splitter could cut "Mr." from "Cool", which must not happen
    text = " ".join(["Filler text that says nothing." for _ in range(6)] + ["Then Mr. Cool sang a song."]
                    + ["Filler text that says nothing." for _ in range(14)])
    joined = [c.text for c in chunk_text(text, max_chars=200)]
    assert any("Then Mr. Cool sang a song." in c for c in joined)
    assert not any(c.endswith("Mr.") for c in joined)

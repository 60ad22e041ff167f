"""Where a sentence ends (chunking's splitter): not inside a name ("Mr. Cool", "Harris W.
Fawell", "A. J. Cronin", "the U.S. Army"), but after "World War I." and after an initial or an
acronym when the next word opens a sentence ("born in the U.S. He moved"). Every expected split
below is worked out by hand."""

from __future__ import annotations

import pytest

from kgservice.extraction import chunk_text, split_sentences


@pytest.mark.parametrize(("text", "expected"), [
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
])
def test_a_sentence_ends_where_a_reader_ends_it(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_a_long_paragraph_is_not_cut_between_a_title_and_its_name() -> None:
    # 20 sentences of 31 characters + "Mr. Cool sang." (14): a 640-character paragraph; at 200
    # characters the old splitter could cut "Mr." from "Cool", which must not happen
    text = " ".join(["Filler text that says nothing." for _ in range(6)] + ["Then Mr. Cool sang a song."]
                    + ["Filler text that says nothing." for _ in range(14)])
    joined = [c.text for c in chunk_text(text, max_chars=200)]
    assert any("Then Mr. Cool sang a song." in c for c in joined)
    assert not any(c.endswith("Mr.") for c in joined)

"""What the misspelling reading (:mod:`kgservice.entry.spelling`) costs a question, counted in
look-ups, not timed: every long question word the graph's labels lack made its ~54n + 25 edits
and looked each up before the dictionary was asked, so a word of the language ("performer",
"located": most such words) cost 0.2–0.3 ms for a reading it could never get; on the rules
graphs that was 0.4–0.5 ms of a 2–3 ms retrieval (scripts/eval/RESULTS.md, "Latency since this
morning"). The dictionary is now asked first, and the reading must be what it was: checked
against the rule written out plainly (:func:`_reference`, the function as it stood) on seeded
random words and vocabularies, with and without stems grouping a reading's forms."""

from __future__ import annotations

import random

from kgservice.answer.shape import stem
from kgservice.entry.spelling import MIN_LETTERS, one_edit, respelt
from kgservice.entry.match import STOPWORDS


def test_a_word_of_the_language_costs_no_edit_look_ups() -> None:
    asked: list[str] = []

    def used(w: str) -> int:
        asked.append(w)
        return {"premiered": 3, "performers": 2}.get(w, 0)

    assert respelt("premiere", used) == ""
    assert respelt("performer", used) == ""
    assert asked == ["premiere", "performer"]  # the word itself, never its ~500 edits


def test_a_misspelling_still_makes_its_edits() -> None:
    asked: list[str] = []

    def used(w: str) -> int:
        asked.append(w)
        return {"olympics": 4}.get(w, 0)

    assert respelt("olimpics", used) == "olympics"
    assert len(asked) == 1 + len(one_edit("olimpics"))


def _reference(word: str, used, min_letters: int = MIN_LETTERS, same=str, own=lambda w: 0, known=None) -> str:
    """The reading as it was before the dictionary moved first: every edit in alphabetical
    order, the dictionary asked last."""
    if len(word) < min_letters or not word.isascii() or not word.isalpha() or word in STOPWORDS or used(word):
        return ""
    floor = own(word)
    best: dict[str, tuple[int, str]] = {}
    for x in sorted(one_edit(word)):
        n = used(x)
        if n > floor and n > best.get(same(x), (0, ""))[0]:
            best[same(x)] = (n, x)
    counts = sorted(best.values(), reverse=True)
    if not counts or (len(counts) > 1 and counts[1][0] == counts[0][0]) or known(word):
        return ""
    return counts[0][1]


def test_the_reading_is_the_rule_as_it_was() -> None:
    rng = random.Random(53)
    letters = "aeilnorst"  # few letters: edits of one word are often another's
    read = 0
    for _ in range(40):
        vocab = {"".join(rng.choice(letters) for _ in range(rng.randint(5, 9))): rng.randint(1, 4) for _ in range(60)}
        words = list(vocab)
        for base in rng.sample(words, 10):
            for word in {x for x in one_edit(base) if rng.random() < 0.02} | {base}:
                known = {w for w in words if rng.random() < 0.2}.__contains__
                own = {word: rng.randint(0, 2)}.get
                for same in (str, stem):
                    new = respelt(word, lambda x: vocab.get(x, 0), same=same, own=lambda w: own(w, 0), known=known)
                    old = _reference(word, lambda x: vocab.get(x, 0), same=same, own=lambda w: own(w, 0), known=known)
                    assert new == old, (word, same)
                    read += bool(new)
    assert read > 10  # the cases read some words, not only refused them

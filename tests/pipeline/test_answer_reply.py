"""The answer prompt's text format (line 1 the short answer, then a sentence per line ending with
its unit ids in brackets, or ``NOT FOUND``): read whole, read while it streams, written by the
rule-based stand-in, and repaired when a sentence lacks its ids. Every expectation is worked out
by hand from the replies written here."""

from __future__ import annotations

import pytest

from kgservice.answer import grounded_answer
from kgservice.answer.reply import parse_reply
from kgservice.answer.streaming import AnswerStream
from kgservice.llm import LLM
from kgservice.llm.offline import pieces

S1 = "{smoking} [causes] {lung cancer}\n    ()[confidence] (high)"  # as CORPUS writes #s1
S3 = "{lung cancer} [leads to] {death}"


EMBEDDED = pytest.mark.parametrize("kb", ["embedded"], indirect=True)  # the store plays no part here


def sentences(out) -> list[tuple[str, list[str]]]:
    return [(s.text, s.cites) for s in out.sentences]


def test_a_text_reply_read_whole():
    out = parse_reply("lung cancer\nSmoking causes lung cancer. [s1]\nIt leads to death. [s3, s1]\n")
    assert (out.found, out.answer) == (True, "lung cancer")
    assert sentences(out) == [("Smoking causes lung cancer.", ["s1"]), ("It leads to death.", ["s3", "s1"])]
    # what the reader forgives: a code fence, blank lines, the full stop after the brackets, two
    # bracket groups, quoted ids, no space before the brackets
    out = parse_reply("```\nlung cancer\n\nSmoking causes lung cancer [s1].\nIt leads to death.[`s3`] ['s1']\n```")
    assert (out.found, out.answer) == (True, "lung cancer")
    assert sentences(out) == [("Smoking causes lung cancer.", ["s1"]), ("It leads to death.", ["s3", "s1"])]
    # brackets inside the sentence are its text; only the ones at its end are citations
    out = parse_reply("3\nThe list [a, b, c] has 3 items. [s9]")
    assert sentences(out) == [("The list [a, b, c] has 3 items.", ["s9"])]
    # a sentence without its ids cites nothing (the grounded check refuses that)
    assert sentences(parse_reply("x\nSmoking causes lung cancer.")) == [("Smoking causes lung cancer.", [])]


def test_not_found_and_the_earlier_json_format():
    for reply in ("NOT FOUND", "not found.", "\n  NOT FOUND\n", "NOT FOUND\nThe units say nothing of it. [s1]"):
        out = parse_reply(reply)
        assert (out.found, out.answer, out.sentences) == (False, "", []), reply
    # a JSON object (the earlier prompt's format, as scripted and recorded replies may be), prose
    # or a fence around it tolerated
    for reply in ('{"found": true, "answer": "x", "sentences": [{"text": "A b.", "cites": ["s1"]}]}',
                  'Here: {"found": true, "answer": "x", "sentences": [{"text": "A b.", "cites": ["s1"]}]}',
                  '```json\n{"found": true, "answer": "x", "sentences": [{"text": "A b.", "cites": ["s1"]}]}\n```'):
        out = parse_reply(reply)
        assert (out.found, out.answer, sentences(out)) == (True, "x", [("A b.", ["s1"])]), reply
    with pytest.raises(ValueError, match="empty"):
        parse_reply("  \n```\n```\n")
    with pytest.raises(ValueError):  # a broken JSON object is not read as text
        parse_reply('{"found": tru')


def collect(reply_pieces: list[str], units: dict, problems: list[str] | None = None) -> tuple[list, list]:
    """The events of one attempt, and for each piece the events it caused."""
    events: list[tuple[str, dict]] = []
    per_piece: list[list[tuple[str, dict]]] = []
    s = AnswerStream(lambda e, d: events.append((e, d)), units)
    s.begin(1)
    for p in reply_pieces:
        n = len(events)
        s.delta(p)
        per_piece.append(events[n:])
    s.checked(problems or [])
    return events, per_piece


@EMBEDDED
def test_the_short_answer_streams_from_the_first_token_and_each_line_brings_its_citations(corpus_kb):
    units = {u.id: u for u in corpus_kb.store.get_units(["s1", "s3"])}
    reply = "lung cancer\nSmoking causes lung cancer. [s1]\nIt leads to death. [s3, x9]"
    toks = pieces(reply)
    # the cl100k tokens, by hand from the tokenizer: the short answer is the very first one
    assert toks[:3] == ["lung", " cancer", "\n"]
    events, per_piece = collect(toks, units)
    assert per_piece[0] == [("answer_short", {"attempt": 1, "text": "lung"})]
    assert per_piece[1] == [("answer_short", {"attempt": 1, "text": " cancer"})]
    assert "".join(d["text"] for e, d in events if e == "answer_short") == "lung cancer"
    # a sentence's text comes as it grows, never its brackets; its ids when its line ends
    texts = {i: "".join(d["text"] for e, d in events if e == "answer_text" and d["sentence"] == i) for i in (0, 1)}
    assert texts == {0: "Smoking causes lung cancer.", 1: "It leads to death."}
    assert len([e for e, d in events if e == "answer_text" and d["sentence"] == 0]) > 1  # in pieces
    cites = [(d["sentence"], d["unit"], d["resolved"], d["number"], d["text"]) for e, d in events if e == "answer_cite"]
    assert cites == [(0, "s1", True, 1, S1), (1, "s3", True, 2, S3), (1, "x9", False, None, None)]
    kinds = [e for e, _ in events]
    first_s1 = kinds.index("answer_cite")
    assert all(d["sentence"] == 0 for e, d in events[:first_s1] if e == "answer_text")  # line 1 cited before line 2
    # the last line has no newline: its ids come with the check, before the verdict
    assert events[-1] == ("answer_check", {"attempt": 1, "passed": True, "problems": []})
    assert events[-2][0] == "answer_cite" and events[-2][1]["unit"] == "x9"


def test_a_line_cut_anywhere_streams_the_same_text():
    reply = "January 1950\nJanuary 1950 brought 57.2 in of snow. [u-a1]\nSo it brought more. [u-a1, u-b2]\n"
    for size in (1, 2, 3, 7):
        cuts = [reply[i:i + size] for i in range(0, len(reply), size)]
        events, _ = collect(cuts, {})
        assert "".join(d["text"] for e, d in events if e == "answer_short") == "January 1950", size
        got = {}
        for e, d in events:
            if e == "answer_text":
                got[d["sentence"]] = got.get(d["sentence"], "") + d["text"]
        assert got == {0: "January 1950 brought 57.2 in of snow.", 1: "So it brought more."}, size
        assert [(d["sentence"], d["unit"]) for e, d in events if e == "answer_cite"] == \
            [(0, "u-a1"), (1, "u-a1"), (1, "u-b2")], size


def test_not_found_streams_no_answer_text():
    for cuts in (["N", "OT", " FOUND"], ["NOT FOUND\n", "Nothing here. [s1]"], ["NOT", " FOUND."]):
        events, _ = collect(cuts, {})
        assert [e for e, _ in events] == ["answer_start", "answer_check"], cuts
    # a short answer that begins like the marker is held only while it might be it
    events, per_piece = collect(["N", "o", "rway", "\n"], {})
    assert per_piece[:2] == [[], []]
    assert per_piece[2] == [("answer_short", {"attempt": 1, "text": "Norway"})]


def test_the_rule_based_model_writes_the_text_format():
    """kgoffline/rules restates each unit; through the answer step its reply is read as text."""
    from kgservice.llm import rules

    reply = rules.respond({"task": "answer", "question": "What does smoking cause?",
                           "units": [{"id": "s1", "unit": S1}, {"id": "s3", "unit": S3}]})
    assert reply == ("lung cancer\n"
                     "smoking causes lung cancer (confidence: high). [s1]\n"
                     "lung cancer leads to death. [s3]")
    assert rules.respond({"task": "answer", "question": "q", "units": []}) == "NOT FOUND"


@EMBEDDED
def test_a_sentence_without_its_ids_is_sent_back_with_the_text_format_asked_again(corpus_kb, script, monkeypatch):
    """The first reply forgets a sentence's brackets: the check refuses it ("cites no unit"), the
    repair request names the problem and asks for the text format again, the second reply is
    the answer."""
    replies = ["lung cancer\nSmoking causes lung cancer.", "lung cancer\nSmoking causes lung cancer. [s1]"]
    seen: list[list[dict]] = []

    def answer(payload):
        return replies.pop(0)

    script.override_task("answer", answer)
    from kgservice.llm import client

    real = client.provider_completion

    def watching(*a, **kw):
        seen.append(kw["messages"])
        assert "response_format" not in kw  # a text reply: no JSON format is asked for
        return real(*a, **kw)

    monkeypatch.setattr(client, "provider_completion", watching)
    llm = LLM("kgoffline/scripted", retry_wait=0.0, repair_attempts=2)
    kb = corpus_kb
    ans = grounded_answer(kb.store, kb.lexicon, llm, kb.caches, "What does smoking cause?",
                          kb.store.get_units(["s1"]), [])
    assert ans.found and ans.short_answer == "lung cancer" and ans.text == "Smoking causes lung cancer. [s1]"
    assert (llm.usage.of("answer").calls, llm.usage.of("answer").repairs) == (2, 1)
    repair = seen[1][-1]["content"]
    assert "- sentence 1 cites no unit" in repair and "NOT FOUND" in repair and "JSON" not in repair
    assert seen[1][-2] == {"role": "assistant", "content": "lung cancer\nSmoking causes lung cancer."}

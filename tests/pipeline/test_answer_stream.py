"""The streamed answer: a JSON reply read while it grows (text and citations as they arrive),
through the client's streaming path to the offline provider, with the grounded check's
verdict on each attempt. Every expectation is worked out by hand from the replies below."""

from __future__ import annotations

import json

import pytest

from kgservice.answer import grounded_answer
from kgservice.answer.streaming import AnswerStream, Open, parse_prefix
from kgservice.errors import InvalidArgument
from kgservice.llm import LLM
from kgservice.llm.offline import pieces, stream_delay
from kgservice.notation import parse_units
from kgservice.service import KnowledgeBase
from tests.pipeline.conftest import CORPUS, make_settings


@pytest.fixture
def kb(tmp_path):
    k = KnowledgeBase(make_settings(tmp_path))
    k.ingest_units(parse_units(CORPUS, k.lexicon, doc="corpus.units"))
    yield k
    k.close()


def test_parse_prefix_keeps_what_is_complete():
    cases = [
        ("", None),
        ("  ", None),
        ("{", {}),
        ('{"fo', {}),                       # a key cut off: no member yet
        ('{"found"', {}),
        ('{"found": tr', {}),               # a literal cut off: left out
        ('{"found": true', {}),             # the last value is taken once something follows it
        ('{"found": true,', {"found": True}),
        ('{"n": 12', {}),                   # 12 may become 123
        ('{"n": 12}', {"n": 12}),
        ('{"s": [{"text": "Smo', {"s": [{"text": "Smo"}]}),
        ('{"s": [{"text": "a\\', {"s": [{"text": "a"}]}),          # half an escape is not shown
        ('{"s": [{"text": "a\\"b', {"s": [{"text": 'a"b'}]}),
        ('{"t": "caf\\u00', {"t": "caf"}),
        ('{"t": "caf\\u00e9', {"t": "café"}),
        ('{"t": "\\ud83d', {"t": ""}),                              # a surrogate pair needs both halves
        ('{"t": "\\ud83d\\ude00!', {"t": "\U0001F600!"}),
        ('{"c": ["s1", "s', {"c": ["s1", "s"]}),
        ('{"c": ["s1", "s3"]}', {"c": ["s1", "s3"]}),
    ]
    for text, expected in cases:
        assert parse_prefix(text) == expected, text
    # a string cut off is marked open; a closed one is not
    assert isinstance(parse_prefix('{"c": ["s1", "s')["c"][1], Open)
    assert not isinstance(parse_prefix('{"c": ["s1", "s')["c"][0], Open)
    with pytest.raises(ValueError):
        parse_prefix('{"found": yes')


def test_stream_events_from_pieces_cut_anywhere(kb):
    units = {u.id: u for u in kb.store.get_units(["s1", "s3"])}
    events: list[tuple[str, dict]] = []
    s = AnswerStream(lambda e, d: events.append((e, d)), units)
    reply = ('Here: {"found": true, "sentences": [{"text": "Smoking causes lung cancer.", "cites": ["s1"]}, '
             '{"text": "It leads to death.", "cites": ["s3", "x9", "s3"]}]}')
    cuts = ['Here: {"found": tr', 'ue, "sentences": [{"text": "Smo', 'king causes lung', ' cancer.", "cites": ["s',
            '1"]}, {"text": "', 'It leads to death.", "cites": ["s3", "x', '9", "s3"]}]}']
    assert "".join(cuts) == reply
    s.begin(1)
    for c in cuts:
        s.delta(c)
    s.checked(["sentence 2: words not in the cited units: leads"])
    s3 = "{lung cancer} [leads to] {death}"
    assert events == [
        ("answer_start", {"attempt": 1}),
        ("answer_text", {"attempt": 1, "sentence": 0, "text": "Smo"}),
        ("answer_text", {"attempt": 1, "sentence": 0, "text": "king causes lung"}),
        ("answer_text", {"attempt": 1, "sentence": 0, "text": " cancer."}),
        ("answer_cite", {"attempt": 1, "sentence": 0, "unit": "s1", "resolved": True, "number": 1,
                         "text": "{smoking} [causes] {lung cancer}\n    ()[confidence] (high)"}),  # as CORPUS writes it
        ("answer_text", {"attempt": 1, "sentence": 1, "text": "It leads to death."}),
        ("answer_cite", {"attempt": 1, "sentence": 1, "unit": "s3", "resolved": True, "number": 2, "text": s3}),
        ("answer_cite", {"attempt": 1, "sentence": 1, "unit": "x9", "resolved": False, "number": None, "text": None}),
        ("answer_cite", {"attempt": 1, "sentence": 1, "unit": "s3", "resolved": True, "number": 2, "text": s3}),
        ("answer_check", {"attempt": 1, "passed": False,
                          "problems": ["sentence 2: words not in the cited units: leads"]}),
    ]
    # a new attempt starts from nothing: its text and numbers are its own
    events.clear()
    s.begin(2)
    s.delta('{"found": true, "sentences": [{"text": "Lung cancer leads to death.", "cites": ["s3"]}]}')
    assert events[1:] == [("answer_text", {"attempt": 2, "sentence": 0, "text": "Lung cancer leads to death."}),
                          ("answer_cite", {"attempt": 2, "sentence": 0, "unit": "s3", "resolved": True, "number": 1,
                                           "text": s3})]


def test_the_short_answer_streams_as_soon_as_its_key_is_read_wherever_it_stands(kb):
    """The prompt's order (``found``, ``answer``, ``sentences``): the short answer is the first
    text, its characters sent while its string is still open; the same reply with ``answer``
    after the sentences sends it there. Pieces are the cl100k tokens the offline model streams."""
    units = {u.id: u for u in kb.store.get_units(["s1"])}
    reply = '{"found": true, "answer": "lung cancer", "sentences": [{"text": "Smoking causes lung cancer.", "cites": ["s1"]}]}'
    toks = pieces(reply)
    # '{"' 'found' '":' ' true' ',' ' "' 'answer' '":' ' "' 'lung' ' cancer' '",' ...: by hand from the tokenizer
    assert toks[:12] == ['{"', 'found', '":', ' true', ',', ' "', 'answer', '":', ' "', 'lung', ' cancer', '",']
    events: list[tuple[str, dict]] = []
    s = AnswerStream(lambda e, d: events.append((e, d)), units)
    s.begin(1)
    for t in toks[:10]:
        s.delta(t)
    assert events == [("answer_start", {"attempt": 1}), ("answer_short", {"attempt": 1, "text": "lung"})]
    for t in toks[10:]:
        s.delta(t)
    kinds = [e for e, _ in events]
    assert "".join(d["text"] for e, d in events if e == "answer_short") == "lung cancer"
    assert kinds.index("answer_text") > max(i for i, k in enumerate(kinds) if k == "answer_short")

    events.clear()
    s.begin(2)
    for t in ('{"found": true, "sentences": [{"text": "Smoking causes lung cancer.", "cites": ["s1"]}]', ', "answer": "lu',
              'ng cancer"}'):
        s.delta(t)
    assert [e for e, _ in events] == ["answer_start", "answer_text", "answer_cite", "answer_short", "answer_short"]
    assert [d["text"] for e, d in events if e == "answer_short"] == ["lu", "ng cancer"]
    # a reply that does not answer has an empty short answer: nothing is sent for it
    events.clear()
    s.begin(3)
    s.delta('{"found": false, "answer": "", "sentences": []}')
    assert events == [("answer_start", {"attempt": 3})]


def test_a_reply_that_is_not_json_shows_nothing(kb):
    events: list[tuple[str, dict]] = []
    s = AnswerStream(lambda e, d: events.append((e, d)), {})
    s.begin(1)
    for piece in ['{"found": yes', ', "sentences": [{"text": "x"}]}']:
        s.delta(piece)
    assert events == [("answer_start", {"attempt": 1})]


def test_offline_pieces_and_delay_setting(monkeypatch):
    # the tokens of the cl100k tokenizer (the table litellm ships), as tiktoken cuts them
    assert pieces('{"found": true, "sentences": [{"text": "Python was') == [
        '{"', 'found', '":', ' true', ',', ' "', 'sent', 'ences', '":', ' [{"', 'text', '":', ' "', 'Python', ' was']
    # a character whose bytes span two tokens comes whole, in one piece
    for reply in ("吸烟导致糖尿病。", "emoji \U0001F600 and café", ""):
        got = pieces(reply)
        assert "".join(got) == reply and all("\ufffd" not in p for p in got)
    monkeypatch.delenv("KG_OFFLINE_STREAM_DELAY", raising=False)
    assert stream_delay() == 0.0
    monkeypatch.setenv("KG_OFFLINE_STREAM_DELAY", "0.25")
    assert stream_delay() == 0.25
    for bad in ("fast", "-1", "11"):
        monkeypatch.setenv("KG_OFFLINE_STREAM_DELAY", bad)
        with pytest.raises(InvalidArgument, match="KG_OFFLINE_STREAM_DELAY"):
            stream_delay()


UNGROUNDED = {"found": True, "sentences": [{"text": "Smoking causes lung cancer and diabetes.", "cites": ["s1"]}]}
GROUNDED = {"found": True, "sentences": [{"text": "Smoking causes lung cancer.", "cites": ["s1"]}]}


def test_a_refused_draft_is_streamed_then_replaced_by_the_checked_answer(kb, script, boundary):
    """The model's first reply adds "diabetes" (in no cited unit): it streams, the check refuses
    it, the repair request streams the grounded reply, which is the answer."""
    replies = [UNGROUNDED, GROUNDED]
    script.override_task("answer", lambda payload: replies.pop(0))
    units = kb.store.get_units(["s1", "s3"])
    events: list[tuple[str, dict]] = []
    llm = LLM("kgoffline/scripted", retry_wait=0.0, repair_attempts=2)
    ans = grounded_answer(kb.store, kb.lexicon, llm, kb.caches, "What does smoking cause?", units, [],
                          on_stream=lambda e, d: events.append((e, d)))
    assert ans.found and ans.text == "Smoking causes lung cancer. [s1]" and ans.cited == ["s1"]
    by_attempt = {a: [(e, d) for e, d in events if d["attempt"] == a] for a in (1, 2)}
    for a, reply in ((1, UNGROUNDED), (2, GROUNDED)):
        evs = by_attempt[a]
        assert evs[0] == ("answer_start", {"attempt": a})
        assert "".join(d["text"] for e, d in evs if e == "answer_text") == reply["sentences"][0]["text"]
        assert len([e for e, _ in evs if e == "answer_text"]) > 1  # it came in pieces
        assert [d["unit"] for e, d in evs if e == "answer_cite"] == ["s1"]
    assert by_attempt[1][-1] == ("answer_check", {"attempt": 1, "passed": False, "problems": [
        "sentence 1: words not in the cited units: diabetes"]})
    assert by_attempt[2][-1] == ("answer_check", {"attempt": 2, "passed": True, "problems": []})
    assert [e for e, _ in events].count("answer_start") == 2 and boundary.tasks() == ["answer", "answer"]
    u = llm.usage.of("answer")
    assert (u.calls, u.repairs) == (2, 1) and u.completion_tokens > 0  # streamed replies are counted too
    # the same question again comes from the decision cache: no model call, nothing streamed
    events.clear()
    again = grounded_answer(kb.store, kb.lexicon, llm, kb.caches, "What does smoking cause?", units, [],
                            on_stream=lambda e, d: events.append((e, d)))
    assert again.cached and again.text == ans.text and events == [] and boundary.count == 2


def test_a_draft_refused_every_time_ends_not_in_the_graph(kb, script):
    script.override_task("answer", lambda payload: UNGROUNDED)
    events: list[tuple[str, dict]] = []
    ans = grounded_answer(kb.store, kb.lexicon, LLM("kgoffline/scripted", retry_wait=0.0, repair_attempts=1),
                          kb.caches, "What does smoking cause?", kb.store.get_units(["s1"]), [],
                          on_stream=lambda e, d: events.append((e, d)))
    assert not ans.found and "diabetes" in ans.rejected[0]
    assert [(d["attempt"], d["passed"]) for e, d in events if e == "answer_check"] == [(1, False), (2, False)]


def test_without_a_listener_the_model_is_not_asked_to_stream(kb, script, monkeypatch):
    from kgservice.llm import client

    seen: list[bool] = []
    real = client.provider_completion
    monkeypatch.setattr(client, "provider_completion",
                        lambda *a, **kw: (seen.append(bool(kw.get("stream"))), real(*a, **kw))[1])
    script.override_task("answer", lambda payload: GROUNDED)
    units = kb.store.get_units(["s1"])
    grounded_answer(kb.store, kb.lexicon, LLM("kgoffline/scripted"), kb.caches, "What does smoking cause?", units, [])
    grounded_answer(kb.store, kb.lexicon, LLM("kgoffline/scripted"), kb.caches, "What causes lung cancer?", units, [],
                    on_stream=lambda e, d: None)
    assert seen == [False, True]


def test_ask_streams_through_the_pipeline(kb, script):
    """kb.ask with on_stream: the streamed text of the accepted attempt is the answer's text."""
    events: list[tuple[str, dict]] = []
    res = kb.ask("Who created Python?", on_stream=lambda e, d: events.append((e, d)))
    assert res.found
    accepted = [d["attempt"] for e, d in events if e == "answer_check" and d["passed"]]
    assert accepted, events
    streamed: dict[int, str] = {}
    for e, d in events:
        if e == "answer_text" and d["attempt"] == accepted[-1]:
            streamed[d["sentence"]] = streamed.get(d["sentence"], "") + d["text"]
    assert [streamed[i] for i in sorted(streamed)] == [s["text"] for s in res.sentences]
    assert json.dumps(res.to_dict())  # the result is the usual, serialisable one


def test_a_hosted_models_stream_goes_through_litellm(script):
    """The real-model path: litellm's ``stream=True`` (its ``mock_response`` plays the provider,
    no network), read chunk by chunk into the sink; the whole reply is what it validates."""
    from pydantic import BaseModel

    class Pair(BaseModel):
        a: int
        b: str

    class Sink:
        def __init__(self) -> None:
            self.events: list[tuple] = []

        def begin(self, attempt: int) -> None:
            self.events.append(("begin", attempt))

        def delta(self, text: str) -> None:
            self.events.append(("delta", text))

        def checked(self, problems: list[str]) -> None:
            self.events.append(("checked", problems))

    reply = '{"a": 1, "b": "two words here"}'
    llm = LLM("openai/gpt-4o-mini", completion_kwargs={"mock_response": reply}, retry_wait=0.0)
    sink = Sink()
    out = llm.complete_json([{"role": "user", "content": "a pair"}], Pair, "extract", stream=sink)
    assert (out.a, out.b) == (1, "two words here")
    deltas = [e[1] for e in sink.events if e[0] == "delta"]
    assert len(deltas) > 1 and "".join(deltas) == reply
    assert sink.events[0] == ("begin", 1) and sink.events[-1] == ("checked", [])
    assert llm.usage.of("extract").completion_tokens > 0

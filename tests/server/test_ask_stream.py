"""The streamed answer over real HTTP: the app under uvicorn on a loopback port, an httpx client
reading the SSE stream. The offline model is held mid-answer until the client has read streamed
text, so the test shows text reaching the client before the model has finished (no clock
involved: without streaming the model would wait for the client forever — here 60 s, then fail)."""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from kgservice.llm import offline
from tests.processes import serving_app
from tests.server.conftest import auth

GROUNDED = {"found": True, "sentences": [{"text": "Python was created by Guido van Rossum.", "cites": ["p1"]}]}
QUESTION = {"question": "Who created Python?", "threshold": 0.7}
ANSWER = "Python was created by Guido van Rossum. [p1]"


@pytest.fixture
def served(app):
    with serving_app(app) as base:
        yield base


@pytest.fixture
def held_model(monkeypatch):
    """The offline provider streams the answer's first 15 tokens, then waits for ``go``."""
    go = threading.Event()
    waited: list[bool] = []
    real = offline.streamed

    def streamed(*args, **kwargs):
        for i, chunk in enumerate(real(*args, **kwargs)):
            if i == 15:
                waited.append(go.wait(60))
            yield chunk

    monkeypatch.setattr(offline, "streamed", streamed)
    offline.SCRIPT.override_task("answer", lambda payload: GROUNDED)
    yield go, waited
    offline.SCRIPT.clear()


def read_events(resp: httpx.Response, on_event=None) -> list[tuple[str, dict]]:
    events, kind, data = [], "message", ""
    for line in resp.iter_lines():
        if line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data += line[5:].strip()
        elif line == "" and data:
            events.append((kind, json.loads(data)))
            if on_event:
                on_event(*events[-1])
            kind, data = "message", ""
    return events


def test_answer_text_reaches_the_client_before_the_model_finishes(served, keys, held_model):
    go, waited = held_model
    seen_before_go: list[str] = []

    def on_event(kind: str, d: dict) -> None:
        if not go.is_set() and kind == "answer_text":
            seen_before_go.append(d["text"])
            go.set()  # only now may the model go on

    with httpx.stream("POST", served + "/v1/ask", json=QUESTION, timeout=120,
                      headers={**auth(keys["reader"]), "Accept": "text/event-stream"}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = read_events(r, on_event)
    assert waited == [True], "the model was never released: no streamed text reached the client"
    kinds = [k for k, _ in events]
    assert kinds[0] == "started" and kinds[-2:] == ["answer", "done"]
    # the first 15 tokens (cl100k) are '{"' 'found' '":' ' true' ',' ' "' 'sent' 'ences' '":' ' [{"' 'text'
    # '":' ' "' 'Python' ' was': the client saw the text's start while the rest was still to come
    first = "".join(seen_before_go)
    assert first and "Python was".startswith(first)
    streamed = "".join(d["text"] for k, d in events if k == "answer_text")
    assert streamed == GROUNDED["sentences"][0]["text"]
    cite = [d for k, d in events if k == "answer_cite"]
    assert [(c["unit"], c["resolved"], c["number"]) for c in cite] == [("p1", True, 1)]
    assert ("answer_check", {"attempt": 1, "passed": True, "problems": []}) in events
    assert kinds.index("answer_check") < kinds.index("answer")
    final = dict(events)["answer"]
    assert final["answer"] == ANSWER and final["cited"] == ["p1"]


def test_json_reply_is_unchanged_and_does_not_stream(served, keys, monkeypatch):
    """REST without the SSE header: one JSON reply, the same fields as before; the model is not
    asked to stream (nobody would read the pieces)."""
    streamed: list[bool] = []
    real = offline.streamed

    def counting(*args, **kwargs):
        streamed.append(True)
        yield from real(*args, **kwargs)

    monkeypatch.setattr(offline, "streamed", counting)
    offline.SCRIPT.override_task("answer", lambda payload: GROUNDED)
    try:
        r = httpx.post(served + "/v1/ask", json=QUESTION,
                       headers=auth(keys["reader"]), timeout=120)
    finally:
        offline.SCRIPT.clear()
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    d = r.json()
    assert d["answer"] == ANSWER and d["cited"] == ["p1"]
    assert {"question", "answer", "found", "cited", "sentences", "hit_units", "stop_reason", "rounds", "llm",
            "caches", "seconds", "sources", "notes"} <= set(d)
    assert streamed == []

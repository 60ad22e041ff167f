"""The streamed answer over real HTTP: the app under uvicorn on a loopback port, an httpx client
reading the SSE stream. The offline model is held mid-answer until the client has read streamed
text, so the test shows text reaching the client before the model has finished (no clock
involved: without streaming the model would wait for the client forever — here 60 s, then fail)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import httpx
import pytest

from kgservice.llm import offline
from tests.processes import run_in_terminal, serving_app
from tests.server.conftest import auth

GROUNDED = {"found": True, "sentences": [{"text": "Python was created by Guido van Rossum.", "cites": ["p1"]}]}
QUESTION = {"question": "Who created Python?", "threshold": 0.7}
ANSWER = "Python was created by Guido van Rossum. [p1]"


@pytest.fixture
def served(app):
    with serving_app(app) as base:
        yield base


def hold_model(monkeypatch, after: int) -> tuple[threading.Event, list[bool]]:
    """The offline provider streams a reply's first ``after`` tokens, then waits for ``go``
    (60 s at most; ``waited`` says whether it was released)."""
    go = threading.Event()
    waited: list[bool] = []
    real = offline.streamed

    def streamed(*args, **kwargs):
        for i, chunk in enumerate(real(*args, **kwargs)):
            if i == after:
                waited.append(go.wait(60))
            yield chunk

    monkeypatch.setattr(offline, "streamed", streamed)
    return go, waited


@pytest.fixture
def held_model(monkeypatch):
    """The offline provider streams the answer's first 15 tokens, then waits for ``go``."""
    go, waited = hold_model(monkeypatch, 15)
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


TEXT_REPLY = "Guido van Rossum\nPython was created by Guido van Rossum. [p1]"  # as the answer prompt asks


def test_the_short_answer_reaches_the_client_when_the_model_has_written_one_token(served, keys, monkeypatch):
    """The answer prompt puts the short answer first, as plain text: the model is held after its
    first token ('Guid', cl100k) until the client has read an ``answer_short`` event, so the
    client had the answer's first text while the model had written one token of its reply."""
    go, waited = hold_model(monkeypatch, 1)
    offline.SCRIPT.override_task("answer", lambda payload: TEXT_REPLY)
    seen_before_go: list[tuple[str, str]] = []

    def on_event(kind: str, d: dict) -> None:
        if not go.is_set() and kind.startswith("answer_") and kind != "answer_start":
            seen_before_go.append((kind, d["text"]))
            go.set()

    try:
        with httpx.stream("POST", served + "/v1/ask", json=QUESTION, timeout=120,
                          headers={**auth(keys["reader"]), "Accept": "text/event-stream"}) as r:
            events = read_events(r, on_event)
    finally:
        offline.SCRIPT.clear()
    assert waited == [True], "the model was never released: no short answer reached the client"
    assert seen_before_go == [("answer_short", "Guid")]
    assert "".join(d["text"] for k, d in events if k == "answer_short") == "Guido van Rossum"
    assert "".join(d["text"] for k, d in events if k == "answer_text") == "Python was created by Guido van Rossum."
    final = dict(events)["answer"]
    assert (final["answer"], final["short_answer"], final["cited"]) == (ANSWER, "Guido van Rossum", ["p1"])


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


def in_terminal(args: list[str], env: dict[str, str], until: str = "", then=None) -> str:
    done = run_in_terminal(args, env, until, then)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_kg_ask_server_at_a_terminal_prints_the_answer_while_the_model_writes_it(served, keys, held_model, tmp_path):
    """`kg ask --server` reads the SSE stream: the model is held mid-answer (after the first 15
    tokens) until the CLI's terminal shows the draft's first words, so the words reached the
    terminal before the model finished (without streaming the model would wait its 60 s and the
    draft would never show). Then the checked answer is printed as without streaming."""
    go, waited = held_model
    env = {**os.environ, "KG_API_KEY": keys["reader"], "KG_DATA_DIR": str(tmp_path / "elsewhere")}
    cli = [sys.executable, "-c", "from kgservice.cli.app import main; main()", "ask", "--server", served,
           QUESTION["question"], "--threshold", "0.7"]
    shown = in_terminal(cli, env, until="Python was", then=go.set)
    assert waited == [True], "the model was never released: the CLI showed no words while it was held"
    draft, _, final = shown.rpartition("writing, not yet checked")
    assert draft != "" and "Python was" in final  # the draft's words, under its "not yet checked" head
    # what stays is the checked answer as `kg ask` prints it without streaming (a pipe)
    piped = subprocess.run(cli, env=env, capture_output=True, text=True, timeout=300)
    assert piped.returncode == 0, piped.stderr
    assert "writing, not yet checked" not in piped.stdout
    answer_line = ANSWER
    for out in (shown, piped.stdout):
        assert answer_line in out and "#p1 " in out and f"(server {served})" in out
    # the lines after the draft (erased on the terminal) are the piped output's, but for the
    # status line's figures (this second ask is a cached one)
    def lines(text: str) -> list[str]:
        return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("LLM: ")]

    assert lines(final[final.rindex(answer_line):]) == lines(piped.stdout)
    # --json at a terminal: one JSON document at the end, the reply's fields, nothing streamed into it
    go.set()
    as_json = in_terminal([*cli, "--json"], env)
    d = json.loads(as_json)
    assert d["answer"] == ANSWER and d["cited"] == ["p1"] and "short_answer" in d


def test_kg_ask_server_at_a_terminal_shows_the_short_answer_from_the_models_first_token(served, keys, monkeypatch,
                                                                                     tmp_path):
    """The model, replying in the answer prompt's text format, is held after its first token
    ('Guid') until the CLI's terminal shows "answer: Guid": the terminal had the answer's first
    words while the model had written one token; then the checked answer is printed."""
    go, waited = hold_model(monkeypatch, 1)
    offline.SCRIPT.override_task("answer", lambda payload: TEXT_REPLY)
    env = {**os.environ, "KG_API_KEY": keys["reader"], "KG_DATA_DIR": str(tmp_path / "elsewhere")}
    cli = [sys.executable, "-c", "from kgservice.cli.app import main; main()", "ask", "--server", served,
           QUESTION["question"], "--threshold", "0.7"]
    try:
        shown = in_terminal(cli, env, until="answer: Guid", then=go.set)
    finally:
        go.set()
        offline.SCRIPT.clear()
    assert waited == [True], "the model was never released: the CLI showed no short answer while it was held"
    assert shown.index("answer: Guid") < shown.rindex(ANSWER)


def test_kg_ask_server_streams_from_a_real_kg_serve(embedded_env, tmp_path):
    """The same against `kg serve` itself, its offline model writing a token every 50 ms
    (KG_OFFLINE_STREAM_DELAY): the terminal shows the draft growing, one frame per event read
    (whatever the machine's speed), each frame's text the one before with more after it, the
    short answer first, and all of it before the checked answer."""
    from tests.processes import env_for, new_key, serving

    key = new_key(embedded_env, "cli-reader", "reader")
    with serving({**embedded_env, "KG_OFFLINE_STREAM_DELAY": "0.05"}) as (base, _, _log):
        env = {**env_for(tmp_path / "elsewhere"), "KG_API_KEY": key}
        cli = [sys.executable, "-c", "from kgservice.cli.app import main; main()", "ask", "--server", base,
               "Who created Python?"]
        shown = in_terminal(cli, env)
        piped = subprocess.run(cli, env=env, capture_output=True, text=True, timeout=300)
    assert piped.returncode == 0, piped.stderr
    answer = piped.stdout.splitlines()[0]
    assert answer.endswith("]") and "writing, not yet checked" not in piped.stdout
    head = "(writing, not yet checked)\n"
    *frames, last = shown.split(head)[1:]
    final_at = last.rindex(answer)
    frames.append(last[:final_at])
    texts = [t for t in (" ".join(f.split()) for f in frames) if t]  # answer_start draws the head alone
    assert len(texts) > 2, texts
    for before, after in zip(texts, texts[1:]):
        assert after.startswith(before), (before, after)  # a frame adds to the one before (the check's adds nothing)
    assert len(texts[0]) < len(texts[-1])  # the first words showed before the rest was written
    assert texts[0].startswith("answer: ") and texts[-1].endswith(answer)  # the short answer came first
    assert last[final_at:].strip().splitlines()[0] == answer

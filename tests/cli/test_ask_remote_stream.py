"""The SSE answer stream as `kg ask --server` reads it (kgservice.cli.remote), from bytes written
by hand in the form `POST /v1/ask` sends (`event:`, `data:`, `id:`, a blank line; LF as the server
ends its lines, CRLF as SSE also allows; a comment line as a keep-alive):
the reply it returns is the JSON request's shape, and a stream that fails or breaks off is an
error naming the server, with the exit code of its cause."""

from __future__ import annotations

import io

import pytest

from kgservice.cli.remote import RemoteError, RemoteRefused, _read_answer_stream
from kgservice.errors import exit_code

BASE = "http://127.0.0.1:9"


def stream(*blocks: str) -> io.BytesIO:
    return io.BytesIO("".join(blocks).encode("utf-8"))


STARTED = 'event: started\r\ndata: {"question": "Who created Python?"}\r\n\r\n'
ROUND = 'event: round\r\ndata: {"round": 1, "seeds": {"python": 1.0}}\r\nid: 1\r\n\r\n'
SHORT = 'event: answer_short\r\ndata: {"attempt": 1, "text": "Guido"}\r\n\r\n'
PING = ": ping\r\n\r\n"
ANSWER = ('event: answer\r\ndata: {"answer": "Python was created by Guido van Rossum. [p1]", "short_answer": '
          '"Guido van Rossum", "found": true, "cited": ["p1"]}\r\n\r\n')
DONE = 'event: done\r\ndata: {"rounds": 1, "found": true}\r\n\r\n'


def test_the_reply_is_the_answer_events_fields_with_the_rounds_streamed_before_it():
    seen: list[tuple[str, dict]] = []
    r = stream(*(b.replace("\r\n", "\n") for b in (STARTED, ROUND, PING, SHORT, ANSWER, DONE)))
    reply = _read_answer_stream(r, BASE, lambda k, d: seen.append((k, d)))
    assert reply == {"answer": "Python was created by Guido van Rossum. [p1]", "short_answer": "Guido van Rossum",
                     "found": True, "cited": ["p1"], "rounds": [{"round": 1, "seeds": {"python": 1.0}}]}
    assert seen == [("round", {"round": 1, "seeds": {"python": 1.0}}), ("answer_short", {"attempt": 1, "text": "Guido"})]


@pytest.mark.parametrize("blocks, error, code, words", [
    ((STARTED, 'event: error\r\ndata: {"status": 503, "detail": "the model provider failed"}\r\n\r\n'),
     RemoteError, 1, "failed the question (503): the model provider failed"),
    ((STARTED, 'event: error\r\ndata: {"status": 422, "detail": "question too long"}\r\n\r\n'),
     RemoteRefused, 2, "(422): question too long"),
    ((STARTED, ROUND, SHORT), RemoteError, 1, "ended the answer's stream before the checked answer"),
    ((STARTED, "event: answer\r\ndata: {not json\r\n\r\n"), RemoteError, 1, "not JSON (answer)"),
])
def test_a_failed_or_broken_stream_is_an_error_naming_the_server(blocks, error, code, words):
    with pytest.raises(error) as caught:
        _read_answer_stream(stream(*blocks), BASE, lambda k, d: None)
    assert BASE in str(caught.value) and words in str(caught.value)
    assert exit_code(caught.value) == code

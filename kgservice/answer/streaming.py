"""The answer as the model writes it: its short answer, sentences' text and citations, read
from the reply while it streams, for a page to show before the whole reply is in and checked.

The answer prompt asks for plain text (:mod:`kgservice.answer.reply`): the short answer on
line 1, so it is the reply's first tokens, then one sentence per line ending with its unit
ids in brackets. :class:`AnswerStream` sends a line's text as it grows (held back from a
``[`` on, where its citations may start, and while line 1 may still be ``NOT FOUND``) and a
sentence's citations once its line is complete. A reply that is a JSON object (the earlier
format, ``{"found": true, "answer": "...", "sentences": [{"text": "...", "cites": ["u1"]}]}``,
which recorded and scripted replies may use) streams as pieces of JSON, cut anywhere (inside
a word, an escape, a unit id): :func:`parse_prefix` reads the object a prefix of that text
starts, as far as it goes. Either way, what is new since the last piece becomes events:

* ``answer_start`` ``{attempt}`` — a model request begins; text an earlier attempt streamed
  is void (the check refused it, or the provider failed and was asked again);
* ``answer_short`` ``{attempt, text}`` — more characters of the short answer (the reply's
  first line, or a JSON reply's ``answer`` field: a name, number or date, the library's
  ``short_answer``), to append; the first text a reply streams (a JSON reply's as soon as
  the field's key is read, wherever it stands in the object);
* ``answer_text`` ``{attempt, sentence, text}`` — more characters of sentence ``sentence``
  (0-based), to append to what came before;
* ``answer_cite`` ``{attempt, sentence, unit, resolved, number, text}`` — a citation whose id
  is complete (its line ended, or in JSON its closing quote arrived), mapped to the hit unit it names (``resolved``,
  ``number``: its place among this attempt's distinct resolved citations, ``text``: the
  unit's notation), or ``resolved: false`` when the id is among no hit unit;
* ``answer_check`` ``{attempt, passed, problems}`` — the verdict of the grounded check on the
  whole reply (:func:`kgservice.answer.grounded.validate_answer`). Nothing streamed is an
  answer until it passed; the final answer comes after, in the reply's usual shape.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kgservice.model import Unit

Emit = Callable[[str, dict[str, Any]], None]


class Open(str):
    """A JSON string cut off by the end of the text so far (its closing quote not yet there)."""


_NOTHING = object()
_PLAIN = re.compile(r'[^"\\]*')
_SCALAR = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")
_WS = " \t\r\n"


def parse_prefix(text: str) -> Any:
    """The JSON value ``text`` (a prefix of a JSON text) begins, with what is complete so far:
    an object or array that is not closed holds the members read so far; a string cut off is
    an :class:`Open` holding its characters so far (never half an escape); a member whose key
    or value has not begun is left out, as is a number or literal that may go on. Returns
    None when no value has begun. Raises ``ValueError`` where the text is not JSON."""
    value, _, _ = _value(text, 0)
    return None if value is _NOTHING else value


def _skip(s: str, i: int) -> int:
    while i < len(s) and s[i] in _WS:
        i += 1
    return i


def _value(s: str, i: int) -> tuple[Any, int, bool]:
    """(value or _NOTHING, index after it, complete?)."""
    i = _skip(s, i)
    if i >= len(s):
        return _NOTHING, i, False
    c = s[i]
    if c == "{":
        return _object(s, i + 1)
    if c == "[":
        return _array(s, i + 1)
    if c == '"':
        return _string(s, i)
    m = _SCALAR.match(s, i)
    if m is None:
        if any(w.startswith(s[i:i + 5]) for w in ("true", "false", "null")) or s[i:] in ("-",):
            return _NOTHING, len(s), False  # a literal or number cut off at its start
        raise ValueError(f"not JSON at character {i}: {s[i:i + 12]!r}")
    if m.end() == len(s):
        return _NOTHING, len(s), False  # "12" may become "123", "tru" "true"
    return json.loads(m.group()), m.end(), True


def _members(s: str, i: int, close: str, read: Callable[[str, int], tuple[Any, Any, int, bool]]) -> tuple[list[tuple[Any, Any]], int, bool]:
    """The members of an object or array up to ``close``, each read by ``read`` as (key, value,
    index after it, complete?); cut short where the text ends. One loop for both containers, so a
    separator or an end is handled alike."""
    out: list[tuple[Any, Any]] = []
    while True:
        i = _skip(s, i)
        if i >= len(s):
            return out, i, False
        if s[i] == close:
            return out, i + 1, True
        if s[i] == ",":
            i += 1
            continue
        key, value, i, done = read(s, i)
        if value is not _NOTHING:
            out.append((key, value))
        if not done:
            return out, i, False


def _member(s: str, i: int) -> tuple[Any, Any, int, bool]:
    """One ``"key": value`` of an object (value _NOTHING while it is still cut off)."""
    if s[i] != '"':
        raise ValueError(f"not JSON at character {i}: expected a key, got {s[i:i + 12]!r}")
    key, i, done = _string(s, i)
    if not done:
        return key, _NOTHING, i, False
    i = _skip(s, i)
    if i >= len(s):
        return key, _NOTHING, i, False
    if s[i] != ":":
        raise ValueError(f"not JSON at character {i}: expected ':', got {s[i:i + 12]!r}")
    value, i, done = _value(s, i + 1)
    return key, value, i, done


def _element(s: str, i: int) -> tuple[Any, Any, int, bool]:
    value, i, done = _value(s, i)
    return None, value, i, done


def _object(s: str, i: int) -> tuple[dict[str, Any], int, bool]:
    members, i, done = _members(s, i, "}", _member)
    return dict(members), i, done


def _array(s: str, i: int) -> tuple[list[Any], int, bool]:
    members, i, done = _members(s, i, "]", _element)
    return [v for _, v in members], i, done


def _string(s: str, i: int) -> tuple[str, int, bool]:
    """The string opening at ``s[i]`` (a quote): (text, index after it, closed?)."""
    parts: list[str] = []
    j = i + 1
    while j < len(s):
        m = _PLAIN.match(s, j)
        assert m is not None
        parts.append(m.group())
        j = m.end()
        if j >= len(s):
            break
        if s[j] == '"':
            return "".join(parts), j + 1, True
        # an escape: taken only once whole (a \uD83D\uDE00 pair needs both halves)
        if j + 1 >= len(s):
            break
        if s[j + 1] != "u":
            n = 2
        elif j + 6 > len(s):
            break
        elif 0xD800 <= int(s[j + 2:j + 6], 16) < 0xDC00:
            n = 12
            if j + 12 > len(s):
                break
        else:
            n = 6
        parts.append(json.loads('"' + s[j:j + n] + '"'))
        j += n
    return Open("".join(parts)), len(s), False


class AnswerStream:
    """Turns the pieces of a streamed answer reply into the events of the module doc (a
    :class:`kgservice.llm.StreamSink`). ``units`` are the hit units the answer may cite;
    ``emit(event, data)`` is called in the thread the model is read in."""

    def __init__(self, emit: Emit, units: Mapping[str, Unit]):
        self.emit = emit
        self.units = units
        self.attempt = 0
        self.raw = ""
        self.shown: list[list[int]] = []  # per sentence: [characters of text sent, citations sent]
        self.short = 0  # characters of the short answer sent
        self.numbers: dict[str, int] = {}
        self.readable = True

    def begin(self, attempt: int) -> None:
        self.attempt, self.raw, self.shown, self.numbers, self.readable = attempt, "", [], {}, True
        self.short = 0
        self.emit("answer_start", {"attempt": attempt})

    def delta(self, text: str) -> None:
        self.raw += text
        if self.readable:
            self._update()

    def checked(self, problems: list[str]) -> None:
        if self.readable and self._text_mode():
            self._update_text(final=True)  # the last line has no newline after it
        self.emit("answer_check", {"attempt": self.attempt, "passed": not problems, "problems": list(problems)})

    def _text_mode(self) -> bool | None:
        """True for a reply in the text format, False for a JSON one (its first line holds a
        ``{``: :func:`kgservice.answer.reply.is_json_reply`), None while nothing but blanks or
        a code fence's first backticks has come."""
        from kgservice.answer.reply import is_json_reply

        body = self.raw.lstrip()
        if "```".startswith(body) or (body.startswith("```") and "\n" not in body):
            return None
        return not is_json_reply(self.raw)

    def _update(self) -> None:
        mode = self._text_mode()
        if mode is None:
            return
        if mode:
            self._update_text()
            return
        start = self.raw.find("{")  # prose or a code fence before the object is skipped, as json_text does
        if start < 0:
            return
        try:
            obj = parse_prefix(self.raw[start:])
        except ValueError:
            self.readable = False  # not JSON: nothing more to show; the check will say what is wrong
            return
        if not isinstance(obj, dict):
            return
        short = obj.get("answer")
        if isinstance(short, str) and len(short) > self.short:
            self.emit("answer_short", {"attempt": self.attempt, "text": short[self.short:]})
            self.short = len(short)
        sentences = obj.get("sentences")
        if not isinstance(sentences, list):
            return
        for i, s in enumerate(sentences):
            if not isinstance(s, dict):
                continue
            while len(self.shown) <= i:
                self.shown.append([0, 0])
            sent = self.shown[i]
            text = s.get("text")
            if isinstance(text, str) and len(text) > sent[0]:
                self.emit("answer_text", {"attempt": self.attempt, "sentence": i, "text": text[sent[0]:]})
                sent[0] = len(text)
            cites = s.get("cites")
            done = [c for c in cites if isinstance(c, str) and not isinstance(c, Open)] if isinstance(cites, list) else []
            for uid in done[sent[1]:]:
                self.emit("answer_cite", self._cite(i, uid))
            sent[1] = max(sent[1], len(done))

    def _update_text(self, final: bool = False) -> None:
        """The text format (:mod:`kgservice.answer.reply`): line 1 the short answer, then a
        sentence per line with its ids in brackets at the end. A line's text is sent as it
        grows, up to its first ``[`` (where its citations may begin) and without trailing
        blanks; once the line is complete, the rest of its text and its resolved citations.
        A first line that may still become ``NOT FOUND`` is held back."""
        from kgservice.answer.reply import is_not_found, may_be_not_found, split_cites

        parts = self.raw.split("\n")
        done = parts if final else parts[:-1]
        lines = [ln.strip() for ln in done if ln.strip() and not ln.strip().startswith("```")]
        tail = "" if final else parts[-1].strip()
        if tail.startswith("```"):
            tail = ""
        for k, line in enumerate(lines + ([tail] if tail else [])):
            complete = k < len(lines)
            if complete:
                text, cites = split_cites(line)
            else:
                text, cites = line.split("[", 1)[0].rstrip(), []
            if k == 0:
                if complete and is_not_found(line):
                    return  # the units do not answer: nothing after the marker is an answer
                if not complete and may_be_not_found(line):
                    continue
                if len(text) > self.short:
                    self.emit("answer_short", {"attempt": self.attempt, "text": text[self.short:]})
                    self.short = len(text)
                continue
            i = k - 1
            while len(self.shown) <= i:
                self.shown.append([0, 0])
            sent = self.shown[i]
            if len(text) > sent[0]:
                self.emit("answer_text", {"attempt": self.attempt, "sentence": i, "text": text[sent[0]:]})
                sent[0] = len(text)
            for uid in cites[sent[1]:]:
                self.emit("answer_cite", self._cite(i, uid))
            sent[1] = max(sent[1], len(cites))

    def _cite(self, sentence: int, uid: str) -> dict[str, Any]:
        from kgservice.notation.serializer import format_unit

        unit = self.units.get(uid)
        if unit is None:
            return {"attempt": self.attempt, "sentence": sentence, "unit": uid, "resolved": False, "number": None,
                    "text": None}
        number = self.numbers.setdefault(uid, len(self.numbers) + 1)
        return {"attempt": self.attempt, "sentence": sentence, "unit": uid, "resolved": True, "number": number,
                "text": format_unit(unit, with_id=False)}

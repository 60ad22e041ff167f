"""Parser for the unit text notation of DESIGN.md §1.

Grammar (one unit per line, modifier rows indented under it)::

    unit     := [ '#' ID ] node pred value+
    modrow   := INDENT '()' pred value
    node     := '{' text '}'          entry / derived concept
    literal  := '(' text ')'
    pred     := '[' text ']'
    value    := node | literal | '#' ID
    comment  := '%' ...              (whole line)

Inside a bracketed text a backslash escapes the next character, so labels may contain
``}``, ``)`` or ``]``. The parser collects every error in the file and raises them
together; callers store nothing from a file that fails.
"""

from __future__ import annotations

import os

import re
from dataclasses import dataclass
from pathlib import Path

from kgservice.families import Lexicon
from kgservice.ids import content_unit_id, normalise_label
from kgservice.model import Mod, Mode, Unit, Value
from kgservice.notation.errors import NotationError, NotationErrors

_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:\-]*")
_CLOSERS = {"{": "}", "(": ")", "[": "]"}
MAX_LINE = 100_000
SUPERSEDES_SLOTS = {"supersedes", "取代", "replaces"}


class _LineError(Exception):
    def __init__(self, column: int, message: str):
        self.column = column
        self.message = message


@dataclass
class _Token:
    kind: str  # '{', '(', '[', '#'
    text: str
    column: int  # 1-based column of the opening character


class _Scanner:
    def __init__(self, line: str, start: int = 0):
        self.line = line
        self.pos = start

    def skip_ws(self) -> None:
        while self.pos < len(self.line) and self.line[self.pos] in " \t":
            self.pos += 1

    def at_end(self) -> bool:
        self.skip_ws()
        return self.pos >= len(self.line)

    def token(self, allowed: str, what: str) -> _Token:
        self.skip_ws()
        col = self.pos + 1
        if self.pos >= len(self.line):
            raise _LineError(col, f"expected {what}, found end of line")
        ch = self.line[self.pos]
        if ch not in allowed:
            raise _LineError(col, f"expected {what}, found {self.line[self.pos:self.pos + 12]!r}")
        if ch == "#":
            m = _ID.match(self.line, self.pos + 1)
            if not m:
                raise _LineError(col + 1, "expected a unit id after '#' (letters, digits, _ - . :)")
            self.pos = m.end()
            return _Token("#", m.group(0), col)
        closer = _CLOSERS[ch]
        out: list[str] = []
        i = self.pos + 1
        while i < len(self.line):
            c = self.line[i]
            if c == "\\" and i + 1 < len(self.line):
                out.append(self.line[i + 1])
                i += 2
                continue
            if c == closer:
                self.pos = i + 1
                text = "".join(out).strip()
                if not text and ch != "(":
                    raise _LineError(col, f"empty {ch}{closer}")
                if self.pos < len(self.line) and self.line[self.pos] not in " \t":
                    raise _LineError(self.pos + 1, f"expected a space after {closer!r}")
                return _Token(ch, text, col)
            if c in "\r\n":
                break
            out.append(c)
            i += 1
        raise _LineError(col, f"unclosed {ch!r}: expected {closer!r} before end of line")


def _value(tok: _Token) -> Value:
    if tok.kind == "{":
        return Value(node=tok.text)
    if tok.kind == "(":
        if not tok.text:
            raise _LineError(tok.column, "empty literal '()' is only allowed to open a modifier row")
        return Value(literal=tok.text)
    return Value(unit=tok.text)


@dataclass
class _Pending:
    line: int
    uid: str | None
    subject: str
    predicate: str
    args: list[Value]
    mods: list[Mod]
    supersedes: list[str]
    last: int = 0  # the unit's last line: its own, or its last modifier row


def parse_units(
    text: str,
    lexicon: Lexicon,
    source: str = "<text>",
    doc: str | None = None,
    mode: Mode = "manual",
) -> list[Unit]:
    """Parse unit notation; raise :class:`NotationErrors` listing every bad line.

    Examples
    --------
    >>> from kgservice.families import Lexicon
    >>> lex = Lexicon.load()
    >>> [u1, u2] = parse_units("#u1 {cat} [is a] {mammal}\\n{mammal} [has] {fur}\\n    ()[confidence] (high)", lex)
    >>> u1.id, u1.subject, u1.predicate, [a.node for a in u1.args]
    ('u1', 'cat', 'is a', ['mammal'])
    >>> u2.id.startswith("u-"), u2.mods[0].slot, u2.mods[0].value.literal
    (True, 'confidence', 'high')

    Every bad line is reported, and nothing is returned:

    >>> parse_units("{a} [b] {c}\\n    ()[x]\\n{d} [e", lex, source="f.units")
    Traceback (most recent call last):
    ...
    kgservice.notation.errors.NotationErrors: ...f.units:2:...f.units:3:...
    """
    return [u for u, _ in parse_units_with_lines(text, lexicon, source, doc, mode)]


def parse_units_with_lines(
    text: str,
    lexicon: Lexicon,
    source: str = "<text>",
    doc: str | None = None,
    mode: Mode = "manual",
) -> list[tuple[Unit, tuple[int, int]]]:
    """:func:`parse_units`, each unit with the lines it is written on (1-based, inclusive):
    its unit line through its last modifier row. Only the parser knows where a unit ends, so
    a document's provenance takes its ranges from here rather than searching the text (blank
    and comment lines after a unit are not part of it).

    >>> from kgservice.families import Lexicon
    >>> text = "#a {x} [is a] {y}\\n  ()[confidence] (high)\\n\\n% c\\n#b {y} [is a] {z}"
    >>> [(u.id, ln) for u, ln in parse_units_with_lines(text, Lexicon.load())]
    [('a', (1, 2)), ('b', (5, 5))]
    """
    errors: list[NotationError] = []
    pending: list[_Pending] = []
    current: _Pending | None = None
    if text.startswith("\ufeff"):
        text = text[1:]
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r\n")
        if len(line) > MAX_LINE:
            errors.append(NotationError(source, lineno, 1, f"line is {len(line)} characters, over the {MAX_LINE} limit"))
            current = None
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("%"):
            continue
        indented = line[0] in " \t"
        try:
            if indented:
                if current is None:
                    col = len(line) - len(line.lstrip()) + 1
                    raise _LineError(col, "modifier row with no unit above it")
                _parse_mod(line, current)
                current.last = lineno
            else:
                current = _parse_unit_line(line, lineno)
                pending.append(current)
        except _LineError as exc:
            errors.append(NotationError(source, lineno, exc.column, exc.message))
            if not indented:
                current = None
    units: list[tuple[Unit, tuple[int, int]]] = []
    seen: dict[str, int] = {}
    for p in pending:
        unit = _build(p, lexicon, doc, mode)
        if unit.id in seen:
            errors.append(NotationError(source, p.line, 1, f"unit id #{unit.id} already defined on line {seen[unit.id]}"))
            continue
        seen[unit.id] = p.line
        units.append((unit, (p.line, p.last or p.line)))
    if errors:
        raise NotationErrors(errors)
    return units


def _parse_unit_line(line: str, lineno: int) -> _Pending:
    sc = _Scanner(line)
    uid: str | None = None
    first = sc.token("#{", "'#id' or a subject node '{X}'")
    if first.kind == "#":
        uid = first.text
        first = sc.token("{", "a subject node '{X}' after the unit id")
    pred = sc.token("[", "a predicate '[P]' after the subject")
    args: list[Value] = []
    while not sc.at_end():
        tok = sc.token("{(#", "an argument '{X}', '(literal)' or '#unit'")
        if tok.kind == "#":
            raise _LineError(tok.column, "a '#unit' reference is only allowed as a modifier value")
        args.append(_value(tok))
    if not args:
        raise _LineError(len(line) + 1, "expected at least one argument '{X}' or '(literal)' after the predicate")
    return _Pending(lineno, uid, first.text, pred.text, args, [], [])


def _parse_mod(line: str, current: _Pending) -> None:
    sc = _Scanner(line)
    sc.skip_ws()
    col = sc.pos + 1
    if not line.startswith("()", sc.pos):
        raise _LineError(col, "expected '()' to open a modifier row (indented lines are modifier rows)")
    sc.pos += 2
    slot = sc.token("[", "a slot '[name]' after '()'")
    val_tok = sc.token("{(#", "a modifier value '{X}', '(literal)' or '#unit'")
    if not sc.at_end():
        raise _LineError(sc.pos + 1, "expected end of line: a modifier row has exactly one value")
    value = _value(val_tok)
    if normalise_label(slot.text) in SUPERSEDES_SLOTS:
        if value.unit is None:
            raise _LineError(val_tok.column, "a [supersedes] row needs a '#unit' value")
        current.supersedes.append(value.unit)
        return
    current.mods.append(Mod(slot=slot.text, value=value))


def _build(p: _Pending, lexicon: Lexicon, doc: str | None, mode: Mode) -> Unit:
    info = lexicon.resolve(p.predicate, object_is_literal=bool(p.args) and p.args[0].literal is not None)
    fields = dict(
        subject=p.subject,
        predicate=p.predicate,
        family=info.base,
        kind=info.kind,
        inverse=info.inverse,
        args=tuple(p.args),
        mods=tuple(p.mods),
        supersedes=tuple(p.supersedes),
        doc=doc,
        mode=mode,
    )
    if p.uid is not None:
        return Unit(id=p.uid, **fields)
    # Content id: derived from the canonical text, so the same fact re-ingested is a no-op.
    from kgservice.notation.serializer import format_unit

    probe = Unit(id="_", **fields)
    return probe.model_copy(update={"id": content_unit_id(format_unit(probe, with_id=False))})


def doc_name(path: Path | str) -> str:
    """A file's name as a unit's ``doc``: storable text whatever the name's bytes are. Bytes that
    are not UTF-8 become ``\\xNN``, control characters (ESC, newline, ...) ``\\xNN`` too, so
    such a file can be ingested, and again with the same doc (re-ingest stays a no-op)."""
    raw = os.fsencode(Path(path).name)
    text = raw.decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() or c == " " else f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
                   for c in text)


def parse_file(path: Path, lexicon: Lexicon, doc: str | None = None, mode: Mode = "manual") -> list[Unit]:
    """Read a unit file (UTF-8) and parse it; encoding problems are reported with a line number."""
    from kgservice.disk import read_input

    data = read_input(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise NotationErrors([NotationError(str(path), line, col, f"file is not valid UTF-8 (byte 0x{data[exc.start]:02x})")]) from None
    return parse_units(text, lexicon, source=str(path), doc=doc or doc_name(path), mode=mode)

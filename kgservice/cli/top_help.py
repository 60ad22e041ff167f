"""`kg --help` (and a bare `kg`) without building every command.

Typer turns each registered function into a click command (evaluating every parameter's
annotations) before it parses the first argument, and renders help through
``typer.rich_utils``, whose import pulls in rich's Markdown, markdown-it and pygments. For
the top-level help that was about two thirds of the process's CPU (profiled: 0.065 s building
42 commands, 0.11 s importing rich_utils, 0.04 s rendering, of 0.35 s), while all it shows is
the global options and one line per command. This module prints the same panels from what
the commands were registered with (their names and docstrings, the callback's option
declarations), in the same box layout, with plain string work. Anything else on the command
line (a command, ``--version``, an option before ``--help``) goes through typer as before.
"""

from __future__ import annotations

import inspect
import os
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterator
from typing import Any


def wants_top_help(argv: list[str], no_args_is_help: bool = True) -> bool:
    """The command line asks for the top-level help and nothing else."""
    return argv == ["--help"] or (no_args_is_help and argv == [])


def _value(x: Any) -> Any:
    """Typer keeps unset TyperInfo fields as DefaultPlaceholder(value)."""
    return getattr(x, "value", x) if type(x).__name__ == "DefaultPlaceholder" else x


def _command_name(name: str | None, callback: Callable[..., Any] | None) -> str:
    """Typer's rule: the given name, else the function's name, lower case, ``_`` -> ``-``."""
    if name:
        return name
    return (callback.__name__ if callback else "").lower().replace("_", "-")


def first_paragraph(text: str, reflow: Callable[[str], str]) -> str:
    """What a command row shows: its help's first paragraph (after the CLI's reflow), one line."""
    para = reflow(inspect.cleandoc(text)).split("\n\n")[0]
    return " ".join(ln.strip() for ln in para.replace("\b\n", "").splitlines() if ln.strip() != "\b").strip()


def command_rows(app: Any, reflow: Callable[[str], str]) -> list[tuple[str, str]]:
    """(name, first paragraph) per visible command and command group, in typer's order
    (commands as registered, then groups)."""
    rows = []
    for info in app.registered_commands:
        if info.hidden:
            continue
        text = info.short_help or info.help or inspect.getdoc(info.callback) or ""
        rows.append((_command_name(info.name, info.callback), first_paragraph(text, reflow)))
    for group in app.registered_groups:
        sub = group.typer_instance
        if _value(group.hidden) or _value(sub.info.hidden):
            continue
        name = _value(group.name) or _value(sub.info.name)
        callback = _value(group.callback) or _value(sub.info.callback)
        text = (_value(group.short_help) or _value(group.help) or _value(sub.info.short_help)
                or _value(sub.info.help) or (inspect.getdoc(callback) if callback else "") or "")
        rows.append((_command_name(name, callback), first_paragraph(text, reflow)))
    return rows


def option_rows(callback: Callable[..., Any]) -> list[tuple[str, str, str]]:
    """(option names, metavar, help) of the top-level callback's options, then ``--help``."""
    from typing import get_args, get_type_hints

    from typer.models import OptionInfo

    rows = []
    for name, hint in get_type_hints(callback, include_extras=True).items():
        args = get_args(hint)
        info = next((a for a in args[1:] if isinstance(a, OptionInfo)), None)
        if info is None or info.hidden:
            continue
        # in Annotated[..., typer.Option("--name", ...)] the first argument is a declaration
        first = (info.default,) if isinstance(info.default, str) else ()
        decls = [d for d in (*first, *(info.param_decls or ())) if d.startswith("-")] or ["--" + name.replace("_", "-")]
        base = args[0] if args else hint
        inner = [a for a in get_args(base) if a is not type(None)] or [base]
        kind = getattr(inner[0], "__name__", "value").lower()
        # typer's rich help: the long names, then the short ones in their own column
        longs, shorts = [d for d in decls if d.startswith("--")], [d for d in decls if not d.startswith("--")]
        rows.append((" ".join([",".join(longs), *shorts]).strip(), "" if kind == "bool" else f"<{kind}>", info.help or ""))
    rows.append(("--help", "", "Show this message and exit."))
    return rows


def _width() -> int:
    """Rich's choice for the help console: COLUMNS, else the terminal's width, else 80."""
    try:
        cols = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        cols = 0
    if cols > 0:
        return cols
    if sys.stdout.isatty():
        return shutil.get_terminal_size((80, 24)).columns
    return 80


def _color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def _panel(title: str, rows: list[list[str]], width: int, styles: list[str], color: bool) -> Iterator[str]:
    """A rounded box titled ``title``; every column but the last as wide as its widest cell,
    the last wrapped to what is left (rich's table in typer's panels, without rich)."""
    inner = max(width - 4, 20)  # "│ " ... " │"
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    used = sum(w + 2 for w in widths if w)
    text_w = max(inner - used, 10)
    on = (lambda s, t: f"\x1b[{s}m{t}\x1b[0m" if s and t.strip() else t) if color else (lambda s, t: t)
    line = "─" * max(width - len(title) - 5, 1)
    yield on("2", f"╭─ {title} {line}╮")
    for row in rows:
        lines = textwrap.wrap(row[-1], text_w, break_on_hyphens=False) or [""]
        for n, text in enumerate(lines):
            cells = "".join(on(styles[i], (row[i] if n == 0 else "").ljust(w)) + "  " for i, w in enumerate(widths) if w)
            body = cells + text.ljust(text_w)
            yield on("2", "│") + " " + body + " " + on("2", "│")
    yield on("2", f"╰{'─' * (width - 2)}╯")


def render(app: Any, callback: Callable[..., Any], reflow: Callable[[str], str], prog: str = "kg") -> str:
    """The top-level help as text."""
    width, color = _width(), _color()
    on = (lambda s, t: f"\x1b[{s}m{t}\x1b[0m") if color else (lambda s, t: t)
    parts = ["", " " + on("1", f"Usage: {prog} [OPTIONS] COMMAND [ARGS]..."), ""]
    about = _value(app.info.help) or ""
    if about:
        for para in reflow(inspect.cleandoc(about)).split("\n\n"):
            parts += [" " + ln for ln in textwrap.wrap(para, width - 2)] + [""]
    options = [list(r) for r in option_rows(callback)]
    parts += _panel("Options", options, width, ["1;36", "1;33", ""], color)
    parts += _panel("Commands", [list(r) for r in command_rows(app, reflow)], width, ["1;36", ""], color)
    return "\n".join(parts) + "\n"

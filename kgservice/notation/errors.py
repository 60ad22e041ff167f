"""Errors that point at the exact place in a unit file, so a user can fix it without guessing."""

from __future__ import annotations

from kgservice.errors import InputError
from dataclasses import dataclass


@dataclass(frozen=True)
class NotationError:
    source: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}:{self.column}: {self.message}"


class NotationErrors(InputError, ValueError):
    """All problems found in one file; raised before anything from that file is stored."""

    def __init__(self, errors: list[NotationError]):
        self.errors = errors
        shown = "\n".join(str(e) for e in errors[:20])
        more = f"\n... and {len(errors) - 20} more" if len(errors) > 20 else ""
        super().__init__(f"{len(errors)} error(s) in unit notation:\n{shown}{more}")

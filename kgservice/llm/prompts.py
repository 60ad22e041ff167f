"""Prompts live in versioned Markdown files next to the code that uses them.

A file named ``<name>_v<N>.md`` is prompt ``name`` version ``N``. Text before the first
``## mode: <m>`` heading is shared; each ``## mode: <m>`` section is added only for that
mode, so a request carries the instructions it needs and nothing else. The prompt's
sha256 goes into cache keys: editing a prompt makes old cache entries unreachable.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

_NAME = re.compile(r"^(?P<name>[a-z][a-z0-9_]*)_v(?P<version>\d+)\.md$")
_SECTION = re.compile(r"^## mode: *(?P<mode>[a-z_]+) *$", re.M)


@dataclass(frozen=True)
class Prompt:
    name: str
    version: int
    text: str
    sections: dict[str, str] = field(default_factory=dict)

    @property
    def sha(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]

    @property
    def tag(self) -> str:
        return f"{self.name}_v{self.version}:{self.sha}"

    def render(self, mode: str | None = None) -> str:
        common = self.text if not self.sections else self.text[: self._common_end()]
        if mode is None:
            return common.strip() + "\n"
        if mode not in self.sections:
            raise ValueError(f"prompt {self.name}_v{self.version} has no section for mode {mode!r}; "
                             f"known: {', '.join(sorted(self.sections))}")
        return common.strip() + "\n\n" + self.sections[mode].strip() + "\n"

    def _common_end(self) -> int:
        m = _SECTION.search(self.text)
        return m.start() if m else len(self.text)


@lru_cache(maxsize=None)
def load_prompt(package: str, filename: str) -> Prompt:
    """Load ``package/prompts/filename`` (e.g. ``load_prompt("kgservice.extraction", "extract_v1.md")``)."""
    m = _NAME.match(filename)
    if not m:
        raise ValueError(f"prompt file name must look like name_v1.md, got {filename!r}")
    text = resources.files(package).joinpath("prompts", filename).read_text("utf-8")
    sections: dict[str, str] = {}
    heads = list(_SECTION.finditer(text))
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        sections[h.group("mode")] = text[h.end():end]
    return Prompt(name=m.group("name"), version=int(m.group("version")), text=text, sections=sections)

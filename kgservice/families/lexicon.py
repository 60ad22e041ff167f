"""Predicate families: every predicate maps to a family base member through a lexicon.

The lexicon is data (``lexicon.json`` next to this file, plus an optional user file of the
same shape), so a corpus in a new language needs a file, not code. A predicate is matched
on its normalised text first, then by its words' base forms (:mod:`kgservice.families.lemma`,
in the lexicon's ``languages``): "caused", "led to", "was replaced by" and "is" + a noun
phrase reach the family their base form has. Unknown predicates become their own content
family, keyed by those base forms less a leading auxiliary ("is located in" = "located in").
"""

from __future__ import annotations

from kgservice.errors import InputError
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from kgservice.families.lemma import DEFAULT_LANGUAGES, content_key, languages_of, lemma_words, predicate_keys
from kgservice.ids import normalise_label

# Families whose units become node-to-node relation edges (spread + closures).
RELATION_KINDS = ("synonym", "belongs_to", "of", "content", "related_to")
# Families that spreading activation walks; superseded/narrows are directed-only paths.
SPREAD_KINDS = RELATION_KINDS
ALL_KINDS = RELATION_KINDS + ("superseded", "narrows")


# a bare copula: class membership with a concept for object, an attribute with a value
COPULAS = frozenset({"is", "are", "was", "were", "be", "是"})


class LexiconError(InputError, ValueError):
    pass


@dataclass(frozen=True)
class FamilyInfo:
    kind: str
    base: str
    inverse: bool = False


@dataclass
class Lexicon:
    members: dict[str, FamilyInfo] = field(default_factory=dict)
    tau: dict[str, float] = field(default_factory=dict)
    content_bases: set[str] = field(default_factory=set)
    # spreading-activation defaults chosen by the eval (SpreadParams.degree_damping / seed_backflow)
    spread: dict[str, Any] = field(default_factory=dict)
    # the languages whose inflections are undone (simplemma codes; Chinese needs none)
    languages: tuple[str, ...] = DEFAULT_LANGUAGES
    _by_lemma: dict[str, FamilyInfo] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def load(cls, extra: list[Path] | None = None, tau_overrides: dict[str, float] | None = None) -> "Lexicon":
        lex = cls()
        default = resources.files("kgservice.families").joinpath("lexicon.json").read_text("utf-8")
        lex.merge(json.loads(default), source="built-in lexicon")
        for path in extra or []:
            try:
                data = json.loads(Path(path).read_text("utf-8"))
            except FileNotFoundError:
                raise LexiconError(f"lexicon file not found: {path}") from None
            except json.JSONDecodeError as exc:
                raise LexiconError(f"{path}:{exc.lineno}:{exc.colno}: lexicon is not valid JSON: {exc.msg}") from None
            lex.merge(data, source=str(path))
        for kind, value in (tau_overrides or {}).items():
            if kind not in ALL_KINDS:
                raise LexiconError(f"unknown family kind {kind!r} in tau overrides; known: {', '.join(ALL_KINDS)}")
            lex.tau[kind] = float(value)
        return lex

    def merge(self, data: dict[str, Any], source: str) -> None:
        self._by_lemma = None
        if "languages" in data:
            langs = data["languages"]
            if not isinstance(langs, list) or not all(isinstance(x, str) for x in langs):
                raise LexiconError(f"{source}: 'languages' must be a list of language codes, got {langs!r}")
            self.languages = languages_of([*self.languages, *langs])
        for kind, spec in (data.get("kinds") or {}).items():
            if kind not in ALL_KINDS or kind == "content":
                raise LexiconError(f"{source}: unknown family kind {kind!r}; known: {', '.join(k for k in ALL_KINDS if k != 'content')}")
            base = spec.get("base") or self._base_of(kind)
            if base is None:
                raise LexiconError(f"{source}: family {kind!r} needs a 'base'")
            if "tau" in spec:
                self.tau[kind] = float(spec["tau"])
            for word in [base, *spec.get("members", [])]:
                self.members[normalise_label(word)] = FamilyInfo(kind, base)
            for word in spec.get("inverse_members", []):
                self.members[normalise_label(word)] = FamilyInfo(kind, base, inverse=True)
        spread = data.get("spread") or {}
        for key, value in spread.items():
            if key == "_comment":
                continue
            if key == "degree_damping" and isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 2:
                self.spread[key] = float(value)
            elif key == "seed_backflow" and isinstance(value, bool):
                self.spread[key] = value
            else:
                raise LexiconError(f"{source}: 'spread' takes degree_damping (0..2) and seed_backflow (true/false); "
                                   f"got {key!r}: {value!r}")
        content = data.get("content") or {}
        if "tau" in content:
            self.tau["content"] = float(content["tau"])
        for base, words in (content.get("families") or {}).items():
            self.content_bases.add(base)
            for word in [base, *words]:
                self.members[normalise_label(word)] = FamilyInfo("content", base)

    def _base_of(self, kind: str) -> str | None:
        for info in self.members.values():
            if info.kind == kind:
                return info.base
        return None

    def resolve(self, predicate: str, *, object_is_literal: bool = False) -> FamilyInfo:
        """The family of a predicate, matched on its normalised text, else on its words' base
        forms (a leading auxiliary dropped); unknown -> its own content family. A bare copula
        ("is", "was") is class membership when its object is a concept; ``object_is_literal``
        (its first argument is a value) makes it a content family instead.

        Examples
        --------
        >>> lex = Lexicon.load()
        >>> lex.resolve("Is A")
        FamilyInfo(kind='belongs_to', base='属于', inverse=False)
        >>> lex.resolve("aka") == lex.resolve("同义")
        True
        >>> lex.resolve("attribute of")  # stated object-first: X attribute of Y == Y has X
        FamilyInfo(kind='of', base='的', inverse=True)
        >>> lex.resolve("Orbits"), lex.resolve("orbited")
        (FamilyInfo(kind='content', base='orbit', inverse=False), FamilyInfo(kind='content', base='orbit', inverse=False))
        >>> [lex.resolve(p).base for p in ("caused", "causing", "led to", "导致了")]
        ['导致', '导致', '导致', '导致']
        >>> [lex.resolve(p).kind for p in ("was", "are", "belonged to", "was replaced by")]
        ['belongs_to', 'belongs_to', 'belongs_to', 'superseded']
        >>> lex.resolve("is", object_is_literal=True), lex.resolve("was", object_is_literal=True).base
        (FamilyInfo(kind='content', base='be', inverse=False), 'be')
        """
        key = normalise_label(predicate)
        info = self.members.get(key)
        if info is not None and not (object_is_literal and info.kind == "belongs_to" and key in COPULAS):
            return info
        if info is None:
            by_lemma = self._lemma_index()
            for k in predicate_keys(key, self.languages):
                info = by_lemma.get(k) or self.members.get(k)
                if info is not None:
                    if object_is_literal and info.kind == "belongs_to" and k in COPULAS:
                        break
                    return info
        # "is" + a value ("gzip is (extremely reliable)") states an attribute, not a class
        return FamilyInfo("content", content_key(key, self.languages))

    def _lemma_index(self) -> dict[str, FamilyInfo]:
        """Members by their words' base forms (built on the first predicate not listed word for
        word; the first member of a base form keeps it, as in the file's order)."""
        if self._by_lemma is None:
            index: dict[str, FamilyInfo] = {}
            for word, info in self.members.items():
                index.setdefault(" ".join(lemma_words(word, self.languages)), info)
            self._by_lemma = index
        return self._by_lemma

    def tau_of(self, kind: str) -> float:
        """Spreading factor τ of a family kind (0.0 for a kind that does not spread).

        >>> lex = Lexicon.load(tau_overrides={"content": 0.4})
        >>> lex.tau_of("synonym"), lex.tau_of("content"), lex.tau_of("superseded")
        (0.9, 0.4, 0.0)
        """
        return self.tau.get(kind, 0.0)

    def base_of_kind(self, kind: str) -> str:
        base = self._base_of(kind)
        if base is None:
            raise LexiconError(f"no base member for family kind {kind!r}")
        return base

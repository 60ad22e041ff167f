"""The drill-down judgement (DESIGN §4.4): one LLM call per round, cached by (hit-unit
signature, question) in the ``decision`` cache."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from kgservice.caches import decision_key
from kgservice.drilldown.collect import unit_dep_nodes
from kgservice.llm import LLM, load_prompt
from kgservice.model import Unit

if TYPE_CHECKING:
    from kgservice.caches import Caches

PROMPT_FILE = "judge_v2.md"


class Decision(BaseModel):
    relevant: list[str]  # required, like enough: a reply without them is wrong, not "nothing relevant"
    enough: bool
    next_seeds: list[str] = Field(default_factory=list)
    mode: Literal["directed", "spread"] = "directed"
    drift: bool = False
    rephrase: str | None = None
    reason: str = ""


def judge_messages(question: str, key_nodes: list[dict[str, Any]], key_predicates: list[dict[str, str]],
                   mode: str, expanded: Iterable[str], units: Sequence[Unit],
                   held_back: dict[str, int] | None = None) -> list[dict[str, str]]:
    """The round's request. ``units`` are the ones shown (earlier rounds' relevant units, then
    this round's best); ``held_back`` counts the units of a crowded node not shown yet."""
    from kgservice.notation.serializer import format_unit

    payload: dict[str, Any] = {
        "task": "drilldown",
        "question": question,
        "key_nodes": [{"label": n["label"], "matches": n.get("matches", [])} for n in key_nodes],
        "key_predicates": list(dict.fromkeys(p["predicate"] for p in key_predicates)),
        "mode": mode,
        "expanded": sorted(expanded),
        "units": [{"id": u.id, "unit": format_unit(u, with_id=False, escape=False)} for u in units],
    }
    if held_back:
        payload["held_back"] = dict(sorted(held_back.items()))
    return [
        {"role": "system", "content": load_prompt("kgservice.drilldown", PROMPT_FILE).render()},
        {"role": "user", "content": json.dumps(payload, ensure_ascii=False)},
    ]


def judge(llm: LLM, caches: Caches, messages: list[dict[str, str]], units: Sequence[Unit],
          key_ids: Sequence[str]) -> tuple[Decision, bool]:
    """(decision, from cache?). The key is the whole request (so it contains the hit-unit
    signature and the question) plus the model; the entry depends on every node the units
    touch and on the key nodes."""
    key = decision_key("drilldown", llm.model, messages)
    hit = caches.get("decision", key)
    if hit is not None:
        return Decision.model_validate(hit), True
    ids = {u.id for u in units}

    def validate(d: Decision) -> None:
        stray = [r for r in d.relevant if r not in ids]
        if stray:
            raise ValueError(f"relevant lists ids that are not among the units: {stray[:5]}")

    decision = llm.complete_json(messages, Decision, "drilldown", validate=validate)
    deps = {n for u in units for n in unit_dep_nodes(u)} | set(key_ids)
    caches.put("decision", key, decision.model_dump(), deps)
    return decision, False

"""The LLM interface: provider path, JSON validation, repair loop, retries, clear errors, accounting."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from kgservice.llm import LLM, LLMOutputError, LLMProviderError, request_key
from kgservice.llm.client import REPAIR_PROMPT


class Pair(BaseModel):
    a: int
    b: str


MSGS = [{"role": "system", "content": "reply with a pair"},
        {"role": "user", "content": json.dumps({"task": "pair", "n": 1})}]


def repair_conversation(bad: str, problems: list[str]) -> list[dict]:
    return MSGS + [{"role": "assistant", "content": bad},
                   {"role": "user", "content": REPAIR_PROMPT.format(problems="\n".join(f"- {p}" for p in problems))}]


def llm(model="kgoffline/scripted", **kw) -> LLM:
    return LLM(model, retry_wait=0.0, **{"max_retries": 2, "repair_attempts": 2, **kw})


def test_scripted_reply_goes_through_the_provider_boundary_and_is_counted(script, boundary):
    script.add(request_key(MSGS), '{"a": 1, "b": "x"}')
    m = llm()
    assert m.complete_json(MSGS, Pair, "extract") == Pair(a=1, b="x")
    assert boundary.count == 1 and boundary.calls[0]["model"] == "kgoffline/scripted"
    u = m.usage.of("extract")
    assert (u.calls, u.repairs, u.retries, u.failures) == (1, 0, 0, 0)
    assert u.prompt_tokens > 0 and u.completion_tokens > 0


def test_code_fence_around_json_is_accepted(script, boundary):
    script.add(request_key(MSGS), '```json\n{"a": 2, "b": "y"}\n```')
    assert llm().complete_json(MSGS, Pair, "extract").a == 2


def test_bad_json_is_repaired(script, boundary):
    bad = '{"a": "not a number", "b": "x"}'
    script.add(request_key(MSGS), bad)
    problems = ["a: Input should be a valid integer, unable to parse string as an integer"]
    script.add(request_key(repair_conversation(bad, problems)), '{"a": 3, "b": "z"}')
    m = llm()
    assert m.complete_json(MSGS, Pair, "extract") == Pair(a=3, b="z")
    assert boundary.count == 2  # original + one repair request
    assert m.usage.of("extract").repairs == 1


def test_invalid_after_all_repairs_is_a_clear_error(script, boundary):
    script.override_task("pair", lambda payload: "this is not json at all")
    m = llm()
    with pytest.raises(LLMOutputError) as exc:
        m.complete_json(MSGS, Pair, "extract")
    assert boundary.count == 3  # 1 + repair_attempts
    msg = str(exc.value)
    assert "'extract'" in msg and "kgoffline/scripted" in msg and "3 attempt(s)" in msg
    assert exc.value.problems and m.usage.of("extract").failures == 1


def test_validate_callback_feeds_the_repair_loop(script, boundary):
    replies = iter(['{"a": -1, "b": "x"}', '{"a": 5, "b": "x"}'])
    script.override_task("pair", lambda payload: next(replies))

    def positive(p: Pair) -> None:
        if p.a < 0:
            raise ValueError("a must be positive")

    assert llm().complete_json(MSGS, Pair, "extract", validate=positive).a == 5
    assert boundary.count == 2


def test_transient_provider_errors_are_retried(script, boundary):
    script.add(request_key(MSGS), {"error": "timeout"}, {"error": "rate_limit"}, '{"a": 1, "b": "ok"}')
    m = llm()
    assert m.complete_json(MSGS, Pair, "extract").b == "ok"
    assert boundary.count == 3 and m.usage.of("extract").retries == 2


def test_provider_errors_give_up_after_retries(script, boundary):
    script.add(request_key(MSGS), {"error": "connection"})
    with pytest.raises(LLMProviderError, match=r"after 3 attempt\(s\)"):
        llm().complete_json(MSGS, Pair, "extract")
    assert boundary.count == 3  # 1 + max_retries


def test_missing_recording_fails_loudly_and_is_not_retried(boundary):
    with pytest.raises(LLMProviderError) as exc:
        llm().complete_json(MSGS, Pair, "key_nodes")
    assert boundary.count == 1
    assert "no recorded response" in str(exc.value) and request_key(MSGS) in str(exc.value)
    assert "kgoffline/rules" in str(exc.value)


def test_unknown_purpose_is_refused(boundary):
    with pytest.raises(ValueError, match="unknown LLM purpose"):
        llm().complete_json(MSGS, Pair, "chat")
    assert boundary.count == 0


def test_record_then_replay_offline(tmp_path, script, boundary):
    rec = tmp_path / "rec.jsonl"
    rules_msgs = [{"role": "user", "content": json.dumps({"task": "same_concept", "new": "cats", "existing": "cat"})}]

    class Same(BaseModel):
        same: bool
        reason: str = ""

    first = llm("kgoffline/rules", record_to=rec).complete_json(rules_msgs, Same, "merge_confirm")
    line = json.loads(rec.read_text("utf-8").splitlines()[0])
    assert line["key"] == request_key(rules_msgs) and "content" not in line  # no request text stored
    script.clear()
    replay = llm("kgoffline/scripted", recordings=[rec]).complete_json(rules_msgs, Same, "merge_confirm")
    assert replay == first and first.same is True

"""A `kg` process that calls no real model never imports litellm (seconds of CPU at import): not
with no model configured, not with the offline stand-ins (called directly), and not when the
unconfigured default replays recordings. Each run is a real `kg` process that reports, at exit,
whether litellm was ever imported; the answers are the ones worked out from the corpus by hand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import env_for

GOOD = "#u1 {cat} [belongs to] {mammal}\n#u2 {mammal} [has] {fur}\n"
QUESTION = "What does a mammal have?"
# the CLI in this interpreter, saying on stderr at exit whether litellm was imported
PROBE = ("import atexit, sys\n"
         "atexit.register(lambda: print('litellm imported:', 'litellm' in sys.modules, file=sys.stderr))\n"
         "from kgservice.cli.app import main\n"
         "main()\n")


def kg_probe(env: dict[str, str], *args: str) -> tuple[subprocess.CompletedProcess, bool]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("litellm imported:")]
    assert lines, done.stderr
    return done, lines[-1].endswith("True")


@pytest.fixture
def corpus_env(tmp_path: Path) -> dict[str, str]:
    env = env_for(tmp_path / "kg")
    (tmp_path / "a.units").write_text(GOOD, "utf-8")
    done, imported = kg_probe(env, "ingest", str(tmp_path / "a.units"))
    assert not imported  # unit files need no model
    return env


def test_an_ask_with_no_model_configured_never_imports_litellm(corpus_env):
    env = {k: v for k, v in corpus_env.items() if k != "KG_LLM_MODEL"}
    done, imported = kg_probe(env, "ask", QUESTION, "--json")
    data = json.loads(done.stdout)
    assert data["found"] is True and "u2" in data["cited"] and data["llm"]["calls"] == 0
    assert data["stop_reason"].startswith("no model configured: retrieval only")
    assert not imported


def test_an_uncached_ask_with_the_offline_rules_model_never_imports_litellm(corpus_env):
    done, imported = kg_probe(corpus_env, "ask", QUESTION, "--json")
    data = json.loads(done.stdout)
    assert data["found"] is True and "u2" in data["cited"]
    # the model path ran: key nodes, one drill-down decision, the answer (DESIGN §4), tokens counted
    assert data["llm"]["calls"] == 3 and sorted(data["llm"]["by_purpose"]) == ["answer", "drilldown", "key_nodes"]
    assert data["llm"]["prompt_tokens"] > 0 and data["llm"]["completion_tokens"] > 0
    assert not imported


def test_recordings_replay_for_the_unconfigured_default_without_litellm(corpus_env, tmp_path):
    """A run with the rules stand-in recorded (KG_LLM_RECORD), then replayed by the default model
    nobody chose (KG_LLM_RECORDINGS): the same answer from the recording, not the retrieval-only one."""
    rec = tmp_path / "rec.jsonl"
    first, _ = kg_probe({**corpus_env, "KG_LLM_RECORD": str(rec)}, "ask", QUESTION, "--json")
    recorded = json.loads(first.stdout)
    assert len(rec.read_text("utf-8").splitlines()) == recorded["llm"]["calls"] == 3
    (tmp_path / "kg" / "caches.sqlite3").unlink()  # nothing answered from the caches
    env = {k: v for k, v in corpus_env.items() if k != "KG_LLM_MODEL"}
    done, imported = kg_probe({**env, "KG_LLM_RECORDINGS": str(rec)}, "ask", QUESTION, "--json")
    replayed = json.loads(done.stdout)
    assert replayed["llm"]["calls"] == 3 and not replayed["stop_reason"].startswith("no model configured")
    assert (replayed["answer"], replayed["cited"]) == (recorded["answer"], recorded["cited"])
    assert not imported


def test_the_offline_stand_in_counts_tokens_as_litellm_does():
    """The counts the offline provider reports are litellm's own token_counter's, for the same request."""
    from kgservice.llm.client import ensure_litellm
    from kgservice.llm.offline import SCRIPT, completion
    from kgservice.llm.keys import request_key

    litellm = ensure_litellm()
    messages = [{"role": "system", "content": "Reply with one JSON object. 只回复 JSON。"},
                {"role": "user", "content": json.dumps({"task": "pair", "text": "Smoking causes lung cancer."})},
                {"role": "assistant", "content": "{\"a\": 1}"}, {"role": "user", "content": "again <|endoftext|>"}]
    reply = '{"a": 2, "b": "吸烟导致肺癌"}'
    SCRIPT.add(request_key(messages), reply)
    try:
        resp = completion(model="kgoffline/scripted", messages=messages)
    finally:
        SCRIPT.clear()
    assert resp.choices[0].message.content == reply
    assert resp.usage.prompt_tokens == litellm.token_counter(messages=messages)
    assert resp.usage.completion_tokens == litellm.token_counter(text=reply)


def test_kg_help_loads_no_knowledge_base(tmp_path):
    """`kg --help` (and every command's start) costs typer and rich: the knowledge base, its
    pydantic models, numpy and litellm load inside the commands that use them."""
    heavy = ("kgservice.service", "kgservice.model", "numpy", "litellm", "mcp", "fastapi")
    probe = ("import atexit, sys\n"
             f"atexit.register(lambda: print('loaded:', *[m for m in {heavy!r} if m in sys.modules], file=sys.stderr))\n"
             "from kgservice.cli.app import main\n"
             "main()\n")
    done = subprocess.run([sys.executable, "-c", probe, "--help"], env=env_for(tmp_path / "kg"), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and "ask" in done.stdout, done.stderr
    assert [ln for ln in done.stderr.splitlines() if ln.startswith("loaded:")] == ["loaded:"]

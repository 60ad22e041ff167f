"""LLM provider faults: transient errors and timeouts are retried with exponential backoff
(tenacity) and then fail with a clear error; permanent errors fail at once; a document whose
extraction fails part-way stores nothing (its units go in as one batch after every chunk
succeeded), and running the ingest again completes it without duplicates.

Faults are injected at the litellm boundary two ways: litellm's own ``mock_response`` set
to an exception (a hosted model name, the real litellm request path, no network), and the
offline ``kgoffline`` provider raising litellm's exception types for chosen requests."""

from __future__ import annotations

import time

import pytest

from kgservice.llm import LLM, LLMOutputError, LLMProviderError
from kgservice.llm.client import ensure_litellm
from tests.reliability.conftest import state_of

_PAD = " Notes follow here; the remaining words only pad this paragraph, so that every paragraph fills one chunk on its own."
DOCS = {  # one chunk per paragraph at max_chars=200
    "a.txt": "\n\n".join(s + _PAD for s in ("Smoking causes lung cancer.", "Lung cancer causes death.", "Rust has ownership.")),
    "b.txt": "\n\n".join(s + _PAD for s in ("Python uses reference counting.", "CPython is written in C.", "Python has generators.")),
    "c.txt": "\n\n".join(s + _PAD for s in ("The reactor uses heavy water.", "Tobacco contains nicotine.")),
}
CHUNK = 200


@pytest.fixture(scope="module")
def litellm():
    return ensure_litellm()


@pytest.fixture
def script(litellm):
    from kgservice.llm.offline import SCRIPT

    SCRIPT.clear()
    yield SCRIPT
    SCRIPT.clear()


def _messages() -> list[dict[str, str]]:
    return [{"role": "user", "content": '{"task": "extract", "mode": "detail", "text": "x"}'}]


@pytest.mark.parametrize("kind,transient", [("Timeout", True), ("APIConnectionError", True), ("RateLimitError", True),
                                            ("ServiceUnavailableError", True), ("InternalServerError", True),
                                            ("AuthenticationError", False), ("BadRequestError", False)])
def test_provider_errors_through_litellm_mock_response(kind, transient, litellm):
    from kgservice.extraction.schema import Extraction

    exc = getattr(litellm, kind)(message=f"mock {kind}", model="openai/gpt-4o-mini", llm_provider="openai")
    llm = LLM("openai/gpt-4o-mini", max_retries=3, retry_wait=0.02, completion_kwargs={"mock_response": exc})
    t0 = time.monotonic()
    with pytest.raises(LLMProviderError) as ei:
        llm.complete_json(_messages(), Extraction, "extract")
    took = time.monotonic() - t0
    usage = llm.usage.of("extract")
    msg = str(ei.value)
    assert "LLM step 'extract' (openai/gpt-4o-mini)" in msg and kind in msg
    if transient:
        assert (usage.calls, usage.retries) == (4, 3) and "after 4 attempt(s)" in msg
        assert took >= 0.02 + 0.04 + 0.08  # exponential backoff between the attempts
    else:
        assert (usage.calls, usage.retries) == (1, 0)  # retrying cannot fix a bad key or request


def test_timeouts_then_success_recovers(script):
    from kgservice.extraction.schema import Extraction

    replies = iter([{"error": "timeout"}, {"error": "server"}, '{"units": [], "mentions": ["x"]}'])
    script.override_task("extract", lambda payload: next(replies))
    llm = LLM("kgoffline/scripted", max_retries=3, retry_wait=0.0)
    out = llm.complete_json(_messages(), Extraction, "extract")
    assert out.mentions == ["x"]
    assert (llm.usage.of("extract").calls, llm.usage.of("extract").retries) == (3, 2)


def _write_docs(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, "utf-8")
    return folder


def _rules_answer(payload):
    """The rule-based stand-in's reply to any task (here: entity resolution's questions)."""
    from kgservice.llm import rules

    return rules.respond(payload)


def _failing_on(needle: str, reply):
    """An extract handler: the rule-based stand-in, except for chunks containing ``needle``."""
    from kgservice.llm import rules

    def handler(payload):
        if needle in payload.get("text", ""):
            return reply
        return rules.respond(payload)

    return handler


@pytest.mark.parametrize("backend,reply,error", [
    ("embedded", {"error": "timeout"}, LLMProviderError),
    ("embedded", {"error": "rate_limit"}, LLMProviderError),
    ("embedded", "Sorry, I cannot help with that.", LLMOutputError),
    ("embedded", '{"units": "none"}', LLMOutputError),
    pytest.param("neo4j", {"error": "server"}, LLMProviderError, marks=pytest.mark.neo4j),
])
def test_a_document_failing_part_way_stores_nothing_and_a_rerun_completes(backend, reply, error, make_kb, script, tmp_path):
    from kgservice.pipeline import ingest_text

    folder = _write_docs(tmp_path)
    kb = make_kb(backend, llm_model="kgoffline/scripted", llm_retry_wait=0.0, llm_max_retries=2, llm_repair_attempts=1)
    # b.txt: its first chunk extracts fine, its second chunk fails -> nothing of b.txt may be stored
    script.override_task("extract", _failing_on("CPython", reply))
    script.override_task("same_concept", _rules_answer)  # entity resolution asks CPython / Python
    with pytest.raises(error) as ei:
        ingest_text(kb, folder, max_chars=CHUNK)
    assert "LLM step 'extract'" in str(ei.value)
    docs = {u.doc for u in kb.store.iter_units()}
    assert docs == {"a.txt"}  # a.txt finished before b.txt failed; b.txt is not half-stored, c.txt not reached
    stored_a = kb.store.counts()["units"]
    assert stored_a >= 3
    # the provider is back: the same command completes the rest; a.txt is recognised as done
    script.clear()
    from kgservice.llm import rules

    script.override_task("extract", rules.respond)
    script.override_task("same_concept", rules.respond)
    rep = ingest_text(kb, folder, max_chars=CHUNK)
    status = {d.path.rsplit("/", 1)[-1]: d.status for d in rep.documents}
    assert status == {"a.txt": "unchanged", "b.txt": "ingested", "c.txt": "ingested"}
    # identical to a run that never failed (on Neo4j the clean run reuses the one database)
    got = state_of(kb.store)
    clean = make_kb(backend, name="clean", llm_model="kgoffline/scripted", llm_retry_wait=0.0)
    ingest_text(clean, folder, max_chars=CHUNK)
    want = state_of(clean.store)
    strip = lambda s: {**s, "units": [u.rsplit("|", 1)[0] for u in s["units"]]}  # noqa: E731 (ingest times differ)
    assert strip(got) == strip(want)


def test_cli_reports_provider_failure_clearly(tmp_path, script):
    from typer.testing import CliRunner

    from kgservice.cli.app import app

    folder = _write_docs(tmp_path)
    script.override_task("extract", _failing_on("CPython", {"error": "timeout"}))
    r = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64", "ingest-text", str(folder)],
                           env={"KG_LLM_MODEL": "kgoffline/scripted", "KG_LLM_RETRY_WAIT": "0", "KG_LLM_MAX_RETRIES": "1"})
    assert r.exit_code == 1, r.output
    assert "Timeout" in r.stderr and "after 2 attempt(s)" in r.stderr and "Traceback" not in r.output

"""`kg serve` listens first: the model check and the warm-up run in the background, /readyz
reports the check while it runs and then the state of the last real call, and a question asked
during the warm-up waits for it instead of loading the same parts beside it.

The model endpoints here are real sockets on loopback: one that accepts and never answers, one
that answers a chat completion after a delay longer than the old fixed 10 s probe limit."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from fastapi.testclient import TestClient

from kgservice.llm.check import check_model
from kgservice.server import ServeOptions, create_app
from kgservice.vectors.embedder import HashEmbedder
from tests.server.conftest import BASE, auth, make_settings

DEADLINE = 120.0  # only a bound for a hang: nothing below depends on how fast this machine is


def until(what, bound: float = DEADLINE):
    end = time.monotonic() + bound
    while True:
        got = what()
        if got:
            return got
        assert time.monotonic() < end, "gave up waiting"
        time.sleep(0.05)


class Silent:
    """A model endpoint that accepts connections and never answers; counts them."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[socket.socket] = []
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(conn)

    def close(self) -> None:
        for c in self.accepted:
            c.close()
        self.sock.close()


@pytest.fixture
def silent() -> Iterator[Silent]:
    s = Silent()
    yield s
    s.close()


def slow_model(delay: float) -> ThreadingHTTPServer:
    """An OpenAI-compatible chat endpoint that replies {"ok": true} after ``delay`` seconds."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            time.sleep(delay)
            body = json.dumps({"id": "c1", "object": "chat.completion", "created": 0, "model": "test-model",
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": '{"ok": true}'}}],
                               "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_kg_serve_answers_livez_while_the_model_check_waits_for_a_model_that_never_answers(tmp_path, silent):
    from tests.processes import env_for, serving

    env = env_for(tmp_path / "kg", KG_LLM_MODEL="openai/test-model", KG_LLM_API_BASE=f"http://127.0.0.1:{silent.port}/v1",
                  KG_LLM_TIMEOUT="900", OPENAI_API_KEY="sk-test-not-a-key")
    with serving(env, "--no-auth", until="/livez") as (base, proc, log):
        ready = httpx.get(base + "/readyz", timeout=30)
        assert ready.status_code == 200  # reads need no model
        model = ready.json()["model"]
        assert (model["state"], model["model"], model["answers"]) == ("checking", "openai/test-model", "model")
        assert "KG_LLM_TIMEOUT = 900 s" in model["detail"]
        until(lambda: silent.accepted)  # the check is under way, not skipped
        assert proc.poll() is None


def test_the_model_check_makes_one_attempt_bounded_by_the_answering_timeout(tmp_path, silent, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    down = check_model(make_settings(tmp_path, llm_model="openai/test-model", llm_model_chosen=True, llm_timeout=2,
                                     llm_api_base=f"http://127.0.0.1:{silent.port}/v1"))
    assert (down.state, down.source) == ("unreachable", "start-up check") and "Timeout" in down.detail
    assert len(silent.accepted) == 1  # no retry by litellm or by the provider's own client


def test_the_model_check_waits_as_long_as_KG_LLM_TIMEOUT_says(tmp_path, monkeypatch):
    """A local model that takes 11 s to answer is usable with KG_LLM_TIMEOUT=120 (the probe
    used to give up after 10 s whatever the setting said)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    server = slow_model(11.0)
    try:
        status = check_model(make_settings(tmp_path, llm_model="openai/test-model", llm_model_chosen=True,
                                           llm_timeout=120, llm_api_base=f"http://127.0.0.1:{server.server_port}/v1"))
    finally:
        server.shutdown()
    assert (status.state, status.model, status.answers) == ("ok", "openai/test-model", "model")


def test_readyz_reports_the_last_real_call_after_the_start_up_check(tmp_path, kb):
    from kgservice.llm.offline import SCRIPT

    settings = kb.settings
    SCRIPT.clear()
    SCRIPT.override_task("ping", lambda payload: {"error": "connection"})  # down at start
    try:
        app = create_app(settings, ServeOptions(kb=kb, check_model=True))
        key = app.state.ctx.keys().create("r", "reader")[0]
        with TestClient(app, base_url=BASE) as c:
            def model() -> dict:
                return c.get("/readyz").json()["model"]

            start = until(lambda: (m := model())["state"] != "checking" and m)
            assert (start["state"], start["source"]) == ("unreachable", "start-up check")
            r = c.post("/v1/ask", json={"question": "What does smoking cause?"}, headers=auth(key))
            assert r.status_code == 200 and r.json()["found"] is True
            up = model()
            assert up["state"] == "ok" and up["source"].startswith("last call (") and up["detail"] == ""
            # the model stops answering: the next real call says so (a new question: no cache)
            SCRIPT.override_task("extract", lambda payload: {"error": "connection"})
            r = c.post("/v1/ask", json={"question": "What does a cat belong to?"}, headers=auth(key))
            assert r.status_code >= 500
            down = model()
            assert (down["state"], down["source"]) == ("unreachable", "last call (key_nodes)")
            assert "APIConnectionError" in down["detail"]
    finally:
        SCRIPT.clear()


class GatedEmbedder:
    """The hash embedder, except that the warm-up's call blocks until the test releases it."""

    def __init__(self) -> None:
        self.inner = HashEmbedder(256)
        self.name, self.dim = self.inner.name, self.inner.dim
        self.release = threading.Event()
        self.warm_up_called = threading.Event()

    def embed(self, texts):
        if threading.current_thread().name == "kg-warm-up":
            self.warm_up_called.set()
            assert self.release.wait(DEADLINE)
        return self.inner.embed(texts)


def test_a_question_during_the_warm_up_waits_for_it(kb):
    gate = GatedEmbedder()
    kb.parts.__dict__.pop("vectors", None)
    kb.parts.__dict__["embedder"] = gate
    warm = threading.Thread(target=kb.warm_up, name="kg-warm-up")  # what kb.start_warm_up() runs
    warm.start()
    assert gate.warm_up_called.wait(DEADLINE)  # the warm-up is loading (held here)
    answers: list = []
    asker = threading.Thread(target=lambda: answers.append(kb.ask("What does smoking cause?")), name="asker")
    asker.start()
    # either the question waits for the warm-up, or it went ahead and answered beside it
    until(lambda: getattr(kb, "_warm_waiters", 0) == 1 or not asker.is_alive())
    assert asker.is_alive() and not answers, "the question did not wait for the warm-up"
    gate.release.set()
    warm.join(DEADLINE)
    asker.join(DEADLINE)
    assert answers and answers[0].found and "s1" in answers[0].cited
    assert kb.vectors_if_open() is not None


APP_ONLY = ("import sys\n"
            "from pathlib import Path\n"
            "from kgservice.config import Settings\n"
            "from kgservice.server import ServeOptions, create_app\n"
            "app = create_app(Settings(data_dir=Path(sys.argv[1]), embedder='hash:64'), ServeOptions(no_auth=True))\n"
            "print(sorted(m for m in ('mcp', 'litellm', 'numpy') if m in sys.modules))\n")


def test_the_app_that_starts_listening_has_not_loaded_mcp_litellm_or_numpy(tmp_path):
    """What uvicorn needs before it opens the port: the MCP SDK (~1 s of CPU to import) is built
    by the lifespan afterwards, the model client and the embedder by the background threads."""
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", APP_ONLY, str(tmp_path / "kg")], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"

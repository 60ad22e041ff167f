"""A server loads the model client (litellm for a real model only), the embedder and the vector
index in the background at start, so its first user does not wait for the process's imports; the
warm-up makes no model call and a failure in it never stops the server."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading

import pytest

from fastapi.testclient import TestClient

from kgservice.server import ServeOptions, create_app
from tests.server.conftest import BASE


def warm_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "kg-warm-up"]


def test_warm_up_loads_without_a_model_call(kb):
    kb.parts.__dict__.pop("vectors", None)
    kb.warm_up()
    assert kb.vectors_if_open() is not None
    assert kb.llm.usage.to_dict()["calls"] == 0
    assert kb.ask("What does smoking cause?").found  # the warmed process answers as before


WARM = ("import sys\n"
        "from pathlib import Path\n"
        "from kgservice.config import Settings\n"
        "from kgservice.service import KnowledgeBase\n"
        "kb = KnowledgeBase(Settings(data_dir=Path(sys.argv[1]), embedder='hash:64', llm_model=sys.argv[2], llm_model_chosen=True))\n"
        "kb.warm_up()\n"
        "print('litellm' in sys.modules, kb.vectors_if_open() is not None, kb.llm.usage.calls)\n"
        "kb.close()\n")


@pytest.mark.parametrize("model, litellm", [("kgoffline/rules", False), ("openai/test-model", True)])
def test_warm_up_loads_litellm_only_for_a_real_model(tmp_path, model, litellm):
    """The offline stand-ins are served without litellm, so warming up for one must not import
    it (seconds of CPU); a real model's client is loaded ahead of the first question."""
    done = subprocess.run([sys.executable, "-c", WARM, str(tmp_path / "kg"), model], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(litellm), "True", "0"]


def test_a_failing_warm_up_is_logged_not_raised(kb, caplog):
    class Broken:
        name, dim = "broken", 256

        def embed(self, texts):
            raise OSError("model file missing")

    kb.parts.__dict__["embedder"] = Broken()
    with caplog.at_level(logging.INFO, logger="kgservice.service"):
        kb.warm_up()
    assert "warm-up stopped early: OSError: model file missing" in caplog.text


def test_the_server_warms_up_in_the_background_only_when_asked(settings, kb):
    for t in warm_threads():
        t.join(60)
    with TestClient(create_app(settings, ServeOptions(kb=kb)), base_url=BASE):
        assert not warm_threads()
    kb.parts.__dict__.pop("vectors", None)
    with TestClient(create_app(settings, ServeOptions(kb=kb, warm_up=True)), base_url=BASE) as c:
        started = warm_threads()
        assert started or kb.vectors_if_open() is not None  # running, or done already
        for t in started:
            t.join(60)
        assert kb.vectors_if_open() is not None
        assert c.get("/livez").status_code == 200

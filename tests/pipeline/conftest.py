"""Fixtures for the pipeline tests: a fresh knowledge base on a temp dir, the hash embedder
(deterministic, no model), the offline LLM provider through the client's real request path, and
a counter at the provider boundary (``kgservice.llm.client.provider_completion``: litellm for a
real model, the offline stand-in for ``kgoffline/*``) that sees every request any code makes."""

from __future__ import annotations

from tests.neo4j_helpers import wipe_all
import json
import os
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no cost-map fetch when litellm imports

import pytest

from kgservice.config import Settings
from kgservice.llm.client import ensure_litellm
from kgservice.notation import parse_units
from kgservice.service import KnowledgeBase

# Hand-written corpus; expectations in the tests are worked out from these lines.
CORPUS = """\
#s1 {smoking} [causes] {lung cancer}
    ()[confidence] (high)
#s2 {吸烟} [同义] {smoking}
#s3 {lung cancer} [leads to] {death}
#s4 {smoking} [is a] {tobacco use}
#p1 {Python} [created by] {Guido van Rossum}
#p2 {Python} [is a] {programming language}
#p3 {Python} [first released in] (1991)
#c1 {cat} [belongs to] {mammal}
#c2 {mammal} [has] {fur}
"""

THRESHOLD = 0.7  # entry cosine for the hash embedder: only (near-)identical labels pass


def make_settings(root: Path, **over) -> Settings:
    base = dict(data_dir=root / "kg", embedder="hash:256", llm_model="kgoffline/rules", llm_retry_wait=0.0,
                llm_max_retries=2, llm_repair_attempts=2)
    base.update(over)
    return Settings(**base)


@pytest.fixture(scope="session")
def litellm_module():
    return ensure_litellm()


@pytest.fixture(autouse=True)
def script():
    from kgservice.llm.offline import SCRIPT

    SCRIPT.clear()
    yield SCRIPT
    SCRIPT.clear()


class Boundary:
    """Every provider call: (model, task, mode) read from the request payload."""

    def __init__(self) -> None:
        self.calls: list[dict] = []

    @property
    def count(self) -> int:
        return len(self.calls)

    def tasks(self) -> list[str]:
        return [c["task"] for c in self.calls]


@pytest.fixture
def boundary(monkeypatch) -> Boundary:
    from kgservice.llm import client

    b = Boundary()
    real = client.provider_completion

    def counting(*args, **kwargs):
        from kgservice.llm.offline import payload_of

        p = payload_of(kwargs.get("messages") or [])
        b.calls.append({"model": kwargs.get("model"), "task": p.get("task"), "mode": p.get("mode")})
        return real(*args, **kwargs)

    monkeypatch.setattr(client, "provider_completion", counting)
    return b


@pytest.fixture(params=["embedded", "neo4j"])
def kb(request, tmp_path):
    """A fresh knowledge base on each graph backend: the invariants must hold on both."""
    over = {}
    if request.param == "neo4j":
        wipe_all(request.getfixturevalue("neo4j_connection"))  # skips (or fails under CI) without a server
        over = dict(backend="neo4j", neo4j_uri=os.environ["KG_TEST_NEO4J_URI"],
                    neo4j_user=os.environ.get("KG_NEO4J_USER", "neo4j"), neo4j_password=os.environ.get("NEO4J_PASSWORD"))
    k = KnowledgeBase(make_settings(tmp_path, **over))
    yield k
    k.close()


@pytest.fixture
def corpus_kb(kb):
    kb.ingest_units(parse_units(CORPUS, kb.lexicon, doc="corpus.units"))
    return kb


def ask_params(**over):
    from kgservice.pipeline.asking import AskParams

    return AskParams(**{"threshold": THRESHOLD, **over})


def answer_json(sentences, found=True) -> str:
    return json.dumps({"found": found, "sentences": sentences}, ensure_ascii=False)

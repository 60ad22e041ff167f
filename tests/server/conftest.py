"""Server test fixtures: a knowledge base with a small hand-written corpus (hash embedder,
the offline rules LLM through litellm), an app per test (the MCP session manager runs once
per app), one key per role, and a FAKE in-memory job queue where the real one is absent."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest
from fastapi.testclient import TestClient

from kgservice.config import Settings
from kgservice.notation import parse_units
from kgservice.server import ServeOptions, create_app
from kgservice.service import KnowledgeBase

CORPUS = """\
#s1 {smoking} [causes] {lung cancer}
    ()[confidence] (high)
#s2 {吸烟} [同义] {smoking}
#s3 {lung cancer} [leads to] {death}
#s4 {smoking} [is a] {tobacco use}
#p1 {Python} [created by] {Guido van Rossum}
#p2 {Python} [is a] {programming language}
#c1 {cat} [belongs to] {mammal}
#c2 {mammal} [has] {fur}
"""
BASE = "http://127.0.0.1"
ROLES = ("reader", "writer", "admin")


def make_settings(root: Path, **over) -> Settings:
    base = dict(data_dir=root / "kg", embedder="hash:256", llm_model="kgoffline/rules", llm_retry_wait=0.0,
                llm_max_retries=1, rate_limit=0.0)
    base.update(over)
    return Settings(**base)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)


@pytest.fixture
def kb(settings: Settings) -> Iterator[KnowledgeBase]:
    k = KnowledgeBase(settings)
    k.ingest_units(parse_units(CORPUS, k.lexicon, doc="corpus.units"))
    yield k
    k.close()


@pytest.fixture
def app(settings: Settings, kb: KnowledgeBase):
    return create_app(settings, ServeOptions(kb=kb))


@pytest.fixture
def client(app) -> Iterator[TestClient]:
    with TestClient(app, base_url=BASE) as c:
        yield c


@pytest.fixture
def keys(app) -> dict[str, str]:
    """One fresh key per role: {'reader': 'kg_…', 'writer': …, 'admin': …}."""
    store = app.state.ctx.keys()
    return {role: store.create(f"user-{role}", role)[0] for role in ROLES}


def auth(key: str | None) -> dict[str, str]:
    return {} if key is None else {"Authorization": f"Bearer {key}"}


@pytest.fixture
def embedded_env(tmp_path: Path) -> dict[str, str]:
    """The environment of `kg` processes on an embedded knowledge base holding CORPUS."""
    from tests.processes import env_for, kg

    env = env_for(tmp_path / "kg", KG_ALLOWED_HOSTS="127.0.0.1,localhost,kg.internal")
    (tmp_path / "corpus.units").write_text(CORPUS, "utf-8")
    done = kg(env, "ingest", str(tmp_path / "corpus.units"))
    assert done.returncode == 0, done.stderr
    return env

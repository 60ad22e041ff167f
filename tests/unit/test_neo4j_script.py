"""scripts/neo4j (standard library only) builds the server's command line; checked without Java."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "neo4j"


def _script():
    loader = importlib.machinery.SourceFileLoader("kg_neo4j_script", str(SCRIPT))
    spec = importlib.util.spec_from_loader("kg_neo4j_script", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def test_jvm_opts_from_the_environment_are_split_like_a_shell(monkeypatch):
    mod = _script()
    monkeypatch.delenv("KG_NEO4J_JVM_OPTS", raising=False)
    assert mod.jvm_gc_flags() == []
    monkeypatch.setenv("KG_NEO4J_JVM_OPTS", "-XX:G1NewSizePercent=40  '-Dkg.note=two words'")
    assert mod.jvm_gc_flags() == ["-XX:G1NewSizePercent=40", "-Dkg.note=two words"]
    assert "-XX:+UnlockExperimentalVMOptions" in mod.JVM_FLAGS  # G1NewSizePercent needs it

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
    monkeypatch.delenv("KG_NEO4J_HEAP", raising=False)  # 2g: no default extra flags
    assert mod.jvm_gc_flags() == []
    monkeypatch.setenv("KG_NEO4J_JVM_OPTS", "-XX:G1NewSizePercent=40  '-Dkg.note=two words'")
    assert mod.jvm_gc_flags() == ["-XX:G1NewSizePercent=40", "-Dkg.note=two words"]
    assert "-XX:+UnlockExperimentalVMOptions" in mod.JVM_FLAGS  # G1NewSizePercent needs it


def test_young_generation_floor_is_the_default_from_a_3g_heap(monkeypatch):
    mod = _script()
    monkeypatch.delenv("KG_NEO4J_JVM_OPTS", raising=False)
    for heap, floor in (("2g", False), ("2900m", False), ("3g", True), ("3072m", True), ("4G", True),
                        (str(3 << 30), True), ("lots", False)):
        monkeypatch.setenv("KG_NEO4J_HEAP", heap)
        assert mod.jvm_gc_flags() == (["-XX:G1NewSizePercent=40"] if floor else []), heap
    monkeypatch.delenv("KG_NEO4J_HEAP")  # the 2g default
    assert mod.jvm_gc_flags() == []
    monkeypatch.setenv("KG_NEO4J_HEAP", "4g")
    monkeypatch.setenv("KG_NEO4J_JVM_OPTS", "-XX:G1NewSizePercent=5 -Xlog:gc")
    assert mod.jvm_gc_flags() == ["-XX:G1NewSizePercent=5", "-Xlog:gc"]  # given: replaces the floor
    monkeypatch.setenv("KG_NEO4J_JVM_OPTS", "-Xlog:gc")
    assert mod.jvm_gc_flags() == ["-XX:G1NewSizePercent=40", "-Xlog:gc"]


def test_heap_sizes_are_read_like_the_jvm_reads_them():
    mod = _script()
    assert mod.heap_bytes("2g") == 2 << 30 and mod.heap_bytes("512m") == 512 << 20
    assert mod.heap_bytes("1.5g") == 3 << 29 and mod.heap_bytes("1024") == 1024
    assert mod.heap_bytes("") is None and mod.heap_bytes("big") is None

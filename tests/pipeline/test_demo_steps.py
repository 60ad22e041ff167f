"""`kg demo`'s graphify steps on the graph the demo builds (demo units and texts, the offline
rule-based model): the path step names nodes that resolve without an ambiguity warning."""

from __future__ import annotations

from pathlib import Path

from kgservice.cli.demo import demo_steps, find_demo_dir
from kgservice.config import Settings
from kgservice.graphify.loader import load_graph
from kgservice.graphify.path import run_path
from kgservice.service import KnowledgeBase


def test_the_demo_path_step_is_unambiguous(tmp_path: Path):
    from kgservice.llm.client import ensure_litellm

    ensure_litellm()
    demo = find_demo_dir(None)
    graph = tmp_path / "graphify-out" / "graph.json"
    settings = Settings(data_dir=tmp_path / "kg", embedder="hash:64", llm_model="kgoffline/rules",
                        llm_model_chosen=True, llm_retry_wait=0.0)
    with KnowledgeBase(settings) as kb:
        kb.ingest_paths([demo / "units"])
        kb.ingest_paths([demo / "texts"])
        kb.export(graph)
    [step] = [s for s in demo_steps(demo, graph, []) if s[0] == "path"]
    source, target = step[1], step[2]
    res = run_path(load_graph(graph), source, target, undirected="--undirected" in step)
    assert res.exit_code == 0 and res.stderr == "", res.stderr
    assert res.stdout.startswith("Shortest path (") and res.nodes[0] == source

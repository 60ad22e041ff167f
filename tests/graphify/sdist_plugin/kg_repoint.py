"""pytest plugin: graphify 0.9.96's own tests, re-pointed at kgservice's implementation.

Loaded (``-p kg_repoint``) into a pytest run of graphify's sdist test files inside the
reference venv. Before the test modules are imported it replaces, on graphify's own
modules, every entry point those tests drive with kgservice's counterpart:

- the CLI: ``graphify.__main__.main`` -> ``kgservice.graphify.dropin.graphify_main`` (in
  process, same argv / capsys / SystemExit contract), and subprocesses started as
  ``[python, "-m", "graphify", <one of our commands>, ...]`` -> our ``python -m graphify``
  (project python, project on PYTHONPATH); ``update`` / ``extract`` subprocesses, which build
  a test's graph, stay graphify's;
- the library functions the command tests call (query text, path text, node resolution,
  save-result, reflect's aggregation / rendering / sidecar, the query log, affected's seed /
  walk / text, god_nodes), through thin wrappers that map argument names and convert
  networkx graphs with ``node_link_data``.

Each replacement counts a hit for the running test; the hits per test id are written to
``$KG_REPOINT_HITS`` so the caller can tell re-pointed tests from tests of graphify
internals that nothing here reaches. Environment: ``KG_OUR_PYTHON`` (the project's
python), ``KG_OUR_ROOT`` (the checkout); ``kgservice`` must be importable (a directory
holding only a ``kgservice`` link is put on PYTHONPATH, so ``import graphify`` stays
graphify's).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_HITS: dict[str, int] = {}
_CURRENT = {"id": None}


def _hit() -> None:
    tid = _CURRENT["id"]
    if tid is not None:
        _HITS[tid] = _HITS.get(tid, 0) + 1


# --- subprocesses: `python -m graphify` -> ours ------------------------------------------------

_REAL_POPEN = subprocess.Popen


def _ours(cmd: str | None) -> bool:
    """A command line our drop-in answers; graph building (``update``, ``extract``, ...), which the
    tests use to make their fixtures, stays graphify's own."""
    from kgservice.graphify.dropin import COMMANDS

    return cmd is None or cmd.startswith("-") or cmd in COMMANDS or cmd in ("god_nodes", "version")


class _Popen(_REAL_POPEN):  # type: ignore[misc,valid-type]
    def __init__(self, args, *a, **kw):
        if (isinstance(args, (list, tuple)) and len(args) >= 3 and list(args[1:3]) == ["-m", "graphify"]
                and os.path.basename(str(args[0])).startswith("python")
                and _ours(str(args[3]) if len(args) > 3 else None)):
            _hit()
            env = dict(kw.get("env") if kw.get("env") is not None else os.environ)
            env["PYTHONPATH"] = os.environ["KG_OUR_ROOT"]
            kw["env"] = env
            args = [os.environ["KG_OUR_PYTHON"], "-m", "graphify", *args[3:]]
        super().__init__(args, *a, **kw)


# --- library wrappers ------------------------------------------------------------------------------


def _to_ours(G, graph_path=None):
    from networkx.readwrite import json_graph

    from kgservice.graphify.loader import graph_from_data

    try:
        data = json_graph.node_link_data(G, edges="links")
    except TypeError:
        data = json_graph.node_link_data(G)
    return graph_from_data(data, Path(graph_path) if graph_path else Path("graph.json"))


def _query_graph_text(G, question, *, mode="bfs", depth=3, token_budget=2000, context_filters=None,
                      graph_path=None, seeds=None, seed_root=None):
    _hit()
    from kgservice.graphify.query import run_query

    g = _to_ours(G, graph_path)
    res = run_query(g, question, mode=mode, budget=token_budget, contexts=context_filters, seeds=seeds,
                    graph_path=Path(graph_path) if graph_path else None, seed_root=seed_root, depth=depth,
                    learning=bool(G.graph.get("_learning_overlay")))
    return res.text


def _shortest_path_text(G, arguments):
    _hit()
    from kgservice.graphify.path import run_path

    res = run_path(_to_ours(G), arguments["source"], arguments["target"], as_graphify=True,
                   undirected=bool(arguments.get("undirected", False)))
    return res.stdout or res.stderr


def _resolve_single_node(G, label):
    _hit()
    from kgservice.graphify.scoring import resolve_single_node

    return resolve_single_node(_to_ours(G), label)


def _display_graph_path(path):
    _hit()
    from kgservice.graphify.query import display_path

    return display_path(path)


def _save_query_result(question, answer, memory_dir, query_type="query", source_nodes=None, outcome=None,
                       correction=None):
    _hit()
    from kgservice.graphify.memory import save_result

    return save_result(question, answer, Path(memory_dir), query_type=query_type, nodes=source_nodes,
                       outcome=outcome, correction=correction)


def _reflect_wrappers():
    from kgservice.graphify import memory, reflect

    def parse_memory_doc(text):
        _hit()
        return memory.parse_memory_doc(text)

    def load_memory_docs(memory_dir):
        _hit()
        return memory.load_memory_docs(Path(memory_dir))

    def aggregate_lessons(docs, node_community=None, *, now=None, half_life_days=30.0, min_corroboration=2,
                          known_nodes=None):
        _hit()
        return reflect.aggregate(docs, node_community, now=now, half_life_days=half_life_days,
                                 min_corroboration=min_corroboration, known=known_nodes)

    def render_lessons_md(agg):
        _hit()
        return reflect.render_lessons(agg)

    def lessons_fresh(out_path, memory_dir, graph_path=None, analysis_path=None, labels_path=None):
        _hit()
        return reflect.lessons_fresh(Path(out_path), Path(memory_dir), [graph_path, analysis_path, labels_path])

    def reflect_(memory_dir, out_path, graph_path=None, analysis_path=None, labels_path=None, *, now=None,
                 half_life_days=30.0, min_corroboration=2):
        _hit()
        return reflect.reflect(Path(memory_dir), Path(out_path), graph_path, analysis_path, labels_path, now=now,
                               half_life_days=half_life_days, min_corroboration=min_corroboration)

    def build_learning_overlay(agg, graph_path, *, now=None):
        _hit()
        return reflect.build_overlay(agg, Path(graph_path), now=now)

    def write_learning_sidecar(agg, graph_path, *, now=None):
        _hit()
        return reflect.write_sidecar(agg, Path(graph_path), now=now)

    def load_learning_overlay(graph_path):
        _hit()
        return reflect.load_learning_overlay(Path(graph_path))

    return {"parse_memory_doc": parse_memory_doc, "load_memory_docs": load_memory_docs,
            "aggregate_lessons": aggregate_lessons, "render_lessons_md": render_lessons_md,
            "lessons_fresh": lessons_fresh, "reflect": reflect_, "build_learning_overlay": build_learning_overlay,
            "write_learning_sidecar": write_learning_sidecar, "load_learning_overlay": load_learning_overlay}


def _impact_wrappers():
    """``graphify.affected`` (seed, walk, text) and ``graphify.analyze.god_nodes`` -> ours; hits come
    back as graphify's own ``AffectedHit`` records."""
    import graphify.affected as gaff

    from kgservice.graphify import affected, gods, seeds

    def resolve_seed(graph, query, root=None):
        _hit()
        return seeds.resolve_seed(_to_ours(graph), query, Path(root) if root is not None else None)

    def affected_nodes(graph, seed, *, relations=affected.DEFAULT_RELATIONS, depth=2):
        _hit()
        hits = affected.affected_nodes(_to_ours(graph), seed, tuple(relations), depth)
        return [gaff.AffectedHit(h.node, h.depth, h.relation, h.site_file, h.site_line) for h in hits]

    def format_affected(graph, query, *, relations=affected.DEFAULT_RELATIONS, depth=2, root=None):
        _hit()
        return affected.run_affected(_to_ours(graph), query, tuple(relations), depth,
                                     Path(root) if root is not None else None)[1]

    def god_nodes(G, top_n=10, exclude_hubs_percentile=None):
        _hit()
        return gods.god_nodes(_to_ours(G), top_n, exclude_hubs_percentile, multigraph=G.is_multigraph())

    return {"resolve_seed": resolve_seed, "affected_nodes": affected_nodes, "format_affected": format_affected}, \
        {"god_nodes": god_nodes}


def _querylog_wrappers():
    from kgservice.graphify import effects

    def log_query(**kw):
        _hit()
        return effects.log_query(**kw)

    def nodes_from_result(result):
        _hit()
        return effects.nodes_from_result(result)

    def _log_path():
        _hit()
        return effects.query_log_path()

    return {"log_query": log_query, "nodes_from_result": nodes_from_result, "_log_path": _log_path}


def _graphify_main():
    """graphify's CLI tests lower the size cap through its module constant; ours is the
    public GRAPHIFY_MAX_GRAPH_BYTES knob, so a patched constant is passed on that way."""
    _hit()
    import graphify.security

    from kgservice.graphify.dropin import graphify_main
    from kgservice.graphify.effects import DEFAULT_MAX_GRAPH_BYTES

    cap = graphify.security._MAX_GRAPH_FILE_BYTES
    if cap == DEFAULT_MAX_GRAPH_BYTES or "GRAPHIFY_MAX_GRAPH_BYTES" in os.environ:
        graphify_main()
        return
    os.environ["GRAPHIFY_MAX_GRAPH_BYTES"] = str(cap)
    try:
        graphify_main()
    finally:
        del os.environ["GRAPHIFY_MAX_GRAPH_BYTES"]


def pytest_configure(config):
    import graphify.__main__ as mainmod
    import graphify.ingest
    import graphify.querylog
    import graphify.reflect
    import graphify.serve

    subprocess.Popen = _Popen  # type: ignore[misc]
    mainmod.main = _graphify_main
    graphify.serve._query_graph_text = _query_graph_text
    graphify.serve._shortest_path_text = _shortest_path_text
    graphify.serve._resolve_single_node = _resolve_single_node
    graphify.serve._display_graph_path = _display_graph_path
    graphify.ingest.save_query_result = _save_query_result
    for name, fn in _reflect_wrappers().items():
        setattr(graphify.reflect, name, fn)
    for name, fn in _querylog_wrappers().items():
        setattr(graphify.querylog, name, fn)
    import graphify.affected
    import graphify.analyze

    aff, analyze = _impact_wrappers()
    for name, fn in aff.items():
        setattr(graphify.affected, name, fn)
    for name, fn in analyze.items():
        setattr(graphify.analyze, name, fn)


def pytest_runtest_setup(item):
    _CURRENT["id"] = item.nodeid
    _HITS.setdefault(item.nodeid, 0)


def pytest_runtest_teardown(item):
    _CURRENT["id"] = None


def pytest_sessionfinish(session):
    out = os.environ.get("KG_REPOINT_HITS")
    if out:
        Path(out).write_text(json.dumps(_HITS, indent=1, sort_keys=True), encoding="utf-8")


__all__ = ["pytest_configure", "sys"]

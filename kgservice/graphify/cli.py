"""The graphify-compatible commands as ``kg`` commands (Typer, kgservice's defaults).

``register(app)`` adds ``query``, ``path``, ``explain``, ``save-result``, ``reflect``,
``affected`` and ``god-nodes`` to the ``kg`` app. ``kg query`` keeps kgservice's richer
defaults (vocabulary expansion, BFS depth 3 / DFS 6, relevance order, ``learning=`` suffix);
``kg explain`` adds ``Same as:`` and joins parallel relations; ``kg affected`` lists the
candidates of a name it cannot pin down (exit 3) or says none matched (exit 4) where graphify
answers ``No unique node match`` with exit 0. The ``graphify`` console script is graphify's
own command line and output (dropin.py). Exit codes: 0 answered, 1 bad graph file / I/O,
2 usage, 3 ambiguous name, 4 no matching node.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, List, Optional

import typer

from kgservice.graphify import EXIT_AMBIGUOUS, EXIT_ERROR, EXIT_USAGE

QUERY_HELP = "Answer a question from graph.json: vocabulary expansion, seeds, BFS (or --dfs) traversal."
PATH_HELP = "Shortest path between two nodes of graph.json (directed unless --undirected)."
EXPLAIN_HELP = "One node of graph.json: what it is, its neighbours, and learned lessons."
SAVE_HELP = "Save a Q&A result (with an optional outcome) under the memory dir, for reflect and re-ingest."
GRAPH_HELP = "graph.json to read (default graphify-out/graph.json)."
MEMORY_HELP = "Memory directory (default graphify-out/memory)."
REFLECT_HELP = "Aggregate saved outcomes into a deterministic LESSONS.md (and the learning sidecar)."
AFFECTED_HELP = "What depends on a node: graph.json's links walked backwards (callers, importers, subclasses...)."
GODS_HELP = "The most connected real entities of graph.json (files, concepts and builtin names left out)."


def _out(text: str, err: bool = False) -> None:
    if not text:
        return
    stream = sys.stderr if err else sys.stdout
    stream.write(text if text.endswith("\n") else text + "\n")


def _fail(message: str, code: int = EXIT_ERROR) -> "typer.Exit":
    _out(f"error: {message}", err=True)
    return typer.Exit(code)


def _refuse_read_only(what: str) -> None:
    """KG_READ_ONLY covers these file writes too (a saved result is re-ingested by the next export)."""
    import click

    from kgservice.config import ConfigError, env_read_only

    ctx = click.get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    try:
        ro = obj["settings"].read_only if isinstance(obj, dict) and "settings" in obj else env_read_only()
    except ConfigError as exc:
        raise _fail(str(exc), EXIT_USAGE) from None
    if ro:
        raise _fail(f"this kgservice is configured read-only (KG_READ_ONLY); {what} refused")


def _out_dir() -> Path:
    """``graphify-out`` or ``$GRAPHIFY_OUT``; graphify's warning when the variable names the
    project or a parent of it (and so is not used)."""
    from kgservice.graphify.loader import default_out_dir, out_dir_warning

    _out(out_dir_warning() or "", err=True)
    return default_out_dir()


def _load(graph: Optional[Path]):
    from kgservice.graphify.loader import GraphLoadError, load_graph

    gp = Path(graph) if graph is not None else _out_dir() / "graph.json"
    if not gp.exists():
        raise _fail(f"graph file not found: {gp.resolve()}")
    if gp.suffix != ".json":
        raise _fail("graph file must be a .json file")
    try:
        return load_graph(gp)
    except GraphLoadError as exc:
        raise _fail(str(exc)) from None


def _budget(value: str) -> int:
    try:
        n = int(str(value).strip())
    except ValueError:
        n = 0
    if n <= 0:
        raise _fail(f"--budget must be a positive integer (tokens, ~4 characters each), got {value!r}", EXIT_USAGE)
    return n


def query_cmd(
    question: Annotated[str, typer.Argument(help="The question (free text, any language).")],
    dfs: Annotated[bool, typer.Option("--dfs", help="Depth-first (6 hops) instead of breadth-first (3 hops).")] = False,
    budget: Annotated[str, typer.Option(
        "--budget", help="Cap the answer at about N tokens (4 characters each).")] = "2000",
    context: Annotated[Optional[List[str]], typer.Option(
        "--context", help="Only edges of this context / kind / relation (repeatable).")] = None,
    seed: Annotated[Optional[List[str]], typer.Option(
        "--seed", help="Start at this node (id, label or file; repeatable) instead of keyword seeds.")] = None,
    graph: Annotated[Optional[Path], typer.Option("--graph", help=GRAPH_HELP)] = None,
    no_expand: Annotated[bool, typer.Option(
        "--no-expand", help="Skip vocabulary expansion: seed on the question as graphify's CLI does.")] = False,
    llm_model: Annotated[Optional[str], typer.Option(
        "--llm-model", help="Let this LLM choose the expansion tokens (still only graph vocabulary).")] = None,
) -> None:
    n = _budget(budget)
    if seed is not None and any(not s for s in seed):
        raise _fail("--seed needs a value (node id, label or file path)", EXIT_USAGE)
    g = _load(graph)
    from kgservice.graphify.query import kg_query

    res = kg_query(g, question, dfs=dfs, budget=n, contexts=context, seeds=seed, expand=not no_expand,
                   llm_model=llm_model)
    _out("\n".join(res.notes), err=True)
    _out(res.text)
    raise typer.Exit(res.exit_code)


def path_cmd(
    source: Annotated[str, typer.Argument(help="Start node (label, id, file or path::symbol).")],
    target: Annotated[str, typer.Argument(help="End node.")],
    graph: Annotated[Optional[Path], typer.Option("--graph", help=GRAPH_HELP)] = None,
    undirected: Annotated[bool, typer.Option("--undirected", help="Ignore edge direction.")] = False,
    directed: Annotated[bool, typer.Option("--directed", help="Follow edge direction (the default).")] = False,
    skip_values: Annotated[bool, typer.Option("--skip-values", help="Walk no modifier link and no literal value "
                                              "(such as 'high') between the ends (not in graphify).")] = False,
) -> None:
    if directed and undirected:
        raise _fail("--directed and --undirected are mutually exclusive")
    g = _load(graph)
    from kgservice.graphify.path import run_path

    res = run_path(g, source, target, undirected=undirected, through_values=not skip_values)
    _out(res.stderr, err=True)
    _out(res.stdout)
    raise typer.Exit(res.exit_code)


def explain_cmd(
    node: Annotated[str, typer.Argument(help="Node label, id, file or path::symbol.")],
    all_: Annotated[bool, typer.Option(
        "--all", help="List every connection (default: the 20 most connected).")] = False,
    graph: Annotated[Optional[Path], typer.Option("--graph", help=GRAPH_HELP)] = None,
) -> None:
    g = _load(graph)
    from kgservice.graphify.explain import kg_explain

    res = kg_explain(g, node, show_all=all_)
    _out(res.text)
    raise typer.Exit(res.exit_code)


def save_result_cmd(
    ctx: typer.Context,
    question: Annotated[str, typer.Option("--question", help="The question asked.")],
    answer: Annotated[Optional[str], typer.Option("--answer", help="The answer to save.")] = None,
    answer_file: Annotated[Optional[Path], typer.Option(
        "--answer-file", help="Read the answer from this file.")] = None,
    type_: Annotated[str, typer.Option("--type", help="query | path_query | explain.")] = "query",
    nodes: Annotated[Optional[List[str]], typer.Option("--nodes", help="Cited node labels: --nodes A B C.")] = None,
    outcome: Annotated[Optional[str], typer.Option("--outcome", help="useful | dead_end | corrected.")] = None,
    correction: Annotated[Optional[str], typer.Option(
        "--correction", help="What the right answer was (with --outcome corrected).")] = None,
    memory_dir: Annotated[Optional[Path], typer.Option("--memory-dir", help=MEMORY_HELP)] = None,
) -> None:
    from kgservice.graphify.memory import OUTCOMES, save_result

    _refuse_read_only("save-result")
    cited = list(nodes or [])
    if ctx.args:
        if nodes is None:
            raise _fail(f"unexpected arguments: {' '.join(ctx.args)}", EXIT_USAGE)
        cited += list(ctx.args)  # `--nodes A B C`: click hands B and C over as extra args
    if outcome is not None and outcome not in OUTCOMES:
        raise _fail(f"--outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}", EXIT_USAGE)
    if answer_file is not None:
        try:
            answer = Path(answer_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise _fail(f"could not read --answer-file: {exc}") from None
    elif not answer:
        raise _fail("--answer or --answer-file is required", EXIT_USAGE)
    path = save_result(question, answer or "", memory_dir or _out_dir() / "memory", query_type=type_,
                       nodes=cited or None, outcome=outcome, correction=correction)
    _out(f"Saved to {path}")


def reflect_cmd(
    memory_dir: Annotated[Optional[Path], typer.Option("--memory-dir", help=MEMORY_HELP)] = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", help="Output (default graphify-out/reflections/LESSONS.md).")] = None,
    graph: Annotated[Optional[Path], typer.Option(
        "--graph", help="graph.json, for community grouping and dropping gone nodes "
                        "(default: graphify-out/graph.json when present).")] = None,
    analysis: Annotated[Optional[Path], typer.Option(
        "--analysis", help=".graphify_analysis.json (default: next to --graph).")] = None,
    labels: Annotated[Optional[Path], typer.Option(
        "--labels", help=".graphify_labels.json (default: next to --graph).")] = None,
    half_life_days: Annotated[float, typer.Option(
        "--half-life-days", help="A signal's weight halves every N days.")] = 30.0,
    min_corroboration: Annotated[int, typer.Option(
        "--min-corroboration", help="Distinct useful results needed to prefer a node.")] = 2,
    if_stale: Annotated[bool, typer.Option(
        "--if-stale", help="Skip when LESSONS.md is already newer than every input.")] = False,
) -> None:
    from kgservice.graphify.reflect import lessons_fresh, reflect

    _refuse_read_only("reflect")
    if memory_dir is None or out is None or graph is None:  # a default from the output dir
        base = _out_dir()
        memory_dir = memory_dir or base / "memory"
        out = out or base / "reflections" / "LESSONS.md"
        if graph is None and (base / "graph.json").exists():
            graph = base / "graph.json"
    analysis_path = labels_path = None
    if graph is not None:
        analysis_path = analysis or graph.parent / ".graphify_analysis.json"
        labels_path = labels or graph.parent / ".graphify_labels.json"
    if if_stale and lessons_fresh(out, memory_dir, [graph, analysis_path, labels_path]):
        _out(f"Lessons already up to date -> {out} (skipped; omit --if-stale to force)")
        return
    out_path, agg = reflect(memory_dir, out, graph, analysis_path, labels_path,
                            half_life_days=half_life_days, min_corroboration=min_corroboration,
                            topics_from_graph=True, links_fallback=True)
    c = agg["counts"]
    _out(f"Reflected {agg['total']} memories ({c['useful']} useful, {c['dead_end']} dead ends, "
         f"{c['corrected']} corrected) -> {out_path}")


def affected_cmd(
    node: Annotated[str, typer.Argument(help="Node id, label, bare name or source file.")],
    relation: Annotated[Optional[List[str]], typer.Option(
        "--relation", help="Follow only links of this relation backwards (repeatable; default: calls, "
                           "imports, inheritance, uses, defines, ...).")] = None,
    depth: Annotated[int, typer.Option("--depth", min=1, help="Hops to walk back.")] = 2,
    graph: Annotated[Optional[Path], typer.Option("--graph", help=GRAPH_HELP)] = None,
) -> None:
    from kgservice.graphify import EXIT_NOT_FOUND
    from kgservice.graphify.affected import DEFAULT_RELATIONS, affected_nodes, no_match, render_affected
    from kgservice.graphify.query import graph_root
    from kgservice.graphify.scoring import is_ambiguity, resolve_single_node
    from kgservice.graphify.seeds import resolve_seed

    g = _load(graph)
    relations = tuple(relation or ()) or DEFAULT_RELATIONS
    seed = resolve_seed(g, node, graph_root(g.path))
    if seed is None:  # graphify's rules found no single node: say why, with the candidates
        seed, refusal = resolve_single_node(g, node)
        if seed is None:
            _out(refusal or no_match(node))
            raise typer.Exit(EXIT_AMBIGUOUS if is_ambiguity(refusal) else EXIT_NOT_FOUND)
    _out(render_affected(g, seed, affected_nodes(g, seed, relations, depth), relations, depth))


def god_nodes_cmd(
    top: Annotated[int, typer.Option("--top", min=1, help="How many to list.")] = 10,
    exclude_hubs: Annotated[Optional[float], typer.Option(
        "--exclude-hubs", min=0, max=100, help="Skip nodes whose degree is above this percentile (0-100).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="A JSON list of {id, label, degree}.")] = False,
    graph: Annotated[Optional[Path], typer.Option("--graph", help=GRAPH_HELP)] = None,
) -> None:
    from kgservice.graphify.gods import god_nodes, render_json, render_text

    gods = god_nodes(_load(graph), top, exclude_hubs)
    _out(render_json(gods) if as_json else render_text(gods))


def register(app: typer.Typer) -> None:
    """Add the commands to ``app`` (the ``kg`` app, or the standalone ``graphify`` one)."""
    app.command("query", help=QUERY_HELP)(query_cmd)
    app.command("path", help=PATH_HELP)(path_cmd)
    app.command("explain", help=EXPLAIN_HELP)(explain_cmd)
    app.command("save-result", help=SAVE_HELP,
                context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(save_result_cmd)
    app.command("reflect", help=REFLECT_HELP)(reflect_cmd)
    app.command("affected", help=AFFECTED_HELP)(affected_cmd)
    app.command("god-nodes", help=GODS_HELP)(god_nodes_cmd)


def build_app() -> typer.Typer:
    """The commands as a Typer app with ``kg``'s richer defaults (tests and ``kg`` use it)."""
    app = typer.Typer(name="kg-graphify", help="graphify-compatible query / path / explain / save-result / "
                      "reflect / affected / god-nodes over graphify-out/graph.json, with kgservice's defaults.",
                      no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)
    register(app)
    return app


def main() -> None:
    """The ``graphify`` drop-in (graphify's own command line and output): see dropin.py."""
    from kgservice.graphify.dropin import main as dropin_main

    dropin_main()


if __name__ == "__main__":
    main()

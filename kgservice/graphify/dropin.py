"""The ``graphify`` console script and ``python -m graphify``: graphify 0.9.96's CLI, served by kgservice.

A user or agent skill that calls ``graphify query|path|explain|save-result|reflect|
affected|god-nodes`` sees graphify's output, exit codes, files and environment variables.
The command line is parsed the way graphify parses it (by hand for query / path / explain /
affected / god-nodes: unknown flags are ignored, usage errors exit 1 with one line; argparse
for save-result / reflect), not by Typer, which ``kg`` uses.

Extras that graphify would ignore (so they never change a graphify command line's
answer): ``query --expand`` (vocabulary expansion line and seeds), ``--llm-model M``
(the expansion chooser), ``--learning`` (the MCP ``learning=`` suffix). Deliberate
differences from graphify are listed in docs/graphify.md.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from kgservice.graphify import EXIT_AMBIGUOUS, EXIT_ERROR, EXIT_NOT_FOUND, EXIT_OK

GRAPHIFY_VERSION = "0.9.96"
COMMANDS = ("query", "path", "explain", "save-result", "reflect", "affected", "god-nodes")
_FREE_TEXT = {"query", "explain", "path", "save-result", "install", "uninstall"}
_HELP_FLAGS = {"-h", "--help", "-?"}

QUERY_USAGE = 'Usage: graphify query "<question>" [--dfs] [--context C] [--seed X] [--budget N] [--graph path]'
PATH_USAGE = 'Usage: graphify path "<source>" "<target>" [--graph path] [--directed|--undirected]'
EXPLAIN_USAGE = 'Usage: graphify explain "<node>" [--all] [--graph path]'
AFFECTED_USAGE = 'Usage: graphify affected "<node-or-label>" [--relation R] [--depth N] [--graph path]'

HELP = """Usage: graphify <command>

Commands (graphify 0.9.96's read, impact and memory commands, served by kgservice):
  query "<question>"       BFS traversal of graph.json for a question
    --dfs                   use depth-first instead of breadth-first
    --context C             explicit edge-context filter (repeatable)
    --seed X                start at node X (id, label or file path; repeatable)
                            instead of the question's keyword matches
    --budget N              cap output at N tokens (default 2000)
    --graph <path>          path to graph.json (default graphify-out/graph.json)
    --expand                kgservice: expand the question with the graph's own vocabulary first
    --llm-model M           kgservice: let this LLM pick the expansion tokens (implies --expand)
    --learning              kgservice: show reflect's learning= status on NODE lines
  path "A" "B"            shortest path between two nodes in graph.json
    --graph <path>          path to graph.json (default graphify-out/graph.json)
    --directed|--undirected follow edge direction (default) or ignore it
  explain "X"             plain-language explanation of a node and its neighbors
    --all                   list every connection (default: the 20 most connected)
    --graph <path>          path to graph.json (default graphify-out/graph.json)
  query, path and explain exit 0 with an answer, 3 when a name is ambiguous
  (the candidates are listed), 4 when no node matches
  affected "X"             reverse traversal to find nodes impacted by X
    --relation R            edge relation to traverse in reverse (repeatable)
    --depth N               reverse traversal depth (default 2)
    --graph <path>          path to graph.json (default graphify-out/graph.json)
  god-nodes               list the most connected nodes (architectural hubs)
    --top N                 how many to show (default 10)
    --exclude-hubs P        skip nodes whose degree is above this percentile (0-100)
    --graph <path>          path to graph.json (default graphify-out/graph.json)
    --json                  emit JSON instead of text
  save-result             save a Q&A result to graphify-out/memory/ for graph feedback loop
    --question Q            the question asked
    --answer A              the answer to save (or --answer-file F)
    --type T                query type: query|path_query|explain (default: query)
    --nodes N1 N2 ...       source node labels cited in the answer
    --outcome O             work-memory signal: useful|dead_end|corrected
    --correction TEXT       what the right answer was (pairs with --outcome corrected)
    --memory-dir DIR        memory directory (default: graphify-out/memory)
  reflect                 aggregate graphify-out/memory/ outcomes into a deterministic lessons doc
    --memory-dir DIR        memory directory (default: graphify-out/memory)
    --out FILE              output path (default: graphify-out/reflections/LESSONS.md)
    --graph PATH            graph.json, for community grouping + dropping stale nodes (optional)
    --analysis PATH         .graphify_analysis.json (optional, auto-detected next to --graph)
    --labels PATH           .graphify_labels.json (optional, auto-detected next to --graph)
    --half-life-days N      signal weight halves every N days (default 30)
    --min-corroboration N   distinct useful results to prefer a node (default 2)
    --if-stale              skip when LESSONS.md is already newer than every input
  -v, --version           print the graphify CLI version reproduced

Building graphs (extract, update, ...) is kgservice's `kg ingest` / `kg export`.
"""


class Exit(Exception):
    """Stop with this exit code (after whatever was printed). ``explicit``: graphify's
    ``main()`` raises ``SystemExit`` here even for 0 (``path`` with no route)."""

    def __init__(self, code: int, explicit: bool = False):
        super().__init__(code)
        self.code = code
        self.explicit = explicit


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")


def _fail(text: str, code: int = EXIT_ERROR) -> Exit:
    _err(text)
    return Exit(code)


def _graph_default() -> str:
    from kgservice.graphify.loader import default_graph_path

    return str(default_graph_path())


def _load(gp: Path, *, json_only: bool):
    """graphify's checks in its order: exists, (.json for query), size cap; then parse."""
    from kgservice.graphify.effects import GraphTooLarge, check_size_cap
    from kgservice.graphify.loader import GraphLoadError, load_graph

    if not gp.exists():
        raise _fail(f"error: graph file not found: {gp}")
    if json_only and gp.suffix != ".json":
        raise _fail("error: graph file must be a .json file")
    try:
        check_size_cap(gp)
    except GraphTooLarge as exc:
        raise _fail(f"error: {exc}") from None
    try:
        return load_graph(gp)
    except GraphLoadError as exc:
        raise _fail(f"error: could not load graph: {exc}") from None


# --- query ------------------------------------------------------------------------------------


def cmd_query(argv: list[str]) -> int:
    if len(argv) < 3:
        raise _fail(QUERY_USAGE)
    question = argv[2]
    use_dfs = "--dfs" in argv
    budget = 2000
    graph_path = _graph_default()
    contexts: list[str] = []
    seeds: list[str] = []
    expand = learning = False
    llm_model: str | None = None
    args = argv[3:]
    i = 0
    while i < len(args):
        a = args[i]
        has_next = i + 1 < len(args)
        if a == "--budget" and has_next:
            try:
                budget = int(args[i + 1])
            except ValueError:
                raise _fail("error: --budget must be an integer") from None
            i += 2
        elif a.startswith("--budget="):
            try:
                budget = int(a.split("=", 1)[1])
            except ValueError:
                raise _fail("error: --budget must be an integer") from None
            i += 1
        elif a == "--context" and has_next:
            contexts.append(args[i + 1])
            i += 2
        elif a.startswith("--context="):
            contexts.append(a.split("=", 1)[1])
            i += 1
        elif a == "--seed" and has_next:
            seeds.append(args[i + 1])
            i += 2
        elif a.startswith("--seed=") and a.split("=", 1)[1]:
            seeds.append(a.split("=", 1)[1])
            i += 1
        elif a in ("--seed", "--seed="):
            raise _fail("error: --seed needs a value (node id, label or file path)")
        elif a == "--graph" and has_next:
            graph_path = args[i + 1]
            i += 2
        elif a == "--expand":
            expand = True
            i += 1
        elif a == "--learning":
            learning = True
            i += 1
        elif a == "--llm-model" and has_next:
            llm_model = args[i + 1]
            expand = True
            i += 2
        else:
            i += 1
    gp = Path(graph_path).resolve()
    g = _load(gp, json_only=True)
    from kgservice.graphify.effects import log_query, touch_query_stamp
    from kgservice.graphify.query import graph_root, run_query

    t0 = time.perf_counter()
    mode = "dfs" if use_dfs else "bfs"
    res = run_query(g, question, mode=mode, budget=budget, contexts=contexts or None, seeds=seeds or None,
                    expand=expand, llm_model=llm_model, learning=learning, graph_path=gp, seed_root=graph_root(gp))
    log_query(kind="query", question=question, corpus=str(gp), result=res.text, mode=mode, depth=2,
              token_budget=budget, duration_ms=(time.perf_counter() - t0) * 1000, seeds=seeds or None)
    touch_query_stamp(gp)
    for note in res.notes:
        _err(note)
    _print(res.text)
    return res.exit_code


# --- path -------------------------------------------------------------------------------------


def cmd_path(argv: list[str]) -> int:
    if len(argv) < 4:
        raise _fail(PATH_USAGE)
    source, target = argv[2], argv[3]
    graph_path = _graph_default()
    args = argv[4:]
    direction = None
    for i, a in enumerate(args):
        if a == "--graph" and i + 1 < len(args):
            graph_path = args[i + 1]
        elif a in ("--directed", "--undirected"):
            want = a[2:]
            if direction is not None and direction != want:
                raise _fail("error: --directed and --undirected are mutually exclusive")
            direction = want
    gp = Path(graph_path).resolve()
    g = _load(gp, json_only=False)
    from kgservice.graphify.path import run_path

    res = run_path(g, source, target, undirected=direction == "undirected", as_graphify=True)
    if res.stderr:
        _err(res.stderr)
    if res.stdout:
        _print(res.stdout)
    if res.nodes:
        from kgservice.graphify.effects import log_query, touch_query_stamp

        log_query(kind="path", question=f"{source} -> {target}", corpus=str(gp), nodes_returned=len(res.nodes) - 1)
        touch_query_stamp(gp)
    elif res.exit_code == EXIT_OK:
        raise Exit(EXIT_OK, explicit=True)  # no route: an answer, reported with an explicit exit
    return res.exit_code


# --- explain ----------------------------------------------------------------------------------


def cmd_explain(argv: list[str]) -> int:
    if len(argv) < 3:
        raise _fail(EXPLAIN_USAGE)
    label = argv[2]
    args = argv[3:]
    show_all = "--all" in args
    graph_path = _graph_default()
    for i, a in enumerate(args):
        if a == "--graph" and i + 1 < len(args):
            graph_path = args[i + 1]
    gp = Path(graph_path).resolve()
    g = _load(gp, json_only=False)
    from kgservice.graphify.explain import run_explain

    res = run_explain(g, label, show_all=show_all)
    _print(res.text)
    if res.exit_code == EXIT_OK:
        from kgservice.graphify.effects import log_query, touch_query_stamp

        log_query(kind="explain", question=label, corpus=str(gp), nodes_returned=len(res.connections or []))
        touch_query_stamp(gp)
    return res.exit_code


# --- affected / god-nodes ----------------------------------------------------------------------


def _load_unguarded(gp: Path):
    """How graphify reads the graph for affected / god-nodes: exists, .json, then parse; no
    size cap. A file that is not JSON is its ``Cannot read graph file …`` message."""
    import json

    from kgservice.graphify.loader import GraphLoadError, graph_from_data

    if not gp.exists():
        raise _fail(f"error: graph file not found: {gp}")
    if gp.suffix != ".json":
        raise _fail("error: graph file must be a .json file")
    try:
        data = json.loads(gp.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, OSError) as exc:
        raise _fail(f"error: could not load graph: Cannot read graph file {gp}: {exc}. "
                    "Re-run 'graphify extract' to regenerate it.") from None
    except ValueError as exc:  # not UTF-8
        raise _fail(f"error: could not load graph: {exc}") from None
    try:
        return graph_from_data(data, gp)
    except GraphLoadError as exc:
        raise _fail(f"error: could not load graph: {exc}") from None


def _flag(args: list[str], i: int, name: str) -> tuple[str, int] | None:
    """``--name V`` or ``--name=V`` at ``args[i]`` -> (V, index after it); None when it is
    neither (graphify skips a ``--name`` with nothing after it like any unknown word)."""
    a = args[i]
    if a == f"--{name}" and i + 1 < len(args):
        return args[i + 1], i + 2
    if a.startswith(f"--{name}="):
        return a.split("=", 1)[1], i + 1
    return None


def _scan(args: list[str], names: tuple[str, ...]) -> list[tuple[str, str]]:
    """The ``--name V`` / ``--name=V`` pairs among ``args`` for these names, in order; any other
    word is skipped, as graphify's hand-written parsing does."""
    found: list[tuple[str, str]] = []
    i = 0
    while i < len(args):
        for name in names:
            got = _flag(args, i, name)
            if got is not None:
                found.append((name, got[0]))
                i = got[1]
                break
        else:
            i += 1
    return found


def _number(name: str, raw: str, kind=int, what: str = "an integer"):
    try:
        return kind(raw)
    except ValueError:
        raise _fail(f"error: --{name} must be {what}") from None


def cmd_affected(argv: list[str]) -> int:
    if len(argv) < 3:
        raise _fail(AFFECTED_USAGE)
    from kgservice.graphify.affected import DEFAULT_RELATIONS, run_affected
    from kgservice.graphify.query import graph_root

    query = argv[2]
    graph_path, depth, relations = _graph_default(), 2, []
    for name, value in _scan(argv[3:], ("graph", "depth", "relation")):
        if name == "graph":
            graph_path = value
        elif name == "depth":
            depth = _number(name, value)
        else:
            relations.append(value)
    gp = Path(graph_path).resolve()
    g = _load_unguarded(gp)
    _seed, text = run_affected(g, query, tuple(relations) or DEFAULT_RELATIONS, depth, graph_root(gp))
    _print(text)
    return EXIT_OK  # graphify: "No unique node match" is an answer too


def cmd_god_nodes(argv: list[str]) -> int:
    from kgservice.graphify.gods import god_nodes, render_json, render_text

    graph_path, top_n, hubs = _graph_default(), 10, None
    as_json = "--json" in argv
    for name, value in _scan(argv[2:], ("graph", "top", "exclude-hubs")):
        if name == "graph":
            graph_path = value
        elif name == "top":
            top_n = _number(name, value)
        else:
            hubs = _number(name, value, float, "a number (percentile 0-100)")
    gp = Path(graph_path).resolve()
    g = _load_unguarded(gp)
    gods = god_nodes(g, top_n, hubs)
    _print(render_json(gods) if as_json else render_text(gods))
    return EXIT_OK


# --- save-result / reflect (argparse, as graphify) ------------------------------------------------


def _refuse_read_only(what: str) -> None:
    """KG_READ_ONLY covers these file writes as it does in `kg` (a saved result is re-ingested
    by the next export); a value that is not a boolean is a usage error (exit 2), never writable."""
    from kgservice.config import ConfigError, env_read_only

    try:
        ro = env_read_only()
    except ConfigError as exc:
        raise _fail(f"error: {exc}", 2) from None
    if ro:
        raise _fail(f"error: this kgservice is configured read-only (KG_READ_ONLY); {what} refused")


def cmd_save_result(argv: list[str]) -> int:
    import argparse

    from kgservice.graphify.loader import default_out_dir
    from kgservice.graphify.memory import save_result

    p = argparse.ArgumentParser(prog="graphify save-result")
    p.add_argument("--question", required=True)
    p.add_argument("--answer", default=None)
    p.add_argument("--answer-file", dest="answer_file", default=None)
    p.add_argument("--type", dest="query_type", default="query")
    p.add_argument("--nodes", nargs="*", default=[])
    p.add_argument("--outcome", choices=("useful", "dead_end", "corrected"), default=None)
    p.add_argument("--correction", default=None)
    p.add_argument("--memory-dir", default=str(default_out_dir() / "memory"))
    opts = p.parse_args(argv[2:])
    _refuse_read_only("save-result")
    if opts.answer_file:
        try:
            opts.answer = Path(opts.answer_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise _fail(f"error: could not read --answer-file: {exc}") from None
    elif not opts.answer:
        p.error("--answer or --answer-file is required")
    out = save_result(opts.question, opts.answer, Path(opts.memory_dir), query_type=opts.query_type,
                      nodes=opts.nodes or None, outcome=opts.outcome, correction=opts.correction)
    _print(f"Saved to {out}")
    return EXIT_OK


def cmd_reflect(argv: list[str]) -> int:
    import argparse

    from kgservice.graphify.loader import default_out_dir
    from kgservice.graphify.reflect import lessons_fresh, reflect

    base = default_out_dir()
    p = argparse.ArgumentParser(prog="graphify reflect")
    p.add_argument("--memory-dir", default=str(base / "memory"))
    p.add_argument("--out", default=str(base / "reflections" / "LESSONS.md"))
    p.add_argument("--graph", default=None)
    p.add_argument("--analysis", default=None)
    p.add_argument("--labels", default=None)
    p.add_argument("--half-life-days", type=float, default=30.0,
                   help="signal weight halves every N days (default 30)")
    p.add_argument("--min-corroboration", type=int, default=2,
                   help="distinct useful results to promote a node to preferred (default 2)")
    p.add_argument("--if-stale", action="store_true",
                   help="skip when LESSONS.md is already newer than every input "
                        "(e.g. the git hook just refreshed it)")
    opts = p.parse_args(argv[2:])
    _refuse_read_only("reflect")
    graph_arg = opts.graph
    if graph_arg is None and (base / "graph.json").exists():
        graph_arg = str(base / "graph.json")
    gp = Path(graph_arg) if graph_arg else None
    analysis = labels = None
    if gp is not None:
        analysis = Path(opts.analysis) if opts.analysis else gp.parent / ".graphify_analysis.json"
        labels = Path(opts.labels) if opts.labels else gp.parent / ".graphify_labels.json"
    if opts.if_stale and lessons_fresh(Path(opts.out), Path(opts.memory_dir), [gp, analysis, labels]):
        _print(f"Lessons already up to date -> {opts.out} (skipped; omit --if-stale to force)")
        return EXIT_OK
    out_path, agg = reflect(Path(opts.memory_dir), Path(opts.out), gp, analysis, labels,
                            half_life_days=opts.half_life_days, min_corroboration=opts.min_corroboration)
    c = agg["counts"]
    _print(f"Reflected {agg['total']} memories ({c['useful']} useful, {c['dead_end']} dead ends, "
           f"{c['corrected']} corrected) -> {out_path}")
    return EXIT_OK


# --- dispatch ---------------------------------------------------------------------------------

_DISPATCH = {"query": cmd_query, "path": cmd_path, "explain": cmd_explain,
             "save-result": cmd_save_result, "reflect": cmd_reflect,
             "affected": cmd_affected, "god-nodes": cmd_god_nodes, "god_nodes": cmd_god_nodes}


def _print(text: str) -> None:
    try:
        sys.stdout.write(text + "\n")
    except BrokenPipeError:  # the reader is gone: finish the command (its exit code still counts)
        _silence_stdout()


def _silence_stdout() -> None:
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def run(argv: list[str]) -> int:
    """Run one graphify command line (``argv[0]`` is the program name); return the exit code."""
    return _dispatch(argv)[0]


def graphify_main() -> None:
    """In-process twin of graphify's ``graphify.__main__.main()``: reads ``sys.argv``, returns
    normally on success and raises ``SystemExit`` where graphify's does (every non-zero
    exit, and ``path`` with no route). Used to run graphify's own CLI tests against ours."""
    code, explicit = _dispatch(list(sys.argv))
    sys.stdout.flush()
    if code != EXIT_OK or explicit:
        raise SystemExit(code)


def _dispatch(argv: list[str]) -> tuple[int, bool]:
    if len(argv) >= 2 and argv[1] in ("-v", "--version", "version"):
        _print(f"graphify {GRAPHIFY_VERSION}")
        return EXIT_OK, False
    if len(argv) < 2 or argv[1] in _HELP_FLAGS:
        _print(HELP.rstrip("\n"))
        return EXIT_OK, False
    cmd = argv[1]
    if cmd not in _FREE_TEXT and any(a in _HELP_FLAGS for a in argv[2:]):
        _print("Run 'graphify --help' for full usage.")
        return EXIT_OK, False
    fn = _DISPATCH.get(cmd)
    if fn is None:
        _err(f"error: unknown command '{cmd}' (this graphify is kgservice's: {', '.join(COMMANDS)})")
        _err("Run 'graphify --help' for usage.")
        return EXIT_ERROR, True
    try:
        return fn(argv), False
    except Exit as exc:
        return exc.code, exc.explicit


def main() -> None:
    import gc

    gc.disable()  # one short-lived process over one big JSON tree: cyclic GC only costs time
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(encoding="utf-8", errors="replace")  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            pass
    from kgservice.graphify.loader import out_dir_warning

    warning = out_dir_warning()
    if warning:  # graphify prints it once per process, before any command (when its paths load)
        _err(warning)
    # A reader that closes the pipe early (`| head`) has what it wanted: not an error, and
    # the answer's own exit code is kept (graphify turns every such case into 0, an
    # ambiguity included).
    try:
        code = run(list(sys.argv))
    except SystemExit as exc:  # argparse usage errors (2) and --help (0)
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_ERROR)
    except BrokenPipeError:
        _silence_stdout()
        code = EXIT_OK
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    sys.exit(code)


__all__ = ["main", "run", "EXIT_AMBIGUOUS", "EXIT_NOT_FOUND"]

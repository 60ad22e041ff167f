"""The `kg` command: admin and query entry points over one knowledge base.

Module level imports stay light (typer, rich's console): the knowledge base, its pydantic
models and rich's tables and progress bars load inside the commands that use them, so
``kg --help`` costs little more than typer and rich."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn, Optional

import typer
from rich.markup import escape
from typer.core import TyperGroup

from kgservice.cli.common import (MAKES_WORKSPACE, SERVES, err, errors_reported, knowledge_base, out, print_json,
                                  settings_of)
from kgservice.config import load_settings
from kgservice.errors import InputError

CLOSED_PIPE = 141  # 128 + SIGPIPE: what a shell shows for a writer whose reader went away


def _end_closed_pipe() -> NoReturn:
    """The reader closed the pipe (`kg expand X | head -1`): it has what it wanted, so the run
    ends as Unix tools do, with no message and status 141; stdout points at /dev/null first, so
    the interpreter's last flush cannot fail again ("Exception ignored ... BrokenPipeError")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout (a test runner's capture): nothing to flush
        pass
    raise SystemExit(CLOSED_PIPE)


def _closed_pipe(exc: BaseException) -> bool:
    """A BrokenPipeError, or rich's own answer to one: the SystemExit(1) a rich console (ours,
    or typer's --help) raises while handling it."""
    return isinstance(exc, BrokenPipeError) or (isinstance(exc, SystemExit)
                                                and isinstance(exc.__context__, BrokenPipeError))


def _reflow(text: str) -> str:
    """A docstring as help text: each paragraph one line (typer's rich help keeps a docstring's
    hard line breaks, so a sentence broke where the source line ended); a paragraph whose lines
    are a list or an example (indented, or starting with -, *, $) keeps them."""
    paragraphs = []
    for para in text.split("\n\n"):
        lines = para.split("\n")
        if len(lines) > 1 and not any(ln[:1] in (" ", "-", "*", "$", "\b") for ln in lines[1:]):
            para = " ".join(ln.strip() for ln in lines)
        paragraphs.append(para)
    return "\n\n".join(paragraphs)


def _quiet_flag(param: Any) -> Any:
    """A flag gets no type in the help: typer's panel would show ``--json <bool>``, which reads as
    an option taking a value (``--json true`` is then an unexpected extra argument)."""
    if param is not None and getattr(param, "is_flag", False) and param.metavar is None:
        param.metavar = ""
    return param


def _quiet_help_option(get_help_option: Any) -> Any:
    """``--help`` is made per context by click, so it is quieted as it is made (:func:`_quiet_flag`)."""
    return lambda ctx: _quiet_flag(get_help_option(ctx))


def _reflow_help(group: Any) -> None:
    import inspect

    for cmd in group.commands.values():
        if cmd.help:
            cmd.help = _reflow(inspect.cleandoc(cmd.help))
        if cmd.short_help:
            cmd.short_help = _reflow(cmd.short_help)
        for param in cmd.params:
            if getattr(param, "help", None):
                param.help = _reflow(param.help)
            _quiet_flag(param)
        cmd.get_help_option = _quiet_help_option(cmd.get_help_option)
        if hasattr(cmd, "commands"):
            _reflow_help(cmd)


class _Kg(TyperGroup):
    """Typer's main (as click's) turns a BrokenPipeError into a silent exit 1 around two calls,
    parsing (where --help and --version print) and running the command; a closed pipe is ended
    inside them, before it gets there. Help texts are reflowed first (:func:`_reflow`)."""

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        if not getattr(self, "_reflowed", False):
            self._reflowed = True
            _reflow_help(self)
        try:
            return super().make_context(*args, **kwargs)
        except (BrokenPipeError, SystemExit) as exc:
            if not _closed_pipe(exc):
                raise
            _end_closed_pipe()

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (BrokenPipeError, SystemExit) as exc:
            if not _closed_pipe(exc):
                raise
            _end_closed_pipe()


app = typer.Typer(help="kgservice: a knowledge service over a cognitive graph of units.", cls=_Kg,
                  no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)



def _print_version(value: bool) -> None:
    """``kg --version``: the installed distribution's version, read from its metadata (no store opened)."""
    if not value:
        return
    from importlib.metadata import PackageNotFoundError, version

    try:
        v = version("kgservice")
    except PackageNotFoundError:
        v = "unknown (not installed as a distribution)"
    out.print(f"kgservice {v}")
    raise typer.Exit()


@app.callback()
def _main(
    ctx: typer.Context,
    data_dir: Annotated[Optional[Path], typer.Option("--data-dir", help="Embedded store + Qdrant local path (env KG_DATA_DIR, default ./.kg).")] = None,
    config: Annotated[Optional[Path], typer.Option("--config", help="TOML config file (env KG_CONFIG).")] = None,
    backend: Annotated[Optional[str], typer.Option("--backend", help="embedded | neo4j (env KG_BACKEND).")] = None,
    embedder: Annotated[Optional[str], typer.Option("--embedder", help="default | packaged:NAME | litellm:MODEL | hash:DIM (env KG_EMBEDDER).")] = None,
    workspace: Annotated[Optional[str], typer.Option("--workspace", "-w", help="The workspace to use (env KG_WORKSPACE, default 'default'): docs/workspaces.md.")] = None,
    show_version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                               help="Print the version and exit.")] = False,
) -> None:
    with errors_reported():
        settings = load_settings(config, flags={"data_dir": data_dir, "backend": backend, "embedder": embedder,
                                                  "workspace": workspace})
        if ctx.invoked_subcommand and ctx.invoked_subcommand not in MAKES_WORKSPACE:
            if ctx.invoked_subcommand in SERVES:  # they open the store later: a shared one is asked now too
                from kgservice.workspaces import missing as why_missing
            else:  # the store refuses it once opened (Parts.store); the embedded check is free, so asked here
                from kgservice.stores.factory import missing_workspace as why_missing

            if why := why_missing(settings):
                raise InputError(why)
    # whether a workspace was named (flag, KG_WORKSPACE or the config): `kg worker` serves every
    # workspace unless one was
    import os

    named = workspace is not None or bool(os.environ.get("KG_WORKSPACE")) or settings.workspace != "default"
    ctx.obj = {"settings": settings, "workspace_named": named}


@app.command()
def init(ctx: typer.Context) -> None:
    """Create the data directory and a commented config file (no secrets in it)."""
    from kgservice.service import KnowledgeBase

    kb = KnowledgeBase(settings_of(ctx))
    cfg = kb.init()
    out.print(f"initialised {kb.settings.kb_dir} (backend: {kb.settings.backend}); config template: {cfg}")


@app.command()
def ingest(
    ctx: typer.Context,
    paths: Annotated[list[Path], typer.Argument(help="Unit files (.units), text / Markdown files (.md .txt ...), documents (.pdf .docx .pptx .html .xlsx), or folders.")],
    mode: Annotated[Optional[str], typer.Option("--mode", help="Text files: summary | detail (default by file type: .md and documents summary, .txt detail).")] = None,
    llm: Annotated[Optional[str], typer.Option("--llm", help="Text files: litellm model for this run (env KG_LLM_MODEL).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Re-ingest documents whose content is unchanged (text: extract again).")] = False,
    no_embed: Annotated[bool, typer.Option("--no-embed", help="Store units only; embed later with `kg doctor --repair`.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    server: Annotated[Optional[str], typer.Option("--server", help="Submit to this running kg serve (http://HOST:PORT) as jobs, wait for them and print what they stored.")] = None,
    key: Annotated[Optional[str], typer.Option("--key", envvar="KG_API_KEY", show_envvar=True, show_default=False, help="With --server: an API key with the writer role.")] = None,
    doc_id: Annotated[Optional[str], typer.Option("--doc-id", help="The document id of a single file (default: its name).")] = None,
) -> None:
    """Ingest unit files directly, and text through LLM extraction; each file is a document.

    A document's id is its path relative to the folder given (a file given alone: its name;
    `--doc-id` for one file). Ingesting a changed file again replaces its document's units
    (unchanged ones keep their ids); an unchanged file changes nothing. Unit files are all
    parsed before anything is stored: one bad line stores nothing. Each document is stored
    whole or not at all. With --server, the files go to a running server's REST API instead
    (one job per file)."""
    if server is not None:
        from kgservice.cli.remote import ingest_remote, summary_line

        with errors_reported():
            done = ingest_remote(server, key, paths, mode)
        if as_json:
            print_json([{"path": str(s.path), "job_id": s.job_id, **(s.job or {})} for s in done])
        else:
            for s in done:
                out.print(summary_line(s), markup=False, highlight=False)
        if any((s.job or {}).get("status") != "done" for s in done):
            raise typer.Exit(1)
        return
    from kgservice.cli.ask import TextPrinter
    from kgservice.cli.common import with_llm
    from kgservice.pipeline.ingest import split_inputs

    with errors_reported():
        split_inputs(paths)  # a missing path is named before anything is opened
    with_llm(ctx, llm)
    text = TextPrinter(as_json)
    unit_bar: list[Any] = []

    def progress(event: str, info: dict[str, Any]) -> None:
        if event == "units-start":
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            bar = Progress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                           console=err, disable=as_json or info["units"] < 2000)
            bar.start()
            unit_bar[:] = [bar, bar.add_task("ingesting units", total=info["units"])]
        elif event == "units":
            unit_bar[0].advance(unit_bar[1], info["added"])
        elif event == "units-vectors" and unit_bar:
            # the graph batch is in: a bar left at 100 % would look stuck while vectors are written
            bar = unit_bar[0]
            bar.update(unit_bar[1], visible=False)
            unit_bar[1] = bar.add_task(f"writing vectors for {info['nodes']} new nodes", total=None)
            unit_bar.append(info["nodes"])
        elif event == "units-done":
            if len(unit_bar) == 3:  # the vector phase ended with the batch
                unit_bar[0].update(unit_bar[1], total=unit_bar[2], completed=unit_bar[2])
            unit_bar[0].stop()
            print_unit_report(info["files"], info["report"], no_embed, as_json, info.get("nodes_embedded"))
        else:
            text.progress(event, info)

    from kgservice.cli.common import refuse_beside_server

    refuse_beside_server(ctx, "`kg ingest`")
    with knowledge_base(ctx) as kb:
        # text with no model configured is refused by the library before anything is stored
        # (kgservice.llm.check.refuse_text_without_model, the server's check too): exit 2
        try:
            _, report = kb.ingest_paths(paths, mode, doc_id=doc_id, embed=not no_embed, force=force,
                                        progress=progress)
        finally:
            for bar in unit_bar[:1]:
                bar.stop()
            text.stop()
        if report is not None:
            text.summary(report)


def print_unit_report(files: int, report: Any, no_embed: bool, as_json: bool, embedded: int | None = None) -> None:
    data = {"files": files, **report.model_dump(exclude={"touched_nodes", "new_embeddable_nodes"}),
            "embedded_nodes": 0 if no_embed else embedded if embedded is not None else len(report.new_embeddable_nodes)}
    if as_json:
        print_json(data)
        return
    out.print(f"{data['files']} unit file(s): {report.units_added} units added, {report.units_unchanged} unchanged, "
              f"{report.nodes_added} nodes added, {data['embedded_nodes']} nodes embedded")
    for dup, first in sorted(report.duplicates.items())[:20]:
        out.print(f"duplicate: #{escape(dup)} states the same fact as #{escape(first)}; not added", highlight=False, markup=True)
    if len(report.duplicates) > 20:
        out.print(f"... and {len(report.duplicates) - 20} more duplicates", highlight=False)


@app.command()
def expand(
    ctx: typer.Context,
    node: Annotated[str, typer.Argument(help="Node label (any case / width); matched by normalised id, then by vector.")],
    mode: Annotated[str, typer.Option("--mode", help="directed | spread | causal (chains along the 导致 family: what the node leads to, each hop with its unit id)")] = "directed",
    hops: Annotated[Optional[int], typer.Option("--hops", "-k", help="Spread / causal: at most K hops (causal default 3).")] = None,
    epsilon: Annotated[Optional[float], typer.Option("--epsilon", help="Spread: stop below this energy.")] = None,
    limit: Annotated[int, typer.Option("--limit", help="Spread: how many ranked nodes to print.")] = 20,
    max_fanout: Annotated[Optional[int], typer.Option("--max-fanout", min=1, help="Spread: nodes with more relation edges receive energy but do not pass it on (the first hop, from the seed, is never limited). Env KG_SPREAD_MAX_FANOUT.")] = None,
    max_fire: Annotated[Optional[int], typer.Option("--max-fire", min=1, help="Spread: at most this many nodes spread on from each hop. Env KG_SPREAD_MAX_FIRE.")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Expand from a node without the LLM: directed traversal, spreading activation or causal chains."""
    from kgservice.notation import format_unit
    from kgservice.expansion.causal import chain_text
    from kgservice.service import CausalExpansion, DirectedExpansion

    with knowledge_base(ctx) as kb:
        res = kb.expand(node, mode, limit=limit, epsilon=epsilon, max_hops=hops, max_fanout=max_fanout,  # type: ignore[arg-type]
                        max_fire=max_fire)
        if as_json:
            print_json(res.to_dict())
            return
        if isinstance(res, CausalExpansion):
            for r in res.results:
                out.print(f"[bold]causal chains from {escape(r.seed)}[/bold] (at most {res.max_hops} hops): "
                          f"{len(r.chains)} chain(s)" + (", cut at the chain bound" if r.truncated else ""), markup=True)
                for c in r.chains:
                    out.print("  " + escape(chain_text(r.seed, [(h.dst, h.unit) for h in c.hops])),
                              highlight=False, soft_wrap=True, markup=True)
            return
        if isinstance(res, DirectedExpansion):
            units = res.live_units
            out.print(f"[bold]directed expansion of {escape(res.seeds[0])}[/bold]: {len(res.nodes)} nodes, {len(units)} units"
                      + (f", {len(res.superseded)} superseded skipped" if res.superseded else ""), markup=True)
            for u in units:
                out.print(f"  {escape(format_unit(u).splitlines()[0])}   [dim]<- {escape('; '.join(res.units[u.id]))}[/dim]",
                          highlight=False, soft_wrap=True, markup=True)
            return
        from rich.table import Table

        params = res.params
        limits = "".join(f", {k}={v}" for k, v in (("max fan-out", params.max_fanout), ("max fire", params.max_fire)) if v)
        table = Table(title=f"spreading activation from {res.seed} (K={params.max_hops}, ε={params.epsilon}{limits})")
        table.add_column("node")
        table.add_column("energy", justify="right")
        for n, e in res.ranked():
            table.add_row(n, f"{e:.4f}")  # cells are plain text: the consoles render no markup
        out.print(table)


@app.command()
def export(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="Where to write graph.json.")] = Path("graphify-out/graph.json"),
    no_communities: Annotated[bool, typer.Option("--no-communities", help="Skip Louvain community detection.")] = False,
    memory_dir: Annotated[Optional[Path], typer.Option("--memory-dir", help="Saved results (save-result) to feed back as units first; default: memory/ next to graph.json.")] = None,
    no_memory: Annotated[bool, typer.Option("--no-memory", help="Do not ingest saved results.")] = False,
) -> None:
    """Write the graph.json mirror (networkx node_link, edges under `links`, graphify fields).

    Saved answers (`save-result`) are ingested as units first, so they come back as nodes."""
    if not no_memory:
        from kgservice.cli.common import refuse_beside_server

        refuse_beside_server(ctx, "`kg export` without --no-memory")  # feeding saved results stores units
    with knowledge_base(ctx) as kb:
        rep = kb.export(path, communities=not no_communities, memory_dir=memory_dir, feed_memory=not no_memory)
        if rep.memory is not None:
            where = f"the store and {rep.memory_dir}" if rep.memory_dir is not None else "the store"
            out.print(f"saved results from {where}: {rep.memory.units_added} new unit(s), "
                      f"{rep.memory.units_unchanged} already in")
        counts = rep.counts
        out.print(f"wrote {path}: {counts['nodes']} nodes, {counts['links']} links, {counts['units']} units")


@app.command()
def stats(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Counts of units, nodes, relations and units per family."""
    from rich.table import Table

    with knowledge_base(ctx) as kb:
        data = kb.stats()
        if as_json:
            print_json(data)
            return
        table = Table(title=f"kgservice ({data['backend']})")
        table.add_column("what")
        table.add_column("count", justify="right")
        for k, v in data.items():
            if k != "backend":
                table.add_row(k, str(v))
        out.print(table)


@app.command()
def search(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="Free text or a question: node names in it, plus the nearest node vectors.")],
    top_k: Annotated[int, typer.Option("--top-k", help="Vector hits asked for.")] = 5,
    threshold: Annotated[float, typer.Option("--threshold", help="Drop vector hits below this cosine.")] = 0.3,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Entry nodes for a text without the LLM: node names found in it and the nearest node
    vectors, weighted by specificity (a rare node outranks a hub). Ranks; it proves nothing."""
    from kgservice.cli.common import refuse_beside_server

    refuse_beside_server(ctx, "`kg search`")  # at once: a running embedded kg serve holds the vectors
    with knowledge_base(ctx) as kb:
        found = kb.search(text, top_k=top_k, threshold=threshold)
        hits = [{"node_id": n.node, "label": n.label, "score": n.weight, "named": n.named, "cosine": n.cosine,
                 "mentions": n.mentions} for n in found.nodes]
        if as_json:
            print_json(hits)
            return
        for n in found.nodes:
            how = ", ".join(x for x in (f"named '{n.named}'" if n.named else "",
                                         f"cosine {n.cosine:.3f}" if n.cosine is not None else "") if x)
            out.print(f"{n.weight:.3f}  {escape(n.label)}  [dim]({escape(how)}; {n.mentions} units)[/dim]",
                      highlight=False, markup=True)
        if not hits:
            out.print("no entry node: no node named in the text, none above the threshold")


# Command groups in their own modules add themselves to `app`; plain imports, so a missing
# module is an ImportError at start-up, not a silently absent command.
from kgservice.cli import admin as _admin, ask as _ask, demo as _demo, serve as _serve  # noqa: E402
from kgservice.cli import worker as _worker  # noqa: E402
from kgservice.cli import lifecycle as _lifecycle  # noqa: E402
from kgservice.cli import workspaces as _workspaces  # noqa: E402
from kgservice.graphify import cli as _graphify  # noqa: E402

for _module in (_ask, _graphify, _admin, _demo, _serve, _worker, _lifecycle, _workspaces):
    _module.register(app)


def main() -> None:
    from kgservice.cli import top_help

    try:
        if top_help.wants_top_help(sys.argv[1:]):
            # the top-level help without building every command or loading typer's rich help
            # (two thirds of its cost); the same panels, from what the commands registered
            sys.stdout.write(top_help.render(app, _main, _reflow))
            sys.stdout.flush()
            if sys.argv[1:] == []:  # a bare `kg`: help, and status 2 as click's no_args_is_help gives
                raise SystemExit(2)
            return
        app()
    except BrokenPipeError:
        _end_closed_pipe()
    finally:
        # text written with sys.stdout.write (--json) may still be in its buffer: flushed here,
        # where a closed pipe still ends as one
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _end_closed_pipe()

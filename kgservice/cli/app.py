"""The `kg` command: admin and query entry points over one knowledge base."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from kgservice.cli.common import BAD_INPUT, err, errors_reported, knowledge_base, out, print_json, settings_of
from kgservice.config import load_settings

app = typer.Typer(help="kgservice: a knowledge service over a cognitive graph of units.",
                  no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)

UNIT_SUFFIXES = {".units", ".kgu"}


@app.callback()
def _main(
    ctx: typer.Context,
    data_dir: Annotated[Optional[Path], typer.Option("--data-dir", help="Embedded store + Qdrant local path (env KG_DATA_DIR, default ./.kg).")] = None,
    config: Annotated[Optional[Path], typer.Option("--config", help="TOML config file (env KG_CONFIG).")] = None,
    backend: Annotated[Optional[str], typer.Option("--backend", help="embedded | neo4j (env KG_BACKEND).")] = None,
    embedder: Annotated[Optional[str], typer.Option("--embedder", help="default | packaged:NAME | litellm:MODEL | hash:DIM (env KG_EMBEDDER).")] = None,
) -> None:
    with errors_reported():
        settings = load_settings(config).with_overrides(data_dir=data_dir, backend=backend, embedder=embedder)
    ctx.obj = {"settings": settings}


def _split_inputs(paths: list[Path]) -> tuple[list[Path], list[Path]]:
    """(unit files, text files) named by the arguments; folders are searched recursively."""
    from kgservice.pipeline.ingest import TEXT_MODES

    units: list[Path] = []
    texts: list[Path] = []
    for p in paths:
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file())
            units += [f for f in found if f.suffix in UNIT_SUFFIXES]
            texts += [f for f in found if f.suffix.lower() in TEXT_MODES]
        elif p.is_file():
            (units if p.suffix in UNIT_SUFFIXES else texts).append(p)
        elif p.exists():
            raise ValueError(f"{p} is not a regular file or folder (a device, FIFO or socket cannot be ingested)")
        else:
            raise ValueError(f"no such file or folder: {p}")
    return units, texts


@app.command()
def init(ctx: typer.Context) -> None:
    """Create the data directory and a commented config file (no secrets in it)."""
    s = settings_of(ctx)
    s.data_dir.mkdir(parents=True, exist_ok=True)
    cfg = s.data_dir / "kg.toml"
    if not cfg.exists():
        cfg.write_text(
            "# kgservice settings; env vars override these. Secrets (neo4j_password, qdrant_api_key)\n"
            "# belong in the environment, or here only with `chmod 600`.\n"
            "# backend = \"neo4j\"\n# neo4j_uri = \"bolt://127.0.0.1:7687\"\n"
            "# qdrant_url = \"http://127.0.0.1:6333\"\n# embedder = \"default\"\n"
            "# llm_model = \"kgoffline/scripted\"\n# epsilon = 0.05\n# max_hops = 3\n", "utf-8")
    out.print(f"initialised {s.data_dir} (backend: {s.backend}); config template: {cfg}")


@app.command()
def ingest(
    ctx: typer.Context,
    paths: Annotated[list[Path], typer.Argument(help="Unit files (.units), text / Markdown files (.md .txt ...), or folders.")],
    mode: Annotated[Optional[str], typer.Option("--mode", help="Text files: summary | detail (default by file type: .md summary, .txt detail).")] = None,
    llm: Annotated[Optional[str], typer.Option("--llm", help="Text files: litellm model for this run (env KG_LLM_MODEL).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Text files: re-extract documents already ingested.")] = False,
    no_embed: Annotated[bool, typer.Option("--no-embed", help="Store units only; embed later with `kg doctor --repair`.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Ingest unit files directly, and text through LLM extraction.

    Unit files are all parsed before anything is stored: one bad line stores nothing.
    Text documents are idempotent by content hash; each is stored whole or not at all."""
    from kgservice.notation import NotationErrors, parse_file

    with errors_reported():
        unit_files, text_files = _split_inputs(paths)
        if not unit_files and not text_files:
            raise ValueError(f"nothing to ingest under {', '.join(map(str, paths))} "
                             f"(unit files {', '.join(sorted(UNIT_SUFFIXES))}, or text / Markdown)")
    if unit_files:
        with knowledge_base(ctx) as kb:
            units, problems = [], []
            for f in unit_files:
                try:
                    units += parse_file(f, kb.lexicon)  # doc: notation.doc_name(f)
                except NotationErrors as exc:
                    problems += exc.errors
            if problems:
                raise NotationErrors(problems)
            with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          console=err, disable=as_json or len(units) < 2000) as bar:
                task = bar.add_task("ingesting units", total=len(units))
                report = kb.ingest_units(units, embed=not no_embed, progress=lambda n: bar.advance(task, n))
            data = {"files": len(unit_files), **report.model_dump(exclude={"touched_nodes", "new_embeddable_nodes"}),
                    "embedded_nodes": 0 if no_embed else len(report.new_embeddable_nodes)}
            if as_json:
                print_json(data)
            else:
                out.print(f"{data['files']} unit file(s): {report.units_added} units added, {report.units_unchanged} unchanged, "
                          f"{report.nodes_added} nodes added, {data['embedded_nodes']} nodes embedded")
    if text_files:
        from kgservice.cli.ask import ingest_text_command

        ingest_text_command(ctx, paths=text_files, mode=mode, no_embed=no_embed, force=force, as_json=as_json, llm=llm)


@app.command()
def expand(
    ctx: typer.Context,
    node: Annotated[str, typer.Argument(help="Node label (any case / width); matched by normalised id, then by vector.")],
    mode: Annotated[str, typer.Option("--mode", help="directed | spread")] = "directed",
    hops: Annotated[Optional[int], typer.Option("--hops", "-k", help="Spread: at most K hops.")] = None,
    epsilon: Annotated[Optional[float], typer.Option("--epsilon", help="Spread: stop below this energy.")] = None,
    limit: Annotated[int, typer.Option("--limit", help="Spread: how many ranked nodes to print.")] = 20,
    max_fanout: Annotated[Optional[int], typer.Option("--max-fanout", min=1, help="Spread: nodes with more relation edges receive energy but do not pass it on (the first hop, from the seed, is never limited). Env KG_SPREAD_MAX_FANOUT.")] = None,
    max_fire: Annotated[Optional[int], typer.Option("--max-fire", min=1, help="Spread: at most this many nodes spread on from each hop. Env KG_SPREAD_MAX_FIRE.")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Expand from a node without the LLM: directed traversal or spreading activation."""
    from kgservice.expansion import expand_directed, spread_activation
    from kgservice.notation import format_unit

    if mode not in ("directed", "spread"):
        err.print(f"[red]error:[/red] --mode must be 'directed' or 'spread', got {escape(repr(mode))}")
        raise typer.Exit(BAD_INPUT)
    with knowledge_base(ctx) as kb:
        nid = kb.resolve_node(node)
        if nid is None:
            hint = ""
            try:
                hits = kb.vector_entry(node, top_k=3)
                hint = "; nearest by vector: " + ", ".join(f"{h.label} ({h.score:.2f})" for h in hits) if hits else ""
            except Exception:  # the hint is a courtesy; the error below is the answer
                pass
            err.print(f"[red]error:[/red] no node {escape(repr(node))} in the graph{escape(hint)}")
            raise typer.Exit(BAD_INPUT)
        if mode == "directed":
            res = expand_directed(kb.store, [nid])
            if as_json:
                print_json(res.to_dict())
                return
            units = kb.store.get_units(sorted(res.units))
            out.print(f"[bold]directed expansion of {nid}[/bold]: {len(res.nodes)} nodes, {len(units)} units"
                      + (f", {len(res.superseded)} superseded skipped" if res.superseded else ""))
            for u in units:
                out.print(f"  {escape(format_unit(u).splitlines()[0])}   [dim]<- {escape('; '.join(res.units[u.id]))}[/dim]",
                          highlight=False, soft_wrap=True)
            return
        params = kb.spread_params(epsilon=epsilon or 0, max_hops=hops or 0, max_fanout=max_fanout or 0,
                                  max_fire=max_fire or 0)
        result = spread_activation(kb.store, [nid], params)
        ranked = result.ranked(limit)
        if as_json:
            print_json({"seed": nid, "hops": result.hops, "params": {"tau": dict(params.tau), "epsilon": params.epsilon, "K": params.max_hops,
                                                                             "max_fanout": params.max_fanout, "max_fire": params.max_fire},
                        "ranked": [{"node": n, "energy": e} for n, e in ranked]})
            return
        limits = "".join(f", {k}={v}" for k, v in (("max fan-out", params.max_fanout), ("max fire", params.max_fire)) if v)
        table = Table(title=f"spreading activation from {nid} (K={params.max_hops}, ε={params.epsilon}{limits})")
        table.add_column("node")
        table.add_column("energy", justify="right")
        for n, e in ranked:
            table.add_row(escape(n), f"{e:.4f}")
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
    from kgservice.export.graphjson import write_graph_json

    with knowledge_base(ctx) as kb:
        mem = memory_dir or path.parent / "memory"
        if not no_memory and mem.is_dir() and not kb.settings.read_only:
            from kgservice.graphify.memory import memory_units
            from kgservice.notation import parse_units

            lines = memory_units(mem, path if path.exists() else None)
            if lines:
                report = kb.ingest_units(parse_units("\n".join(lines), kb.lexicon, source=str(mem), doc="memory"))
                out.print(f"saved results from {mem}: {report.units_added} new unit(s), {report.units_unchanged} already in")
        counts = write_graph_json(kb.store, path, communities=not no_communities)
        out.print(f"wrote {path}: {counts['nodes']} nodes, {counts['links']} links, {counts['units']} units")


@app.command()
def stats(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Counts of units, nodes, relations and units per family."""
    with knowledge_base(ctx) as kb:
        counts = kb.store.counts()
        data = {"backend": kb.store.backend, **counts}
        if as_json:
            print_json(data)
            return
        table = Table(title=f"kgservice ({kb.store.backend})")
        table.add_column("what")
        table.add_column("count", justify="right")
        for k, v in data.items():
            if k != "backend":
                table.add_row(k, str(v))
        out.print(table)


@app.command()
def search(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="Free text; matched against entry/derived node vectors.")],
    top_k: Annotated[int, typer.Option("--top-k")] = 5,
    threshold: Annotated[float, typer.Option("--threshold", help="Drop hits below this cosine.")] = 0.3,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Vector entry: the nearest entry nodes to a text (similarity ranks, it proves nothing)."""
    with knowledge_base(ctx) as kb:
        hits = kb.vector_entry(text, top_k=top_k, threshold=threshold)
        if as_json:
            print_json([h.__dict__ for h in hits])
            return
        for h in hits:
            out.print(f"{h.score:.3f}  {escape(h.label)}", highlight=False)
        if not hits:
            out.print("no entry node above the threshold")


# Command groups in their own modules add themselves to `app`; plain imports, so a missing
# module is an ImportError at start-up, not a silently absent command.
from kgservice.cli import admin as _admin, ask as _ask, demo as _demo  # noqa: E402
from kgservice.graphify import cli as _graphify  # noqa: E402

for _module in (_ask, _graphify, _admin, _demo):
    _module.register(app)


def main() -> None:
    app()

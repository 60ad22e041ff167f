"""`kg demo`: the main job end to end on the demo corpus, as the commands a user would type.

Each step is printed as the `kg ...` line it runs and then runs that very command in
process, so the demo can never drift from the real CLI.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.rule import Rule

from kgservice.cli.common import err, out, settings_of
from kgservice.config import DEFAULT_BACKEND, Settings

OFFLINE_RULES = "kgoffline/rules"


def find_demo_dir(explicit: Path | None) -> Path:
    """``--corpus`` if given, else ``./demo`` if it holds units, else the corpus shipped in the
    package (``kgservice/demo``; the repository's top-level ``demo/`` links to it), so the demo
    runs from a wheel install too."""
    from importlib import resources

    packaged = Path(str(resources.files("kgservice") / "demo"))
    candidates = [explicit] if explicit else [Path("demo"), packaged]
    for c in candidates:
        if c is not None and (c / "units").is_dir():
            return c
    raise typer.BadParameter(f"no demo corpus (a folder with units/) at {', '.join(map(str, filter(None, candidates)))}")


def demo_steps(demo: Path, graph: Path, llm: list[str]) -> list[list[str]]:
    steps = [
        ["ingest", str(demo / "units")],
        ["stats"],
        ["expand", "CPython"],
        ["expand", "吸烟", "--mode", "spread", "--limit", "12"],
        ["search", "tobacco"],
    ]
    if (demo / "texts").is_dir():
        steps.append(["ingest", str(demo / "texts"), *llm])
    steps += [
        ["ask", "What does smoking cause?", "--trace", *llm],
        ["ask", "吸烟会导致什么疾病？", *llm],
        ["ask", "Who created Python?", *llm],
        ["ask", "What is the boiling point of mercury?", *llm],
        ["export", str(graph)],
        ["query", "what causes lung cancer", "--graph", str(graph)],
        # endpoints that name one node each: "death" matched several nodes equally once the texts
        # are in, and graphify's path then warns "target match was ambiguous"
        ["path", "smoking", "cancer", "--graph", str(graph), "--undirected"],
        ["explain", "CPython", "--graph", str(graph)],
    ]
    return steps


DEMO_DIR = Path("kg-demo")  # the demo's own data directory, in the current folder
MARKER = "kg-demo.json"  # in a data directory kg demo made: running it again there is fine


def heading(text: str, align: str = "left") -> None:
    """A step's heading: a rule across a terminal; in a pipe or file (where the console is
    laid out 400 columns wide so long lines stay whole) a rule of 80 columns."""
    out.print(Rule(text, align=align), width=None if out.is_terminal else 80)  # type: ignore[arg-type]


def demo_data_dir(given: Path | None) -> Path:
    """Where the demo writes: ``--data-dir`` given on the command line, else ``./kg-demo``; never a
    knowledge base of the user's (KG_DATA_DIR, ``./.kg``). A folder holding anything but an
    earlier demo is refused (InputError) before anything is written."""
    from kgservice.errors import InputError

    target = given if given is not None else DEMO_DIR
    if target.exists() and not target.is_dir():
        raise InputError(f"{target} is not a folder; kg demo writes its own knowledge base into a new or empty "
                         "folder (--data-dir DIR before `demo`)")
    if target.is_dir() and any(target.iterdir()) and not (target / MARKER).is_file():
        raise InputError(f"{target} is not empty and holds no earlier demo: kg demo writes its own knowledge base "
                         f"and would mix the demo corpus into it. Give a new or empty folder: kg --data-dir "
                         f"DIR demo (default: ./{DEMO_DIR})")
    return target


def register(app: typer.Typer) -> None:
    @app.command()
    def demo(
        ctx: typer.Context,
        corpus: Annotated[Optional[Path], typer.Option("--corpus", help="Demo folder with units/ (and texts/).")] = None,
        stop_on_error: Annotated[bool, typer.Option("--stop-on-error/--keep-going")] = True,
    ) -> None:
        """Run the main job on the demo corpus: ingest, expand, search, ask, export, graphify commands.

        The demo writes into a knowledge base of its own on the embedded store: ./kg-demo, or the
        folder given with `kg --data-dir DIR demo` (new, empty, or an earlier demo's); your own
        knowledge base (./.kg, KG_DATA_DIR, a Neo4j server) is not touched. Everything it writes,
        graph.json included, is in that one folder."""
        import json
        import os

        from typer.main import get_command

        from kgservice.cli.common import errors_reported

        settings = settings_of(ctx)
        demo_dir = find_demo_dir(corpus)
        with errors_reported():
            data = demo_data_dir((ctx.parent.params.get("data_dir") if ctx.parent else None))
        data.mkdir(parents=True, exist_ok=True)
        (data / MARKER).write_text(json.dumps({"corpus": str(demo_dir.resolve())}) + "\n", "utf-8")
        # its own store: embedded, vectors beside it, whatever the environment or a config file
        # sets up for yours (a Neo4j or Qdrant server, a data dir, read-only); the model stays
        for name in ("KG_CONFIG", "KG_DATA_DIR", "KG_QDRANT_URL", "KG_QDRANT_API_KEY", "KG_READ_ONLY"):
            os.environ.pop(name, None)
        os.environ.update({"KG_BACKEND": DEFAULT_BACKEND, "KG_VECTOR_BACKEND": "auto"})
        if settings.llm_model_chosen:
            os.environ["KG_LLM_MODEL"] = settings.llm_model
        if settings.llm_api_base:
            os.environ["KG_LLM_API_BASE"] = settings.llm_api_base
        graph = data / "graphify-out" / "graph.json"
        out.print(f"kg demo writes into {data}/ (a knowledge base of its own, embedded; yours is not touched)")
        command = get_command(app)
        base = ["--data-dir", str(data), "--backend", DEFAULT_BACKEND, "--embedder", settings.embedder]
        available = set(command.commands)  # type: ignore[attr-defined]
        llm: list[str] = []
        if settings.llm_model == Settings().llm_model:
            # No model configured: use the rule-based offline stand-in (no API key, no network),
            # and say so; a configured KG_LLM_MODEL is used as is.
            llm = ["--llm", OFFLINE_RULES]
            out.print(f"[dim]LLM steps use {OFFLINE_RULES}, the deterministic rule-based offline stand-in "
                      "(set KG_LLM_MODEL for a real model)[/dim]", markup=True)
        failed = 0
        for step in demo_steps(demo_dir, graph, llm):
            if step[0] not in available:
                err.print(f"[yellow]skipping `kg {step[0]}`: command not installed[/yellow]", markup=True)
                continue
            heading(f"$ kg {shlex.join(step)}")
            try:
                # standalone_mode=False: click returns a command's exit code instead of exiting
                code = command.main([*base, *step], prog_name="kg", standalone_mode=False) or 0
            except SystemExit as exc:  # pragma: no cover - click may exit directly
                code = int(exc.code or 0)
            except typer.Exit as exc:
                code = exc.exit_code
            if code:
                failed += 1
                err.print(f"[red]step failed (exit {code}): kg {shlex.join(step)}[/red]", markup=True)
                if stop_on_error:
                    raise typer.Exit(code)
        heading("demo done" + (f", {failed} step(s) failed" if failed else ""), align="center")
        out.print(f"everything the demo wrote is in {data}/ (its store, vectors and {graph.relative_to(data)}); "
                  f"go on with `kg --data-dir {data} ask \"...\"`, or remove the folder")
        if failed:
            raise typer.Exit(1)

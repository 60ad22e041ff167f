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
from kgservice.config import Settings

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


def register(app: typer.Typer) -> None:
    @app.command()
    def demo(
        ctx: typer.Context,
        corpus: Annotated[Optional[Path], typer.Option("--corpus", help="Demo folder with units/ (and texts/).")] = None,
        stop_on_error: Annotated[bool, typer.Option("--stop-on-error/--keep-going")] = True,
    ) -> None:
        """Run the main job on the demo corpus: ingest, expand, search, ask, export, graphify commands."""
        from typer.main import get_command

        settings = settings_of(ctx)
        demo_dir = find_demo_dir(corpus)
        graph = settings.data_dir / "graphify-out" / "graph.json"
        command = get_command(app)
        base = ["--data-dir", str(settings.data_dir), "--embedder", settings.embedder]
        available = set(command.commands)  # type: ignore[attr-defined]
        llm: list[str] = []
        if settings.llm_model == Settings().llm_model:
            # No model configured: use the rule-based offline stand-in (no API key, no network),
            # and say so; a configured KG_LLM_MODEL is used as is.
            llm = ["--llm", OFFLINE_RULES]
            out.print(f"[dim]LLM steps use {OFFLINE_RULES}, the deterministic rule-based offline stand-in "
                      "(set KG_LLM_MODEL for a real model)[/dim]")
        failed = 0
        for step in demo_steps(demo_dir, graph, llm):
            if step[0] not in available:
                err.print(f"[yellow]skipping `kg {step[0]}`: command not installed[/yellow]")
                continue
            out.print(Rule(f"$ kg {shlex.join(step)}", align="left"))
            try:
                # standalone_mode=False: click returns a command's exit code instead of exiting
                code = command.main([*base, *step], prog_name="kg", standalone_mode=False) or 0
            except SystemExit as exc:  # pragma: no cover - click may exit directly
                code = int(exc.code or 0)
            except typer.Exit as exc:
                code = exc.exit_code
            if code:
                failed += 1
                err.print(f"[red]step failed (exit {code}): kg {shlex.join(step)}[/red]")
                if stop_on_error:
                    raise typer.Exit(code)
        out.print(Rule("demo done" + (f", {failed} step(s) failed" if failed else "")))
        if failed:
            raise typer.Exit(1)

"""Fixtures for the graphify-compatible commands.

Graphs are built the real way: unit files -> EmbeddedStore -> ``write_graph_json``. The
graphify reference (``graphifyy`` in its own venv, see reference.py) is driven through ``graphify_batch.py``, which runs
its real CLI entry point for many command lines in one process (graphify's own start-up is
~0.3 s; one process per case would blow the time budget).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).parent
FIXTURES = HERE.parent / "fixtures" / "graphify"
DEMO_UNITS = HERE.parents[1] / "demo" / "units"
BATCH = HERE / "graphify_batch.py"


def build_graph(unit_files: list[tuple[Path, str]], project: Path) -> Path:
    """Ingest ``(file, doc name)`` pairs into a fresh embedded store; write project/graphify-out/graph.json."""
    from kgservice.export.graphjson import write_graph_json
    from kgservice.families import Lexicon
    from kgservice.notation import parse_units
    from kgservice.stores.embedded import EmbeddedStore

    lexicon = Lexicon.load()
    store = EmbeddedStore(project / ".kg")
    try:
        for path, doc in unit_files:
            store.ingest(parse_units(path.read_text(encoding="utf-8"), lexicon, doc=doc))
        out = project / "graphify-out" / "graph.json"
        write_graph_json(store, out)
    finally:
        close = getattr(store, "close", None)
        if close:
            close()
    return out


@pytest.fixture(scope="session")
def mini_project(tmp_path_factory) -> Path:
    project = tmp_path_factory.mktemp("mini")
    build_graph([(FIXTURES / "mini.units", "mini.units"),
                 (FIXTURES / "hub_a.units", "hub_a.units"),
                 (FIXTURES / "hub_b.units", "hub_b.units")], project)
    return project


@pytest.fixture(scope="session")
def mini_graph(mini_project) -> Path:
    return mini_project / "graphify-out" / "graph.json"


@pytest.fixture(scope="session")
def demo_project(tmp_path_factory) -> Path:
    """The demo corpus when present, else the mini corpus."""
    project = tmp_path_factory.mktemp("demo")
    files = sorted(DEMO_UNITS.glob("*.units")) if DEMO_UNITS.is_dir() else []
    pairs = [(f, f.name) for f in files] or [(FIXTURES / "mini.units", "mini.units")]
    build_graph(pairs, project)
    return project


@pytest.fixture(scope="session")
def demo_graph(demo_project) -> Path:
    return demo_project / "graphify-out" / "graph.json"


@pytest.fixture(scope="session")
def gfy_project(tmp_path_factory) -> Path:
    """A graph.json written by graphify itself (``graphify update`` on sample_project)."""
    project = tmp_path_factory.mktemp("gfy")
    out = project / "graphify-out"
    out.mkdir()
    shutil.copy(FIXTURES / "graphify_written" / "graph.json", out / "graph.json")
    return project


@pytest.fixture(scope="session")
def gfy_graph(gfy_project) -> Path:
    return gfy_project / "graphify-out" / "graph.json"


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture(scope="session")
def ours():
    """Run our commands in-process through the Typer app."""
    from typer.testing import CliRunner

    from kgservice.graphify.cli import build_app

    app = build_app()
    runner = CliRunner()

    def run(*args: str, cwd: Path | None = None) -> Run:
        old = Path.cwd()
        if cwd is not None:
            os.chdir(cwd)
        try:
            r = runner.invoke(app, [str(a) for a in args])
        finally:
            os.chdir(old)
        if r.exception and not isinstance(r.exception, SystemExit):
            raise r.exception
        return Run(r.exit_code, r.stdout, r.stderr)

    return run


def graphify_available() -> bool:
    """The reference graphify (its own venv, see reference.py) can be run."""
    from tests.graphify.reference import reference_python

    return reference_python() is not None


def run_graphify_batches(jobs: list[tuple[list[list[str]], Path]], home: Path) -> list[list[Run]]:
    """Run each job's argv lists through the real graphify CLI, one process per job, jobs in parallel."""
    from tests.graphify.reference import reference_env, reference_python

    env = reference_env(home)
    env.update(PYTHONHASHSEED="0", GRAPHIFY_NO_TIPS="1")
    py = str(reference_python())
    procs = [subprocess.Popen([py, str(BATCH)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=cwd, env=env) for _cases, cwd in jobs]
    results = []
    for proc, (cases, _cwd) in zip(procs, jobs, strict=True):
        out, err = proc.communicate(json.dumps(cases), timeout=300)
        assert proc.returncode == 0, err[-3000:]
        results.append([Run(r["code"], r["stdout"], r["stderr"]) for r in json.loads(out)])
    return results


@pytest.fixture(scope="session")
def graphify_cli(tmp_path_factory):
    """``run(cases, cwd)`` or ``run.many([(cases, cwd), ...])`` through the real graphify CLI."""
    if not graphify_available():
        from tests.graphify.reference import unavailable_reason

        pytest.skip(f"the reference graphify venv could not be built: {unavailable_reason()[:300]}")
    home = tmp_path_factory.mktemp("home")

    def run(cases: list[list[str]], cwd: Path) -> list[Run]:
        return run_graphify_batches([(cases, cwd)], home)[0]

    run.many = lambda jobs: run_graphify_batches(jobs, home)
    return run

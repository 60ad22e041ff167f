"""The package as a user installs it: a wheel built from this checkout, in a fresh venv.

An editable install reads files straight from the checkout, so it cannot show what the
wheel forgot (the Cypher procedures once lived outside the package: every Neo4j query
failed after ``pip install kgservice``). Here ``kgservice`` must import from the venv, not
from the checkout, and run commands from there.

The venv sees the site-packages of the interpreter running the tests (a ``.pth`` file lists
them), so the dependencies are not installed again, whether the tests run from a system Python
or from a venv as the README makes one (a venv's child made with ``system_site_packages`` would
see the base interpreter's packages, not the venv's). The listed folders' own ``.pth`` files are
not processed, so an editable install of kgservice there stays out; the wheel itself goes in with
``--no-deps --force-reinstall`` and the test asserts that ``kgservice.__file__`` lies inside the venv.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.neo4j_helpers import wipe_all

ROOT = Path(__file__).resolve().parents[2]


def _clean_env(**extra: str) -> dict[str, str]:
    """No PYTHONPATH (it would put the checkout first) and no KG_* settings from outside."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("KG_")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **extra)
    return env


def _run(args: list[str | Path], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    res = subprocess.run([str(a) for a in args], cwd=cwd, env=_clean_env(**env), capture_output=True,
                         text=True, timeout=600)
    assert res.returncode == 0, f"{args}\n{res.stdout}\n{res.stderr}"
    return res


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, Path]:
    """Build the wheel, make a venv, install the wheel into it; paths of its python and kg."""
    tmp = tmp_path_factory.mktemp("wheel")
    # build from a copy of what the wheel is made of: setuptools leaves build/ behind in the
    # source tree, and a stale build/ (files since moved or deleted) would leak into the wheel
    src = tmp / "src"
    shutil.copytree(ROOT / "kgservice", src / "kgservice", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    dist = tmp / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", dist, src], cwd=tmp)
    wheels = list(dist.glob("kgservice-*.whl"))
    assert len(wheels) == 1, wheels
    env_dir = tmp / "venv"
    venv.EnvBuilder(system_site_packages=False, with_pip=False, symlinks=True).create(env_dir)
    python = env_dir / "bin" / "python"
    _see_our_site_packages(python)
    _run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--force-reinstall",
          wheels[0]], cwd=tmp)
    return {"dir": env_dir, "python": python, "kg": env_dir / "bin" / "kg", "tmp": tmp}


def site_dirs() -> list[str]:
    """The site-packages folders of the interpreter running the tests (a venv's, and the base
    interpreter's when that venv includes them), never the checkout."""
    import site

    found = [*site.getsitepackages(), *([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])]
    found += [p for p in sys.path if p.rstrip("/").endswith(("site-packages", "dist-packages"))]
    out: list[str] = []
    for p in found:
        path = Path(p)
        if path.is_dir() and path.resolve() != ROOT.resolve() and str(path) not in out:
            out.append(str(path))
    return out


def _see_our_site_packages(python: Path) -> None:
    """A ``.pth`` in the new venv's own site-packages naming :func:`site_dirs` (plain paths:
    their own ``.pth`` files, an editable kgservice among them, are not run)."""
    own = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, timeout=60, env=_clean_env()).stdout.strip()
    Path(own).mkdir(parents=True, exist_ok=True)
    (Path(own) / "kg-test-deps.pth").write_text("\n".join(site_dirs()) + "\n", "utf-8")


def test_the_venv_sees_the_test_interpreters_packages_not_its_base(installed):
    """What a README-style venv (no system site-packages) needs: the child venv imports the
    dependencies from where the tests' interpreter has them."""
    where = Path(_inside_venv(installed, "import typer; print(typer.__file__)").strip())
    assert any(Path(d).resolve() in where.resolve().parents for d in site_dirs()), where


def _inside_venv(installed: dict[str, Path], code: str) -> str:
    return _run([installed["python"], "-c", code], cwd=installed["tmp"]).stdout


def test_imports_from_the_wheel_not_the_checkout(installed):
    where = Path(_inside_venv(installed, "import kgservice; print(kgservice.__file__)").strip())
    assert installed["dir"].resolve() in where.resolve().parents
    assert ROOT not in where.resolve().parents


def test_every_procedure_file_is_readable_through_the_package(installed):
    # the expected names come from the checkout's files, the loaded text from the installed package
    expected = {p.stem: p.read_text("utf-8") for p in (ROOT / "kgservice/stores/procedures").glob("*.cypher")}
    assert len(expected) >= 30 and "schema" in expected
    code = ("import json; from kgservice.stores import cypher; "
            "print(json.dumps({n: cypher.load(n) for n in cypher.names()}))")
    loaded = json.loads(_inside_venv(installed, code))
    assert loaded == expected


def test_top_level_cypher_folder_is_the_package_folder():
    # Browser users open cypher/; it must be the very files the package loads (one source of truth)
    top = ROOT / "cypher"
    assert top.is_symlink() and top.resolve() == (ROOT / "kgservice/stores/procedures").resolve()
    assert (ROOT / "demo").resolve() == (ROOT / "kgservice/demo").resolve()


def _unit_line_texts(folder: Path) -> list[str]:
    """Units in .units files, found without the parser: a unit is a line that is not
    indented (modifier rows are), not a comment (%) and not blank."""
    return [line for f in folder.glob("*.units") for line in f.read_text("utf-8").splitlines()
            if line.strip() and not line[0].isspace() and not line.startswith("%")]


def _unit_lines(folder: Path) -> int:
    return len(_unit_line_texts(folder))


def test_installed_kg_runs_without_neo4j(installed):
    data = installed["tmp"] / "kg-embedded"
    demo_units = Path(_inside_venv(installed, "import kgservice, pathlib; "
                                   "print(pathlib.Path(kgservice.__file__).parent / 'demo' / 'units')").strip())
    assert installed["dir"].resolve() in demo_units.resolve().parents
    # `kg demo` finds the same corpus from a folder with no demo/ in it
    found = _inside_venv(installed, "from kgservice.cli.demo import find_demo_dir; print(find_demo_dir(None))")
    assert Path(found.strip()).resolve() == demo_units.parent.resolve()
    base = [installed["kg"], "--data-dir", data, "--embedder", "hash:64"]
    report = json.loads(_run([*base, "ingest", demo_units, "--json"], cwd=installed["tmp"]).stdout)
    stats = json.loads(_run([*base, "stats", "--json"], cwd=installed["tmp"]).stdout)
    assert stats["backend"] == "embedded"
    # every unit line is stored, or reported as restating a stored fact (the demo says a few
    # facts twice, in English and in Chinese: merged at ingest)
    ids = {u.split()[0][1:] for u in _unit_line_texts(ROOT / "kgservice/demo/units")}
    assert set(report["duplicates"]) <= ids and set(report["duplicates"].values()) <= ids
    assert stats["units"] + len(report["duplicates"]) == _unit_lines(ROOT / "kgservice/demo/units")


@pytest.mark.neo4j
def test_installed_kg_expands_on_neo4j_like_the_embedded_store(installed, neo4j_connection):
    """`kg expand` from the wheel against the test Neo4j: every query it sends is loaded from
    the installed package; the result must equal the embedded store's (the contract)."""
    wipe_all(neo4j_connection)
    demo_units = ROOT / "kgservice/demo/units"
    results = {}
    for backend in ("embedded", "neo4j"):
        base = [installed["kg"], "--data-dir", installed["tmp"] / f"kg-{backend}-expand", "--embedder", "hash:64",
                "--backend", backend]
        env = {"KG_NEO4J_URI": os.environ["KG_TEST_NEO4J_URI"],
               "NEO4J_PASSWORD": os.environ.get("NEO4J_PASSWORD", "")}
        _run([*base, "ingest", demo_units, "--no-embed"], cwd=installed["tmp"], **env)
        results[backend] = json.loads(_run([*base, "expand", "CPython", "--json"], cwd=installed["tmp"], **env).stdout)
    wipe_all(neo4j_connection)
    assert results["neo4j"] == results["embedded"]
    assert results["neo4j"]["units"], "CPython has units in the demo corpus"

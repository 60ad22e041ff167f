"""Loads the named Cypher procedures, one file each, from ``kgservice/stores/procedures/``.

Cypher lives in files, not strings in Python, so people exploring in Neo4j Browser can
paste the exact query the service runs (the repository's top-level ``cypher/`` is a link to
the same folder). The files ship inside the package and are read through
:mod:`importlib.resources`, so a wheel install finds them as an editable checkout does.
Values always go in as parameters. Every query also gets ``$ws``, the workspace of the store that
runs it (``kgservice.stores.neo4j.connection.Scoped``); the files scope every node pattern of a
knowledge-base label by it (docs/workspaces.md), so pasting one in Browser needs
``:param ws => 'default'`` beside the parameters it lists.
"""

from __future__ import annotations

import os
from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

PACKAGE = "kgservice.stores"
FOLDER = "procedures"


class CypherNotFound(FileNotFoundError):
    pass


def cypher_dir() -> Traversable:
    """The folder of procedure files: ``KG_CYPHER_DIR`` if set, else the packaged one."""
    env = os.environ.get("KG_CYPHER_DIR")
    if env:
        return Path(env)
    return resources.files(PACKAGE) / FOLDER


def names() -> list[str]:
    """Every procedure name (file stem), sorted.

    >>> {"schema", "counts", "directed_expand"} <= set(names())
    True
    """
    return sorted(f.name[: -len(".cypher")] for f in cypher_dir().iterdir() if f.name.endswith(".cypher"))


@lru_cache(maxsize=None)
def load(name: str) -> str:
    path = cypher_dir() / f"{name}.cypher"
    try:
        return path.read_text("utf-8")
    except FileNotFoundError:
        raise CypherNotFound(f"Cypher procedure {name!r} not found at {path} (set KG_CYPHER_DIR?)") from None


def statements(name: str) -> list[str]:
    """Split a multi-statement file (schema) on ';' at line ends, dropping comment lines."""
    body = "\n".join(line for line in load(name).splitlines() if not line.strip().startswith("//"))
    return [s.strip() for s in body.split(";\n") if s.strip().rstrip(";").strip()]

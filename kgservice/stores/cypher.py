"""Loads the named Cypher procedures from ``cypher/*.cypher``.

Cypher lives in files, not strings in Python, so people exploring in Neo4j Browser can
paste the exact query the service runs. Values always go in as parameters.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path


class CypherNotFound(FileNotFoundError):
    pass


def cypher_dir() -> Path:
    env = os.environ.get("KG_CYPHER_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "cypher"


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

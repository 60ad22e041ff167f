"""Test-only helpers for a Neo4j store (kept off the production class)."""

from __future__ import annotations

from typing import Any


def wipe_all(store: Any) -> None:
    """Everything, service state (keys, jobs) included: a clean database per test."""
    store.write_statements("wipe_all")

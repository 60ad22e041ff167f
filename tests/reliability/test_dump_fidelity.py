"""Dump / restore fidelity probes of issue 13 (F04 gzip, B18 edited dumps)."""

from __future__ import annotations

import gzip
import json

from typer.testing import CliRunner

from kgservice.cli.app import app
from tests.contract.corpus import SMALL


def _kg(tmp_path, *args, env=None):
    return CliRunner().invoke(app, ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64", *args], env=env)


def test_dump_gz_is_gzip(tmp_path):
    """F04: `kg dump x.jsonl.gz` wrote plain JSON Lines under the .gz name."""
    f = tmp_path / "small.units"
    f.write_text(SMALL, "utf-8")
    assert _kg(tmp_path, "ingest", str(f)).exit_code == 0
    out = tmp_path / "x.jsonl.gz"
    r = _kg(tmp_path, "dump", str(out))
    assert r.exit_code == 0, r.output
    raw = out.read_bytes()
    assert raw[:2] == b"\x1f\x8b"  # the gzip magic
    lines = gzip.decompress(raw).decode("utf-8").splitlines()
    assert json.loads(lines[0])["kgservice_dump"] == 1
    assert len([ln for ln in lines if ln.startswith('{"unit"')]) == 18  # SMALL has 18 units
    assert b".x.jsonl.gz.tmp" not in raw  # the temp name is not in the gzip header

"""`scripts/neo4j status` / `stop` without --data-dir find the server the last `start` began in
its own data dir (the newcomer ran `start --data-dir D` and then a bare `status`: "not running",
although it was). A Neo4j of this test's own, with a state directory of its own."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from tests.reliability.conftest import Neo4jProcess, free_port


@pytest.mark.neo4j_process
def test_status_and_stop_use_the_data_dir_of_the_last_start(tmp_path: Path) -> None:
    state = tmp_path / "state"

    class Own(Neo4jProcess):
        def _env(self) -> dict[str, str]:
            env = super()._env()
            env.pop("KG_NEO4J_DATA", None)
            env["XDG_STATE_HOME"] = str(state)
            return env

    proc = Own(tmp_path / "data", free_port(), free_port(), "-" + secrets.token_urlsafe(18))
    proc.start()
    try:
        status = proc.script("status")
        assert status.returncode == 0, status.stdout
        assert f"running (pid {proc.pid()}, data {proc.data_dir.resolve()})" in status.stdout
        assert "the data dir of the last `start`" in status.stdout
        stop = proc.script("stop")
        assert stop.returncode == 0 and "stopped" in stop.stdout, stop.stdout
        assert proc.pid() is None
        again = proc.script("status")
        assert again.returncode == 1 and f"not running ({proc.data_dir.resolve()})" in again.stdout
    finally:
        proc.stop()

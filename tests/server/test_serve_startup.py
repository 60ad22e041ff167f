"""`kg serve` start-up: a busy port is one line and exit 1; query strings never reach the access log whole."""

from __future__ import annotations

import logging
import socket

from typer.testing import CliRunner

from kgservice.cli.app import app
from kgservice.server.logs import RedactQueryFilter, install_access_log_redaction, redact_query


def test_busy_port_is_one_line_and_exit_1(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        res = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "kg"), "--embedder", "hash:64",
                                       "serve", "--port", str(port)])
    assert res.exit_code == 1
    assert f"cannot listen on 127.0.0.1:{port}" in " ".join(res.output.split())


def test_query_values_are_redacted_in_access_records(caplog):
    assert redact_query("/v1/stats?api_key=kg_abc_SECRET&x=1") == "/v1/stats?api_key=***&x=***"
    assert redact_query("/v1/stats") == "/v1/stats"
    install_access_log_redaction()
    install_access_log_redaction()
    logger = logging.getLogger("uvicorn.access")
    assert sum(isinstance(f, RedactQueryFilter) for f in logger.filters) == 1
    with caplog.at_level(logging.INFO, logger="uvicorn.access"):
        logger.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", "/v1/stats?api_key=kg_abc_SECRET", "1.1", 401)
    assert "SECRET" not in caplog.text
    # the filter's own rewrite, on a record no other library's filter has seen (litellm, once
    # imported, rewrites key-like text in records too, which would hide what ours does)
    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
                               ("127.0.0.1:5", "GET", "/v1/stats?api_key=kg_abc_SECRET", "1.1", 401), None)
    assert RedactQueryFilter().filter(record)
    assert record.args[2] == "/v1/stats?api_key=***" and "SECRET" not in record.getMessage()

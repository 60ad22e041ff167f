"""``base_of``: the page's workspace prefix from the request. A name no workspace could have
(the check's ConfigError) gives no prefix; any other failure of the check is a bug and must
surface, not turn into a page silently acting without its workspace's prefix."""

from __future__ import annotations

import pytest
from starlette.requests import Request

from kgservice.server.middleware import NAMED
from kgservice.web import pages


def _request(name: str | None) -> Request:
    scope = {"type": "http", "method": "GET", "path": "/ui/ask", "headers": [], "query_string": b""}
    if name is not None:
        scope[NAMED] = name
    return Request(scope)


def test_a_named_workspace_is_its_prefix_and_a_bad_name_none():
    assert pages.base_of(_request("team-a")) == "/w/team-a"
    assert pages.base_of(_request(None)) == ""
    assert pages.base_of(_request("Team A")) == ""  # upper case and a space: no workspace's name


def test_a_failure_of_the_name_check_other_than_its_refusal_is_not_swallowed(monkeypatch):
    def broken(name: object) -> None:
        raise RuntimeError("the check itself failed")

    monkeypatch.setattr(pages, "check_workspace_name", broken)
    with pytest.raises(RuntimeError):
        pages.base_of(_request("team-a"))

"""A path no route serves, or a route's path with another method, is answered in the API's error
envelope (docs/api.md, "Errors"). The MCP app is mounted at "/" and took every such request:
``GET /v1/nosuch`` got a plain-text "Not Found" and ``DELETE /v1/stats`` a 404 instead of a 405."""

from __future__ import annotations

from tests.server.conftest import auth


def test_an_unknown_path_is_a_404_in_the_envelope(client, keys):
    r = client.get("/v1/nosuch", headers=auth(keys["reader"]))
    assert r.status_code == 404 and r.headers["content-type"] == "application/json"
    body = r.json()
    assert body["status"] == 404 and "/v1/nosuch" in body["detail"]
    assert body["request_id"] == r.headers["x-request-id"]


def test_a_known_path_with_another_method_is_a_405_naming_the_methods(client, keys):
    r = client.delete("/v1/stats", headers=auth(keys["admin"]))
    assert r.status_code == 405 and r.headers["allow"] == "GET"
    assert r.json()["status"] == 405 and "GET" in r.json()["detail"]
    r = client.get("/v1/ingest", headers=auth(keys["writer"]))
    assert r.status_code == 405 and r.headers["allow"] == "POST"


def test_without_a_key_it_is_still_401_and_mcp_still_answers(client, keys):
    assert client.get("/v1/nosuch").status_code == 401  # the key is checked first: no route list for strangers
    r = client.post("/mcp", headers={**auth(keys["reader"]), "Accept": "application/json, text/event-stream"},
                    json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert r.status_code == 200 and "ask" in {t["name"] for t in r.json()["result"]["tools"]}

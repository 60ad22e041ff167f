"""The deployment's admin manages every workspace's keys over REST (docs/workspaces.md, "Keys"),
on a real `kg serve` of the whole deployment with workspaces team-a and team-b:

- an admin of ``default`` lists every key with its workspaces (a key of team-a only among them),
  makes a key of A and B, changes it to B only (its requests in A are then 404, as a workspace it
  never held), and revokes it (401); a grant naming workspaces that do not exist is 422 naming
  each of them, and nothing is made or changed;
- an admin of team-a only manages team-a's keys: it cannot see, change or revoke a key of team-b
  only (404), nor grant team-b (404, word for word what a workspace nobody made gets: a 403 would
  tell it team-b exists); it makes, changes and revokes team-a's keys;
- no secret is ever shown again, in a listing, a change or the server's log."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.processes import env_for, kg, new_key, serving
from tests.server.test_workspaces_rest import workspace_key


def _h(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_the_deployments_admin_and_a_workspace_admin_manage_keys(tmp_path: Path):
    env = env_for(tmp_path / "kg")
    for ws in ("team-a", "team-b"):
        done = kg(env, "workspaces", "create", ws)
        assert done.returncode == 0, done.stderr
    root = new_key(env, "root", "admin")  # admin in default: the deployment's admin
    ann = workspace_key(env, "ann", "team-a:admin")  # team-a's admin only
    ann_id = ann.split("_")[1]
    with serving(env, "--log-level", "info") as (base, _, log):
        get = lambda path, key: httpx.get(base + path, headers=_h(key), timeout=60)  # noqa: E731
        send = lambda method, path, key, body=None: httpx.request(  # noqa: E731
            method, base + path, json=body, headers=_h(key), timeout=60)

        # the deployment's admin makes a key of A and B
        made = send("POST", "/v1/admin/keys", root, {"user": "cy", "workspaces": {"team-a": "writer",
                                                                                 "team-b": "reader"}})
        assert made.status_code == 201, made.text
        cy, cy_id = made.json()["key"], made.json()["key_id"]
        assert made.json()["workspaces"] == {"team-a": "writer", "team-b": "reader"}
        assert get("/w/team-a/v1/stats", cy).status_code == 200 and get("/w/team-b/v1/stats", cy).status_code == 200

        # it lists every key of the deployment, team-a's admin's included, never a secret
        listed = get("/v1/admin/keys", root)
        assert listed.status_code == 200
        seen = {k["key_id"]: k["workspaces"] for k in listed.json()}
        assert seen[cy_id] == {"team-a": "writer", "team-b": "reader"} and seen[ann_id] == {"team-a": "admin"}
        assert cy.split("_")[2] not in listed.text and ann.split("_")[2] not in listed.text

        # unknown workspaces in a grant: 422 naming each, nothing made or changed
        bad = send("POST", "/v1/admin/keys", root, {"user": "eve", "workspaces": {"team-a": "reader",
                                                                                 "nope": "reader", "zz": "admin"}})
        assert bad.status_code == 422 and "'nope'" in bad.text and "'zz'" in bad.text and "team-a'" not in bad.text
        bad = send("PATCH", f"/v1/admin/keys/{cy_id}", root, {"workspaces": {"nope": "reader"}})
        assert bad.status_code == 422 and "'nope'" in bad.text
        assert len(get("/v1/admin/keys", root).json()) == len(listed.json())
        assert get("/w/team-a/v1/stats", cy).status_code == 200

        # changed to B only: its A requests are 404, B still answers, the secret is unchanged
        changed = send("PATCH", f"/v1/admin/keys/{cy_id}", root, {"workspaces": {"team-b": "writer"}})
        assert changed.status_code == 200, changed.text
        assert (changed.json()["workspaces"], changed.json()["role"]) == ({"team-b": "writer"}, "writer")
        assert cy.split("_")[2] not in changed.text
        assert get("/w/team-a/v1/stats", cy).status_code == 404
        assert get("/w/team-b/v1/stats", cy).status_code == 200 and get("/v1/stats", cy).status_code == 200

        # team-a's admin: a key of team-b only is not there for it (404), nor is team-b
        assert cy_id not in {k["key_id"] for k in get("/v1/admin/keys", ann).json()}
        assert send("DELETE", f"/v1/admin/keys/{cy_id}", ann).status_code == 404
        assert send("PATCH", f"/v1/admin/keys/{cy_id}", ann, {"workspaces": {"team-a": "reader"}}).status_code == 404
        foreign = send("POST", "/v1/admin/keys", ann, {"user": "eve", "workspaces": {"team-b": "reader"}})
        missing = send("POST", "/v1/admin/keys", ann, {"user": "eve", "workspaces": {"team-zz": "reader"}})
        assert (foreign.status_code, missing.status_code) == (404, 404)
        assert foreign.json()["detail"].replace("team-b", "X") == missing.json()["detail"].replace("team-zz", "X")

        # ... and manages team-a's own keys: make, change (not into team-b), revoke
        dan_made = send("POST", "/v1/admin/keys", ann, {"user": "dan", "workspaces": {"team-a": "reader"}})
        assert dan_made.status_code == 201, dan_made.text
        dan, dan_id = dan_made.json()["key"], dan_made.json()["key_id"]
        assert dan_id in {k["key_id"] for k in get("/v1/admin/keys", ann).json()}
        note = {"units": "#k1 {tea} [contains] {caffeine}\n", "doc": "tea.units"}
        assert send("POST", "/v1/ingest", dan, note).status_code == 403  # a reader
        up = send("PATCH", f"/v1/admin/keys/{dan_id}", ann, {"workspaces": {"team-a": "writer"}})
        assert up.status_code == 200 and up.json()["workspaces"] == {"team-a": "writer"}
        assert send("POST", "/v1/ingest", dan, note).status_code == 202
        assert send("PATCH", f"/v1/admin/keys/{dan_id}", ann,
                    {"workspaces": {"team-a": "writer", "team-b": "reader"}}).status_code == 404
        assert get("/w/team-b/v1/stats", dan).status_code == 404
        assert send("DELETE", f"/v1/admin/keys/{dan_id}", ann).status_code == 200
        assert get("/v1/stats", dan).status_code == 401

        # the deployment's only admin in default keeps it: nobody could manage keys over REST after
        root_id = root.split("_")[1]
        kept = send("PATCH", f"/v1/admin/keys/{root_id}", root, {"workspaces": {"team-a": "admin"}})
        assert kept.status_code == 409, kept.text
        assert {k["key_id"]: k["workspaces"] for k in get("/v1/admin/keys", root).json()}[root_id] == {
            "default": "admin"}

        # the deployment's admin revokes the key of team-b: refused from the next request on
        assert send("DELETE", f"/v1/admin/keys/{cy_id}", root).status_code == 200
        assert get("/v1/stats", cy).status_code == 401
        log.flush()
        text = Path(log.name).read_text()
    for key in (cy, dan, root, ann):
        assert key.split("_")[2] not in text, "a secret reached the server's log"


def test_kg_keys_grant_replaces_a_keys_workspaces(tmp_path: Path):
    """`kg keys grant` beside the store: the same field (`workspaces`) as REST; an unknown
    workspace or key id is exit 2 naming it, and changes nothing."""
    import json

    env = env_for(tmp_path / "kg")
    for ws in ("team-a", "team-b"):
        assert kg(env, "workspaces", "create", ws).returncode == 0
    key = workspace_key(env, "cy", "team-a:writer", "team-b")
    key_id = key.split("_")[1]
    done = kg(env, "keys", "grant", key_id, "--workspace", "team-b:admin", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["workspaces"] == {"team-b": "admin"} and key.split("_")[2] not in done.stdout
    listed = {k["key_id"]: (k["workspaces"], k["role"]) for k in json.loads(kg(env, "keys", "list", "--json").stdout)}
    assert listed[key_id] == ({"team-b": "admin"}, "admin")
    bad = kg(env, "keys", "grant", key_id, "--workspace", "nope")
    assert bad.returncode == 2 and "'nope'" in bad.stderr
    gone = kg(env, "keys", "grant", "NoSuch12", "--workspace", "team-a")
    assert gone.returncode == 2 and "NoSuch12" in gone.stderr
    assert kg(env, "keys", "grant", key_id).returncode == 2  # no workspace: revoke takes them all
    listed = {k["key_id"]: k["workspaces"] for k in json.loads(kg(env, "keys", "list", "--json").stdout)}
    assert listed[key_id] == {"team-b": "admin"}

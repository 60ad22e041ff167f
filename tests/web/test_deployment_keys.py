"""The deployment's keys on the page (docs/workspaces.md "Keys over REST"), in Chromium: the
deployment's admin (admin in ``default``, on a server of every workspace) sees every key with its
workspaces and gives a key a role in a workspace or takes one away; each change is checked with
the changed key itself over REST (it now reaches, or no longer reaches, that workspace). The
REST route's guard holds on the page (the deployment's only admin keeps admin in ``default``),
and a workspace's own admin sees no such view."""

from __future__ import annotations

from pathlib import Path

import httpx
from playwright.sync_api import expect

from tests.processes import serving
from tests.server.test_workspaces_rest import _two_workspaces, workspace_key
from tests.web.conftest import sign_in


def _status(base: str, key: str, workspace: str) -> int:
    return httpx.get(f"{base}/w/{workspace}/v1/documents", headers={"Authorization": f"Bearer {key}"},
                     timeout=60).status_code


def _key_id(key: str) -> str:
    return key.split("_")[1]


def test_the_deployment_admin_grants_and_takes_workspace_roles_on_the_page(page, tmp_path: Path):
    env = _two_workspaces(tmp_path)
    root = workspace_key(env, "root", "default:admin")
    ann = workspace_key(env, "ann", "team-a:admin")
    bob = workspace_key(env, "bob", "team-b:reader")
    with serving(env) as (base, _, _):
        assert (_status(base, bob, "team-a"), _status(base, bob, "team-b")) == (404, 200)
        sign_in(page, base, root)
        page.goto(base + "/ui/admin")
        rows = page.locator("#all-keys tbody tr")
        expect(rows).to_have_count(3)  # every key, those of workspaces root holds no role in too
        bob_row = page.locator(f'#all-keys tr[data-deployment-key="{_key_id(bob)}"]')
        expect(bob_row.locator(".workspaces")).to_have_text("team-b:reader")
        expect(page.locator(f'#all-keys tr[data-deployment-key="{_key_id(ann)}"] .workspaces')).to_have_text("team-a:admin")

        def set_role(key: str, workspace: str, role: str) -> None:
            page.get_by_label(f"workspace for {_key_id(key)}").select_option(workspace)
            page.get_by_label(f"access for {_key_id(key)}").select_option(role)
            page.get_by_role("button", name=f"apply to {_key_id(key)}").click()

        set_role(bob, "team-a", "writer")
        expect(bob_row.locator(".workspaces")).to_have_text("team-a:writer team-b:reader")
        assert (_status(base, bob, "team-a"), _status(base, bob, "team-b")) == (200, 200)
        set_role(bob, "team-b", "none")
        expect(bob_row.locator(".workspaces")).to_have_text("team-a:writer")
        assert (_status(base, bob, "team-a"), _status(base, bob, "team-b")) == (200, 404)

        root_row = page.locator(f'#all-keys tr[data-deployment-key="{_key_id(root)}"] .workspaces')
        set_role(root, "team-a", "reader")
        expect(root_row).to_have_text("default:admin team-a:reader")
        set_role(root, "default", "none")  # the deployment's only admin: the route refuses (409)
        expect(page.locator("#grant-status")).to_contain_text("only admin")
        expect(root_row).to_have_text("default:admin team-a:reader")
        set_role(bob, "team-a", "none")  # no workspace left: refused (422), revoking is another action
        expect(page.locator("#grant-status")).to_contain_text("not changed")
        listed = httpx.get(f"{base}/w/default/v1/admin/keys", headers={"Authorization": f"Bearer {root}"}, timeout=60).json()
        assert {k["user"]: k["workspaces"] for k in listed} == {
            "root": {"default": "admin", "team-a": "reader"}, "ann": {"team-a": "admin"}, "bob": {"team-a": "writer"}}
        page.reload()  # what the page shows after a reload is what the store holds
        expect(bob_row.locator(".workspaces")).to_have_text("team-a:writer")
        assert all("409" in e or "422" in e for e in page.kg_errors), page.kg_errors  # only the two refusals

        page.context.clear_cookies()
        sign_in(page, base, ann)  # a workspace's admin: its workspace's keys only, no deployment view
        page.goto(base + "/ui/admin")
        expect(page.locator("#keys")).to_be_visible()
        expect(page.locator("#deployment-keys")).to_have_count(0)

"""The page's workspace chooser (docs/workspaces.md), in Chromium, by keyboard only: a key of A+B
signs in, the page acts in one workspace (A: B's unit is not found), the chooser switches it to
B (B's unit and its marker show), and a key of A alone sees no chooser and never B's unit."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

from tests.processes import serving
from tests.server.test_workspaces_rest import MARKER, _two_workspaces, workspace_key
from tests.web.test_access import tab_to


def test_the_chooser_switches_the_page_between_the_key_s_workspaces_by_keyboard(page, tmp_path: Path):
    env = _two_workspaces(tmp_path)
    key_ab, key_a = workspace_key(env, "cy", "team-a:reader", "team-b:reader"), workspace_key(env, "ann", "team-a")
    with serving(env) as (base, _, _):
        page.goto(base + "/")
        tab_to(page, "#key")
        page.keyboard.type(key_ab)
        page.keyboard.press("Enter")
        page.wait_for_url(base + "/ui/ask")
        chooser = page.locator("#workspace-select")
        expect(chooser).to_have_value("team-a")
        page.goto(base + "/ui/provenance/w2")
        assert MARKER not in page.content()
        page.goto(base + "/ui/documents")
        tab_to(page, "#workspace-select")
        page.keyboard.press("ArrowDown")  # the next workspace: team-b
        tab_to(page, ".workspace-chooser button")
        page.keyboard.press("Enter")
        page.wait_for_url(base + "/ui/documents")
        expect(page.locator("#workspace-select")).to_have_value("team-b")
        page.goto(base + "/ui/provenance/w2")
        assert MARKER in page.content()

        page.context.clear_cookies()
        page.goto(base + "/")
        tab_to(page, "#key")
        page.keyboard.type(key_a)
        page.keyboard.press("Enter")
        page.wait_for_url(base + "/ui/ask")
        assert page.locator("#workspace-select").count() == 0
        page.goto(base + "/ui/provenance/w2")
        assert MARKER not in page.content()
        page.goto(base + "/w/team-b/ui/provenance/w2")  # B named in the path: not found for A's key
        assert MARKER not in page.content() and "no workspace" in page.content()

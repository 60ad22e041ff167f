"""A real ``kg serve`` (embedded backend, the demo corpus, the offline model; it runs its jobs
itself) on a free loopback port, driven by Debian's Chromium through Playwright. Skipped only where
Playwright or Chromium is missing outside CI."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.processes import env_for, kg, new_key, serving

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
DEMO = Path(__file__).resolve().parents[2] / "demo" / "units"
ARTIFACTS = Path(os.environ.get("KG_WEB_ARTIFACTS", Path(__file__).parent / "artifacts"))
XSS = "<script>alert(1)</script>"


@pytest.fixture(scope="session")
def server(tmp_path_factory) -> Iterator[dict]:
    root = tmp_path_factory.mktemp("web")
    env = env_for(root / "kg", KG_ALLOWED_HOSTS="127.0.0.1,localhost")
    (root / "xss.units").write_text(f"#x1 {{{XSS}}} [is a] {{test string}}\n", "utf-8")
    (root / "team").mkdir()
    (root / "team" / "forget-me.units").write_text("#fm1 {web page} [is a] {temporary note}\n"
                                                   "#fm2 {temporary note} [has] {two lines}\n", "utf-8")
    (root / "team" / "keep.units").write_text("#kp1 {茶} [is a] {飲み物}\n", "utf-8")  # CJK labels
    (root / "team" / "replace-me.units").write_text("{draft plan} [has] {first step}\n", "utf-8")
    done = kg(env, "ingest", str(DEMO), str(root / "xss.units"))
    assert done.returncode == 0, done.stderr
    done = kg(env, "sync", str(root / "team"))  # documents with their text (the lifecycle's records)
    assert done.returncode == 0, done.stderr
    keys = {role: new_key(env, f"web-{role}", role) for role in ("reader", "writer", "admin")}
    with serving(env) as (base, proc, log):
        yield {"base": base, "keys": keys, "root": root, "log": log}


@pytest.fixture(scope="session")
def no_model_server(tmp_path_factory) -> Iterator[dict]:
    """A ``kg serve`` nobody chose a model for (no KG_LLM_MODEL, no config file): Ask answers from
    retrieval only. A small document is enough."""
    root = tmp_path_factory.mktemp("web-no-model")
    env = env_for(root / "kg", KG_ALLOWED_HOSTS="127.0.0.1,localhost")
    env.pop("KG_LLM_MODEL")
    env.pop("KG_CONFIG", None)
    (root / "docs").mkdir()
    (root / "docs" / "health.units").write_text("#nm1 {smoking} [causes] {lung cancer}\n"
                                                "#nm2 {smoking} [causes] {heart disease}\n"
                                                "#nm3 {tea} [is a] {drink}\n", "utf-8")
    done = kg(env, "ingest", str(root / "docs"))
    assert done.returncode == 0, done.stderr
    key = new_key(env, "web-no-model", "reader")  # before serving: beside it only a first admin key may be made
    with serving(env) as (base, proc, log):
        yield {"base": base, "key": key, "log": log}


@pytest.fixture(scope="package")
def browser():
    """Package scope: Playwright's sync API keeps an event loop running while it is open, which
    would make every later ``asyncio.run`` (tests/server's MCP tests, run after these) fail."""
    pw = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing (.ci/run installs Debian's chromium)")
        pytest.skip(f"{CHROMIUM} is missing")
    with pw.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("dialog", lambda d: (errors.append("dialog: " + d.message), d.dismiss()))
    pg.kg_errors = errors  # type: ignore[attr-defined]
    yield pg
    ctx.close()


def sign_in(page, base: str, key: str) -> None:
    page.goto(base + "/")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(base + "/ui/ask")


def signed_in(page, server: dict, role: str, path: str) -> str:
    """Sign in with the ``role`` key and open ``path``; returns the server's base URL."""
    base = server["base"]
    sign_in(page, base, server["keys"][role])
    page.goto(base + path)
    return base


def shoot(page, name: str) -> None:
    """Screenshots at 1280 and 390 px wide, saved as test artefacts."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]*)">')


def web_client(base: str, key: str) -> tuple[httpx.Client, str]:
    """An HTTP client signed in to the page with ``key`` (its session cookie kept, redirects
    not followed, so a test sees each 303), and the session's CSRF token."""
    client = httpx.Client(base_url=base, follow_redirects=False)
    r = client.post("/ui/login", data={"key": key})
    assert r.status_code == 303, r.text
    found = CSRF_META.search(client.get("/ui/ask").text)
    assert found and found.group(1)
    return client, found.group(1)


def find_path(page, source: str, target: str) -> None:
    """Explore's "Find path" from ``source`` to ``target``, waited out: the list ends at the
    target, starts at the source and shows no error."""
    from playwright.sync_api import expect

    page.get_by_label("From", exact=True).fill(source)
    page.get_by_label("To", exact=True).fill(target)
    page.get_by_role("button", name="Find path").click()
    expect(page.locator("#path li").last).to_contain_text(target)
    expect(page.locator("#path li.error")).to_have_count(0)
    expect(page.locator("#path li").first).to_contain_text(source)


def drag_node(page, node_id: str) -> tuple[dict, dict]:
    """Drags the graph node ``node_id`` with the mouse (ten small moves right and down); its
    model position (start, end)."""
    x, y, start = page.evaluate("""(id) => { const cy = window.kgGraph.cy(); const n = cy.getElementById(id);
        const box = document.getElementById('graph').getBoundingClientRect(); const p = n.renderedPosition();
        return [box.left + p.x, box.top + p.y, n.position()]; }""", node_id)
    page.mouse.move(x, y)
    page.mouse.down()
    for i in range(1, 11):
        page.mouse.move(x + 8 * i, y + 4 * i)
    page.mouse.up()
    return start, page.evaluate("(id) => window.kgGraph.cy().getElementById(id).position()", node_id)


def upload_on_jobs_page(page, path) -> str:
    """Uploads the file ``path`` with the Jobs page's one-file form; the queued job's id."""
    from playwright.sync_api import expect

    page.get_by_label("Upload a file").set_input_files(str(path))
    page.get_by_role("button", name="Upload", exact=True).click()
    expect(page.locator("#upload-status")).to_contain_text("Queued job")
    return re.search(r"Queued job (\S+)", page.locator("#upload-status").inner_text()).group(1)

"""The page's static files (cached by content hash, compressed), the REST reference at /docs
(Swagger UI from the package: it works with no network), and a Content-Security-Policy that no
page load violates."""

from __future__ import annotations

import gzip
import hashlib
import re
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from playwright.sync_api import expect

from tests.web.conftest import signed_in, web_client

STATIC = Path(__file__).resolve().parents[2] / "kgservice" / "web" / "static"
CSP_WATCH = """window.__csp = []; document.addEventListener('securitypolicyviolation',
  (e) => window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || 'inline')));"""


def static_urls(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="(/ui/static/[^"]+)"', html)


def test_static_files_carry_their_content_hash_and_are_kept_a_year(server):
    client, _ = web_client(server["base"], server["keys"]["reader"])
    seen = set()
    for page in ("/ui/ask", "/ui/explore", "/ui/documents"):
        for url in static_urls(client.get(page).text):
            seen.add(url)
    assert {"app.js", "app.css", "vendor/htmx-2.0.4/htmx.min.js", "vendor/cytoscape-3.30.4/cytoscape.min.js"} <= {
        urlsplit(u).path.removeprefix("/ui/static/") for u in seen}
    for url in seen:
        rel = urlsplit(url).path.removeprefix("/ui/static/")
        body = (STATIC / rel).read_bytes()
        assert urlsplit(url).query == "v=" + hashlib.sha256(body).hexdigest()[:16], url
        r = client.get(url)
        assert r.status_code == 200 and r.content == body
        assert "immutable" in r.headers["cache-control"] and "no-store" not in r.headers["cache-control"]
        assert int(re.search(r"max-age=(\d+)", r.headers["cache-control"]).group(1)) >= 30 * 24 * 3600
        # an unversioned (or stale) URL is revalidated, never kept blindly
        plain = client.get(urlsplit(url).path)
        assert plain.headers["cache-control"] == "no-cache" and plain.content == body
        again = client.get(urlsplit(url).path, headers={"If-None-Match": plain.headers["etag"]})
        assert again.status_code == 304 and again.content == b""
    for bad in ("/ui/static/../pages.py", "/ui/static/%2e%2e/pages.py", "/ui/static/nope.js"):
        assert client.get(bad).status_code == 404


def test_static_text_files_are_sent_compressed(server):
    for rel in ("app.js", "vendor/cytoscape-3.30.4/cytoscape.min.js", "app.css"):
        body = (STATIC / rel).read_bytes()
        with httpx.Client(base_url=server["base"]) as c, c.stream(
                "GET", "/ui/static/" + rel, headers={"Accept-Encoding": "gzip"}) as r:
            raw = b"".join(r.iter_raw())
            assert r.headers["content-encoding"] == "gzip" and "Accept-Encoding" in r.headers["vary"]
        assert gzip.decompress(raw) == body and len(raw) < len(body) * 0.6, rel
        with httpx.Client(base_url=server["base"]) as c, c.stream(
                "GET", "/ui/static/" + rel, headers={"Accept-Encoding": "identity"}) as r:
            assert "content-encoding" not in r.headers and b"".join(r.iter_raw()) == body


def offline(page, base: str) -> list[str]:
    """Aborts every request that does not go to the test server (a CDN would be one)."""
    elsewhere: list[str] = []

    def route(r):
        if r.request.url.startswith(base):
            r.continue_()
        else:
            elsewhere.append(r.request.url)
            r.abort()
    page.route("**/*", route)
    return elsewhere


def test_api_reference_works_offline_and_is_linked_from_the_page(server, page):
    base = server["base"]
    elsewhere = offline(page, base)
    page.add_init_script(CSP_WATCH)
    signed_in(page, server, "reader", "/ui/ask")
    page.get_by_role("navigation", name="main").get_by_role("link", name="API").click()
    page.wait_for_url(base + "/docs")
    # Swagger UI drew the server's own routes from /openapi.json
    expect(page.locator(".opblock-summary-path", has_text="/v1/ask").first).to_be_visible(timeout=60_000)
    expect(page.locator(".opblock-summary-path", has_text="/v1/documents").first).to_be_visible()
    assert elsewhere == []
    assert page.evaluate("() => window.__csp") == []
    assert not [e for e in page.kg_errors if "Content Security Policy" in e]
    # public, as /openapi.json is: no key needed to read the reference
    r = httpx.get(base + "/docs")
    assert r.status_code == 200 and "swagger-ui-bundle.js" in r.text and "cdn" not in r.text.lower()


def test_no_page_load_violates_the_content_security_policy(server, page):
    page.add_init_script(CSP_WATCH)
    signed_in(page, server, "reader", "/ui/explore")
    page.get_by_label("Search entry nodes").fill("smoking")
    page.get_by_role("button", name="Search").click()
    page.locator("button.hit", has_text="smoking").first.click()
    expect(page.locator("#graph canvas").first).to_be_attached()  # cytoscape has started
    for path in ("/ui/ask", "/ui/documents"):
        assert page.evaluate("() => window.__csp") == [], page.url
        page.goto(server["base"] + path)
    assert page.evaluate("() => window.__csp") == []
    assert not [e for e in page.kg_errors if "Content Security Policy" in e or "Refused" in e]

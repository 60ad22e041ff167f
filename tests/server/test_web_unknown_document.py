"""The document view of an id no document and no change ever had (a mistyped or made-up
``/ui/documents?doc=…``) says so on the page. It was a 500 "Internal Server Error": the view asked
for the document's history first, which refuses an unknown id."""

from __future__ import annotations

from tests.server.test_web_gate import signed_in


def test_an_unknown_document_is_named_on_the_page_not_a_500(app):
    with signed_in(app) as c:
        r = c.get("/ui/documents?doc=no-such-doc.md")
        assert r.status_code == 200, r.text
        assert 'class="error"' in r.text and "no document &#39;no-such-doc.md&#39;" in r.text

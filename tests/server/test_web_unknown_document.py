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


def test_a_refusal_inside_any_page_is_a_page_with_its_status(app, monkeypatch):
    """The pages are their own app, outside the API's error handlers: a library refusal raised in
    one escaped as a bare-text 500 (and a traceback in the log). It is a page now."""
    from kgservice.errors import InputError, ServiceError
    from kgservice.web import documents

    def refuse(kb, doc_id):
        raise InputError(f"no such thing as {doc_id!r}")

    monkeypatch.setattr(documents, "document_view", refuse)
    with signed_in(app) as c:
        r = c.get("/ui/documents?doc=x.md")
        assert r.status_code == 422 and r.headers["content-type"].startswith("text/html")
        assert "no such thing as &#39;x.md&#39;" in r.text and 'role="alert"' in r.text

        def down(kb, doc_id):
            raise ServiceError(f"the store at {app.state.ctx.settings.data_dir.resolve()} is down")

        monkeypatch.setattr(documents, "document_view", down)
        r = c.get("/ui/documents?doc=x.md")
        assert r.status_code == 503 and "is down" in r.text
        assert str(app.state.ctx.settings.data_dir.resolve()) not in r.text  # no server path shown

"""With no key (`kg mcp` over stdio, `kg serve --no-auth`) a write refused names the local
operator's role and where it is set, not "local's key has the reader role": there is no key, and
the fix is KG_LOCAL_ROLE."""

from __future__ import annotations

from kgservice.server.auth import Principal, Role
from kgservice.server.deps import refusal
from tests.server.test_mcp import call, make, run


def test_a_write_refused_without_a_key_names_kg_local_role(kb):
    _, mcp = make(kb.settings, kb, "reader")
    r = run(call(mcp, "ingest_text", {"text": "#q1 {a} [is a] {b}"}))
    assert r.is_error
    text = r.content[0].text
    assert "needs the writer role" in text and "KG_LOCAL_ROLE" in text and "key has" not in text


def test_a_keys_refusal_still_names_its_user():
    status, why = refusal(Principal("bob", Role.reader, key_id="abc12345"), Role.writer)
    assert status == 403 and why == "this needs the writer role; bob's key has the reader role"

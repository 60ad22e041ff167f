"""The history credits a retract and an undo to the signed-in caller (REST key or web session),
not to the server's process user: they run in the request, not as a job carrying its submitter."""

from __future__ import annotations

from fastapi.testclient import TestClient

from kgservice.service import KnowledgeBase
from tests.server.conftest import BASE, auth


def test_rest_retract_and_undo_name_each_caller_in_the_history(app, keys: dict[str, str]) -> None:
    with TestClient(app, base_url=BASE) as c:
        r = c.post("/v1/units/s4/retract", json={"reason": "too broad"}, headers=auth(keys["writer"]))
        assert r.status_code == 200, r.text
        retract = c.get("/v1/history", headers=auth(keys["reader"])).json()[-1]
        assert (retract["kind"], retract["who"]) == ("retract", "user-writer")
        r = c.post(f"/v1/changes/{retract['id']}/undo", headers=auth(keys["admin"]))
        assert r.status_code == 200, r.text
        hist = c.get("/v1/history", headers=auth(keys["reader"])).json()
    assert [(h["kind"], h["who"]) for h in hist[-2:]] == [("retract", "user-writer"), ("undo", "user-admin")]


def test_web_retract_and_undo_name_each_signed_in_user(app, kb: KnowledgeBase) -> None:
    from tests.server.test_web_gate import csrf_of, signed_in

    with signed_in(app, "writer") as bob:  # the app (and its knowledge base) runs until this block ends
        csrf = csrf_of(bob.get("/ui/documents").text)
        r = bob.post("/ui/documents/retract", data={"unit": "#s4", "reason": "r", "confirm": "yes", "csrf": csrf})
        assert r.status_code == 200, r.text
        retract = kb.history()[-1]
        assert (retract.kind, retract.who) == ("retract", "web-writer")
        alice = signed_in(app, "admin")
        csrf = csrf_of(alice.get("/ui/documents").text)
        r = alice.post("/ui/documents/undo", data={"change": retract.id, "confirm": "yes", "csrf": csrf})
        assert r.status_code == 200, r.text
        assert [(h.kind, h.who) for h in kb.history()[-2:]] == [("retract", "web-writer"), ("undo", "web-admin")]

def test_library_retract_without_a_user_keeps_the_process_user(kb: KnowledgeBase) -> None:
    import getpass

    kb.retract(["s4"], "r")
    assert kb.history()[-1].who == getpass.getuser()

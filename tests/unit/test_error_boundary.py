"""The CLI and the server map only kgservice's two error roots, so the library (everything but
``cli/`` and ``server/``) must not raise a bare ``ValueError`` / ``RuntimeError`` / ``OSError``
where a user could meet it: it raises the kgservice class that says what it is. The few bare
raises left are listed here with the reason none of them reaches a boundary."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "kgservice"
BARE = {"ValueError", "RuntimeError", "OSError", "IOError", "FileNotFoundError", "PermissionError", "Exception"}
SHELLS = ("cli", "server")  # the boundaries themselves

LLM_REPLY = "an LLM reply check: llm.complete_json catches it, shows the model its mistake, then raises LLMOutputError"
PYDANTIC = "a pydantic validator: pydantic wants ValueError, and its ValidationError is caught where the model is parsed"

#: (file, message start) -> why that raise never reaches a user as a bare builtin
ALLOWED = {
    ("model.py", "a value needs exactly one of"): PYDANTIC,
    ("extraction/schema.py", "empty "): PYDANTIC,
    ("extraction/schema.py", "{what} is "): PYDANTIC,
    ("extraction/schema.py", "an argument is exactly one of"): PYDANTIC,
    ("extraction/schema.py", "a modifier row has exactly one of"): PYDANTIC,
    ("extraction/schema.py", "two units share a local id"): PYDANTIC,
    ("extraction/schema.py", "unit {u.id or u.subject} refers to id"): PYDANTIC,
    ("extraction/schema.py", "units refer to each other in a cycle: "): PYDANTIC + " (the second: unreachable "
                                                                        "after that validator ran)",
    ("extraction/extract.py", "; "): LLM_REPLY,
    ("drilldown/judge.py", "relevant lists ids that are not among the units"): LLM_REPLY,
    ("answer/grounded.py", "; "): LLM_REPLY,
    ("answer/reply.py", "the reply is empty"): LLM_REPLY,
    ("llm/prompts.py", "prompt {self.name}_v{self.version} has no section"): "a packaged prompt file is malformed: "
                                                                           "a build defect the prompt tests catch",
    ("llm/prompts.py", "prompt file name must look like"): "a packaged prompt file is misnamed: a build defect",
    ("caches/store.py", "cache entry {cache}/{key[:12]} has no dependency"): "an invariant of the cache code "
                                                                            "(every put names its invalidation)",
    ("caches/store.py", "topk entries need the query vector"): "an invariant of the cache code",
    ("answer/streaming.py", "not JSON at character"): "the streamed draft's prefix reader: AnswerStream catches it "
                                                       "and stops drafting; the grounded check decides the reply",
    ("llm/client.py", "the provider's stream ended with no reply"): "raised inside the provider call: "
                                                                    "LLMClient wraps it as LLMProviderError",
    ("lifecycle/model.py", "parts must be one of "): "an internal argument (GraphStore.documents' callers pass a "
                                                      "literal mypy checks): a code defect, never user input",
    ("graphify/memory.py", "outcome must be one of"): "graphify imports only config and the saved-result model "
                                                      "from the core, lazily (DESIGN §7); the server checks the "
                                                      "outcome in its request model first",
}


def _message_start(node: ast.Raise) -> str:
    exc = node.exc
    if not isinstance(exc, ast.Call) or not exc.args:
        return ""
    arg = exc.args[0]
    while isinstance(arg, ast.BinOp):  # "..." + x
        arg = arg.left
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                       for v in arg.values)
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and isinstance(arg.func.value, ast.Constant):
        return str(arg.func.value.value)  # "; ".join(...)
    return ""


def bare_raises() -> list[tuple[str, str, int]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.split("/")[0] in SHELLS:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(target, ast.Name) and target.id in BARE:
                found.append((rel, _message_start(node), node.lineno))
    return found


def _allowed(rel: str, message: str) -> bool:
    return any(rel == f and message.startswith(start) for f, start in ALLOWED)


def test_the_library_raises_no_new_bare_builtin():
    new = [f"kgservice/{rel}:{line}: {message[:60]!r}" for rel, message, line in bare_raises()
           if not _allowed(rel, message)]
    assert not new, ("raise the kgservice error that says what it is (kgservice/errors.py: InputError, "
                     "InvalidArgument, InputFileError, ConfigError, ServiceError, ServiceFileError, ...) "
                     "instead of a bare builtin, or add it to ALLOWED with why no user meets it:\n" + "\n".join(new))


@pytest.mark.parametrize("key", sorted(ALLOWED))
def test_every_allowed_raise_still_exists(key: tuple[str, str]):
    """An entry whose raise is gone is removed, so the list stays the truth."""
    assert any(rel == key[0] and message.startswith(key[1]) for rel, message, _ in bare_raises()), key


def test_the_scan_sees_a_bare_raise(tmp_path, monkeypatch):
    """The scan itself: a bare ValueError in a library module is found, one in cli/ is not."""
    (tmp_path / "cli").mkdir()
    (tmp_path / "lib.py").write_text('def f():\n    raise ValueError(f"bad {1}")\n', "utf-8")
    (tmp_path / "cli" / "x.py").write_text('def g():\n    raise ValueError("fine here")\n', "utf-8")
    monkeypatch.setattr(__import__(__name__, fromlist=["PACKAGE"]), "PACKAGE", tmp_path)
    assert bare_raises() == [("lib.py", "bad {1}", 2)]


def test_the_cli_maps_the_roots_and_reports_anything_else_in_one_line(capsys):
    import typer

    from kgservice.cli.common import errors_reported
    from kgservice.errors import InvalidArgument, ServiceFileError

    for exc, code in ((InvalidArgument("limit must be positive"), 2), (ServiceFileError("jobs.sqlite3 is damaged"), 1),
                      (KeyError("a bug"), 1)):
        with pytest.raises(typer.Exit) as ei:
            with errors_reported():
                raise exc
        assert ei.value.exit_code == code, exc
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[0] == "error: limit must be positive" and lines[1] == "error: jobs.sqlite3 is damaged"
    assert lines[2].startswith("error: internal error") and "KeyError" in lines[2] and len(lines) == 3  # no traceback


def test_the_server_maps_the_roots_and_answers_anything_else_with_the_500_envelope():
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from kgservice.errors import InvalidArgument, ServiceFileError
    from kgservice.server.errors import install

    app = FastAPI()
    install(app)
    raised = {"input": InvalidArgument("limit must be positive"), "file": ServiceFileError("jobs.sqlite3 is damaged"),
              "bug": KeyError("a bug")}

    @app.get("/{what}")
    def fail(what: str) -> None:
        raise raised[what]

    with TestClient(app, raise_server_exceptions=False) as c:
        r = c.get("/input")
        assert (r.status_code, r.json()) == (422, {"detail": "limit must be positive", "status": 422})
        r = c.get("/file")
        assert r.status_code == 503 and r.json()["detail"] == "jobs.sqlite3 is damaged" and r.headers["retry-after"]
        r = c.get("/bug")
        assert r.status_code == 500 and r.json()["status"] == 500 and "KeyError" in r.json()["detail"]

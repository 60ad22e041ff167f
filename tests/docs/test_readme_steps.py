"""The README's steps run as written, in a fresh folder, and print what the README shows.

Each block is taken from README.md itself, so an edit to a command or to its shown output that
stops being true fails here: "What you get" (an excerpt of `kg demo`), "Your own data in four
commands" (a unit file, `kg ingest`, `kg ask`, `kg expand`, then the output shown beneath),
"Serving a team" (a key, `kg serve`, the curl calls and `--server` commands), the MCP client
configuration (its `kg mcp` entry, and the tool names the README lists) and "From Python".

Shown output may elide with "…": a shown line matches an output line when its pieces between
the "…" marks appear in that line in order (a line without "…" must equal an output line).
The commands run the `kg` entry point with this checkout first on PYTHONPATH and the default
embedder, as a reader runs them; no model is configured (the README's answers are no-model
answers, and `kg demo` picks its offline stand-in itself)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import free_port, stop, wait_ready

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text("utf-8")


def _section(title: str) -> str:
    head = f"\n## {title}\n"
    assert head in README, f"the README lost its section {title!r}"
    return README.split(head, 1)[1].split("\n## ", 1)[0]


def _fences(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced block, in order."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S)]


def _kg() -> str:
    kg = shutil.which("kg", path=str(Path(sys.executable).parent)) or shutil.which("kg")
    if kg is None:
        pytest.skip("no kg entry point installed")
    return kg


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KG_") and k != "NEO4J_PASSWORD"}
    env.update(PYTHONPATH=str(ROOT), PATH=f"{Path(_kg()).parent}{os.pathsep}{env.get('PATH', '')}",
               LITELLM_LOCAL_MODEL_COST_MAP="True")
    return env


def _bash(script: str, cwd: Path, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _matches(shown: str, line: str) -> bool:
    pattern = ".*".join(re.escape(piece) for piece in shown.split("…"))
    return re.fullmatch(pattern, line) is not None


def _assert_shown(shown: str, output: str) -> None:
    lines = [line.rstrip().rstrip("─").rstrip() for line in output.splitlines()]
    missing = [s for s in shown.strip("\n").splitlines() if not any(_matches(s.rstrip(), o) for o in lines)]
    assert not missing, "README shows lines the command no longer prints:\n" + "\n".join(missing) + \
        "\n--- output ---\n" + output


def test_shown_lines_match_with_and_without_elision():
    # the matcher itself: it must not let a changed line through
    assert _matches("a …/demo/units", "a /x/y/demo/units")
    assert _matches("$ kg ask 'q' …", "$ kg ask 'q' --llm kgoffline/rules")
    assert not _matches("$ kg ask 'q' …", "$ kg ask 'other' --llm kgoffline/rules")
    assert not _matches("6 unit file(s): 746 units added", "6 unit file(s): 747 units added")
    assert not _matches("x", "x y")


def test_the_demo_excerpt_is_what_kg_demo_prints(tmp_path):
    [(_, shown)] = [f for f in _fences(_section("What you get")) if f[0] == ""]
    done = _bash("kg demo", tmp_path, _env())
    assert done.returncode == 0, done.stdout + done.stderr
    _assert_shown(shown, done.stdout)
    assert (tmp_path / "kg-demo").is_dir() and not (tmp_path / ".kg").exists()  # where the README says it writes


def _own_data(tmp_path: Path) -> tuple[str, subprocess.CompletedProcess]:
    fences = _fences(_section("Your own data in four commands"))
    (lang, steps), (out_lang, shown) = fences[0], fences[1]
    assert lang == "bash" and out_lang == ""
    done = _bash(steps, tmp_path, _env())
    assert done.returncode == 0, done.stdout + done.stderr
    return shown, done


def test_own_data_in_four_commands_runs_and_prints_what_is_shown(tmp_path):
    shown, done = _own_data(tmp_path)
    _assert_shown(shown, done.stdout + done.stderr)
    # the facts the README's question asks for, worked out by hand from the unit file it writes:
    # coffee contains caffeine (c1); espresso reaches it through "espresso is a coffee" (c3)
    assert "[c1]" in done.stdout and "#c3 {espresso} [is a] {coffee}" in done.stdout
    assert (tmp_path / ".kg").is_dir()  # "where it lives": ./.kg of the current folder


def test_serving_steps_run_against_a_real_server(tmp_path):
    _own_data(tmp_path)
    env = _env()
    fences = [body for lang, body in _fences(_section("Serving a team")) if lang == "bash"]
    setup, calls = fences[0], fences[1]
    setup_lines = [line.split("  #", 1)[0].strip() for line in setup.splitlines()]
    assert setup_lines[0].startswith("pip install")  # the install itself is not repeated here
    made = _bash(setup_lines[1], tmp_path, env)
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    assert key.startswith("kg_")
    port = free_port()
    serve_line = setup_lines[2].replace("--port 8080", f"--port {port}")
    assert serve_line.startswith("kg serve ") and str(port) in serve_line
    log = open(tmp_path / "serve.log", "w+")
    proc = subprocess.Popen(["bash", "-c", f"exec {serve_line}"], cwd=tmp_path, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base, proc, tmp_path / "serve.log")
        lines = calls.strip("\n").splitlines()
        assert lines[0].startswith("K=kg_...; S=http://127.0.0.1:8080")
        prelude = f"K={key}; S={base}\n"
        (tmp_path / "notes" / "tea.units").write_text("#t1 {tea} [contains] {caffeine}\n", "utf-8")
        replies = []
        for line in lines[1:]:
            done = _bash(prelude + line, tmp_path, env)
            assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"
            replies.append(done.stdout)
        asked, bob, ingested, asked_cli = replies
        answer = json.loads(asked)
        assert answer["found"] and "c1" in answer["cited"]  # coffee contains caffeine
        bob = json.loads(bob)
        assert (bob["user"], bob["role"]) == ("bob", "reader") and bob["key"].startswith("kg_")
        assert "tea.units: done" in ingested and "1 units added" in ingested
        assert "[c1]" in asked_cli
        # the prose under the block: a local `kg ask` is refused at once, naming the server
        refused = _bash('kg ask "What does tea contain?"', tmp_path, env, timeout=60)
        assert refused.returncode == 1 and base in refused.stderr
        beside = _bash("kg expand tea", tmp_path, env)
        assert beside.returncode == 0 and "#t1 {tea} [contains] {caffeine}" in beside.stdout
    finally:
        stop(proc, 30)
        log.close()


def test_mcp_client_configuration_runs_kg_mcp_with_the_tools_named(tmp_path):
    _own_data(tmp_path)
    section = _section("Serving a team")
    [(_, config)] = [f for f in _fences(section) if f[0] == "json"]
    local = json.loads(config)["mcpServers"]["kg-local"]
    env = {**_env(), **local["env"], "KG_DATA_DIR": str(tmp_path / ".kg")}
    talk = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    # stdin stays open until the last reply is in: a client that closed it at once would end the
    # session before the server answered (the server may then drop what it has not answered)
    proc = subprocess.Popen([local["command"], *local["args"]], cwd=tmp_path, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    replies = {}
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in talk))
        proc.stdin.flush()
        while 2 not in replies:
            line = proc.stdout.readline()
            assert line, "kg mcp ended before answering tools/list"
            reply = json.loads(line)
            replies[reply.get("id")] = reply
    finally:
        proc.stdin.close()
        proc.wait(60)
    tools = {t["name"] for t in replies[2]["result"]["tools"]}
    named = set(re.findall(r"`([a-z]+_[a-z_]+|ask|expand)`", section.split("**Coding agents**", 1)[1].split("```", 1)[0]))
    assert {"query_graph", "ask", "ingest_text"} <= named  # the parser read the README's list
    assert named <= tools, f"the README names MCP tools kg mcp does not serve: {named - tools}"


def test_from_python_snippet_runs_as_written(tmp_path):
    [(_, code)] = [f for f in _fences(_section("From Python")) if f[0] == "python"]
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=_env(), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    # what the snippet's comments promise: two units, the class's fact reaching cat, a cited answer
    assert out[0] == "2" and out[1] == "['u1', 'u2']"
    assert re.search(r"\[u[12]\]", out[2]) or "no information" in out[2]


LINK = re.compile(r"\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))])
def test_relative_links_and_anchors_resolve(page):
    src = ROOT / page
    text = src.read_text("utf-8")
    text = re.sub(r"^```.*?^```$", "", text, flags=re.M | re.S)  # links inside code are not links
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (src.parent / path) if path else src
        if not dest.exists():
            broken.append(target)
            continue
        if anchor and dest.suffix == ".md":
            heads = {_slug(h) for h in re.findall(r"^#+ (.*)$", dest.read_text("utf-8"), re.M)}
            if anchor not in heads:
                broken.append(target)
    assert not broken, f"{page}: links to nothing: {broken}"


@pytest.mark.neo4j
def test_several_servers_block_runs_on_neo4j(tmp_path, neo4j_connection):
    """README's Neo4j block on the test Neo4j. Mapped, and only these: the server it starts is
    the test's (already running: `scripts/neo4j start` and its password line are not run
    again); its URI replaces bolt://127.0.0.1:7687; `kg serve` binds loopback on a free port
    instead of 0.0.0.0:8080; the hash embedder stands in for the default (the vectors' meaning
    is not what is checked). Checked: the ingest / expand / ask line, then the serve-and-worker
    line as one shell line: the server is ready with its vectors shared, and a file sent to it
    is stored by the worker."""
    import signal

    from tests.neo4j_helpers import wipe_all

    wipe_all(neo4j_connection)
    [block] = [b for lang, b in _fences(_section("Serving a team")) if lang == "bash" and "scripts/neo4j start" in b]
    lines = [line.split("  #", 1)[0].strip() for line in block.strip("\n").splitlines()]
    assert lines[0].startswith("export NEO4J_PASSWORD=") and lines[1].startswith("scripts/neo4j start")
    uri = os.environ["KG_TEST_NEO4J_URI"]
    export = lines[2].replace("bolt://127.0.0.1:7687", uri)
    assert export != lines[2] and "KG_VECTOR_BACKEND=neo4j" in export
    env = {**_env(), "NEO4J_PASSWORD": os.environ.get("NEO4J_PASSWORD", ""), "KG_EMBEDDER": "hash:64"}
    shutil.copytree(ROOT / "demo", tmp_path / "demo")
    first = _bash(f"{export}\n{lines[3]}", tmp_path, env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert re.search(r"\[smk-\d+\]", first.stdout) and "directed expansion of cpython" in first.stdout
    made = _bash(f"{export}\nkg keys create --user alice --role writer", tmp_path, env)
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    port = free_port()
    serve = lines[4].replace("--host 0.0.0.0 --port 8080", f"--host 127.0.0.1 --port {port}")
    assert serve != lines[4] and "& kg worker" in serve
    log = open(tmp_path / "serve.log", "w+")
    proc = subprocess.Popen(["bash", "-c", f"{export}\n{serve}"], cwd=tmp_path, env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        ready = wait_ready(base, proc, tmp_path / "serve.log")
        assert ready.json()["vectors"]["shared"] is True
        (tmp_path / "notes").mkdir()
        (tmp_path / "notes" / "tea.units").write_text("#t1 {tea} [contains] {caffeine}\n", "utf-8")
        sent = _bash(f"KG_API_KEY={key} kg ingest --server {base} notes", tmp_path, env)
        assert sent.returncode == 0 and "1 units added" in sent.stdout, sent.stdout + sent.stderr
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def test_api_page_curl_calls_answer_on_a_demo_server(tmp_path):
    """docs/api.md's curl calls, each line as written, against `kg serve` on a store holding the
    demo corpus (what the page says they need). Mapped: K, S are the real key and address;
    `<job_id>` is the job the units upload made; the server answers text with the offline
    stand-in `kgoffline/rules` (the page: text needs a model) and embeds with the hash
    embedder. Every call must answer 2xx, except cancelling a finished job: 409, as the routes
    table says."""
    text = (ROOT / "docs" / "api.md").read_text("utf-8").split("\n## Calls\n", 1)[1].split("\n## ", 1)[0]
    [(lang, block)] = _fences(text)
    lines = block.strip("\n").splitlines()
    assert lang == "bash" and lines[0].startswith("K=kg_...;")
    env = {**_env(), "KG_EMBEDDER": "hash:64", "KG_LLM_MODEL": "kgoffline/rules", "KG_RATE_LIMIT": "0"}
    shutil.copytree(ROOT / "demo", tmp_path / "demo")
    assert _bash("kg ingest demo/units", tmp_path, env).returncode == 0
    made = _bash("kg keys create --user alice --role admin", tmp_path, env)
    key = made.stdout.strip()
    port = free_port()
    log = open(tmp_path / "serve.log", "w+")
    proc = subprocess.Popen(["bash", "-c", f"exec kg serve --port {port}"], cwd=tmp_path, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    prelude = lines[0].replace("K=kg_...", f"K={key}").replace("S=http://127.0.0.1:8080", f"S={base}")
    # every curl reports its status on a line of its own after the body
    prelude += "\ncurl() { command curl -w '\\n[status %{http_code}]\\n' \"$@\"; }\n"
    job_id = None
    try:
        wait_ready(base, proc, tmp_path / "serve.log")
        for line in lines[1:]:
            if "<job_id>" in line:
                assert job_id, "the page uses a job id before any call made a job"
                line = line.replace("<job_id>", job_id)
            done = _bash(prelude + line, tmp_path, env, timeout=300)
            statuses = [int(s) for s in re.findall(r"\[status (\d+)\]", done.stdout)]
            assert done.returncode == 0 and statuses, f"{line}\n{done.stdout}{done.stderr}"
            allowed = {409} if "/cancel" in line else set()
            assert all(200 <= s < 300 or s in allowed for s in statuses), f"{line}\n{done.stdout}"
            if "Idempotency-Key" in line:
                job_id = json.loads(done.stdout.split("\n[status")[0])["job_id"]
        assert job_id
    finally:
        stop(proc, 30)
        log.close()

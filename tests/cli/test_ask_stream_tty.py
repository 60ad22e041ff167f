"""`kg ask` on a terminal (a pseudo-terminal here) shows the answer as the model writes it, then
the checked answer; through a pipe it prints only the checked answer, as before."""

from __future__ import annotations

from tests.processes import KG, env_for, kg, run_in_terminal

UNITS = """\
#p1 {Python} [created by] {Guido van Rossum}
#p2 {Python} [is a] {programming language}
"""
def run_on_tty(env: dict[str, str], *args: str) -> tuple[int, str]:
    done = run_in_terminal([*KG, *args], env)
    return done.returncode, done.stdout + done.stderr


def test_kg_ask_streams_on_a_terminal_only(tmp_path):
    env = env_for(tmp_path / "kg", KG_OFFLINE_STREAM_DELAY="0.01")
    (tmp_path / "py.units").write_text(UNITS, "utf-8")
    done = kg(env, "ingest", str(tmp_path / "py.units"))
    assert done.returncode == 0, done.stderr
    code, raw = run_on_tty(env, "ask", "Who created Python?", "--threshold", "0.7")
    assert code == 0, raw
    plain = raw
    # the draft, under its header, then the checked answer printed after it
    assert "(writing, not yet checked)" in plain
    draft_at = plain.index("(writing, not yet checked)")
    final = "Python created by Guido van Rossum. [p1]"
    assert plain.rindex(final) > draft_at
    assert "grounding check" not in plain  # the draft passed: nothing replaced
    # through a pipe (a fresh question: the first one is cached now) no draft is printed
    piped = kg(env, "ask", "What is Python?", "--threshold", "0.7")
    assert piped.returncode == 0 and "writing, not yet checked" not in piped.stdout
    assert "Python is a programming language. [p2]" in piped.stdout

"""run.py's latency clocks: every part is read on wall time, on this process's CPU (every
thread's) and on the calling thread's CPU alone, and work on another thread shows in the
second but not the third (what keeps OpenBLAS's threads, still spinning after the question's
embedding, out of the retrieval's figure). No test here asserts how long anything took: the
machine is shared; the burns below are fixed amounts of work, and only "more than zero" and
"process CPU above thread CPU" (another thread's whole burn apart) are asserted."""

from __future__ import annotations

import threading
import time


def _burn(n: int = 300_000) -> int:
    """A fixed amount of pure-Python work (no sleeping, no I/O)."""
    x = 0
    for i in range(n):
        x += i * i
    return x


def test_timed_returns_the_result_and_every_clock():
    from scripts.eval.run import CLOCKS, timed

    out, ms = timed(_burn, 1000)
    assert out == _burn(1000)
    assert tuple(ms) == CLOCKS == ("wall", "process_cpu", "thread_cpu")
    assert all(v >= 0 for v in ms.values())


def test_work_on_the_calling_thread_shows_in_thread_cpu():
    from scripts.eval.run import timed

    _, ms = timed(_burn)
    assert ms["thread_cpu"] > 0 and ms["process_cpu"] > 0


def test_work_on_another_thread_shows_in_process_cpu_only():
    """The caller starts a thread that burns, and waits for it (blocked, not spinning): that
    thread's CPU is in process CPU, not in the caller's thread CPU."""
    from scripts.eval.run import timed

    own: list[float] = []

    def other() -> None:
        t0 = time.thread_time()
        _burn()
        own.append(time.thread_time() - t0)

    def on_another_thread() -> None:
        t = threading.Thread(target=other)
        t.start()
        t.join()

    _, ms = timed(on_another_thread)
    assert own and own[0] > 0
    assert ms["process_cpu"] > ms["thread_cpu"]


def test_latency_block_has_every_clock_and_thread_cpu_leaves_the_embedding_out(tiny_ctx):
    """The embedding's BLAS work runs on other threads, so the thread clock has no "question
    embedding" or "total" part; every other part is on all three clocks, as (p50, p95)."""
    from scripts.eval.run import CLOCKS, end_to_end_latency

    timing = end_to_end_latency(tiny_ctx, repeat=1)
    assert tuple(timing) == CLOCKS
    assert {"question embedding", "total"} <= set(timing["process_cpu"]) == set(timing["wall"])
    assert set(timing["thread_cpu"]) == set(timing["wall"]) - {"question embedding", "total"}
    assert "retrieval" in timing["thread_cpu"] and "PPR baseline" in timing["thread_cpu"]
    for parts in timing.values():
        for p50, p95 in parts.values():
            assert 0 <= p50 <= p95


def test_the_line_reads_thread_cpu_only_when_the_search_runs_on_the_caller(tiny_ctx):
    """A search pool of more than one thread searches off the caller's thread (measured on
    the 51k-node graph: thread CPU then left ~4 ms of the search out), so the line falls back
    to process CPU; the tiny graph's shard has a pool of one."""
    import doctest

    from scripts.eval import run

    assert doctest.testmod(run).failed == 0
    assert run.line_clock(1) == "thread_cpu" and run.line_clock(2) == run.line_clock(None) == "process_cpu"
    assert run.search_pool(tiny_ctx.kb) == 1

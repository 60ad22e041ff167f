"""The busy control of scripts/bench/fed_indexes.py: its thread must spend at least the CPU it is
asked per batch (the catch-up's CPU it stands for), else a busy control alike to the catching-up
process would say nothing. Checked against the CPU clocks read around it, not its own count."""

import importlib.util
import os
import threading
import time
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "scripts" / "bench" / "fed_indexes.py"


@pytest.fixture(scope="module")
def fed():
    spec = importlib.util.spec_from_file_location("fed_indexes_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("mode", ["python", "c"])
def test_burn_spends_at_least_the_asked_cpu_of_its_own_thread(fed, mode):
    t0 = time.thread_time()
    got = fed.burn(0.03, mode)
    spent = time.thread_time() - t0
    assert spent >= 0.03
    assert got["steps"] >= 1 and got["longest_step_s"] <= got["cpu_s"] <= spent


def test_busy_thread_burns_once_per_batch_byte(fed):
    r, w = os.pipe()
    c0 = time.process_time()
    busy = fed.BusyThread(r)
    busy.cpu_s, busy.mode = 0.02, "python"
    os.write(w, b"xxx")  # three batches
    os.close(w)  # then the stream ends: the thread returns
    busy.thread.join()
    os.close(r)
    assert busy.burns == 3
    assert busy.spent_s >= 0.06
    assert time.process_time() - c0 >= 0.06  # the process's clock saw that CPU too


def test_thread_cpu_reads_another_threads_clock(fed):
    done, go = threading.Event(), threading.Event()
    spent = []

    def run():
        t0 = time.thread_time()
        fed.burn(0.02)
        spent.append(time.thread_time() - t0)
        go.set()
        done.wait()

    th = threading.Thread(target=run)
    th.start()
    go.wait()
    try:
        assert fed.thread_cpu(th) >= spent[0] >= 0.02
    finally:
        done.set()
        th.join()
    assert fed.thread_cpu(th) == 0.0  # ended: nothing to read

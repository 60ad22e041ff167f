"""kgservice.disk: a file replaced whole or not at all (its doctests), and the failure paths the
doctests do not reach: a writer that fails when it closes, and concurrent writers' temp names."""

from __future__ import annotations

import doctest
import gzip
import threading

import pytest

from kgservice import disk


def test_doctests():
    result = doctest.testmod(disk)
    assert result.attempted >= 4 and result.failed == 0


def test_a_writer_failing_at_close_leaves_the_old_file_and_no_temp(tmp_path):
    target = tmp_path / "dump.jsonl.gz"
    target.write_bytes(b"old")

    class FailsAtClose:
        def __init__(self, path):
            self.fh = open(path, "wb")

        def __enter__(self):
            return self.fh

        def __exit__(self, *exc):
            self.fh.close()
            raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        with disk.replaced(target, open_tmp=FailsAtClose) as fh:
            fh.write(b"new")
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["dump.jsonl.gz"]


def test_a_gzip_writer_is_whole_when_renamed(tmp_path):
    target = tmp_path / "a.gz"
    with disk.replaced(target, open_tmp=lambda p: gzip.open(p, "wb")) as fh:
        fh.write(b"x" * 100_000)
    assert gzip.decompress(target.read_bytes()) == b"x" * 100_000  # the trailer was written before the rename


def test_concurrent_writers_never_share_a_temp_file(tmp_path):
    target = tmp_path / "stamp"
    errors: list[BaseException] = []

    def write(i: int) -> None:
        try:
            for _ in range(20):
                with disk.replaced(target) as fh:
                    fh.write(str(i).encode() * 1000)
        except BaseException as exc:  # pragma: no cover - the failure being tested for
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    body = target.read_bytes()
    assert len(body) == 1000 and len(set(body)) == 1  # one writer's bytes whole, never a mix
    assert [p.name for p in tmp_path.iterdir()] == ["stamp"]

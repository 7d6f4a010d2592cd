"""The allocator gives a freed big text's pages back (issue 32: memory follows what is kept).

glibc raises its mmap threshold to the largest block freed so far (up to 32 MB): after one big
read, every later text under that size lives in the heap, and freed between live small blocks
its pages stay resident. :func:`heap.settle` fixes the threshold, so a big text has pages of its
own. Each case runs in a fresh interpreter (an allocator's state is the process's)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scribed import heap

SCRIPT = """
import sys
from scribed import heap

def rss():
    with open("/proc/self/status") as f:
        return next(int(x.split()[1]) for x in f if x.startswith("VmRSS")) // 1024

if sys.argv[1] == "settle":
    assert heap.settle()
big = b"x" * (16 << 20)  # one big block freed: an unsettled threshold climbs to its size
del big
before = rss()
texts, pins = [], []
size, pin = 512 << 10, 2048  # names, not literals: a constant product would be folded, not made
for _ in range(160):  # 80 MB of 512 KB texts, each followed by a small block that stays
    texts.append(b"t" * size)
    pins.append(b"p" * pin)
del texts
print(rss() - before)
"""

linux_glibc = pytest.mark.skipif(heap._glibc() is None, reason="glibc only (mallopt, malloc_trim)")


def _kept_mb(mode: str) -> int:
    env = {k: v for k, v in os.environ.items() if k not in ("MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES")}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, check=True, env=env
    )
    return int(out.stdout.strip())


@linux_glibc
def test_a_settled_allocator_gives_freed_texts_back_at_once() -> None:
    unsettled, settled = _kept_mb("plain"), _kept_mb("settle")
    if unsettled <= 60:  # another allocator preloaded (jemalloc, tcmalloc): nothing to show here
        pytest.skip(f"the freed texts went back without settle ({unsettled} MB kept)")
    assert settled < 10, f"{settled} MB of freed texts still resident"


def test_a_threshold_the_user_set_is_left_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    called: list[tuple[int, int]] = []

    class Libc:
        def mallopt(self, param: int, value: int) -> int:
            called.append((param, value))
            return 1

    monkeypatch.setattr(heap, "_looked", True)
    monkeypatch.setattr(heap, "_libc", Libc())
    assert not heap.settle({"MALLOC_MMAP_THRESHOLD_": "65536"})
    assert not heap.settle({"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=65536"})
    assert called == []
    assert heap.settle({"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"})
    assert called == [(heap.M_MMAP_THRESHOLD, heap.MMAP_THRESHOLD)]


def test_the_core_and_each_pool_worker_settle_the_allocator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where big files are handled: a :class:`Scribe` (every driver: run, run-once, the daemon)
    and a pool worker, whose spawned interpreter starts with its own allocator."""
    from scribed import config as config_mod
    from scribed.core import pool
    from scribed.core.scribe import Scribe

    calls: list[str] = []
    monkeypatch.setattr(heap, "settle", lambda: calls.append("settle") or True)
    (tmp_path / ".squad").mkdir()
    cfg = config_mod.from_dict({"root": str(tmp_path), "sources": []})
    Scribe(cfg).close()
    assert calls == ["settle"]
    monkeypatch.setattr(pool, "_watch_parent", lambda pid: None)
    monkeypatch.setattr(pool, "Preparer", lambda *a: None)
    monkeypatch.setattr(pool, "_W", {})
    pool._init(cfg, {}, os.getpid(), b"k" * 32)
    assert calls == ["settle", "settle"]


@linux_glibc
def test_trim_only_after_a_big_phase() -> None:
    assert not heap.trim(heap.TRIM_AFTER_BYTES - 1)
    assert heap.trim(heap.TRIM_AFTER_BYTES)


def test_without_glibc_both_are_no_ops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_looked", True)
    monkeypatch.setattr(heap, "_libc", None)
    assert not heap.settle()
    assert not heap.trim(1 << 30)

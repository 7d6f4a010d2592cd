"""Loaded by the data-loss tests' subprocesses before ``scribed.cli.main.main``: patches the process as the
test's environment asks, so a real ``run-once`` or ``run`` meets a flaky machine.

- ``LOSSY_UNREADABLE=PATH`` with ``LOSSY_FLAG=FILE``: opening PATH for reading fails with EACCES while
  FILE exists (root ignores file modes, so ``chmod 000`` alone cannot make a file unreadable to it).
- ``LOSSY_LEDGER=delete|truncate`` with ``LOSSY_AFTER=N``: the ledger is deleted (or truncated to 0 bytes)
  right after the N-th source file is processed, while the run goes on.
"""

from __future__ import annotations

import builtins
import errno
import io
import os
from typing import Any


def install() -> None:
    target = os.environ.get("LOSSY_UNREADABLE")
    flag = os.environ.get("LOSSY_FLAG", "")
    if target:
        real_open = io.open

        def guarded(file: Any, mode: str = "r", *a: Any, **k: Any) -> Any:
            if (
                isinstance(file, (str, os.PathLike))
                and os.fspath(file) == target
                and "r" in mode
                and os.path.exists(flag)
            ):
                raise PermissionError(errno.EACCES, "Permission denied", target)
            return real_open(file, mode, *a, **k)

        io.open = builtins.open = guarded  # type: ignore[assignment]
    action = os.environ.get("LOSSY_LEDGER")
    if action:
        from scribed.core import scribe as pipeline

        after = int(os.environ.get("LOSSY_AFTER", "3"))
        real_process = pipeline.Scribe.process
        done = [0]

        def process(self: Any, item: Any, **kw: Any) -> Any:
            out = real_process(self, item, **kw)
            done[0] += 1
            if done[0] == after:
                path = self.layout.ledger
                if action == "delete":  # the file only: its -wal and -shm stay behind, as after an `rm`
                    path.unlink()
                else:
                    with open(path, "r+b") as fh:
                        fh.truncate(0)
            return out

        pipeline.Scribe.process = process  # type: ignore[method-assign]

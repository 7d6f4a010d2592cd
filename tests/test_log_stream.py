"""A log line whose stream is closed or gone is dropped, never raised into the code that logs it
(a failure being reported, e.g. a source that changed while read, must stay a reported failure)."""

from __future__ import annotations

import io
import json
import threading
import time

from scribed import log


def test_a_closed_log_stream_drops_the_line_instead_of_raising() -> None:
    stream = io.StringIO()
    log.configure("json", "info", stream=stream)
    try:
        logger = log.get("scribed.test")
        logger.info("before_close", n=1)
        assert '"before_close"' in stream.getvalue()
        stream.close()
        logger.error("after_close", n=2)  # raised ValueError before
    finally:
        log.configure("json", "error")


class _Yielding(io.StringIO):
    """A stream whose every write lets another thread run (as a pipe's does when it blocks)."""

    def write(self, s: str) -> int:
        time.sleep(0)
        return super().write(s)


def test_lines_logged_from_threads_at_once_stay_one_per_line() -> None:
    """The daemon's start-up thread and its main loop log at once: each JSON line whole, one per
    line (``print`` wrote a line and its end apart, and a reader met two objects on one line)."""
    stream = _Yielding()
    log.configure("json", "info", stream=stream)
    try:

        def many(k: int) -> None:
            for i in range(200):
                log.get().info("tick", thread=k, i=i)

        threads = [threading.Thread(target=many, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        lines = stream.getvalue().splitlines()
        assert len(lines) == 1200
        assert all(json.loads(line)["event"] == "tick" for line in lines)
    finally:
        log.configure("json", "error")

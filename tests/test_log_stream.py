"""A log line whose stream is closed or gone is dropped, never raised into the code that logs it
(a failure being reported, e.g. a source that changed while read, must stay a reported failure)."""

from __future__ import annotations

import io

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

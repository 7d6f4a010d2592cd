"""structlog setup: console renderer on a TTY, JSON lines otherwise; every event is redacted.

One canonical line per unit of work (e.g. ``compacted`` with agent, session, bytes, ratio,
recall, compressor, tokens, ms) is the contract operators grep and alert on.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any, TextIO

import structlog

from scribed.redact import redact_obj

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def _redact(_: Any, __: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Nothing secret reaches a log line, whatever a caller passed in."""
    out = redact_obj(event_dict)
    assert isinstance(out, dict)
    return out


def configure(fmt: str = "auto", level: str = "info", stream: TextIO | None = None) -> None:
    stream = stream or sys.stderr
    use_console = fmt == "console" or (fmt == "auto" and stream.isatty())
    renderer: Any = (
        structlog.dev.ConsoleRenderer(colors=stream.isatty())
        if use_console
        else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _redact,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )


def get(name: str = "scribed") -> Any:
    return structlog.get_logger(name)

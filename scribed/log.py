"""structlog setup: console renderer on a TTY, JSON lines otherwise; every event is redacted.

One canonical line per unit of work (e.g. ``compacted`` with agent, session, bytes, ratio,
recall, compressor, tokens, ms) is the contract operators grep and alert on. JSON lines keep
every event; the console (a person at a terminal) gets that one line per unit of work: detail
events below are shown only at ``level = "debug"``, and keys without a value are left out.

Long work (a backlog, an import) shows a progress bar on a TTY (:func:`progress`); log lines
printed meanwhile go above the bar instead of through it.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TextIO, TypeVar

from scribed.fsutil import NOT_UTF8, shown, utf8_name, utf8_only
from scribed.names import not_a_name
from scribed.session.redact import REDACTED, redact, secret_spans

if TYPE_CHECKING:
    from pathlib import Path

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}

# Info events that accompany a unit of work already reported by its canonical line
# (``compacted``): on the console they are debug detail, in JSON they stay.
DETAIL_EVENTS = frozenset({"hot_seeded", "hot_appended_kept", "live_hot_written"})

# Below this many items a bar would only flash.
PROGRESS_MIN_ITEMS = 20

T = TypeVar("T")

_state: dict[str, Any] = {"bars": 0, "console": False}
# How to log, recorded by configure() and applied when the first logger is asked for: a spawn's
# `scribed context` that logs nothing never imports structlog.
_pending: list[tuple[str, str, TextIO]] = []


def _redact(_: Any, __: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Nothing secret reaches a log line, whatever a caller passed in."""
    out = redact_obj(event_dict)
    assert isinstance(out, dict)
    return out


def redact_obj(obj: Any) -> Any:
    """Redact every string inside nested dicts/lists/tuples/sets (a log event). A string under a
    secret-ish key (``{"password": "hunter2"}``) is judged as the value of ``"key": "value"``,
    because the value alone carries no hint. Containers are copied, never mutated; cycles kept."""
    return _redact_obj(obj, {})


def _redact_obj(obj: Any, memo: dict[int, Any]) -> Any:
    if isinstance(obj, str):
        return redact(obj)
    if id(obj) in memo:
        return memo[id(obj)]
    if isinstance(obj, dict):
        out_d: dict[Any, Any] = {}
        memo[id(obj)] = out_d
        for k, v in obj.items():
            named = isinstance(k, str) and isinstance(v, str)
            out_d[redact(k) if isinstance(k, str) else k] = (
                _redact_named(k, v) if named else _redact_obj(v, memo)
            )
        return out_d
    if isinstance(obj, list):
        out_l: list[Any] = []
        memo[id(obj)] = out_l
        out_l.extend(_redact_obj(v, memo) for v in obj)
        return out_l
    if isinstance(obj, tuple):
        items = [_redact_obj(v, memo) for v in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    if isinstance(obj, (set, frozenset)):
        return type(obj)(_redact_obj(v, memo) for v in obj)
    return obj


def _redact_named(key: str, value: str) -> str:
    """``value`` redacted as the value of ``"key": "value"`` (the key is its name), then alone."""
    head = f'"{key}": "'
    a, b = len(head), len(head) + len(value)
    out: list[str] = []
    pos = 0
    for s, e in secret_spans(f'{head}{value}"'):
        if e > a and s < b:
            out += (value[pos : max(s, a) - a], REDACTED)
            pos = min(e, b) - a
    return redact("".join(out) + value[pos:])


def _quiet_console(verbose: bool) -> Any:
    """Console only: drop detail events (unless debug) and keys that carry no value."""

    def proc(_: Any, method: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        if not verbose and method == "info" and event_dict.get("event") in DETAIL_EVENTS:
            import structlog

            raise structlog.DropEvent
        for k in [k for k, v in event_dict.items() if v is None]:
            del event_dict[k]
        return event_dict

    return proc


_WRITE_LOCK = threading.Lock()


class _Writer:
    """Writes one rendered line; while a progress bar is shown, above it (tqdm.write)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def msg(self, message: str) -> None:
        """A log line that cannot be written (its stream closed or gone) is dropped, as the
        logging module drops it: a failure being logged must not become a crash of the caller."""
        try:
            if _state["bars"]:
                from tqdm import tqdm

                tqdm.write(message, file=self._stream)
                return
            self._write(message)
        except UnicodeEncodeError:  # a name that is not UTF-8 in a console line: shown escaped
            with contextlib.suppress(ValueError, OSError):
                self._write(shown(message))
        except (ValueError, OSError):
            pass

    def _write(self, message: str) -> None:
        """The line and its end in one write, under a lock: ``print`` writes them apart, so two
        threads' lines could share one (the daemon's start-up thread and its main loop), and a
        reader of the JSON lines met two objects on a line."""
        with _WRITE_LOCK:
            self._stream.write(message + "\n")
            self._stream.flush()

    log = debug = info = warn = warning = error = critical = exception = fatal = msg


def configure(fmt: str = "auto", level: str = "info", stream: TextIO | None = None) -> None:
    """Log as ``fmt`` at ``level`` to ``stream``; applied at once if a logger exists already."""
    stream = stream or sys.stderr
    _state["console"] = fmt == "console" or (fmt == "auto" and stream.isatty())
    _pending[:] = [(fmt, level, stream)]
    if "structlog" in sys.modules:
        _apply()


def _apply() -> None:
    import structlog

    if not _pending:
        return
    _fmt, level, stream = _pending.pop()
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
    ]
    if _state["console"]:
        processors += [
            _quiet_console(level == "debug"),
            structlog.processors.TimeStamper(fmt="%H:%M:%S", utc=False),
            _redact,
            structlog.dev.ConsoleRenderer(colors=stream.isatty()),
        ]
    else:
        processors += [
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _redact,
            structlog.processors.JSONRenderer(),
        ]
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]),
        logger_factory=lambda *_: _Writer(stream),
        cache_logger_on_first_use=False,
    )


class Logger(Protocol):
    """What scribed asks of a logger (structlog's bound logger): one event name and its fields."""

    def debug(self, event: str, /, **kw: Any) -> Any: ...
    def info(self, event: str, /, **kw: Any) -> Any: ...
    def warning(self, event: str, /, **kw: Any) -> Any: ...
    def error(self, event: str, /, **kw: Any) -> Any: ...
    def exception(self, event: str, /, **kw: Any) -> Any: ...
    def bind(self, **kw: Any) -> Logger: ...


class Silent:
    """A logger that logs nowhere, for a reader whose output is all it says (a spawn's context
    prints the block and nothing else; ``status`` reports, it does not log)."""

    def __getattr__(self, name: str) -> Any:
        return lambda *a, **k: None


def get(name: str = "scribed") -> Logger:
    import structlog

    _apply()
    logger: Logger = structlog.get_logger(name)
    return logger


_SAID: set[tuple[str, str]] = set()  # (event, file) said in this process


def say_once(event: str, file: str, reason: str) -> None:
    """A warning about one file, said once per process: a listing made twice in a command, or
    every cycle of the daemon, says it once."""
    if (event, file) not in _SAID:
        _SAID.add((event, file))
        get("scribed").warning(event, file=file, reason=reason)


def misnamed(path: Path, kind: str) -> None:
    """Say, once per process, that a listing of agents or topics leaves ``path`` out: its name is
    not UTF-8 (``file_name_not_utf8``) or no ``kind`` name (``file_name_invalid``, with the name
    to rename it to; :func:`scribed.names.not_a_name`). Hidden files (editors', scribed's) are
    left out without a word."""
    if path.name.startswith("."):
        return
    if not utf8_name(str(path)):
        say_once("file_name_not_utf8", shown(path), NOT_UTF8)
    elif (why := not_a_name(path, kind)) is not None:
        say_once("file_name_invalid", str(path), why)


def utf8_named(paths: Iterable[Path], reason: str = NOT_UTF8) -> list[Path]:
    """:func:`scribed.fsutil.utf8_only` for a reader of the memory folders (status, search, report,
    the MCP tools, the state branch): each name it skips is a ``file_name_not_utf8`` warning, once
    per process; ``reason`` says what to do where :data:`NOT_UTF8`'s rename does not apply."""
    return utf8_only(paths, lambda name: say_once("file_name_not_utf8", name, reason))


def progress(
    items: Sequence[T],
    label: str,
    *,
    unit: str = "it",
    enabled: bool | None = None,
    stream: TextIO | None = None,
    size: Callable[[T], int] | None = None,
) -> Iterator[T]:
    """Iterate ``items`` with a progress bar on a TTY (none otherwise, none for a few items, none
    once :func:`no_bars` was called: a ``--json`` run prints nothing but its object).

    ``size``: each item's bytes; the bar then counts bytes (with the items done in its label) and
    its ETA is the bytes' rate. ``enabled=None`` means: stderr is a terminal. The bar is cleared
    when done; the canonical log lines stay.
    """
    stream = stream or sys.stderr
    show = stream.isatty() if enabled is None else enabled
    if not show or _state.get("no_bars") or len(items) < PROGRESS_MIN_ITEMS:
        yield from items
        return
    from tqdm import tqdm

    _state["bars"] += 1
    try:
        if size is None:
            with tqdm(items, desc=label, file=stream, leave=False, dynamic_ncols=True, unit=unit) as bar:
                it: Iterable[T] = bar
                yield from it
            return
        sizes = [max(0, size(x)) for x in items]
        n = len(items)
        units = unit[:-1] + "ies" if unit.endswith("y") else unit + "s"
        with tqdm(
            total=sum(sizes), desc=f"{label} 0/{n} {units}", file=stream, leave=False, dynamic_ncols=True,
            unit="B", unit_scale=True, unit_divisor=1024,
        ) as bar:  # fmt: skip
            for k, (x, nbytes) in enumerate(zip(items, sizes, strict=True), start=1):
                yield x
                bar.set_description_str(f"{label} {k}/{n} {units}", refresh=False)
                bar.update(nbytes)
    finally:
        _state["bars"] -= 1


def no_bars() -> None:
    """No progress bar from here on (``--json``: the output is the object and nothing else)."""
    _state["no_bars"] = True

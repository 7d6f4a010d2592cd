"""Helpers every adapter shares: a streaming JSONL reader, timestamps, defensive getters.

Transcript formats drift and files are read while tools still write them, so nothing here
raises on bad content: a bad value is treated as missing and a bad line is reported, not thrown.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple, Protocol

from scribed.models import MAX_TEXT_CHARS, MAX_TOOL_CHARS, ParseResult, Role, Session, Turn, TurnKind, clip
from scribed.sources import zst

JsonObj = dict[str, object]


class Readable(Protocol):
    """What the streaming readers need of a binary file (a wrapper that hashes or counts will do)."""

    def read(self, n: int = -1, /) -> bytes: ...


# A single record longer than this is skipped (and counted) instead of being held in memory;
# [session] max_line_bytes changes it for a run (see line_limit).
MAX_LINE_BYTES = 64 * 1024 * 1024
LINE_LIMIT_KEY = "[session] max_line_bytes"
TOO_LONG = "line too long"  # JsonLine.error of a line over the limit
_DRAIN_CHUNK = 1024 * 1024

# Per-turn clipping happens before anything is selected, so it must not decide what is kept:
# messages stay whole up to a memory guard; tool output keeps its head and tail (MAX_TOOL_CHARS)
# plus every error-shaped line from the middle, up to TOOL_ERROR_CHARS more.
MAX_TURN_CHARS = 1_000_000
TOOL_ERROR_CHARS = 8_000
_ERROR_LINE_CHARS = 400
_ERROR_LINE = re.compile(
    r"Traceback \(most recent call last\)|\b[A-Z]\w*(?:Error|Exception)\b|\b(?:error|fatal)(?:\[[A-Z]?\d+\])?:"
    r"|\berror [A-Z]{1,5}\d{1,6}:|\.go:\d+:\d+: |:\[\d+,\d+\] "  # tsc, MSVC; Go's compiler and vet; Maven
    r"|^[ \t]*\d{1,7}:\d{1,5}[ \t]{2,}error[ \t]{2,}\S"  # ESLint's stylish report
    r"|\bERR!|\bFAILED\b|\bFAIL:|\bpanic(?:ked)?\b|^E {2,}\S|Segmentation fault|non-zero exit"
    r"|\bexit(?:ed with)? (?:code|status)\b[ :=]*(?:[1-9]\d*|-\d+)"
    r"|^[ \t]*(?:FAIL[ \t]|[×✕✗✘✖][ \t]+[a-z\"'`(\[]|●[ \t][^\n›]{1,200}›|❯[ \t]\S{1,200} > )"  # test runners
    r"|^[ \t]*[a-z]{2,11}(?: [a-z]{2,11})?(?::[ \t]+|[ \t]{2,})[1-9]\d{0,5} failed\b"  # a tally
    r"|^[ \t]*(?:<[ \t])?http/\d(?:\.\d)? [45]\d\d\b|\bhttp [45]\d\d\b|^[ \t]*curl: \(\d+\)",  # HTTP
    re.IGNORECASE | re.MULTILINE,
)

# Ids taken from file content end up in logs and ledgers; anything odd falls back to the file name.
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}")


class JsonLine(NamedTuple):
    """One physical line of a JSONL file; ``obj`` is None when ``error`` says why."""

    line_no: int
    end_offset: int
    obj: JsonObj | None
    error: str | None


def _fast_decoder() -> Callable[[bytes], object] | None:
    """msgspec's JSON decoder (C, several times the stdlib's speed on transcript lines), unless it
    is missing or ``SCRIBED_JSON=stdlib`` asks for the plain path (benchmarks compare the two)."""
    if os.environ.get("SCRIBED_JSON", "").lower() == "stdlib":
        return None
    try:
        import msgspec
    except ImportError:
        return None
    decode: Callable[[bytes], object] = msgspec.json.Decoder().decode
    return decode


_FAST = _fast_decoder()
_BOM = b"\xef\xbb\xbf"


def decode_line(raw: bytes, *, first: bool = False) -> tuple[bool, object]:
    """One JSONL line's value, as ``json.loads`` reads the line decoded with bad bytes replaced (a
    BOM dropped on the first line); ``(False, None)`` when it cannot. msgspec decodes it when it
    can: where it refuses (bad UTF-8, ``NaN``, a lone surrogate, a float out of range, deep
    nesting) the stdlib reads it, and where it accepts, its value is the stdlib's (a test
    compares them), so the turns are the same with or without it."""
    ok, value, _ = _decode_line(raw, first)
    return ok, value


def _decode_line(raw: bytes, first: bool) -> tuple[bool, object, int]:
    """:func:`decode_line`, and how many bad bytes the line's value was read with (msgspec refuses
    every one, so a clean line never pays for the count)."""
    if first and raw.startswith(_BOM):
        raw = raw[3:]
    if _FAST is not None:
        try:
            return True, _FAST(raw), 0
        except Exception:  # msgspec.DecodeError and friends: the stdlib decides
            pass
    try:
        text, replaced = raw.decode("utf-8"), 0
    except UnicodeDecodeError:
        text, replaced, _ = decode_counted(raw)
    ok, value = loads(text)
    return ok, value, replaced if ok else 0  # a line skipped as malformed is counted as that alone


def decode_counted(data: bytes) -> tuple[str, int, int]:
    """``data.decode("utf-8", "replace")``, how many bytes it replaced and the index of the first
    one (-1: none). Valid UTF-8 decodes once, at full speed. Otherwise every handler sees the same
    bad spans: "surrogateescape" makes a character of each of their bytes, "ignore" none, so the
    lengths differ by the count (C speed, where a handler of our own costs a call per span)."""
    try:
        return data.decode("utf-8"), 0, -1
    except UnicodeDecodeError as exc:
        first = exc.start
    n = len(data.decode("utf-8", "surrogateescape")) - len(data.decode("utf-8", "ignore"))
    return data.decode("utf-8", "replace"), n, first


def replaced_warning(kind: str, path: Path, n: int, line: int) -> str:
    """The warning of a file read with ``n`` bytes that are not UTF-8 (the first on ``line``)."""
    return (
        f"{kind}: {n} byte{'s' * (n != 1)} of invalid UTF-8 replaced with U+FFFD in {path} "
        f"(first at line {line})"
    )


def loads(text: str | bytes) -> tuple[bool, object]:
    """Decode JSON without raising; ``(False, None)`` for bad or absurdly nested input."""
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):  # ValueError covers JSONDecodeError and UnicodeDecodeError
        return False, None


# Set while a file's session may still be written: its last line, with no newline yet, is a record
# the writer has not finished, so it is left for a later read (see hold_partial_tail).
_HOLD_TAIL: ContextVar[bool] = ContextVar("scribed_hold_partial_tail", default=False)
_LINE_LIMIT: ContextVar[int] = ContextVar("scribed_line_limit", default=MAX_LINE_BYTES)


@contextlib.contextmanager
def line_limit(limit: int) -> Iterator[None]:
    """Within this block, :func:`iter_jsonl` skips lines longer than ``limit`` bytes (the config's
    ``[session] max_line_bytes``) instead of :data:`MAX_LINE_BYTES`."""
    token = _LINE_LIMIT.set(limit)
    try:
        yield
    finally:
        _LINE_LIMIT.reset(token)


def size_text(n: int) -> str:
    """``64 MiB``, ``512 KiB``, ``1000 bytes``: a limit as the user set it."""
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


@contextlib.contextmanager
def hold_partial_tail(hold: bool = True) -> Iterator[None]:
    """Within this block, :func:`iter_jsonl` does not yield a last line that has no newline yet.

    The caller holds it while the session is still open; once it has ended (quiet, an end marker,
    ``--force``) the last line is read as it is.
    """
    token = _HOLD_TAIL.set(hold)
    try:
        yield
    finally:
        _HOLD_TAIL.reset(token)


def iter_jsonl(path: Path, tally: Tally | None = None) -> Iterator[JsonLine]:
    """Yield the file's non-blank lines one at a time so memory stays about one line.

    Invalid UTF-8 is replaced rather than rejected: one bad byte in a tool's output must not cost
    the whole record, but ``tally`` counts the bytes replaced (its warning names them). Lines that
    are not a JSON object come back with ``error`` set. Under :func:`hold_partial_tail` an
    unterminated last line waits for its newline.
    """
    hold, limit = _HOLD_TAIL.get(), _LINE_LIMIT.get()
    with zst.open_binary(path) as fh:  # a .jsonl.zst is decompressed as it streams
        offset = 0
        line_no = 0
        while True:
            raw = fh.readline(limit)
            if not raw:
                return
            line_no += 1
            offset += len(raw)
            if len(raw) >= limit and not raw.endswith(b"\n"):
                more = b""
                while True:
                    more = fh.readline(_DRAIN_CHUNK)
                    offset += len(more)
                    if not more or more.endswith(b"\n"):
                        break
                if hold and not more:
                    return
                yield JsonLine(line_no, offset, None, TOO_LONG)
                continue
            if hold and not raw.endswith(b"\n"):
                return
            if raw.isspace():
                continue
            ok, value, replaced = _decode_line(raw, line_no == 1)
            if replaced and tally is not None:
                tally.replaced(line_no, replaced)
            if not ok:
                yield JsonLine(line_no, offset, None, "invalid JSON")
            elif not isinstance(value, dict):
                yield JsonLine(line_no, offset, None, "not a JSON object")
            else:
                yield JsonLine(line_no, offset, value, None)


def read_text(data: bytes) -> str:
    """Decode a whole-file format as UTF-8, replacing bad bytes (Latin-1 notes stay readable)."""
    text = data.decode("utf-8", "replace")
    return text[1:] if text.startswith("\ufeff") else text


def looks_binary(data: bytes) -> bool:
    """True for bytes that are not text in any encoding we would want to summarize.

    NUL bytes never occur in text; a high share of undecodable bytes means it is not UTF-8 or a
    single-byte text with a few accents (a Latin-1 note stays well under the threshold).
    """
    head = data[:65536]
    if b"\x00" in head:
        return True
    text = head.decode("utf-8", "replace")
    return text.count("\ufffd") > 0.3 * max(1, len(text))


def get_str(d: object, key: str) -> str:
    """``d[key]`` if ``d`` is an object and the value a string, else ""."""
    if isinstance(d, dict):
        value = d.get(key)
        if isinstance(value, str):
            return value
    return ""


def get_dict(d: object, key: str) -> JsonObj:
    """``d[key]`` if it is an object, else an empty one."""
    if isinstance(d, dict):
        value = d.get(key)
        if isinstance(value, dict):
            return value
    return {}


def get_list(d: object, key: str) -> list[object]:
    """``d[key]`` if it is an array, else an empty one."""
    if isinstance(d, dict):
        value = d.get(key)
        if isinstance(value, list):
            return value
    return []


def get_bool(d: object, key: str) -> bool:
    """True only for a literal JSON ``true``; "yes", 1 and friends are not trusted."""
    return isinstance(d, dict) and d.get(key) is True


_EPOCH_MIN_DIGITS = 9  # a string of fewer digits is no epoch time (1e8 s is 1973)
_EPOCH_MS_ABOVE = 1e11  # a larger epoch number is in milliseconds (1e11 s is the year 5138)


def parse_ts(value: object) -> datetime | None:
    """A tz-aware UTC datetime from an ISO string (``Z`` allowed) or epoch seconds/milliseconds."""
    try:
        if isinstance(value, str):
            s = value.strip()
            if not s:
                return None
            if s[0].isdigit() and s.replace(".", "", 1).isdigit() and len(s) >= _EPOCH_MIN_DIGITS:
                return parse_ts(float(s))
            if s[-1] in "zZ":
                s = s[:-1] + "+00:00"
            dt = datetime.fromisoformat(s)
            return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)
        if isinstance(value, int | float) and not isinstance(value, bool):
            secs = float(value)
            if math.isnan(secs) or secs <= 0:  # NaN or before the epoch: not a real session time
                return None
            if secs > _EPOCH_MS_ABOVE:  # milliseconds
                secs /= 1000.0
            return datetime.fromtimestamp(secs, tz=UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def text_of(value: object) -> str:
    """Flatten a content value (string, block list, ``{text}`` object) to plain text."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("text", "content", "output", "message"):
            inner = value.get(key)
            if isinstance(inner, str):
                return inner
        return ""
    if isinstance(value, list):
        parts: list[str] = []
        for item in value:
            if isinstance(item, str):
                parts.append(item)
            elif isinstance(item, dict):
                inner = item.get("text")
                if isinstance(inner, str):
                    parts.append(inner)
        return "\n".join(p for p in parts if p)
    return ""


def compact_json(value: object) -> str:
    """One-line JSON for a tool input; "" if it cannot be rendered."""
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        return ""


def render_call(name: str, args: object) -> str:
    """``name command`` for shell-like calls (what anchors look for), else ``name {json}``.

    ``args`` may be an object or a JSON string (Codex); a ``command``/``cmd`` string or argv
    list goes on the first line and any other arguments follow as compact JSON.
    """
    if isinstance(args, str):
        stripped = args.strip()
        if not stripped.startswith("{"):
            return f"{name} {stripped}".strip()
        ok, parsed = loads(stripped)
        if not ok or not isinstance(parsed, dict):
            return f"{name} {stripped}".strip()
        args = parsed
    if isinstance(args, dict):
        for key in ("command", "cmd"):
            cmd = args.get(key)
            if isinstance(cmd, list) and cmd and all(isinstance(c, str) for c in cmd):
                cmd = " ".join(cmd)
            if isinstance(cmd, str) and cmd.strip():
                rest = {k: v for k, v in args.items() if k != key}
                tail = f"\n{compact_json(rest)}" if rest else ""
                return f"{name} {cmd.strip()}{tail}"
    rendered = compact_json(args) if args is not None else ""
    return f"{name} {rendered}".strip()


def safe_id(raw: object) -> str | None:
    """A session id from file content if it is short and plain, else None."""
    if isinstance(raw, str) and _SAFE_ID.fullmatch(raw):
        return raw
    return None


def show(raw: str, limit: int = 80) -> str:
    """Render an untrusted string for a warning: escaped control bytes, bounded length."""
    shown = raw.encode("unicode_escape", "replace").decode("ascii", "replace")
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def clip_tool_output(text: str, keep: int = MAX_TOOL_CHARS, errors: int = TOOL_ERROR_CHARS) -> str:
    """Head and tail of a long tool output, plus the error-shaped lines its middle holds.

    A traceback or ``FAILED`` line buried in a 200 KB build log is what a later reader needs,
    so it survives even though the log around it does not. Cuts fall on line ends when possible.
    """
    if len(text) <= keep:
        return text
    half = max(1, keep // 2 - 20)
    head_end = text.rfind("\n", half // 2, half)
    head_end = head_end if head_end > 0 else half
    tail_start = text.find("\n", len(text) - half, len(text) - half // 2)
    tail_start = tail_start + 1 if tail_start >= 0 else len(text) - half
    middle = text[head_end:tail_start]
    kept = keep_error_lines(map(trim_error_line, _error_lines(middle)), errors)
    return tool_parts(text[:head_end], len(middle), kept, text[tail_start:])


def trim_error_line(line: str) -> str:
    """An error line as kept: at most :data:`_ERROR_LINE_CHARS`, cut between words."""
    if len(line) > _ERROR_LINE_CHARS:
        return line[:_ERROR_LINE_CHARS].rsplit(" ", 1)[0] + " …"
    return line


def keep_error_lines(lines: Iterable[str], errors: int) -> list[str]:
    """The distinct (trimmed) error lines, in order, while they fit in ``errors`` chars."""
    kept: list[str] = []
    seen: set[str] = set()
    room = errors
    for line in lines:
        if not line or line in seen:
            continue
        if len(line) + 1 > room:
            break
        seen.add(line)
        kept.append(line)
        room -= len(line) + 1
    return kept


def tool_parts(head: str, middle_len: int, kept: list[str], tail: str) -> str:
    """A clipped tool output: its head, what its middle held, its tail."""
    parts = [head.rstrip("\n")]
    if kept:
        parts += [f"[… {middle_len} chars elided, {len(kept)} error lines kept …]", *kept, "[…]"]
    else:
        parts.append(f"[… {middle_len} chars elided …]")
    parts.append(tail)
    return "\n".join(parts)


# Every match of _ERROR_LINE holds one of these words (matched case-insensitively, as it is) and
# never spans a newline; "\ne  " stands for "e  " at a line start ("non-zero exit" holds "exit").
# Each is found with str.find in a lowercased copy, far faster than the IGNORECASE pattern (or one
# alternation) over the whole text; only lines holding one are matched against it.
_HINTS = ("traceback", "error", "exception", "fatal", "err!", "fail", "panic", "segmentation fault", "exit", "\ne  ", ".go:", ":[", "×", "✕", "✗", "✘", "✖", "●", "❯", "http ", "http/", "curl: (")  # fmt: skip
# Characters IGNORECASE matches to an ASCII letter that ``str.lower`` does not turn into it.
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s"})


def _error_lines(middle: str) -> Iterator[str]:
    """The stripped lines of ``middle`` that ``_ERROR_LINE`` matches, in order."""
    folded = middle
    if not middle.isascii() and any(c in middle for c in "\u0130\u0131\u017f"):
        folded = middle.translate(_FOLD)
    folded = folded.lower()
    if len(folded) != len(middle):  # a case change of another length: offsets would not line up
        for m in _ERROR_LINE.finditer(middle):
            start = middle.rfind("\n", 0, m.start()) + 1
            end = middle.find("\n", m.end())
            yield middle[start : end if end >= 0 else len(middle)].strip()
        return
    n = len(middle)
    hits = [_hint_at(folded, w, 0) for w in _HINTS]
    while (h := min(hits)) < n:  # the first hint's line; then the first one after that line
        start = middle.rfind("\n", 0, h) + 1
        end = middle.find("\n", h)
        end = end if end >= 0 else n
        line = middle[start:end]
        if _ERROR_LINE.search(line):
            yield line.strip()
        hits = [p if p > end else _hint_at(folded, w, end + 1) for p, w in zip(hits, _HINTS, strict=True)]


def _hint_at(folded: str, word: str, pos: int) -> int:
    """Where hint ``word`` next starts at or after ``pos`` (a line start), else the text's length."""
    if word[0] == "\n":  # "e  " at a line start: ``pos`` is one, or follows a "\n"
        if pos == 0 and folded.startswith(word[1:]):
            return 0
        p = folded.find(word, max(pos - 1, 0))
        return p + 1 if p >= 0 else len(folded)
    p = folded.find(word, pos)
    return p if p >= 0 else len(folded)


# Tools whose call states the agent's plan or todo list (compress/plan.py reads them): kept whole up
# to a message's cap, since a list cut in its middle would lose the items there.
PLAN_TOOLS = frozenset(
    {
        "todowrite", "todo_write", "write_todos", "update_todo", "update_todos", "todos",
        "manage_todo_list", "exitplanmode", "exit_plan_mode", "update_plan", "sql", "taskcreate", "taskupdate",
    }
)  # fmt: skip


def turn(
    role: Role,
    text: str,
    *,
    kind: TurnKind = "message",
    ts: datetime | None = None,
    line: int = 0,
    end_offset: int = 0,
    tool_name: str | None = None,
    clipped: bool = False,
) -> Turn:
    """A Turn whose text is kept for selection: whole for messages, head/tail/errors for tool output
    (``clipped``: the text is that already, see :mod:`scribed.sources.turn_text`)."""
    if not clipped:
        text = _kept(kind, text, tool_name)
    return Turn(
        role=role,
        text=text,
        kind=kind,
        ts=ts,
        line=line,
        end_offset=end_offset,
        tool_name=tool_name,
    )


@dataclass(slots=True)
class Tally:
    """Counts skipped records of one file so it yields one warning per cause, not one per line.

    A line over the line limit is not malformed: its warning names the limit and the config key
    that raises it (a valid 100 MB record was reported as "malformed")."""

    kind: str
    path: Path
    count: int = 0  # every skipped record, whatever the cause
    first: int = 0
    too_long: int = 0
    first_too_long: int = 0
    bad_bytes: int = 0  # bytes that were not UTF-8, read as U+FFFD (their records are kept)
    first_bad_bytes: int = 0

    def replaced(self, line: int, n: int) -> None:
        self.bad_bytes += n
        self.first_bad_bytes = self.first_bad_bytes or line

    def bad(self, line: int, error: str | None = None) -> None:
        self.count += 1
        if error == TOO_LONG:
            self.too_long += 1
            self.first_too_long = self.first_too_long or line
        elif not self.first:
            self.first = line

    def warnings(self, unit: str = "line") -> list[str]:
        out: list[str] = []
        malformed = self.count - self.too_long
        if malformed:
            plural = "" if malformed == 1 else "s"
            out.append(
                f"{self.kind}: {malformed} malformed {unit}{plural} skipped in {self.path} "
                f"(first at {unit} {self.first})"
            )
        if self.too_long:
            n = self.too_long
            out.append(
                f"{self.kind}: {n} line{'s' * (n != 1)} over the {size_text(_LINE_LIMIT.get())} line "
                f"limit skipped in {self.path} (first at line {self.first_too_long}); raise "
                f"{LINE_LIMIT_KEY} in the config to read {'them' if n != 1 else 'it'}"
            )
        if self.bad_bytes:
            out.append(replaced_warning(self.kind, self.path, self.bad_bytes, self.first_bad_bytes))
        return out

    def warning(self, unit: str = "line") -> str | None:
        """All of :meth:`warnings` in one line (None when nothing was skipped)."""
        return "; ".join(self.warnings(unit)) or None


@dataclass(slots=True)
class Source:
    """What a parser needs to know about the file besides its bytes."""

    kind: str
    path: Path
    default_agent: str
    mtime: datetime
    size: int


@dataclass(slots=True)
class Draft:
    """A session being assembled; becomes a :class:`Session` only if it has turns."""

    agent: str
    session_id: str
    turns: list[Turn] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    malformed: int = 0
    end_hint: datetime | None = None  # an end marker's time, later than any turn


def _kept(kind: str, text: str, tool_name: str | None) -> str:
    """What of a turn's text selection may use: tool output's head, tail and errors; a plan tool's
    call whole up to MAX_TEXT_CHARS; any other text up to its kind's limit."""
    if kind == "tool_result":
        return clip_tool_output(text)
    if kind == "tool_call":
        plan = (tool_name or "").lower() in PLAN_TOOLS
        return clip(text, MAX_TEXT_CHARS if plan else MAX_TOOL_CHARS)
    return clip(text, MAX_TURN_CHARS)


def finish(
    src: Source,
    drafts: list[Draft],
    tally: Tally,
    *,
    warnings: list[str] | None = None,
    ended: bool = False,
    size: int | None = None,
    unit: str = "line",
    had_content: bool = True,
) -> ParseResult:
    """Turn drafts into Sessions (dropping empty ones) and attach the file-level warnings.

    ``warnings`` are file-level and go to the first session too, together with the malformed
    count, so a caller looking only at sessions still sees them.
    """
    file_warnings = list(warnings or [])
    bad = tally.warnings(unit)
    file_warnings += bad
    sessions: list[Session] = []
    for draft in drafts:
        if not draft.turns:
            continue
        stamps = [t.ts for t in draft.turns if t.ts is not None]
        start = min(stamps) if stamps else None
        end = max(stamps) if stamps else None
        if draft.end_hint is not None:
            start = start or draft.end_hint
            end = max(end, draft.end_hint) if end else draft.end_hint
        sessions.append(
            Session(
                agent=draft.agent,
                session_id=draft.session_id,
                source=src.path,
                kind=src.kind,
                turns=draft.turns,
                start=start or src.mtime,
                end=end or src.mtime,
                ended=ended,
                malformed=draft.malformed,
                warnings=list(draft.warnings),
            )
        )
    if sessions:
        first = sessions[0]
        first.malformed += tally.count
        for w in file_warnings:
            if w not in first.warnings:
                first.warnings.append(w)
    elif had_content and not tally.count:  # skipped records say why already
        file_warnings.append(f"{src.kind}: no usable turns in {src.path}")
    all_warnings = list(file_warnings)
    for s in sessions:
        all_warnings.extend(w for w in s.warnings if w not in all_warnings)
    return ParseResult(
        sessions=sessions,
        malformed=tally.count,
        warnings=all_warnings,
        size=src.size if size is None else size,
        ended=ended,
    )

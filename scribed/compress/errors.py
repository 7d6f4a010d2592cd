"""Error-shaped text: which lines of a turn state an error, and which errors are one.

An error comes only from text shaped like one: a traceback's last line, an ``Error:`` /
``error[E…]:`` line, a compiler's or checker's diagnostic at a place in a file (``main.c:3:5:
error: …``, Go's ``main.go:44:12: undefined: X``), a test runner's line naming a failing test (its
tally only where nothing more is said), an HTTP client's failure status, ``npm ERR!``, a panic, a
non-zero exit. Prose that mentions "error", pytest's session header and INFO log lines are not
errors. The anchors, the unit pool and the pairing of errors with their fixes
(:mod:`scribed.compress.error_fixes`) all read errors through this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from scribed.compress import content
from scribed.compress import lines as lines_mod
from scribed.models import Turn

# Anchored at the start of a line: a word "error" inside a sentence never matches.
_EXC = re.compile(
    r"^(?P<e>(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Failure|Fault|Interrupt)(?::\s*\S.{0,240})?)$"
)
_GENERIC = re.compile(
    r"^(?:[\w./-]{1,40}:\s+)?(?P<e>(?:error|Error|ERROR)(?:\[[A-Z]?\d{1,5}\])?:\s*\S.{0,240}"
    r"|(?:fatal|FATAL|Fatal error|panic):\s*\S.{0,240}"
    r"|npm ERR!\s*\S.{0,240}"
    r"|FAILED\s+\S+.{0,200}"
    r"|--- FAIL:\s+\S.{0,200}"  # go test
    r"|E\s{2,}\S.{0,240}"
    r"|Segmentation fault.{0,100}"
    r"|\*\*\* \[[^\]]{1,80}\] Error \d+"
    r"|={2,}\s.*\b\d+\s+(?:failed|errors?)\b.{0,120})$"
)
# A compiler's or checker's diagnostic at a place in a file: ``main.c:3:5: error: …`` (gcc, clang),
# ``app.py:12: error: …`` (mypy), ``Foo.java:5: error: …``, ``x.ts(12,5): error TS2345: …`` and
# ``x.ts:12:5 - error TS2345: …`` (tsc); Go prints no severity, every ``file.go:line:col: message``
# of its compiler and vet is one (a line of code ripgrep prints has no space after the column).
# The place is kept: a reader looks there; its numbers do not make two errors (see :func:`shape`).
_LOCATED = re.compile(
    r"^(?P<e>(?:[A-Za-z]:)?[\w./\\~@+-]{0,200}\w\.[A-Za-z]\w{0,9}"
    r"(?::\d{1,7}(?::\d{1,5})?:\s+(?:fatal\s+)?error(?:\s+[A-Z]{1,5}\d{1,6})?:\s*\S.{0,240}"
    r"|\(\d{1,7}(?:,\d{1,5})?\):\s+(?:fatal\s+)?error(?:\s+[A-Z]{1,5}\d{1,6})?:\s*\S.{0,240}"
    r"|:\d{1,7}:\d{1,5}\s+-\s+error(?:\s+[A-Z]{1,5}\d{1,6})?:\s*\S.{0,240}"
    r"|:\[\d{1,7},\d{1,5}\]\s+\S.{0,240}"  # Maven's javac: "[ERROR] /src/App.java:[7,9] cannot find symbol"
    r"|(?<=\.go)(?P<go>:\d{1,7}:\d{1,5}: [A-Za-z\"(].{4,240})))$"
)
_MAVEN_LEAD = "[ERROR] "
# ESLint's default ("stylish") report: the file on a line of its own, then one indented line per
# finding, ``  3:10  error  'foo' is defined but never used  no-unused-vars``: the columns are
# padded, the rule's id ends it. The file is found above it (:func:`errors_in_turn`).
_STYLISH = re.compile(
    r"^(?P<at>\d{1,7}:\d{1,5})\s{2,}error\s{2,}(?P<m>\S.{0,240}?)(?:\s{2,}(?P<rule>[@\w/-]{1,80}))?$"
)
# A test runner's failing test. A report's header names the whole test: Vitest's ``FAIL  src/a.test.ts
# > Table > sorts`` and, in its tree (indented, never a prompt's ``❯``), ``❯ src/a.test.ts > Table >
# sorts``, Jest's ``● Table › sorts``, unittest's ``FAIL: test_x (mod.T)``. Weak: a result list's
# cross (``× sorts 12ms``, ``✕ sorts (18 ms)``; systemd's failed unit), a suite's ``FAIL src/a.test.ts``
# (Go's package), a tally (``Tests:  1 failed, 6 passed, 7 total``): errors where nothing stronger is.
_TEST_PATH = r"[\w./@\\-]{1,200}\.[A-Za-z]\w{0,9}(?: > [^>]{1,200}){1,8}"
_TEST_FAIL = re.compile(
    rf"^(?:FAIL\s{{1,4}}{_TEST_PATH}|FAIL: \w.{{0,240}}|(?P<tree>❯ {_TEST_PATH})"
    r"|● [^›]{1,200}(?: › [^›]{1,200}){1,8}"
    r"|(?P<weak>[×✕✗✘✖] [A-Za-z\"'`(\[].{0,240}|FAIL\s{1,4}\S.{0,240}"
    r"|[A-Z][a-z]{1,10}(?: [A-Z][a-z]{1,10})?(?::\s{1,12}|\s{2,12})[1-9]\d{0,5} failed\b.{0,160}))$"
)
# An HTTP client's failure: a response's status line (``HTTP/1.1 500 Internal Server Error``, curl -v's
# ``< HTTP/2 404``), a client's message (gh: ``could not create pull request: HTTP 401: Bad
# credentials``, ``gh: Not Found (HTTP 404)``), curl's ``curl: (22) The requested URL returned error:
# 404``. A server's log of a request it answered (``GET /api 401 12ms``) is none.
_HTTP = re.compile(
    r"^(?:(?:<\s)?HTTP/\d(?:\.\d)? [45]\d\d\b.{0,120}|(?:[^:]{1,80}:\s){0,3}HTTP [45]\d\d: \S.{0,240}"
    r"|[\w.-]{1,40}: \S.{0,200} \(HTTP [45]\d\d\)|curl: \(\d{1,3}\) \S.{0,240})$"
)
# rustc and clippy print the place under the message: ``error[E0425]: …`` then `` --> src/main.rs:3:5``.
_ARROW = re.compile(r"[ \t]{0,16}--> (?P<at>[\w./\\~@+-]{1,200}:\d{1,7}:\d{1,5})[ \t]*(?:\n|$)")
_RUST = re.compile(r"error(?:\[E\d{1,5}\])?: ")
# A linter's finding ends in its check's name: "… (ineffassign)", "… (S1001)": a warning, not Go's error.
_LINT_TAG = re.compile(r"\((?:[a-z][a-z0-9-]{1,30}|[A-Z]{1,4}\d{3,5})\)$")
# Where a diagnostic's severity follows its place inside a sentence ("CI says app.py:12: error: …").
_SEVERITY_AT = re.compile(r"(?:\d[:)]|\d\s+-)\s+(?:fatal\s+)?error\b")
_LEAD = re.compile(r"^(?:>\s*|[-*]\s+)+")
# pytest's "E   " before an exception: its class (``KeyError``), or a class under its module
# (``psycopg.errors.UndefinedTable: …``), then its message.
_PYTEST_E = re.compile(r"^E\s{2,}(?=[A-Z]\w*(?:Error|Exception)\b|(?:[a-z_]\w*\.){1,6}[A-Z]\w*:\s)")
# What pytest prints under a failed assertion's ``E`` line: its operands (``E    +  where 2 = <…>``)
# and a diff of them (``E    - expected``, ``E    ?  ^``). The failure is the line above.
_INTROSPECTION = re.compile(r"^E\s{2,}[-+?](?:\s|$)")
_EXIT = re.compile(
    r"(?P<e>(?:exit(?:ed)?\s+(?:with\s+)?(?:code|status)|returned non-zero exit status|"
    r"Process exited with code|exit_code[\"']?\s*[:=])\s*[:=]?\s*[1-9]\d{0,2})\b"
)
_NOT_ERROR = re.compile(
    r"\b(?:INFO|DEBUG|TRACE|test session starts|0 (?:errors?|failed)|no errors?|errors?:\s*(?:0|none|\[\]))\b"
    r"|\berrors?:\s*\((?:none|null)\)",  # a shell tool's report: "Error: (none)" then "Exit Code: 0"
    re.I,
)
# Numbers, addresses and long hex runs (ids, digests) vary between runs of one error.
_VOLATILE = re.compile(r"0x[0-9a-fA-F]+|\b[0-9a-fA-F]*\d[0-9a-fA-F]{7,}\b|\d+")
MIN_ERROR_CHARS = 6
MAX_PANIC_CHARS = 240  # a panic's message, from the line after its place
PYTEST_E_CHARS = 320  # an exception line pytest marked, whole (longer: judged as any other line)
# A line none of the error patterns can match lacks all of these: one C-level scan rules out
# most lines before the patterns run (every pattern above is case-sensitive, so this is too).
_MAYBE_WORDS = r"Error|Exception|Failure|Fault|Interrupt|error|ERR|fatal|FATAL|panic|FAIL|E\s\s|Segm|failed|exit|go:\d+:\d+: "
_FAIL_MARKS = "×✕✗✘✖●❯"  # a test runner's failed-test marks (the prefilter's other part)
_MAYBE = re.compile(_MAYBE_WORDS + rf"|[{_FAIL_MARKS}] |HTTP(?:/\d| [45]\d\d)|curl: \(")
# The same without the marks and HTTP: a scan several times faster (a class of non-ASCII marks
# stops the regex engine's literal search), used for the text that holds none of them.
_MAYBE_PLAIN = re.compile(_MAYBE_WORDS)


def _prefilter(text: str) -> re.Pattern[str]:
    """:data:`_MAYBE`, or :data:`_MAYBE_PLAIN` for a text without a mark, "HTTP" or "curl: (" (the
    same matches there): found with ``in``, in C."""
    if "HTTP" in text or "curl: (" in text or (not text.isascii() and any(c in text for c in _FAIL_MARKS)):
        return _MAYBE
    return _MAYBE_PLAIN


_MAYBE_EXC = re.compile(r"Error|Exception|Failure|Fault|Interrupt|error")  # error: a quoted diagnostic's


def may_hold_error(text: str) -> bool:
    """False when no line of ``text`` can state an error (one scan instead of one per line)."""
    return _prefilter(text).search(text) is not None


def may_hold_error_at(text: str) -> Iterator[int]:
    """Where :func:`may_hold_error`'s prefilter matches in ``text`` (the start of each match)."""
    return (m.start() for m in _prefilter(text).finditer(text))


def error_in_line(line: str, *, strict: bool = False) -> str | None:
    """The error a line states, or None. ``strict`` accepts exception lines only (assistant prose)."""
    if (_MAYBE_EXC if strict else _prefilter(line)).search(line) is None:
        return None
    s = _LEAD.sub("", line.strip())
    if len(s) < MIN_ERROR_CHARS or _NOT_ERROR.search(s):
        return None
    if (pe := _PYTEST_E.match(s)) is not None:
        s = s[pe.end() :]
        if not strict and len(s) <= PYTEST_E_CHARS and _EXC.match(s) is None:
            return s  # pytest marked it an exception: a class under its module ("psycopg.errors.X: …")
    # a failed tool's output marked "error: " before its own error line (one marker: no recursion
    # deeper than one call, and a marker before another is no diagnostic's)
    if (
        s.startswith("error: ")
        and not s.startswith("error: error:")
        and len(s) <= MARKED_CHARS
        and (inner := error_in_line(s[7:], strict=strict)) is not None
    ):
        return inner
    m = _EXC.match(s)
    if m:
        return m.group("e")
    if strict:  # assistant prose: a diagnostic it quotes ("mypy reported `app.py:12: error: …`")
        return _located(line.strip(), s, severity=True)
    return _output_error(line, s)


def _output_error(line: str, s: str) -> str | None:
    """:func:`error_in_line` of a tool's output or pasted text (``line`` as given, ``s`` cleaned)
    past the exception patterns: an error line, a test runner's failure, an HTTP client's, an
    ESLint finding, a diagnostic at a place, a bad exit."""
    m = _GENERIC.match(s)
    if m:
        return None if _progress(m.group("e")) or _INTROSPECTION.match(s) else m.group("e")
    if (m := _PANIC.match(s)) is not None:
        return f"panicked at {m.group('at')}"
    if (m := _TEST_FAIL.match(s) or _HTTP.match(s)) is not None:
        return None if m.re is _TEST_FAIL and m.group("tree") and not line[:1].isspace() else s
    return _stylish(s) or _located(line.strip(), s) or (s[:240] if _EXIT.search(s) else None)


def _stylish(s: str) -> str | None:
    """An ESLint finding (:data:`_STYLISH`) as a compiler prints one, its file put before it later."""
    if (m := _STYLISH.match(s)) is None:
        return None
    rule = m.group("rule")
    return f"{m.group('at')}: error: {m.group('m')}" + (f" ({rule})" if rule else "")


def weak(error: str) -> bool:
    """Whether an error only counts or lists failures (a tally, a result list's cross, a suite's
    ``FAIL``, pytest's ``=== 1 failed ===``): it adds nothing next to an error its output states."""
    if error.startswith("=="):
        return True
    m = _TEST_FAIL.match(error)  # not an ``Error: 3 failed …`` line, which _GENERIC took first
    return m is not None and m.group("weak") is not None and _GENERIC.match(error) is None


def _progress(error: str) -> bool:
    """Whether an ``error:`` line says nothing but a test runner's progress (``error: EEE``,
    ``error: ....F.``: a failed tool's output marked as an error, its first line a run of marks):
    a word of two or more of pytest's and unittest's result marks, or of one or more before the
    share of the run done (``error: F      [100%]``). Its real errors follow; a one word error
    (``Error: EOF``, ``error: EIO``) is one."""
    head, sep, said = error.partition(":")
    return bool(sep) and head.lower() == "error" and _MARKS.fullmatch(said.strip()) is not None


# pass, error, failure, skip, xfail/xpass; pytest ends its progress line with the share done
_MARKS = re.compile(r"[.EFsSxX]{2,}|[.EFsSxX]+\s+\[\s{0,2}\d{1,3}%\]")
MARKED_CHARS = 480  # a marked line longer than this is not unwrapped (an error is cut at 240)


def _located(line: str, s: str, *, severity: bool = False) -> str | None:
    """A compiler's diagnostic at a place (:data:`_LOCATED`): at the line's start (Go's, which has
    no severity word, only there and with no list mark before it: a bullet quoting one in a doc is
    no error), or inside a sentence when its severity says "error" ("CI says app.py:12: error: …")."""
    if s.startswith(_MAVEN_LEAD):
        s = s[len(_MAVEN_LEAD) :]
    if (m := _LOCATED.match(s)) is not None:  # ``severity``: one that says "error" (not Go's)
        go = m.group("go")
        return (
            m.group("e") if go is None or (s == line and not severity and not _LINT_TAG.search(go)) else None
        )
    for sev in _SEVERITY_AT.finditer(s):  # a place ends just before it: its token's start
        start = (
            s.rfind(" ", 0, s.rfind(":", 0, sev.start() + 1) if s[sev.start() + 1] == ":" else sev.start())
            + 1
        )
        if s[start : start + 1] in ("'", '"'):
            continue  # a string of code or a fixture holding one ("assert parse('main.c:3:5: error: …')")
        m = _LOCATED.match(s[start:].lstrip("`(["))
        if m is not None and m.group("go") is None:
            said = content.SENTENCE_END.split(m.group("e"), maxsplit=1)[0]  # not the sentences after it
            if s[start] == "`" and "`" in said:
                return said.split("`", 1)[0]  # quoted in backticks: the quote ends it
            return said.rstrip("`)]").removesuffix("`.").rstrip("`") if said[-2:-1] in "`)]" else said
    return None


def shape(text: str) -> str:
    """Errors that differ only in numbers or addresses are the same error; a quoted name is part
    of it (``No module named 'yaml'`` and ``… 'requests'`` are two errors, each with its own fix)."""
    s = _VOLATILE.sub("0", text)
    return " ".join(s.lower().split())


def errors_in_turn(turn: Turn) -> list[str]:
    """Errors stated by one turn: tool output and pasted text fully, assistant prose strictly. A
    tool result of role ``system`` is the agent tool's own notice, not a program of the project's
    (Aider's "litellm.RateLimitError: …" while it called its model): none."""
    if turn.kind in ("thinking", "tool_call") or (turn.kind == "tool_result" and turn.role == "system"):
        return []
    strict = turn.role == "assistant" and turn.kind == "message"
    pattern = _MAYBE_EXC if strict else _prefilter(turn.text)
    text = turn.text
    if (first := pattern.search(text)) is None:  # no line can match: one scan
        return []
    if any(c in text for c in lines_mod.OTHER_BREAKS):
        text = "\n".join(text.splitlines())  # its lines, each ended by "\n" alone
        first = pattern.search(text)  # found again: a line break between letters is not in it
        if first is None:
            return []
    out: dict[str, None] = {}  # each once, in order (a list's ``in`` was quadratic in a long log)
    block: list[int | str] = [-1, ""]  # the last finding's line start and its file ("": none)
    for start, end in _candidate_lines(text, pattern, first.start()):
        e = error_in_line(text[start:end], strict=strict)
        if e:
            out.setdefault(_placed(e, text, start, end, block))
    strong = [e for e in out if not weak(e)]
    return _unrestated(strong or list(out))


RESTATED_MAX = 64  # errors of one turn compared pairwise for a restatement (bounded work)


def _unrestated(errs: list[str]) -> list[str]:
    """The errors of one turn without those another one restates: a test runner's summary line
    names the failing test and repeats its error (``FAILED tests/t.py::test_x - KeyError: 'k'``
    after ``KeyError: 'k'``), one failure, listed once, by the line that says more. Compared by
    :func:`shape`, as errors are (a volatile number aside)."""
    if len(errs) <= 1 or len(errs) > RESTATED_MAX:
        return errs
    shapes = [shape(e) for e in errs]
    return [
        e for e, sh in zip(errs, shapes, strict=True) if not any(len(o) > len(sh) and sh in o for o in shapes)
    ]


# A Rust panic: ``thread 'main' panicked at src/export.rs:20:24:`` with its message on the next line
# (Rust 1.73 and later), or ``… panicked at 'index out of bounds', src/export.rs:20:24`` before.
_PANIC = re.compile(r"^thread '[^'\n]{1,200}' panicked at (?P<at>\S.{0,240}?)$")
_PLACE_END = re.compile(r"[\w./\\~@+-]{1,200}:\d{1,7}:\d{1,5}:$")


def _placed(error: str, text: str, start: int, end: int, block: list[int | str]) -> str:
    """An error with the place its tool printed on another line, before it as a compiler prints
    it: an ESLint finding's file (the unindented line above its block), a rustc error's ``-->``
    line (the one under it). A finding's lines up to its file, or to the finding before it in
    the same block (``block``: its file is this one's), are read once: linear in the output."""
    if _RUST.match(error):
        m = _ARROW.match(text, end + 1)
        return f"{m.group('at')}: {error}" if m else error
    if error.startswith("panicked at ") and _PLACE_END.search(error):  # its message is the next line
        nxt = text.find("\n", end + 1)
        said = text[end + 1 : nxt if nxt >= 0 else len(text)].strip()[:MAX_PANIC_CHARS]
        return f"{error[12:]} panicked: {said}" if said else error[:-1]
    if not (text[start : start + 1].isspace() and _STYLISH.match(text[start:end].strip())):
        return error
    path, pos = "", start
    while pos > 0:
        if pos == block[0]:
            path = str(block[1])  # the finding above, in this block
            break
        prev = text.rfind("\n", 0, pos - 1) + 1
        line = text[prev : pos - 1]
        if not line.strip():
            break  # a report's blocks are apart by a blank line: this one's file is not above
        if not line[:1].isspace():
            path = line.strip() if _FILE_LINE.match(line.strip()) else ""
            break
        pos = prev
    block[:] = [start, path]
    return f"{path}:{error}" if path else error


_FILE_LINE = re.compile(r"^(?:[A-Za-z]:)?[\w./\\~@+-]{0,400}\w\.[A-Za-z]\w{0,9}$")


def _candidate_lines(text: str, pattern: re.Pattern[str], pos: int = 0) -> Iterator[tuple[int, int]]:
    """The lines of ``text`` where the prefilter ``pattern`` finds something, in order, each once:
    :func:`error_in_line` is None on every other line (it starts with that search), so a long
    output costs one scan instead of a call per line. A match never holds a line break but for
    ``E\\s\\s``, which starts with a letter, so none inside a line is hidden by one before it.
    Lines end at ``\\n`` alone (:func:`errors_in_turn` makes them so). ``pos``: where the first
    match is. Yields each line's (start, end) in ``text``."""
    end = -1
    for m in pattern.finditer(text, pos):
        if m.start() <= end:
            continue  # on the line given last
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.start())
        end = len(text) if end < 0 else end
        yield start, end

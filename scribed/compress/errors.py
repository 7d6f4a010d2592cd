"""Error-shaped text, and the pairing of each error with the change that resolved it.

An error comes only from text shaped like one: a traceback's last line, an ``Error:`` /
``error[E…]:`` line, a failing-test summary, ``npm ERR!``, a panic, a non-zero exit. Prose that
mentions "error", pytest's session header and INFO log lines are not errors. Each error is paired
with the first later fix that no other error took (an edit, or an assistant sentence that says
what fixed it), or marked unresolved: never one fix for all.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

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
    r"|E\s{2,}\S.{0,240}"
    r"|Segmentation fault.{0,100}"
    r"|\*\*\* \[[^\]]{1,80}\] Error \d+"
    r"|={2,}\s.*\b\d+\s+(?:failed|errors?)\b.{0,120})$"
)
_LEAD = re.compile(r"^(?:>\s*|[-*]\s+)+")
_PYTEST_E = re.compile(r"^E\s{2,}(?=[A-Z]\w*(?:Error|Exception)\b)")
_EXIT = re.compile(
    r"(?P<e>(?:exit(?:ed)?\s+(?:with\s+)?(?:code|status)|returned non-zero exit status|"
    r"Process exited with code|exit_code[\"']?\s*[:=])\s*[:=]?\s*[1-9]\d{0,2})\b"
)
_NOT_ERROR = re.compile(
    r"\b(?:INFO|DEBUG|TRACE|test session starts|0 (?:errors?|failed)|no errors?|errors?:\s*(?:0|none|\[\]))\b"
    r"|\berrors?:\s*\((?:none|null)\)",  # a shell tool's report: "Error: (none)" then "Exit Code: 0"
    re.I,
)
_FIX_SENT = re.compile(
    r"\b(?:fix(?:ed|es)?|resolv(?:ed|es)|root cause|the cause|caused by|was because|the problem was|"
    r"the issue was|workaround|patched|changed|replaced|switched|added|removed|updated|renamed|"
    r"now (?:passes|works|builds|compiles)|pinned|installed)\b",
    re.I,
)
_EDIT_TOOLS = re.compile(
    r"^(?:edit|multiedit|write|str_replace\w*|apply_patch|replace|write_file|edit_file|create_file|"
    r"insert|patch|search_replace|edit_notebook)$",
    re.I,
)
_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")
_PATHISH = re.compile(
    r"(?:~?/)?[\w.-]+/[\w./-]+|\b[\w-]+\.(?:py|ts|tsx|js|go|rs|java|kt|rb|c|h|cpp|cs|md|toml|json|yaml|yml)\b"
)
MAX_ERRORS = 12
MIN_ERROR_CHARS = 6
FIX_CHARS = (12, 300)  # a sentence saying what fixed an error: not a fragment, not a paragraph
# A line none of the error patterns can match lacks all of these: one C-level scan rules out
# most lines before the patterns run (every pattern above is case-sensitive, so this is too).
_MAYBE = re.compile(
    r"Error|Exception|Failure|Fault|Interrupt|error|ERR|fatal|FATAL|panic|FAILED|E\s\s|Segm|failed|exit"
)
_MAYBE_EXC = re.compile(r"Error|Exception|Failure|Fault|Interrupt")


def may_hold_error(text: str) -> bool:
    """False when no line of ``text`` can state an error (one scan instead of one per line)."""
    return _MAYBE.search(text) is not None


def may_hold_error_at(text: str) -> Iterator[int]:
    """Where :func:`may_hold_error`'s prefilter matches in ``text`` (the start of each match)."""
    return (m.start() for m in _MAYBE.finditer(text))


def error_in_line(line: str, *, strict: bool = False) -> str | None:
    """The error a line states, or None. ``strict`` accepts exception lines only (assistant prose)."""
    if (_MAYBE_EXC if strict else _MAYBE).search(line) is None:
        return None
    s = _LEAD.sub("", line.strip())
    if len(s) < MIN_ERROR_CHARS or _NOT_ERROR.search(s):
        return None
    s = _PYTEST_E.sub("", s)
    m = _EXC.match(s)
    if m:
        return m.group("e")
    if strict:
        return None
    m = _GENERIC.match(s)
    if m:
        return m.group("e")
    m = _EXIT.search(s)
    return s[:240] if m else None


def shape(text: str) -> str:
    """Errors that differ only in numbers, quoted values or addresses are the same error."""
    s = re.sub(r"0x[0-9a-fA-F]+|\d+", "0", text)
    return re.sub(r"'[^']*'|\"[^\"]*\"", "''", s).lower()


def errors_in_turn(turn: Turn) -> list[str]:
    """Errors stated by one turn: tool output and pasted text fully, assistant prose strictly."""
    if turn.kind in ("thinking", "tool_call"):
        return []
    strict = turn.role == "assistant" and turn.kind == "message"
    out: list[str] = []
    if (_MAYBE_EXC if strict else _MAYBE).search(turn.text) is None:  # no line can match: one scan
        return out
    for line in turn.text.splitlines():
        e = error_in_line(line, strict=strict)
        if e and e not in out:
            out.append(e)
    return out


@dataclass(slots=True)
class _Open:
    text: str
    shape: str
    index: int  # position of the turn in the session
    fix: str = ""
    recurred: bool = False


def _fix_from_turn(turn: Turn) -> str:
    """A fix stated or done by an assistant turn (an edit, or a sentence saying what fixed it), or ''."""
    if turn.kind == "tool_call":
        name = (turn.tool_name or "").split(".")[-1]
        if _EDIT_TOOLS.match(name):
            m = _PATHISH.search(turn.text)
            return f"edited `{m.group(0)}`" if m else f"edit via {name}"
        return ""
    if turn.role != "assistant" or turn.kind != "message":
        return ""
    for raw in turn.text.splitlines():
        line = raw.strip().lstrip("-*> ").strip()
        if not line or line.startswith(("```", "<<<<<<<", ">>>>>>>", "=======")):
            continue
        for sent in _SENT_END.split(line):
            if (
                FIX_CHARS[0] <= len(sent) <= FIX_CHARS[1]
                and _FIX_SENT.search(sent)
                and not error_in_line(sent)
            ):
                return sent.strip()
    return ""


def pair(turns: list[Turn]) -> list[str]:
    """``error → fix`` lines in order of first appearance; ``→ unresolved`` where nothing fixed it.

    The errors one turn shows (a traceback and the failing-test summary under it) are one failure:
    the fix that follows resolves them together. A later fix goes to the most recent failure still
    open, since that is the one the agent was looking at.
    """
    found: list[_Open] = []
    by_shape: dict[str, _Open] = {}
    waiting: list[list[_Open]] = []  # failures with no fix yet, oldest first
    for i, t in enumerate(turns):
        errs = errors_in_turn(t)
        if errs:
            group = _failure(errs, i, found, by_shape)
            if group:
                waiting.append(group)
            continue
        if not waiting:
            continue
        fix = _fix_from_turn(t)
        if fix:
            for op in waiting.pop():
                op.fix = fix
    out = []
    for op in found:
        err = f"`{op.text}`" if "`" not in op.text else op.text
        tail = op.fix if op.fix else "unresolved"
        if op.recurred and op.fix:
            tail += " (after it recurred)"
        out.append(f"{err} → {tail}")
    return out


def _failure(errs: list[str], i: int, found: list[_Open], by_shape: dict[str, _Open]) -> list[_Open]:
    """The open errors one turn shows: new ones (up to MAX_ERRORS) and fixed ones that came back."""
    group: list[_Open] = []
    for e in _specific(errs):
        sh = shape(e)
        known = by_shape.get(sh)
        if known is not None:
            if known.fix:  # it came back after its fix
                known.recurred = True
                known.fix = ""
                group.append(known)
            continue
        if len(found) >= MAX_ERRORS:
            continue
        op = _Open(e, sh, i)
        found.append(op)
        by_shape[sh] = op
        group.append(op)
    return group


def _specific(errs: list[str]) -> list[str]:
    """A failing-test count line adds nothing next to the error it counts."""
    specific = [e for e in errs if not e.startswith("==")]
    return specific or errs

"""Aider's ``.aider.chat.history.md``: one file, many sessions, three voices.

Aider appends to the same file for every run in a repository:

- ``# aider chat started at 2024-09-27 19:14:18`` starts a new session. The time is the machine's
  local time without a zone; it is taken as UTC (the file does not say which zone it was).
- ``#### text`` lines are what the user typed; consecutive ones are one message (a multi-line
  paste), slash commands such as ``/add x`` included, kept as the user's words.
- ``> text`` lines are aider's own output: its banner, prompts with the answers, "Applied edit
  to …", commits, token counts, API errors, command output. They become tool turns. What it prints
  in answer to a prompt for the model (a user message that runs no command), before the model
  replies, is its own talk with the model's provider ("litellm.RateLimitError: …", "Retrying in
  0.2 seconds", file prompts): a tool result of role ``system``, the tool's notice, whose errors
  are not the project's (:func:`scribed.compress.errors.errors_in_turn`).
- a user's ``/run CMD``, ``!CMD``, ``/test [CMD]``, ``/lint [CMD]`` or ``/git ARGS`` runs a command:
  it is the user's ``shell CMD`` tool call (as aider's own "Running CMD" is, which then is not
  repeated), so the output under it is that command's.
- everything else is the model's reply, with its SEARCH/REPLACE or whole-file fences.

Aider writes markdown hard breaks: each line it prints ends in two spaces. A multi-line tool
message gets ``> `` on its FIRST line only and the two spaces on its LAST line only (a ``/settings``
dump, a ``--message`` echo), so a ``> `` block runs through the unprefixed lines after it up to the
first one ending in two spaces. User lines end in two spaces too, which tells them from a model's
own ``#### heading``. Files whose trailing spaces were stripped fall back to the prefixes alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime

from scribed.models import Role, Turn
from scribed.sources.markdown_lines import Line, Part, fence_closes, fence_open, make_turn

HEADER = re.compile(r"# aider chat started at (?P<ts>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?)\s*")
_RUNNING = re.compile(r">[ \t]+Running[ \t]+(?P<cmd>\S.*?)\s*")
_APPLIED = re.compile(r">[ \t]+Applied edit to[ \t]+(?P<path>\S.*?)\s*")
# A user's message that runs a command: ``/run CMD``, ``!CMD``, ``/test CMD``, ``/lint CMD``, ``/git …``.
# A bare ``/test`` or ``/lint`` runs the command configured for it: named by the slash command.
_USER_RUN = re.compile(r"(?:/(?:run|test|lint)\s+|!\s*)(?P<cmd>\S.*)|/(?P<git>git\s+\S.*|test|lint)", re.S)


BLANK = "<blank>"  # what aider writes for a message the user sent empty


def detect(lines: Iterable[Line]) -> bool:
    """An Aider history has at least one session header at the start of a line."""
    return any(ln.text.startswith("# aider chat started at") and HEADER.fullmatch(ln.text) for ln in lines)


def _header_time(text: str) -> datetime | None:
    m = HEADER.fullmatch(text)
    if m is None:
        return None
    try:
        return datetime.fromisoformat(m.group("ts").replace("T", " ")).replace(tzinfo=UTC)
    except ValueError:
        return None


class _Reader:
    """Classifies one session's lines into user, tool and assistant turns."""

    def __init__(self, lines: list[Line], hard_breaks: bool) -> None:
        self.lines = lines
        self.hard = hard_breaks
        self.turns: list[Turn] = []
        self.prompted = False  # the last turn is a user's message that runs no command

    def is_user(self, text: str) -> bool:
        if not text.startswith("####"):
            return False
        if text.rstrip() == "####":
            return True
        return text.startswith("#### ") and (text.endswith("  ") or not self.hard)

    @staticmethod
    def is_tool(text: str) -> bool:
        return text == ">" or text.startswith(("> ", ">\t"))

    def run(self) -> list[Turn]:
        i, n = 0, len(self.lines)
        while i < n:
            text = self.lines[i].text
            if self.is_user(text):
                i = self._user(i)
            elif self.is_tool(text):
                i = self._tool(i)
            elif not text.strip():
                i += 1
            else:
                i = self._assistant(i)
        return self.turns

    def _add(self, t: Turn | None) -> None:
        if t is not None:
            self.turns.append(t)
            self.prompted = t.role == "user" and t.kind == "message"

    def _user(self, i: int) -> int:
        j = i
        while j < len(self.lines) and self.is_user(self.lines[j].text):
            j += 1
        block = self.lines[i:j]
        said = (ln.text[4:].removeprefix(" ").rstrip() for ln in block)
        words = "\n".join(w for w in said if w != BLANK)  # an empty submit says nothing
        run = _USER_RUN.fullmatch(words.strip())
        if run is None:
            self._add(make_turn("user", block, text=words))
        else:  # the user ran a command: what aider prints next is its output
            cmd = run.group("cmd") or run.group("git")
            self._add(make_turn("user", block, kind="tool_call", tool_name="shell", text=f"shell {cmd}"))
        return j

    def _message_end(self, i: int) -> int:
        """Index after the tool message starting at ``i`` (continuation lines included)."""
        if not self.hard or self.lines[i].text.endswith("  "):
            return i + 1
        j = i + 1
        while j < len(self.lines):
            text = self.lines[j].text
            if self.is_user(text):
                break
            if text.endswith("  "):
                return j + 1
            j += 1
        return i + 1  # never closed: only the prefixed line is aider's; the rest is read normally

    def _tool(self, i: int) -> int:
        block: list[Line] = []
        j = i
        while j < len(self.lines) and self.is_tool(self.lines[j].text):
            end = self._message_end(j)
            block.extend(self.lines[j:end])
            j = end
        self._emit_tool(block)
        return j

    def _emit_tool(self, block: list[Line]) -> None:
        """One tool result per block, split around the actions aider reports (runs, applied edits)."""
        pending: list[Line] = []
        for ln in block:
            run = _RUNNING.fullmatch(ln.text)
            applied = _APPLIED.fullmatch(ln.text)
            if run is None and applied is None:
                pending.append(ln)
                continue
            self._flush_output(pending)
            pending = []
            if run is not None:
                self._add(
                    None
                    if self._called(f"shell {run.group('cmd')}")  # the user's /run of it: one call
                    else make_turn(
                        "assistant",
                        [ln],
                        kind="tool_call",
                        tool_name="shell",
                        text=f"shell {run.group('cmd')}",
                    )
                )
            elif applied is not None:
                self._add(
                    make_turn(
                        "assistant",
                        [ln],
                        kind="tool_call",
                        tool_name="edit",
                        text=f"edit {applied.group('path')}",
                    )
                )
        self._flush_output(pending)

    def _called(self, text: str) -> bool:
        """Whether the last turn is the tool call ``text`` (the user's ``/run`` aider then reports)."""
        last = self.turns[-1] if self.turns else None
        return last is not None and last.kind == "tool_call" and last.text == text

    def _flush_output(self, block: list[Line]) -> None:
        text = "\n".join(_unquote(ln.text) for ln in block)
        role: Role = "system" if self.prompted else "tool"  # aider's own answer to a prompt: a notice
        self._add(make_turn(role, block, kind="tool_result", tool_name="aider", text=text))

    def _assistant(self, i: int) -> int:
        j = i
        n = len(self.lines)
        while j < n:
            text = self.lines[j].text
            if self.is_user(text) or self.is_tool(text):
                break
            fence = fence_open(text)
            close = self._closing(j, fence) if fence else None
            j = close + 1 if close is not None else j + 1
        self._add(make_turn("assistant", self.lines[i:j]))
        return j

    def _closing(self, i: int, fence: str) -> int | None:
        """The line closing the fence opened at ``i``, if it comes before the next user line."""
        for j in range(i + 1, len(self.lines)):
            text = self.lines[j].text
            if fence_closes(fence, text):
                return j
            if self.is_user(text):
                return None
        return None


def _unquote(text: str) -> str:
    """A tool line without aider's ``> `` prefix and its hard-break spaces."""
    if text.startswith(">"):
        text = text[1:].removeprefix(" ")
    return text.rstrip()


def parse(lines: Iterable[Line], base: str, hard: bool | None = None) -> tuple[list[Part], list[str]]:
    """Split the history at its session headers and read each one; ids are ``base@<start>``."""
    if hard is None:
        lines = list(lines)
        hard = _hard_breaks(lines)
    warnings: list[str] = []
    return list(iter_parts(lines, base, hard, warnings)), warnings


def iter_parts(lines: Iterable[Line], base: str, hard: bool, warnings: list[str]) -> Iterator[Part]:
    """The history's sessions one at a time (``hard`` from :class:`Scan`); ``lines`` may be a
    one-pass iterator: only one session's lines and turns are held, so memory follows the largest
    session, not the file. Warnings are appended to ``warnings`` as they are found."""
    seen: dict[str, int] = {}
    for head, body, ended in _sessions(lines):
        ts = _header_time(head.text) if head is not None else None
        if head is not None and ts is None:
            warnings.append(f"aider: unreadable session time at line {head.no}")
        if ts:
            sid = f"{base}@{ts:%Y-%m-%dT%H:%M:%SZ}"
        else:
            sid = f"{base}@line-{head.no}" if head is not None else base
        seen[sid] = seen.get(sid, 0) + 1
        if seen[sid] > 1:
            sid = f"{sid}-{seen[sid]}"
        part = Part(session_id=sid, turns=_Reader(body, hard).run(), start=ts, end=ts)
        part.ended = ended
        yield part
        del part, body  # not held while the next session's lines are read


def _sessions(lines: Iterable[Line]) -> Iterator[tuple[Line | None, list[Line], bool]]:
    """Each session's header line (None for text before the first header), its body lines and
    whether another session follows it. Nothing when the file has no header at all."""
    head: Line | None = None
    body: list[Line] = []
    headed = False  # a header has been seen
    for ln in lines:
        if ln.text.startswith("# aider chat started at") and HEADER.fullmatch(ln.text):
            if headed or body:  # a preamble before the first header is a session of its own
                yield head, body, True
            head, body, headed = ln, [], True
        else:
            body.append(ln)
    if headed:
        yield head, body, False


class Scan:
    """What the whole file says before any session is read, fed one line at a time: whether it is
    an Aider history (a session header anywhere) and whether it kept aider's hard breaks."""

    def __init__(self) -> None:
        self.found = False
        self.marked = 0
        self.kept = 0

    def feed(self, text: str) -> None:
        if text.startswith(("> ", "#### ")):
            self.marked += 1
            self.kept += text.endswith("  ")
        elif not self.found and text.startswith("# aider chat started at"):
            self.found = HEADER.fullmatch(text) is not None

    @property
    def hard_breaks(self) -> bool:
        """Aider ends every ``> `` and ``#### `` line it writes with two spaces; a file whose
        trailing spaces were stripped has none, so a quarter is a safe line between the two."""
        return not self.marked or self.kept * 4 >= self.marked


def _hard_breaks(lines: list[Line]) -> bool:
    """Whether this file kept aider's two-space line ends (see :attr:`Scan.hard_breaks`)."""
    scan = Scan()
    for ln in lines:
        scan.feed(ln.text)
    return scan.hard_breaks

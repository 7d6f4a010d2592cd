"""Hand-kept logs and generic exports: heading roles, speaker lines, or plain paragraphs.

Roles are marked many ways (``User:``, ``**User:**``, ``## User``, ``> **user**``, ``Assistant:``,
``Agent:``, ``Tool:``/``Output:``), so matching is generous but needs a colon, a heading or
emphasis around the name, so prose starting with "User" stays prose. Chat logs also name people:
``**Dana** (2025-01-03 10:15):`` or ``Dana (10:15):`` (a timestamp makes any name a speaker), and
``**Dana**:`` / ``Dana:`` when the file has no role words, opens with such a line and at least two
names speak twice or more (so a ``**Note**:`` inside an answer stays text). Without a role word,
the first person to speak is the user and the others are assistants, unless a name is a known
model; with three or more people each turn keeps its speaker's name.

A fenced block right after a ``$ command`` line (or opening with one) is that command's output.
Files with no speaker marker at all become one assistant turn per paragraph.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import chain

from scribed.models import Role, Turn, TurnKind
from scribed.sources.common import parse_ts, turn
from scribed.sources.markdown_blocks import Cursor, Run
from scribed.sources.markdown_lines import Line, fence_closes, fence_open
from scribed.sources.turn_text import TurnText

_USER = r"user|human|me|you"
_ASSISTANT = r"assistant|agent|ai|model|bot|claude|copilot|codex|chatgpt|gemini"
_TOOL = r"tool(?:[ \t]+(?:output|result))?|output|observation|stdout"
_MARKER = re.compile(
    r"[ \t]{0,3}(?:(?P<h>#{1,6})[ \t]+|(?P<q>>)[ \t]*)?"
    r"(?P<b1>\*\*|__|\*|_)?[ \t]*"
    rf"(?P<name>{_USER}|{_ASSISTANT}|system|{_TOOL})\b"
    r"(?:[ \t]*\((?P<note>[^)\n]{0,60})\))?"
    r"[ \t]*(?P<c1>[:：])?[ \t]*(?P<b2>\*\*|__|\*|_)?[ \t]*(?P<c2>[:：])?(?P<rest>.*)",
    re.IGNORECASE,
)
_NAME = r"[^\W\d_][\w.'’-]{0,30}(?:[ \t][^\W\d_][\w.'’-]{0,30}){0,2}"
# Bare (unbolded) names count as speakers only when the file opens with one and at least this many
# names each start at least this many lines.
_WEAK_NAME_MIN = 2
# With at least this many speakers, turns keep the speaker's name (roles alone would merge them).
_SHOW_NAMES_MIN = 3
_STAMP = r"[(\[](?P<ts>[^()\[\]\n]{4,40})[)\]]"
_NAMED_BOLD = re.compile(
    rf"[ \t]{{0,3}}(?P<b>\*\*|__)(?P<name>{_NAME})[ \t]*(?P<c0>[:：])?(?P=b)[ \t]*(?:{_STAMP})?"
    r"[ \t]*(?P<c1>[:：])?(?:[ \t]+(?P<rest>.*))?"
)
_NAMED_PLAIN = re.compile(rf"(?P<name>{_NAME})[ \t]*(?:{_STAMP})?[ \t]*[:：](?:[ \t]+(?P<rest>.*))?")
_LABELS = {
    "note", "notes", "example", "examples", "warning", "tip", "important", "todo", "error", "result",
    "summary", "answer", "question", "input", "step", "steps", "reason", "why", "what", "how", "pros",
    "cons", "status", "problem", "solution", "fix", "cause", "root cause", "update", "edit", "source",
    "sources", "file", "files", "path", "command", "usage", "description", "title", "date", "time",
}  # fmt: skip
_MODELS = re.compile(
    r"(?:assistant|agent|ai|bot|model|claude|copilot|codex|chatgpt|gpt\S*|gemini|llama|mistral|qwen|"
    r"deepseek|cursor|aider|o\d\S*)\b.*",
    re.IGNORECASE,
)
_ISO_IN_LINE = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_CLOCK = re.compile(r"(?P<h>\d{1,2}):(?P<m>\d{2})(?::(?P<s>\d{2}))?[ \t]*(?P<p>[AaPp][Mm])?")
_DATE_HEADING = re.compile(r"[ \t]*#{1,6}[ \t]+(?:.*?\b)?(?P<d>\d{4}-\d{2}-\d{2})\b.*")
_COMMAND = re.compile(r"[ \t]*\$[ \t]+(?P<cmd>\S.*)")
# A stamp right after a role word's closing emphasis ("**Bot** (2026-11-10T10:00:00.000Z): text",
# "**User** [10:15] — text"): the turn's time, never its text.
_LEAD_STAMP = re.compile(rf"{_STAMP}[ \t]*(?:[:：]|[—–-](?=[ \t]))?[ \t]*")
_DASHES = "—–-"
_SAYS = re.compile(r"[^\s*_>:-]")  # a turn made of these only is markup, not words


@dataclass(slots=True)
class Speaker:
    """A speaker line: who, in which role, when, and the words on the same line."""

    role: Role
    kind: TurnKind
    name: str
    quoted: bool
    ts: datetime | None
    rest: str


def _role_of(name: str) -> tuple[Role, TurnKind]:
    low = name.lower()
    if re.fullmatch(_USER, low):
        return "user", "message"
    if low == "system":
        return "system", "message"
    if re.fullmatch(_TOOL, low):
        return "tool", "tool_result"
    return "assistant", "message"


def _role_marker(text: str) -> re.Match[str] | None:
    """A role-word marker, only when a colon, a heading or closed emphasis says so."""
    m = _MARKER.match(text)
    if m is None:
        return None
    if m.group("c1") or m.group("c2"):
        return m
    if m.group("b1") and m.group("b2") and m.group("b1") == m.group("b2"):
        return m
    rest = m.group("rest")
    if m.group("h") and (not rest.strip() or not rest.lstrip()[0].isalnum()):
        return m
    return None


def _stamp(raw: str | None, day: datetime | None) -> datetime | None:
    """A full timestamp, or a clock time on the last date the file named."""
    if not raw:
        return None
    iso = _ISO_IN_LINE.search(raw)
    if iso:
        return parse_ts(iso.group(0))
    date_only = re.fullmatch(r"\s*(\d{4}-\d{2}-\d{2})\s*", raw)
    if date_only:
        return parse_ts(date_only.group(1))
    clock = _CLOCK.fullmatch(raw.strip())
    if clock is None or day is None:
        return None
    h, mi, s = int(clock.group("h")), int(clock.group("m")), int(clock.group("s") or 0)
    if clock.group("p"):
        h = h % 12 + (12 if clock.group("p").lower() == "pm" else 0)
    try:
        return day.replace(hour=h, minute=mi, second=s)
    except ValueError:
        return None


def _named(text: str) -> tuple[str, str | None, str, bool] | None:
    """(name, stamp, rest, strong) for a person's speaker line; strong when it has a timestamp."""
    m = _NAMED_BOLD.fullmatch(text)
    if m is not None and not (m.group("c0") or m.group("c1") or m.group("ts")):
        m = None
    if m is None:
        m = _NAMED_PLAIN.fullmatch(text)
    if m is None:
        return None
    name = m.group("name").strip()
    if name.lower() in _LABELS:
        return None
    ts = m.group("ts")
    strong = bool(
        ts
        and (_ISO_IN_LINE.search(ts) or _CLOCK.fullmatch(ts.strip()) or re.search(r"\d{4}-\d{2}-\d{2}", ts))
    )
    if ts and not strong:
        return None
    rest = (m.group("rest") or "").strip()
    if ts and rest[:1] in _DASHES and rest[1:2].isspace():  # "**Dana** (10:15) — text"
        rest = rest[1:].strip()
    return name, ts, rest, strong


@dataclass(slots=True)
class Speakers:
    """The file's speaker conventions, decided once from all its lines outside fences."""

    roles: bool = False  # role words (User:/Assistant:) are in use
    names: dict[str, Role] = field(default_factory=dict)  # accepted person names
    show_names: bool = False

    @classmethod
    def scan(cls, lines: Iterable[Line]) -> Speakers:
        scan = SpeakerScan()
        for ln in lines:
            scan.feed(ln.text)
        return scan.result()

    @property
    def any(self) -> bool:
        return self.roles or bool(self.names)

    def match(self, text: str, day: datetime | None) -> Speaker | None:
        m = _role_marker(text) if self.roles else None
        if m is not None:
            role, kind = _role_of(m.group("name"))
            rest = m.group("rest").strip().strip("*_").strip()
            lead = _LEAD_STAMP.match(rest)
            ts = _stamp(lead.group("ts"), day) if lead else None
            if ts is not None and lead is not None:  # "**Bot** (2026-…): text": the time is the turn's
                rest = rest[lead.end() :].strip().strip("*_").strip()
            else:
                stamp = _ISO_IN_LINE.search(text)
                if stamp and rest.strip("()[]— -").strip() == stamp.group(0):
                    rest = ""
                ts = parse_ts(stamp.group(0)) if stamp else _stamp(m.group("note"), day)
            return Speaker(role, kind, m.group("name"), bool(m.group("q")), ts, rest)
        hit = _named(text) if self.names else None
        if hit is None or hit[0] not in self.names:
            return None
        name, raw, rest, _ = hit
        if self.show_names:
            rest = f"{name}: {rest}" if rest else f"{name}:"
        return Speaker(self.names[name], "message", name, False, _stamp(raw, day), rest)


class SpeakerScan:
    """:meth:`Speakers.scan` fed one line at a time, so a session's lines need not be held: a
    first pass over the file decides each session's speakers, a second reads its turns. The last
    non-blank line is held back until another one comes (:meth:`drop_last` leaves it out: a
    trailing end marker is no part of the session)."""

    def __init__(self) -> None:
        self.roles = False
        self.counts: dict[str, int] = {}  # names in the order they first spoke
        self.strong: set[str] = set()
        self.first: str | None = None  # the first line outside fences with text, not a heading
        self.fence = ""
        self.held: str | None = None

    def feed(self, text: str) -> None:
        if not text.strip():  # blank: no fence opens or closes, no speaker
            return
        if self.held is not None:
            self.outside(self.held)
        self.held = text

    def drop_last(self) -> None:
        self.held = None

    def result(self) -> Speakers:
        if self.held is not None:
            self.outside(self.held)
            self.held = None
        counts = self.counts
        opens = self.first is not None and _named(self.first) is not None
        weak_ok = (
            not self.roles
            and opens
            and sum(1 for c in counts.values() if c >= _WEAK_NAME_MIN) >= _WEAK_NAME_MIN
        )
        accepted = [n for n in counts if n in self.strong or (weak_ok and counts[n] >= _WEAK_NAME_MIN)]
        out = Speakers(roles=self.roles)
        has_user = False
        for name in accepted:
            if _MODELS.fullmatch(name):
                out.names[name] = "assistant"
            elif not has_user:
                out.names[name] = "user"
                has_user = True
            else:
                out.names[name] = "assistant"
        out.show_names = len(accepted) >= _SHOW_NAMES_MIN
        return out

    def outside(self, text: str) -> None:
        """One non-blank line, counted when it is outside a fenced block (as ``outside_fences``)."""
        if self.fence:
            if self.fence[0] in text[:4] and fence_closes(self.fence, text):
                self.fence = ""
            return
        self.fence = fence_open(text)
        if self.fence:
            return
        if self.first is None and not text.startswith("#"):
            self.first = text
        if _role_marker(text):
            self.roles = True
            return
        hit = _named(text)
        if hit is None:
            return
        name, _, _, is_strong = hit
        self.counts[name] = self.counts.get(name, 0) + 1
        if is_strong:
            self.strong.add(name)


@dataclass(slots=True)
class _Scanner:
    """Accumulates the current speaker's lines and emits turns."""

    out: list[Turn] = field(default_factory=list)
    role: Role = "system"
    kind: TurnKind = "message"
    quoted: bool = False
    ts: datetime | None = None
    buf: TurnText = field(default_factory=TurnText)  # the turn's text, bounded (a 100 MB paste)
    first: int = 0
    end: int = 0
    said: bool = False  # a character other than whitespace and markup was added

    def add(self, ln: Line, text: str | None = None) -> None:
        if not self.first:
            self.first = ln.no
        body = ln.text if text is None else text
        if self.quoted and body.lstrip().startswith(">"):
            body = body.lstrip()[1:].removeprefix(" ")
        self.buf.errors = self.kind == "tool_result"  # the kind is the turn's from its first line on
        self.buf.add(body)
        self.end = ln.end
        self.said = self.said or _SAYS.search(body) is not None

    def flush(self) -> None:
        if self.said:  # the text, stripped, is not empty and not only markup
            text, clipped = self.buf.text(self.kind)
            tool = "tool" if self.kind == "tool_result" else None
            self.out.append(
                turn(
                    self.role,
                    text,
                    kind=self.kind,
                    ts=self.ts,
                    line=self.first,
                    end_offset=self.end,
                    tool_name=tool,
                    clipped=clipped,
                )
            )
        if self.buf:
            self.buf = TurnText()
        self.first = 0
        self.said = False

    def command(self, cmd: str, ln: Line, output: Iterable[Line]) -> None:
        """A ``$ cmd`` line and its fenced output: a tool call and a tool result."""
        self.command_runs(cmd, ln, (Run([x.text], x.text, x.no, x.end) for x in output))

    def command_runs(self, cmd: str, ln: Line, output: Iterable[Run]) -> None:
        """:meth:`command` with the output as runs of lines."""
        self.flush()
        self.out.append(
            turn(
                "assistant",
                f"shell {cmd}",
                kind="tool_call",
                ts=self.ts,
                line=ln.no,
                end_offset=ln.end,
                tool_name="shell",
            )
        )
        first = last = -1
        text = TurnText()
        said = False
        for run in output:
            first = run.first_no if first < 0 else first
            last = run.end
            text.extend(run.texts)
            said = said or (bool(run.joined) and not run.joined.isspace())  # a line with a character
        if said:
            kept, clipped = text.text("tool_result", "\n")
            self.out.append(
                turn(
                    "tool",
                    kept,
                    kind="tool_result",
                    ts=self.ts,
                    line=first,
                    end_offset=last,
                    tool_name="shell",
                    clipped=clipped,
                )
            )


def _open_turn(sc: _Scanner, ln: Line, sp: Speaker) -> datetime | None:
    """Start the speaker's turn at ``ln``; the day its timestamp names, if it has one."""
    sc.flush()
    sc.role, sc.kind, sc.quoted, sc.ts = sp.role, sp.kind, sp.quoted, sp.ts
    sc.first = ln.no
    if sp.rest:
        sc.add(ln, sp.rest)
    if sp.ts is None:
        return None
    return sp.ts.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


class _Ahead:
    """A one-pass line iterator that lines read ahead can be put back into."""

    def __init__(self, lines: Iterable[Line]) -> None:
        self.lines = iter(lines)
        self.back: deque[Line] = deque()

    def __iter__(self) -> Iterator[Line]:
        return self

    def __next__(self) -> Line:
        return self.back.popleft() if self.back else next(self.lines)

    def unread(self, lines: list[Line]) -> None:
        self.back.extendleft(reversed(lines))


def _closes(fence: str, text: str) -> bool:
    return fence[0] in text[:4] and fence_closes(fence, text)  # the first test is fence_closes' own


def _fenced_block(sc: _Scanner, ln: Line, it: _Ahead) -> bool:
    """Feed the fenced block ``ln`` opens (a ``$ command`` first line makes it a command) to the
    scanner, reading it from ``it`` up to its closing fence (or the end); False when no fence opens."""
    fence = fence_open(ln.text)
    if not fence:
        return False
    head: list[Line] = []  # the blank lines before the first line with text
    lead: Line | None = None
    closed: list[Line] = []
    for x in it:
        if _closes(fence, x.text):
            closed.append(x)
            break
        if x.text.strip():
            lead = x
            break
        head.append(x)
    if lead is not None and (cmd := _COMMAND.fullmatch(lead.text)):
        sc.command_runs(cmd.group("cmd").strip(), lead, _runs(fence, it))
        return True
    rest = _until(fence, it, closed) if lead is not None else iter(())
    inner = chain(head, (lead,) if lead is not None else (), rest)
    if sc.kind == "tool_result":
        for x in inner:  # the section is output already; the fence adds nothing
            sc.add(x)
        return True
    sc.add(ln)
    for x in inner:
        sc.add(x)
    for x in closed:
        sc.add(x)
    return True


def _until(fence: str, it: Iterator[Line], closed: list[Line] | None = None) -> Iterator[Line]:
    """The lines of ``it`` before the one closing ``fence`` (consumed; put in ``closed`` if given).
    Nothing is put back into an :class:`_Ahead` while its block is read: with none waiting, its
    lines are read from the stream under it (a call less per line of a long output)."""
    if isinstance(it, _Ahead) and not it.back:
        it = it.lines
    for x in it:
        if _closes(fence, x.text):
            if closed is not None:
                closed.append(x)
            return
        yield x


def _runs(fence: str, it: Iterator[Line]) -> Iterator[Run]:
    """:func:`_until`'s lines as runs: a :class:`Cursor`'s in one search a block, else one a line."""
    if isinstance(it, _Ahead) and not it.back and isinstance(it.lines, Cursor):
        return it.lines.runs(fence)
    return (Run([x.text], x.text, x.no, x.end) for x in _until(fence, it))  # put-back lines first


def _command_block(sc: _Scanner, ln: Line, it: _Ahead) -> bool:
    """Feed a ``$ cmd`` line followed (after blank lines) by a fenced output block to the scanner;
    False, with the lines read ahead put back, when ``ln`` is not such a command."""
    cmd = _COMMAND.fullmatch(ln.text)
    if not cmd:
        return False
    ahead: list[Line] = []
    for x in it:
        if x.text.strip():
            fence = fence_open(x.text)
            if fence:
                sc.command_runs(cmd.group("cmd").strip(), ln, _runs(fence, it))
                return True
            ahead.append(x)
            break
        ahead.append(x)
    it.unread(ahead)
    return False


def chat_turns(body: list[Line]) -> list[Turn]:
    """Split the body on speaker markers (or paragraphs when there are none)."""
    return stream_turns(body, Speakers.scan(body))


def stream_turns(lines: Iterable[Line], speakers: Speakers) -> list[Turn]:
    """The turns of a session's lines, read once in order (``speakers`` from a first pass over
    them, :class:`SpeakerScan`): only the turn being read is held, not the session's lines."""
    has_markers = speakers.any
    sc = _Scanner(role="system" if has_markers else "assistant")
    day: datetime | None = None
    it = _Ahead(lines)
    for ln in it:
        if _fenced_block(sc, ln, it) or _command_block(sc, ln, it):
            continue
        dated = _DATE_HEADING.fullmatch(ln.text)
        if dated:
            day = parse_ts(dated.group("d")) or day
        sp = speakers.match(ln.text, day) if has_markers else None
        if sp is not None:
            day = _open_turn(sc, ln, sp) or day
        elif not has_markers and not ln.text.strip():
            sc.flush()
        else:
            sc.add(ln)
    sc.flush()
    return sc.out

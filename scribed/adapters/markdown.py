"""A folder of markdown or plain-text transcripts, one session per file.

Exports and hand-kept logs mark speakers many ways (``User:``, ``**User:**``, ``## User``,
``> **user**``, ``Assistant:``, ``Agent:``, ``Tool:``/``Output:``), so matching is generous but
needs a colon, a heading or emphasis around the name, so prose starting with "User" stays prose.
A fenced block right after a ``$ command`` line (or opening with one) is that command's output.
Files with no speaker marker at all become one assistant turn per paragraph.

The date comes from front matter (``date``/``started``/``ended``), else the file name, else the
first dated heading or ISO timestamp in the text, else the file's mtime (with a warning).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from scribed.adapters.common import Draft, Source, Tally, finish, looks_binary, parse_ts, safe_id, turn
from scribed.models import ParseResult, Role, Turn, TurnKind
from scribed.names import normalize_name

_FM_KEY = re.compile(r"([A-Za-z][\w-]*)[ \t]*:[ \t]*(.*)")
_FENCE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")
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
_ISO_DT = r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
_TEXT_DATE = re.compile(
    rf"^[ \t]*#{{1,6}}[ \t]+(?P<h>\d{{4}}-\d{{2}}-\d{{2}}(?:[T ]\d{{2}}:\d{{2}}(?::\d{{2}})?(?:Z|[+-]\d{{2}}:?\d{{2}})?)?)|(?P<t>{_ISO_DT})",
    re.MULTILINE,
)
_ISO_IN_LINE = re.compile(_ISO_DT)
_NAME_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T_ ](\d{2})[-:](\d{2})(?:[-:](\d{2}))?(?:[.,]\d+)?Z?)?")
_END_MARK = re.compile(r"<!--\s*session:\s*end\s*-->|[\W_]*session\s+ended\b.*", re.IGNORECASE)
_COMMAND = re.compile(r"[ \t]*\$[ \t]+(?P<cmd>\S.*)")


@dataclass(slots=True)
class Line:
    """A decoded source line with its 1-based number and the byte offset just past it."""

    no: int
    text: str
    end: int


def split_lines(data: bytes) -> list[Line]:
    """Split raw bytes into lines, decoding each one alone so offsets stay exact bytes."""
    out: list[Line] = []
    offset = 0
    for no, raw in enumerate(data.splitlines(keepends=True), start=1):
        offset += len(raw)
        text = raw.decode("utf-8", "replace").rstrip("\r\n")
        if no == 1 and text.startswith("\ufeff"):
            text = text[1:]
        out.append(Line(no, text, offset))
    return out


def front_matter(lines: list[Line]) -> tuple[dict[str, str], int]:
    """Simple ``key: value`` front matter (no YAML dependency) and how many lines it spans."""
    if not lines or lines[0].text.strip() != "---":
        return {}, 0
    for i in range(1, min(len(lines), 200)):
        if lines[i].text.strip() in ("---", "..."):
            fields: dict[str, str] = {}
            for ln in lines[1:i]:
                m = _FM_KEY.fullmatch(ln.text.strip())
                if m:
                    fields.setdefault(m.group(1).lower(), m.group(2).strip().strip("\"'"))
            return fields, i + 1
    return {}, 0


def paragraphs(lines: list[Line]) -> list[list[Line]]:
    """Blank-line separated blocks; a fenced code block is never split."""
    blocks: list[list[Line]] = []
    cur: list[Line] = []
    fence = ""
    for ln in lines:
        m = _FENCE.match(ln.text)
        if fence:
            cur.append(ln)
            if (
                m
                and m.group(1)[0] == fence[0]
                and len(m.group(1)) >= len(fence)
                and not ln.text.strip(" \t`~")
            ):
                fence = ""
            continue
        if m:
            fence = m.group(1)
            cur.append(ln)
            continue
        if ln.text.strip():
            cur.append(ln)
        elif cur:
            blocks.append(cur)
            cur = []
    if cur:
        blocks.append(cur)
    return blocks


def _marker(text: str) -> re.Match[str] | None:
    """A speaker marker, only when a colon, a heading or closed emphasis says so."""
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


def _role_of(name: str) -> tuple[Role, TurnKind]:
    low = name.lower()
    if re.fullmatch(_USER, low):
        return "user", "message"
    if low == "system":
        return "system", "message"
    if re.fullmatch(_TOOL, low):
        return "tool", "tool_result"
    return "assistant", "message"


def _name_date(stem: str) -> datetime | None:
    for m in _NAME_DATE.finditer(stem):
        y, mo, d, h, mi, s = (int(g) if g else 0 for g in m.groups())
        try:
            return datetime(y, mo, d, h, mi, s, tzinfo=UTC)
        except ValueError:
            continue
    return None


def _text_date(lines: list[Line]) -> datetime | None:
    for ln in lines:
        for m in _TEXT_DATE.finditer(ln.text):
            dt = parse_ts(m.group("h") or m.group("t"))
            if dt is not None:
                return dt
    return None


@dataclass(slots=True)
class _Scanner:
    """Accumulates the current speaker's lines and emits turns."""

    out: list[Turn] = field(default_factory=list)
    role: Role = "system"
    kind: TurnKind = "message"
    quoted: bool = False
    ts: datetime | None = None
    buf: list[Line] = field(default_factory=list)
    first: int = 0

    def add(self, ln: Line, text: str | None = None) -> None:
        if not self.first:
            self.first = ln.no
        body = ln.text if text is None else text
        if self.quoted and body.lstrip().startswith(">"):
            body = body.lstrip()[1:].removeprefix(" ")
        self.buf.append(Line(ln.no, body, ln.end))

    def flush(self) -> None:
        text = "\n".join(ln.text for ln in self.buf).strip()
        if text and not re.fullmatch(r"[\s*_>:-]*", text):
            tool = "tool" if self.kind == "tool_result" else None
            self.out.append(
                turn(
                    self.role,
                    text,
                    kind=self.kind,
                    ts=self.ts,
                    line=self.first,
                    end_offset=self.buf[-1].end,
                    tool_name=tool,
                )
            )
        self.buf = []
        self.first = 0

    def command(self, cmd: str, ln: Line, output: list[Line]) -> None:
        """A ``$ cmd`` line and its fenced output: a tool call and a tool result."""
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
        text = "\n".join(o.text for o in output).strip("\n")
        if text.strip():
            end = output[-1].end
            self.out.append(
                turn(
                    "tool",
                    text,
                    kind="tool_result",
                    ts=self.ts,
                    line=output[0].no,
                    end_offset=end,
                    tool_name="shell",
                )
            )


def _fenced(lines: list[Line], i: int) -> tuple[list[Line], int] | None:
    """If ``lines[i]`` opens a fence, its inner lines and the index after the closing fence."""
    m = _FENCE.match(lines[i].text)
    if m is None:
        return None
    fence = m.group(1)
    inner: list[Line] = []
    j = i + 1
    while j < len(lines):
        c = _FENCE.match(lines[j].text)
        if (
            c
            and c.group(1)[0] == fence[0]
            and len(c.group(1)) >= len(fence)
            and not lines[j].text.strip(" \t`~")
        ):
            return inner, j + 1
        inner.append(lines[j])
        j += 1
    return inner, j


def _turns(body: list[Line]) -> list[Turn]:
    """Split the body on speaker markers (or paragraphs when there are none)."""
    has_markers = any(_marker(ln.text) for ln in _outside_fences(body))
    sc = _Scanner(role="system" if has_markers else "assistant")
    i = 0
    n = len(body)
    while i < n:
        ln = body[i]
        block = _fenced(body, i)
        if block is not None:
            inner, nxt = block
            lead = next((k for k, x in enumerate(inner) if x.text.strip()), -1)
            cmd = _COMMAND.fullmatch(inner[lead].text) if lead >= 0 else None
            if cmd:
                sc.command(cmd.group("cmd").strip(), inner[lead], inner[lead + 1 :])
            elif sc.kind == "tool_result":
                for x in inner:  # the section is output already; the fence adds nothing
                    sc.add(x)
            else:
                for x in body[i:nxt]:
                    sc.add(x)
            i = nxt
            continue
        cmd = _COMMAND.fullmatch(ln.text)
        if cmd:
            j = i + 1
            while j < n and not body[j].text.strip():
                j += 1
            block = _fenced(body, j) if j < n else None
            if block is not None:
                inner, nxt = block
                sc.command(cmd.group("cmd").strip(), ln, inner)
                i = nxt
                continue
        m = _marker(ln.text) if has_markers else None
        if m is not None:
            sc.flush()
            sc.role, sc.kind = _role_of(m.group("name"))
            sc.quoted = bool(m.group("q"))
            stamp = _ISO_IN_LINE.search(ln.text)
            sc.ts = parse_ts(stamp.group(0)) if stamp else None
            rest = m.group("rest").strip().strip("*_").strip()
            if stamp and rest.strip("()[]— -").strip() == stamp.group(0):
                rest = ""
            sc.first = ln.no
            if rest:
                sc.add(ln, rest)
            i += 1
            continue
        if not has_markers and not ln.text.strip():
            sc.flush()
        else:
            sc.add(ln)
        i += 1
    sc.flush()
    return sc.out


def _outside_fences(lines: list[Line]) -> list[Line]:
    out: list[Line] = []
    fence = ""
    for ln in lines:
        m = _FENCE.match(ln.text)
        if fence:
            if (
                m
                and m.group(1)[0] == fence[0]
                and len(m.group(1)) >= len(fence)
                and not ln.text.strip(" \t`~")
            ):
                fence = ""
        elif m:
            fence = m.group(1)
        else:
            out.append(ln)
    return out


def parse(src: Source) -> ParseResult:
    """Read one markdown/plain-text transcript."""
    data = src.path.read_bytes()
    tally = Tally(src.kind, src.path)
    if not data.strip():
        return finish(src, [], tally, size=len(data), had_content=False)
    if looks_binary(data):
        return ParseResult(
            sessions=[], warnings=[f"markdown: binary content in {src.path}; skipped"], size=len(data)
        )
    lines = split_lines(data)
    fields, skip = front_matter(lines)
    body = lines[skip:]

    ended = False
    last = next((k for k in range(len(body) - 1, -1, -1) if body[k].text.strip()), None)
    if last is not None and _END_MARK.fullmatch(body[last].text.strip()):
        ended = True
        body = body[:last]

    agent = normalize_name(fields.get("agent", "")) or src.default_agent
    session_id = safe_id(fields.get("session", "")) or src.path.stem
    draft = Draft(agent=agent, session_id=session_id, turns=_turns(body))
    warnings: list[str] = []

    fm_start = parse_ts(
        fields.get("started") or fields.get("start") or fields.get("date") or fields.get("created")
    )
    fm_end = parse_ts(fields.get("ended") or fields.get("end"))
    start = fm_start or fm_end or _name_date(src.path.stem) or _text_date(body)
    if start is None and draft.turns:
        warnings.append(f"markdown: no date in {src.path}; using mtime")
    result = finish(src, [draft], tally, warnings=warnings, ended=ended, size=len(data))
    if start is not None:
        stamps = [t.ts for t in draft.turns if t.ts is not None and t.ts >= start]
        end = fm_end or (max(stamps) if stamps else start)
        for s in result.sessions:
            s.start, s.end = start, max(end, start)
    return result

"""The list-based speaker-convention reader the streamed one replaced (scribed f2b29dd), kept as
the reference the streamed reader must equal (tests/test_markdown_stream.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from scribed.models import Role, Turn
from scribed.sources.common import parse_ts
from scribed.sources.markdown import _TEXT_DATE
from scribed.sources.markdown_chat import (
    _COMMAND,
    _DATE_HEADING,
    _ISO_IN_LINE,
    _MODELS,
    _SHOW_NAMES_MIN,
    _WEAK_NAME_MIN,
    Speaker,
    _named,
    _open_turn,
    _role_marker,
    _role_of,
    _Scanner,
    _stamp,
)
from scribed.sources.markdown_lines import Line, fenced, outside_fences


def text_date(lines: list[Line]) -> datetime | None:
    for ln in lines:
        for m in _TEXT_DATE.finditer(ln.text):
            dt = parse_ts(m.group("h") or m.group("t"))
            if dt is not None:
                return dt
    return None


@dataclass(slots=True)
class Speakers:
    """The file's speaker conventions, decided once from all its lines outside fences."""

    roles: bool = False  # role words (User:/Assistant:) are in use
    names: dict[str, Role] = field(default_factory=dict)  # accepted person names
    show_names: bool = False

    @classmethod
    def scan(cls, lines: list[Line]) -> Speakers:
        outside = outside_fences(lines)
        out = cls(roles=any(_role_marker(ln.text) for ln in outside))
        counts: dict[str, int] = {}
        strong: set[str] = set()
        order: list[str] = []
        first_text = next((ln.text for ln in outside if ln.text.strip() and not ln.text.startswith("#")), "")
        opens = _named(first_text) is not None
        for ln in outside:
            hit = _named(ln.text)
            if hit is None or _role_marker(ln.text):
                continue
            name, _, _, is_strong = hit
            if name not in counts:
                order.append(name)
            counts[name] = counts.get(name, 0) + 1
            if is_strong:
                strong.add(name)
        weak_ok = (
            not out.roles
            and opens
            and sum(1 for c in counts.values() if c >= _WEAK_NAME_MIN) >= _WEAK_NAME_MIN
        )
        accepted = [n for n in order if n in strong or (weak_ok and counts[n] >= _WEAK_NAME_MIN)]
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

    @property
    def any(self) -> bool:
        return self.roles or bool(self.names)

    def match(self, text: str, day: datetime | None) -> Speaker | None:
        m = _role_marker(text) if self.roles else None
        if m is not None:
            role, kind = _role_of(m.group("name"))
            stamp = _ISO_IN_LINE.search(text)
            rest = m.group("rest").strip().strip("*_").strip()
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


def _fenced_block(sc: _Scanner, body: list[Line], i: int) -> int | None:
    """Feed the fenced block opening at ``i`` (a ``$ cmd`` first line makes it a command) to the
    scanner; the index after it, or None when no fence opens there."""
    block = fenced(body, i)
    if block is None:
        return None
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
    return nxt


def _command_block(sc: _Scanner, body: list[Line], i: int) -> int | None:
    """Feed a ``$ cmd`` line followed (after blank lines) by a fenced output block to the scanner;
    the index after the block, or None when line ``i`` is not such a command."""
    cmd = _COMMAND.fullmatch(body[i].text)
    if not cmd:
        return None
    n = len(body)
    j = i + 1
    while j < n and not body[j].text.strip():
        j += 1
    block = fenced(body, j) if j < n else None
    if block is None:
        return None
    inner, nxt = block
    sc.command(cmd.group("cmd").strip(), body[i], inner)
    return nxt


def chat_turns(body: list[Line]) -> list[Turn]:
    """Split the body on speaker markers (or paragraphs when there are none)."""
    speakers = Speakers.scan(body)  # the list-based scan
    has_markers = speakers.any
    sc = _Scanner(role="system" if has_markers else "assistant")
    day: datetime | None = None
    i = 0
    while i < len(body):
        nxt = _fenced_block(sc, body, i)
        if nxt is None:
            nxt = _command_block(sc, body, i)
        if nxt is not None:
            i = nxt
            continue
        ln = body[i]
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
        i += 1
    sc.flush()
    return sc.out

"""A turn's text gathered line by line in bounded memory: a pasted log of 100 MB is one turn, and
:func:`scribed.sources.common.turn` keeps only its head, its tail and (for tool output) the
error-shaped lines between them. :class:`TurnText` holds the lines whole up to
:data:`HOLD_CHARS`; past that it holds the first and the last :data:`EDGE_CHARS` of them, counts
the rest and keeps the error-shaped lines it passes, and gives exactly the text ``turn`` would
have kept of the whole (as long as neither end is all whitespace).
"""

from __future__ import annotations

from collections import deque

from scribed.models import MAX_TOOL_CHARS, TurnKind, clip
from scribed.sources.common import (
    MAX_TURN_CHARS,
    TOOL_ERROR_CHARS,
    _error_lines,
    clip_tool_output,
    keep_error_lines,
    tool_parts,
    trim_error_line,
)

HOLD_CHARS = 4 * MAX_TURN_CHARS  # a turn this long is held whole, as it always was
EDGE_CHARS = MAX_TURN_CHARS  # past it: this much of its head and of its tail (more than any clip keeps)


class TurnText:
    """``"\\n".join(lines).strip(chars)`` as :func:`~scribed.sources.common.turn` keeps it, from
    lines added one at a time."""

    def __init__(self, hold: int = HOLD_CHARS, edge: int = EDGE_CHARS, *, errors: bool = True) -> None:
        self.hold, self.edge = hold, edge  # half of ``edge`` must exceed the half any clip keeps
        self.errors = errors  # keep the error lines of a long middle (only tool output needs them)
        self.lines: list[str] = []  # every line while the text is held whole; then the head's
        self.chars = 0  # in ``lines``
        self.long = False
        self.tail: deque[str] = deque()
        self.tail_chars = 0
        self.mid_chars = 0  # of the lines between head and tail, a separator each
        self.mid_errors: list[str] = []  # their distinct error-shaped lines, stripped and trimmed
        self.mid_seen: set[str] = set()
        self.mid_room = 0  # chars of error lines still worth keeping (see _split)

    def __bool__(self) -> bool:
        return bool(self.lines)

    def add(self, line: str) -> None:
        if not self.long:
            self.lines.append(line)
            self.chars += len(line) + 1
            if self.chars > self.hold:
                self._split()
            return
        self.tail.append(line)
        self.tail_chars += len(line)
        while len(self.tail) > 1 and self.tail_chars - len(self.tail[0]) >= self.edge:
            self._drop(self.tail.popleft())

    def extend(self, lines: list[str]) -> None:
        """:meth:`add` of each line, taken at once while the text stays held whole."""
        chars = self.chars + sum(map(len, lines)) + len(lines)
        if self.long or chars > self.hold:  # a split, or past it: line by line, as add does
            for line in lines:
                self.add(line)
            return
        self.lines.extend(lines)
        self.chars = chars

    def _split(self) -> None:
        """From here on, hold the head (the first lines holding ``edge`` chars) and the tail."""
        self.long = True
        n = k = 0
        while k < len(self.lines) and n < self.edge:
            n += len(self.lines[k]) + 1
            k += 1
        rest = self.lines[k:]
        del self.lines[k:]
        # A middle error line is needed while the ones before it fit the budget; a head line
        # repeating one of them frees at most its own length, so the head's size bounds that.
        self.mid_room = TOOL_ERROR_CHARS + n
        for line in rest:
            self.add(line)

    def _drop(self, line: str) -> None:
        self.tail_chars -= len(line)
        self.mid_chars += len(line) + 1
        if self.errors and self.mid_room > 0 and (hit := next(_error_lines(line), None)) is not None:
            kept = trim_error_line(hit)
            if kept and kept not in self.mid_seen:
                self.mid_seen.add(kept)
                self.mid_errors.append(kept)
                self.mid_room -= len(kept) + 1

    def text(self, kind: TurnKind, chars: str | None = None) -> tuple[str, bool]:
        """The text, stripped of ``chars`` (whitespace by default); True with it when it is already
        clipped as ``turn(kind=kind)`` clips (pass ``clipped=True`` on)."""
        if not self.mid_chars:  # nothing dropped: all of it is held
            return "\n".join([*self.lines, *self.tail]).strip(chars), False
        head = "\n".join(self.lines).lstrip(chars)
        tail = "\n".join(self.tail).rstrip(chars)
        if min(len(head), len(tail)) < self.edge // 2:  # an end nearly all whitespace: what is held
            return _clip("\n".join([*self.lines, *self.tail]).strip(chars), kind), True
        total = len(head) + self.mid_chars + 1 + len(tail)
        if kind == "tool_result":
            if not self.errors:
                raise ValueError("TurnText(errors=False) cannot give a tool output's text")
            return self._tool(head, tail), True
        half = max(1, (MAX_TOOL_CHARS if kind == "tool_call" else MAX_TURN_CHARS) // 2 - 20)
        return f"{head[:half]}\n[… {total - 2 * half} chars elided …]\n{tail[-half:]}", True

    def _tool(self, head: str, tail: str) -> str:
        """:func:`~scribed.sources.common.clip_tool_output` of ``head + middle + tail``, where the
        middle is what was dropped (its length and error lines known)."""
        half = max(1, MAX_TOOL_CHARS // 2 - 20)
        head_end = head.rfind("\n", half // 2, half)
        head_end = head_end if head_end > 0 else half
        t = tail.find("\n", len(tail) - half, len(tail) - half // 2)
        tail_start = t + 1 if t >= 0 else len(tail) - half
        middle_len = len(head) - head_end + self.mid_chars + 1 + tail_start
        lines = [
            *map(trim_error_line, _error_lines(head[head_end:])),
            *self.mid_errors,
            *map(trim_error_line, _error_lines(tail[:tail_start])),
        ]
        kept = keep_error_lines(lines, TOOL_ERROR_CHARS)
        return tool_parts(head[:head_end], middle_len, kept, tail[tail_start:])


def _clip(text: str, kind: TurnKind) -> str:
    if kind == "tool_result":
        return clip_tool_output(text)
    return clip(text, MAX_TOOL_CHARS if kind == "tool_call" else MAX_TURN_CHARS)

"""Strip injected content from parsed sessions before anything is compressed.

A transcript holds text the user never wrote: scribed's own spawn context (``scribed context``
output pasted into an agent's prompt), instructions files, skill bodies, hook context, command
echoes. Compressing it would write scribed's own output back into cold and the wiki, a copy
that grows every generation, and would bury the user's words under boilerplate.

scribed's spawn block is recognised by its stable marker (:func:`mark`) or, for outputs printed
before the marker existed, by its ``## Memory Context`` heading; the block runs until the closing
marker, or until a level-1/2 heading that is not part of the block. A block may span several turns
of one speaker (a markdown transcript split into paragraphs). Other injections are tag-delimited
(``<system-reminder>``, ``<environment_context>``, ``<skill>``, …). A turn left empty is dropped, and
a session left with no turns is dropped: a session made only of injected content yields no entry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from scribed.models import ParseResult, Turn

MARK_OPEN = "<!-- scribed:context -->"
MARK_CLOSE = "<!-- /scribed:context -->"
HEADING = "## Memory Context"
# Level-1/2 headings that occur inside a block: the hot file's and wiki pages' own titles.
_INNER_TOP = ("# Hot memory", "# Wiki", HEADING)
_TOP_HEADING = re.compile(r"^#{1,2}(?:\s|$)")
_FENCE = re.compile(r"^\s*(```|~~~)")

# Tags whose whole element is injected context, not conversation.
_TAGS = (
    "system-reminder",
    "environment_context",
    "user_instructions",
    "INSTRUCTIONS",
    "skill",
    "user-prompt-submit-hook",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "task-notification",
    "command-message",
    "command-contents",
)
_TAG_BLOCK = re.compile(r"<(" + "|".join(_TAGS) + r")\b[^>]*>.*?</\1\s*>", re.DOTALL)
_AGENTS_MD = re.compile(r"^# AGENTS\.md instructions\b.*$", re.MULTILINE)
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.DOTALL)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
# Outside the user's messages only the harness's reminders are injected (in a tool's output, or in
# an assistant turn of a markdown export that inlines the tool blocks); other tags may be content.
_TOOL_TAGS = re.compile(r"<system-reminder>.*?</system-reminder\s*>", re.DOTALL)
_LINE_TAGS = re.compile(r"^[ \t]*<system-reminder>.*?</system-reminder\s*>[ \t]*$", re.DOTALL | re.MULTILINE)


def mark(text: str) -> str:
    """``text`` wrapped in the stable markers that let scribed recognise its own output later."""
    return f"{MARK_OPEN}\n{text.rstrip(chr(10))}\n{MARK_CLOSE}\n"


class _Spawn:
    """Line-by-line recogniser of spawn blocks; its state carries over to the speaker's next turn.

    Marker blocks nest (a printed block wrapped once more by a template), a stray closing marker
    is scribed's own too, and the blank line a block leaves behind is not doubled."""

    __slots__ = ("closed", "depth", "fence", "state")

    def __init__(self) -> None:
        self.state = ""  # "" outside, "marker" or "heading" inside a block
        self.fence = False
        self.depth = 0  # open markers inside a "marker" block
        self.closed = False  # a block just ended: a blank line that would double is dropped

    def reset(self) -> None:
        self.state, self.fence, self.depth, self.closed = "", False, 0, False

    def strip(self, text: str) -> str:
        if self.state == "" and MARK_OPEN not in text and HEADING not in text and MARK_CLOSE not in text:
            return text
        kept: list[str] = []
        for line in text.split("\n"):
            if self.state == "marker":
                self._in_marker(line, kept)
                continue
            if self.state == "heading" and self._in_heading(line):
                continue
            if not self._opens(line):
                self._keep(line, kept)
        return "\n".join(kept)

    def _keep(self, line: str, kept: list[str]) -> None:
        if self.closed and not line.strip() and (not kept or not kept[-1].strip()):
            return
        self.closed = False
        kept.append(line)

    def _close(self) -> None:
        self.state, self.depth, self.closed = "", 0, True

    def _in_marker(self, line: str, kept: list[str]) -> None:
        self.depth += line.count(MARK_OPEN)
        if MARK_CLOSE not in line:
            return
        self.depth -= line.count(MARK_CLOSE)
        if self.depth <= 0:
            self._close()
            rest = line.rsplit(MARK_CLOSE, 1)[1]
            if rest.strip():
                self._keep(rest, kept)

    def _in_heading(self, line: str) -> bool:
        """Whether ``line`` still belongs to a block recognised by its heading."""
        if _FENCE.match(line):
            self.fence = not self.fence
            return True
        if MARK_CLOSE in line:
            self._close()
            return True
        if self.fence or not _TOP_HEADING.match(line) or line.startswith(_INNER_TOP):
            return True
        self.state = ""  # a heading of what follows the block: keep it
        return False

    def _opens(self, line: str) -> bool:
        """Whether ``line`` opens a block (or is a stray closing marker); updates the state."""
        stripped = line.strip()
        if stripped.startswith(MARK_OPEN):
            self.state, self.fence, self.depth = "marker", False, 0
            self._in_marker(stripped, [])  # counts this line's markers; an empty block closes here
            return True
        if stripped == HEADING:
            self.state, self.fence = "heading", False
            return True
        return stripped == MARK_CLOSE


def _commands(text: str) -> str:
    """A slash command's echo becomes what the user typed (``/review fix the login``); a bare
    command without arguments (``/clear``) carries no words and goes."""
    name = _COMMAND_NAME.search(text)
    if name is None:
        return text
    args = _COMMAND_ARGS.search(text)
    rest = _COMMAND_ARGS.sub("", _COMMAND_NAME.sub("", text))
    said = args.group(1).strip() if args else ""
    typed = f"{name.group(1).strip()} {said}" if said else ""
    return f"{typed}\n{rest}" if rest.strip() else typed


def strip_tags(text: str) -> str:
    """Remove tag-delimited injections and instruction-file headers from a message."""
    if "<" not in text and "AGENTS.md" not in text:
        return text
    text = _commands(text)
    text = _TAG_BLOCK.sub("", text)
    return _AGENTS_MD.sub("", text)


def clean_turns(turns: Iterable[Turn]) -> list[Turn]:
    """The turns with injected content removed; turns left empty are dropped."""
    spawn = _Spawn()
    out: list[Turn] = []
    speaker: tuple[str, str] | None = None
    for t in turns:
        if (t.role, t.kind) != speaker:
            spawn.reset()
            speaker = (t.role, t.kind)
        text = spawn.strip(t.text)
        if t.kind == "message" and t.role in ("user", "system"):
            text = strip_tags(text)
        elif t.kind == "tool_result" and "<system-reminder>" in text:
            text = _TOOL_TAGS.sub("", text)
        elif "<system-reminder>" in text:  # a markdown export inlines tool output in other turns
            text = _LINE_TAGS.sub("", text)  # only on lines of their own: prose may name the tag
        if text != t.text:
            text = text.strip()
            if not text:
                continue
            t.text = text
        out.append(t)
    return out


def clean(result: ParseResult) -> ParseResult:
    """Strip injected content from every session of a parse; drop sessions left with no turns."""
    kept = []
    for sess in result.sessions:
        turns = clean_turns(sess.turns)
        if turns:
            sess.turns = turns
            kept.append(sess)
    result.sessions = kept
    return result


__all__ = ["HEADING", "MARK_CLOSE", "MARK_OPEN", "clean", "clean_turns", "mark", "strip_tags"]

"""Whether a session uses a bare lowercase word as a thing's name: what tells a user's "switch to
pnpm" (a tool) from "switch to verbose" (a mode) or "replace foo with bar" (placeholders).

One word said bare cannot tell; the session's other lines can. A tool, library or package the
session chooses is, somewhere in it:

- run: the program of a command line (a tool call's, a fenced block's, a ``$ `` line's or an inline
  code span's: ``pnpm install``, ``npx vitest run``, ``python -m black .``), with arguments or through
  a runner (a lone ``verbose`` in backticks is a flag's or a variable's name), or installed by one
  (``pip install httpx``, ``uv add ky``);
- imported (``import httpx``, ``from 'ky'``, ``require("ky")``, ``use serde::``);
- pinned (``pnpm@8.15``, ``httpx==0.27``, ``"mocha": "^10.2.0"``, ``ruff = "0.4.1"``, "pnpm 8.15");
- configured: a file named after it (``vitest.config.ts``, ``pdm.lock``, ``pnpm-lock.yaml``,
  ``.mocharc.yml``, ``uv.toml``, ``[tool.black]``).

A tool call other than a shell's is read in its arguments' strings (decoded: an Edit's or a Write's
JSON holds the file's lines escaped on one line), for imports, pins and configs only (a file's line
is no command run); a shell call running the program alone (``yarn``) runs it. A flag
(``--verbose``), a name in code (``def foo``, ``foo = bar``), the word in prose, capitalised or not
("runs in Verbose mode", "so Tabs are not reintroduced": a capital tells a sentence's name, not a
tool's), or the word inside another (``uv`` in ``uvicorn``) is none of these. Looked up lazily, a
few words a session (:data:`MAX_WORDS`), each in a bounded number of the places it occurs as a whole
word (:data:`MAX_HITS`), with ``str.find``: the work stays linear in the session.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator, Sequence

from scribed.compress.command_line import SHELL_TOOLS, argv, program
from scribed.models import Turn
from scribed.sources.common import loads

MAX_WORDS = 16  # distinct words one session looks up (a session's bare choices are a few)
MAX_HITS = 400  # whole-word occurrences of one word read before it counts as no name (prose, everywhere)

_SEGMENT = re.compile(r"&&|\|\||[;|]")  # a command line's commands
_INSTALL = frozenset({"install", "add", "i"})  # what a package manager's install is called
_VERSION_CUT = re.compile(r"[=<>~^@!\[]")  # "httpx==0.27" -> "httpx"
_ESCAPE = re.compile(r"\\([\\\"nrt/])")  # a JSON string's escapes, when the call's JSON does not decode (cut)
_UNESCAPED = {"n": "\n", "r": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/"}


class UsedNames:
    """Which bare lowercase words the session of ``turns`` uses as a thing's name (module docstring):
    a callable, each word looked up once."""

    def __init__(self, turns: Sequence[Turn]) -> None:
        self.turns = turns
        self.found: dict[str, bool] = {}
        self.texts: list[str] | None = None  # each turn's text as read (:func:`_read`), once

    def __call__(self, word: str) -> bool:
        w = word.lower()
        if w not in self.found:
            if len(self.found) >= MAX_WORDS:
                return False
            if self.texts is None:
                self.texts = [_read(t) for t in self.turns]
            self.found[w] = _used(self.turns, self.texts, w)
        return self.found[w]


def _used(turns: Sequence[Turn], texts: list[str], w: str) -> bool:
    """Whether one of ``turns`` (read as ``texts``) uses ``w`` (lowercase) as a name, in its first
    :data:`MAX_HITS` whole-word occurrences (one inside another word costs a ``str.find`` only)."""
    hits = 0
    anywhere = _anywhere(w)
    for t, text in zip(turns, texts, strict=True):
        fences: list[int] | None = None
        shell = _shell(t)
        pos = text.find(w)
        while pos >= 0:
            end = pos + len(w)
            if _whole(text, pos, end):
                hits += 1
                if hits > MAX_HITS:
                    return False
                lo = text.rfind("\n", 0, pos) + 1
                hi = text.find("\n", end)
                line = text[lo : hi if hi >= 0 else len(text)]
                if anywhere.search(line):
                    return True
                if t.kind != "tool_call" or shell:  # a file's line an Edit writes runs nothing
                    if fences is None:
                        fences = _fences(text)
                    code = _code(t, line, pos - lo, fences, lo)
                    if code is not None and _in_code(code, w, anywhere, alone=shell):
                        return True
            pos = text.find(w, end)
    return False


def _shell(t: Turn) -> bool:
    """Whether ``t`` is a shell tool's call (its text a command line)."""
    return t.kind == "tool_call" and (t.tool_name or "").lower() in SHELL_TOOLS


def _read(t: Turn) -> str:
    """``t``'s text as it is searched: a tool call other than a shell's, its arguments' strings one
    after another (an Edit's ``new_string``, a Write's ``content``), decoded from the call's JSON
    (or, cut short, unescaped); any other turn's, as it is."""
    text = t.text
    if t.kind != "tool_call" or _shell(t):
        return text
    brace = text.find("{")
    if brace < 0:
        return text
    ok, args = loads(text[brace:])
    if ok:
        return "\n".join(_strings(args))
    return _ESCAPE.sub(lambda m: _UNESCAPED[m.group(1)], text)


def _strings(value: object) -> Iterator[str]:
    """The strings in a decoded JSON ``value``, in order."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _whole(text: str, pos: int, end: int) -> bool:
    """Whether ``text[pos:end]`` is a whole word (no letter, digit or ``_`` either side)."""
    before = text[pos - 1] if pos else " "
    after = text[end] if end < len(text) else " "
    return not (before.isalnum() or before == "_" or after.isalnum() or after == "_")


@functools.lru_cache(maxsize=64)
def _anywhere(w: str) -> re.Pattern[str]:
    """What names ``w`` as a package wherever it is said: an import, a pin, a config or lock file."""
    e = re.escape(w)
    return re.compile(
        rf"^\s*import\s+{e}(?:\s+as\s|\s*[,;]|\s*$)|^\s*from\s+{e}(?:\.\w+)*\s+import\b|"
        rf"\brequire\(\s*['\"]{e}['\"/]|\b(?:from|import)\s+['\"]{e}['\"/]|^\s*(?:pub\s+)?use\s+{e}::|"
        rf"(?<![\w.-]){e}(?:@[\^~]?\d|\s*(?:==|>=|~=|<=)\s*\d|\s+v?\d+\.\d+)|"
        rf"['\"]{e}['\"]\s*:\s*['\"][\^~<>=]*\d|^\s*{e}\s*=\s*['\"][\^~<>=]*\d|"
        rf"(?<![\w.-]){e}(?:\.config\.\w+|\.lock\b|-lock\.\w+|\.toml\b)|(?<![\w-])\.{e}rc\b|\[tool\.{e}\]",
        re.MULTILINE,
    )


def _fences(text: str) -> list[int]:
    """Where ``text``'s fence markers (three backticks) are."""
    out = []
    pos = text.find("```")
    while pos >= 0:
        out.append(pos)
        pos = text.find("```", pos + 3)
    return out


def _code(t: Turn, line: str, col: int, fences: list[int], lo: int) -> str | None:
    """The code the position ``col`` of ``line`` (at ``lo`` in ``t``'s text, whose fence markers are
    at ``fences``) is in: an inline code span, or the line of a tool call, of a fenced block or
    after ``$ ``; None in prose."""
    code = _span(line, col)
    if code is not None:
        return code
    bare = line.lstrip(" >")
    if bare.startswith("$ "):
        return bare[2:]
    if t.kind == "tool_call" or bisect.bisect_left(fences, lo) % 2:
        name = t.tool_name or ""
        return line[len(name) + 1 :] if name and line.startswith(name + " ") else line  # "Bash pnpm install"
    return None


def _in_code(code: str, w: str, anywhere: re.Pattern[str], *, alone: bool = False) -> bool:
    """Whether ``code`` imports, pins or configures ``w`` (``anywhere``), or one of its commands
    runs or installs it (:func:`_runs`; ``alone``: a shell call's, where the program alone runs)."""
    return anywhere.search(code) is not None or any(
        _runs(seg, w, alone=alone) for seg in _SEGMENT.split(code) if w in seg
    )


def _span(line: str, col: int) -> str | None:
    """The inline code span of ``line`` the position ``col`` is in, if any."""
    parts = line.split("`")
    at = 0
    for k, part in enumerate(parts):
        if at <= col < at + len(part):
            return part if k % 2 else None
        at += len(part) + 1
    return None


def _runs(command: str, w: str, *, alone: bool = False) -> bool:
    """Whether ``command`` runs ``w`` (its program, with arguments or through a runner, or alone in a
    shell call's command (``alone``): not a lone word elsewhere, a flag's or a variable's, nor an
    assignment, ``foo = bar``) or installs it."""
    words = argv(command.strip())
    if not words:
        return False
    prog = program(command.strip()).split()
    if w in words and (words[0] == w or (prog and prog[0] == w)):  # "uv sync", "npx vitest run"
        k = words.index(w)
        nxt = words[k + 1] if k + 1 < len(words) else ""
        if (k or nxt or alone) and not nxt.startswith(("=", ":", "(")):
            return True
    for k, x in enumerate(words[1:], 1):
        if x in _INSTALL:
            return any(_VERSION_CUT.split(a, maxsplit=1)[0] == w for a in words[k + 1 :] if a[:1] != "-")
    return False

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
  ``.mocharc.yml``, ``uv.toml``, ``[tool.black]``);
- or named with a capital in the middle of a sentence ("I configured Caddy to …").

A flag (``--verbose``), a name in code (``def foo``, ``foo = bar``) or the word in prose is none of
these. Looked up lazily, a few words a session (:data:`MAX_WORDS`), each in a bounded number of the
places it occurs (:data:`MAX_HITS`), with ``str.find``: the work stays linear in the session.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Sequence

from scribed.compress.command_line import argv, program
from scribed.models import Turn

MAX_WORDS = 16  # distinct words one session looks up (a session's bare choices are a few)
MAX_HITS = 400  # occurrences of one word read before it counts as no name (a word of prose, everywhere)

_SEGMENT = re.compile(r"&&|\|\||[;|]")  # a command line's commands
_INSTALL = frozenset({"install", "add", "i"})  # what a package manager's install is called
_VERSION_CUT = re.compile(r"[=<>~^@!\[]")  # "httpx==0.27" -> "httpx"
_MID_SENTENCE = re.compile(r"[a-z0-9,;)] $")  # what precedes a capitalised name inside a sentence


class UsedNames:
    """Which bare lowercase words the session of ``turns`` uses as a thing's name (module docstring):
    a callable, each word looked up once."""

    def __init__(self, turns: Sequence[Turn]) -> None:
        self.turns = turns
        self.found: dict[str, bool] = {}

    def __call__(self, word: str) -> bool:
        w = word.lower()
        if w not in self.found:
            if len(self.found) >= MAX_WORDS:
                return False
            self.found[w] = _used(self.turns, w)
        return self.found[w]


def _used(turns: Sequence[Turn], w: str) -> bool:
    """Whether one of ``turns`` uses ``w`` (lowercase) as a name, in its first :data:`MAX_HITS`
    occurrences (lowercase, or capitalised)."""
    hits = 0
    anywhere = _anywhere(w)
    for t in turns:
        text = t.text
        fences: list[int] | None = None
        for form in (w, w[:1].upper() + w[1:]):
            pos = text.find(form)
            while pos >= 0:
                hits += 1
                if hits > MAX_HITS:
                    return False
                end = pos + len(w)
                if _whole(text, pos, end):
                    lo = text.rfind("\n", 0, pos) + 1
                    hi = text.find("\n", end)
                    line = text[lo : hi if hi >= 0 else len(text)]
                    if form == w:
                        if fences is None:
                            fences = _fences(text)
                        code = _code(t, line, pos - lo, fences, lo)
                        if anywhere.search(line) or (code is not None and _in_code(code, w, anywhere)):
                            return True
                    elif t.kind == "message" and _MID_SENTENCE.search(line, 0, pos - lo):
                        return True
                pos = text.find(form, end)
    return False


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


def _in_code(code: str, w: str, anywhere: re.Pattern[str]) -> bool:
    """Whether ``code`` imports, pins or configures ``w`` (``anywhere``), or one of its commands
    runs or installs it (:func:`_runs`)."""
    return anywhere.search(code) is not None or any(_runs(seg, w) for seg in _SEGMENT.split(code) if w in seg)


def _span(line: str, col: int) -> str | None:
    """The inline code span of ``line`` the position ``col`` is in, if any."""
    parts = line.split("`")
    at = 0
    for k, part in enumerate(parts):
        if at <= col < at + len(part):
            return part if k % 2 else None
        at += len(part) + 1
    return None


def _runs(command: str, w: str) -> bool:
    """Whether ``command`` runs ``w`` (its program, with arguments or through a runner: not a lone
    word nor an assignment, ``foo = bar``) or installs it."""
    words = argv(command.strip())
    if not words:
        return False
    prog = program(command.strip()).split()
    if w in words and (words[0] == w or (prog and prog[0] == w)):  # "uv sync", "npx vitest run"
        k = words.index(w)
        nxt = words[k + 1] if k + 1 < len(words) else ""
        if (k or nxt) and not nxt.startswith(("=", ":", "(")):
            return True
    for k, x in enumerate(words[1:], 1):
        if x in _INSTALL:
            return any(_VERSION_CUT.split(a, maxsplit=1)[0] == w for a in words[k + 1 :] if a[:1] != "-")
    return False

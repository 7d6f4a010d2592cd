"""Three-way merging shared by the tiers: the rule for one entry or block given its three versions
(:func:`decide`), and the line-by-line merge of one text, by ``git merge-file``, for an entry or
a wiki block both sides changed (:func:`merge_text`).

Why git's own merge and not a difflib one: the driver runs inside git, so git is there, and a
block then merges exactly as git merges a file, the result a user would get without scribed.
difflib's matcher is not a minimal diff: on texts with repeated lines (blank lines, ``#### Goal``)
it can align the wrong copies, and a wrong alignment is a merge that looks clean and is not.
Where git cannot run (a repair on a machine without it) every change on both sides is a conflict:
both versions kept, never one dropped.

The two sides are passed to git in a fixed order (the smaller text first), so the same three
versions give the same result on every clone, whichever side each calls "ours".
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Hunk:
    """Lines both sides changed differently: each side's version and the base's."""

    ours: str
    base: str
    theirs: str


Part = str | Hunk  # merged text, or a conflict


@dataclass(frozen=True, slots=True)
class Merged:
    """A tier file merged. ``text`` keeps both versions of each conflict; ``marked`` has git's
    markers around them instead; ``conflicts`` names what both sides changed two ways."""

    text: str
    marked: str
    conflicts: tuple[str, ...] = ()


def plain(text: str) -> Merged:
    return Merged(text, text)


def decide(
    b: str | None, o: str | None, t: str | None, both: Callable[[str | None, str, str], list[Part]]
) -> list[Part] | None:
    """One entry's or block's versions (None: absent) merged three ways; None: it goes."""
    if o == t:
        return None if o is None else [o]
    if b == o:
        return None if t is None else [t]
    if b == t:
        return None if o is None else [o]
    if o is None:
        return [t] if t is not None else None
    if t is None:
        return [o]  # deleted on one side, changed on the other: the change stays
    return both(b, o, t)


def merge_text(base: str, ours: str, theirs: str) -> list[Part]:
    """``ours`` and ``theirs`` merged against ``base``: a change on one side is taken, a change on
    both sides to different lines is taken from each, the same lines changed two ways are a
    :class:`Hunk`. Each text should end in a newline (a missing one is added)."""
    base, ours, theirs = (_nl(x) for x in (base, ours, theirs))
    if theirs in (ours, base):
        return [ours]
    if base == ours:
        return [theirs]
    swap = theirs < ours
    first, second = (theirs, ours) if swap else (ours, theirs)
    parts = _git_merge_file(base, first, second)
    if parts is None:
        parts = [Hunk(first, base, second)]
    if swap:
        parts = [Hunk(p.theirs, p.base, p.ours) if isinstance(p, Hunk) else p for p in parts]
    return parts


def conflicted(parts: list[Part]) -> bool:
    return any(isinstance(p, Hunk) for p in parts)


def union(parts: list[Part]) -> str:
    """The merge with each conflict kept as both versions (the lines they share once, then each
    side's own, the smaller first): nothing dropped, the same on every clone."""
    out: list[str] = []
    for p in parts:
        if isinstance(p, str):
            out.append(p)
            continue
        a, b = p.ours.splitlines(keepends=True), p.theirs.splitlines(keepends=True)
        head = 0
        while head < min(len(a), len(b)) and a[head] == b[head]:
            head += 1
        tail = 0
        while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
            tail += 1
        mid = sorted({"".join(a[head : len(a) - tail]), "".join(b[head : len(b) - tail])})
        out += [*a[:head], *mid, *a[len(a) - tail :]]
    return "".join(out)


def ours_side(parts: list[Part]) -> str:
    return "".join(p if isinstance(p, str) else p.ours for p in parts)


def marked(parts: list[Part]) -> str:
    """The merge with git's diff3 conflict markers around each conflict (what the driver leaves
    for a person; the base section lets a later repair merge three ways again). Markers are 7
    characters, as git's, or longer than a line of the conflict that would read as one."""
    out = []
    for p in parts:
        if isinstance(p, str):
            out.append(p)
            continue
        n = max([7, *(len(m.group()) + 1 for t in (p.ours, p.base, p.theirs) for m in _RUN.finditer(t))])
        out.append(f"{'<' * n} ours\n{p.ours}{'|' * n} base\n{p.base}{'=' * n}\n{p.theirs}{'>' * n} theirs\n")
    return "".join(out)


def _nl(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


_RUN = re.compile(r"^([<|=>])\1*", re.M)


def _git_merge_file(base: str, ours: str, theirs: str) -> list[Part] | None:
    """git's merge of the three texts, or None when git cannot merge them (not installed, a text
    it takes for binary). Its markers are made longer than any run of marker characters that
    starts a line of the texts, so a line of ``=======`` (a Markdown heading) is read as text."""
    size = 1 + max([7, *(len(m.group()) for t in (base, ours, theirs) for m in _RUN.finditer(t))])
    with tempfile.TemporaryDirectory(prefix="scribed-merge-") as tmp:
        names = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(tmp, name)
            path.write_bytes(text.encode("utf-8", "surrogateescape"))
            names.append(str(path))
        cmd = ["git", "merge-file", "-p", "--diff3", f"--marker-size={size}"]
        try:
            got = subprocess.run(
                [*cmd, "-L", "ours", "-L", "base", "-L", "theirs", *names], capture_output=True, check=False
            )
        except OSError:
            return None
    if not 0 <= got.returncode < 128:  # noqa: PLR2004 (git: the number of conflicts, or an error)
        return None
    return _parts(got.stdout.decode("utf-8", "surrogateescape"), size)


def _parts(out: str, size: int) -> list[Part]:
    marks = {c * size: c for c in "<|=>"}
    parts: list[Part] = []
    same: list[str] = []
    sides: dict[str, list[str]] = {"<": [], "|": [], "=": []}
    where = ""  # "" outside a conflict, else the marker of the section being read
    for line in out.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        mark = marks.get(bare[:size]) if len(bare) == size or bare[size : size + 1] == " " else None
        if mark == "<" and not where:
            if same:
                parts.append("".join(same))
                same = []
            where = "<"
            continue
        if mark in ("|", "=") and where in ("<", "|"):
            where = mark
            continue
        if mark == ">" and where == "=":
            parts.append(Hunk("".join(sides["<"]), "".join(sides["|"]), "".join(sides["="])))
            sides = {"<": [], "|": [], "=": []}
            where = ""
            continue
        (sides[where] if where else same).append(line)
    if same:
        parts.append("".join(same))
    return parts

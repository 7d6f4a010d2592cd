"""The glob language of a source: how discovery matches a path against its patterns, how a
configured ``glob`` becomes patterns (``{a,b}`` expanded), and what in a ``glob`` can never
match a file (:func:`problem`, which ``scribed run`` refuses: such a source read nothing, silently).

A pattern is matched segment by segment against a path below the source's folder: ``*``, ``?`` and
``[...]`` within one name (``fnmatch``), ``**`` for any number of folders. Wildcards skip names that
start with a dot unless the segment starts with one too (shell rules).
"""

from __future__ import annotations

import fnmatch
import itertools
import os

MAX_PATTERNS = 64  # patterns one glob's braces may expand to


def split(pattern: str) -> tuple[str, ...] | None:
    """A glob's segments; None for what never matches below a folder (see :func:`problem`)."""
    if pattern.startswith("/"):
        return None
    parts = tuple(p for p in pattern.split("/") if p not in ("", "."))
    if not parts or any("**" in p and p != "**" for p in parts):
        return None
    return parts


def name_ok(seg: str, name: str) -> bool:
    """Shell rules: a wildcard never matches a leading dot; only a segment that starts with one does."""
    if name.startswith(".") and not seg.startswith("."):
        return False
    return fnmatch.fnmatchcase(name, seg)


State = frozenset[tuple[int, int]]


def _closure(pats: list[tuple[str, ...]], states: State) -> State:
    """Add the states reached by letting a ``**`` match no folder at all."""
    out = set(states)
    todo = list(states)
    while todo:
        i, pos = todo.pop()
        if pos < len(pats[i]) and pats[i][pos] == "**" and (i, pos + 1) not in out:
            out.add((i, pos + 1))
            todo.append((i, pos + 1))
    return frozenset(out)


def step(pats: list[tuple[str, ...]], states: State, name: str) -> tuple[State, bool]:
    """One path component: the states for descending into it as a folder, and whether it ends a match.

    ``**`` consumes folders that do not start with a dot, so ``**`` never walks into ``.git`` but
    ``.specstory/history/*.md`` (which names the dot folder) does.
    """
    inner: set[tuple[int, int]] = set()
    final = False
    for i, pos in _closure(pats, states):
        parts = pats[i]
        if pos >= len(parts):
            continue
        seg = parts[pos]
        if seg == "**":
            if not name.startswith("."):
                inner.add((i, pos))
        elif name_ok(seg, name):
            if pos == len(parts) - 1:
                final = True
            else:
                inner.add((i, pos + 1))
    return frozenset(inner), final


def start(patterns: tuple[str, ...]) -> tuple[list[tuple[str, ...]], State]:
    pats = [p for p in (split(x) for x in patterns) if p is not None]
    return pats, frozenset((i, 0) for i in range(len(pats)))


def reaches(patterns: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    """Whether one of ``patterns`` can match a file below the folder ``parts`` (a path below the
    source's folder): Aider's ``.aider.chat.history.md`` in a repository never reaches
    ``.specstory/history``, ``**/*.md`` does."""
    pats, st = start(patterns)
    for name in parts:
        if not st:
            return False
        st, _ = step(pats, st, name)
    return bool(st)


def matches(patterns: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    """Whether the path ``parts`` (below the source's folder) matches one of ``patterns``."""
    pats, st = start(patterns)
    for k, name in enumerate(parts):
        if not st:
            return False
        inner, final = step(pats, st, name)
        if k == len(parts) - 1:
            return final
        st = inner
    return False


def _braces(glob: str) -> tuple[int, int, list[str]] | None:
    """The first ``{…}`` group holding a comma at its own level: its start, its end and its
    alternatives; None when there is none (a ``{`` without one is literal, as in a shell)."""
    for i, c in enumerate(glob):
        if c != "{":
            continue
        depth, cuts = 0, [i]
        for j in range(i, len(glob)):
            if glob[j] == "{":
                depth += 1
            elif glob[j] == "}":
                depth -= 1
                if depth == 0:
                    if len(cuts) > 1:
                        cuts.append(j)
                        return i, j, [glob[a + 1 : b] for a, b in itertools.pairwise(cuts)]
                    break
            elif glob[j] == "," and depth == 1:
                cuts.append(j)
    return None


def _expanded(glob: str) -> tuple[tuple[str, ...], bool]:
    """The patterns ``glob``'s braces stand for, and whether that is all of them (at most
    :data:`MAX_PATTERNS` are made, so ``{a,b}`` twenty times over costs nothing)."""
    todo, out = [glob], list[str]()
    while todo and len(out) + len(todo) <= MAX_PATTERNS:
        g = todo.pop()
        group = _braces(g)
        if group is None:
            out.append(g)
            continue
        i, j, alternatives = group
        todo += [g[:i] + alt + g[j + 1 :] for alt in reversed(alternatives)]
    return tuple(dict.fromkeys(out)), not todo


def expand(glob: str) -> tuple[str, ...]:
    """A configured glob as the patterns it stands for: ``*.{md,txt}`` is ``*.md`` and ``*.txt``
    (nested groups too, as a shell expands them); at most :data:`MAX_PATTERNS`."""
    return _expanded(glob)[0]


def problem(glob: str, folder: str) -> str | None:
    """Why a source's ``glob`` can match no file whatever the folder holds (None: it can):
    absolute, above the folder, ``**`` inside a name, folders only, or too many braces.
    ``folder``: the source's."""
    if not glob:
        return None
    patterns, complete = _expanded(glob)
    if not complete:
        return (
            f"{glob!r}: its braces stand for more than {MAX_PATTERNS} patterns; give the files a source each"
        )
    return next((why for p in patterns if (why := _one_problem(p, folder))), None)


def _one_problem(pattern: str, folder: str) -> str | None:
    expanded = os.path.expanduser(pattern)
    if os.path.isabs(expanded):
        rel = os.path.relpath(expanded, folder)
        hint = (
            f' (glob = "{rel}" names the same files)'
            if rel != os.curdir and not rel.startswith(os.pardir)
            else " (put the folder in `path =`)"
        )
        return f"{pattern!r} must be relative to the source's `path`: it is matched below that folder{hint}"
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if os.pardir in parts:
        return f"{pattern!r} must stay inside the source's `path`: '..' matches nothing; put the folder in `path =`"
    bad = next((p for p in parts if "**" in p and p != "**"), None)
    if bad is not None:
        fixed = "/".join("**/" + p.replace("**", "*") if p == bad else p for p in parts)
        return f"{pattern!r}: '**' stands for folders only as a whole segment: write {fixed!r}"
    if not parts or parts[-1] == "**":
        return f"{pattern!r} matches folders, never a file: end it with a file name pattern ({(pattern.rstrip('/') + '/*')!r})"
    return None


__all__ = ["MAX_PATTERNS", "State", "expand", "matches", "name_ok", "problem", "split", "start", "step"]

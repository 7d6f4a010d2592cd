"""Agent and topic names become file names, so they are validated before any path is built.

A name has one canonical spelling: ASCII, case-folded (``Picard`` and ``picard`` are one agent,
on any disk, case-sensitive or not). Non-ASCII names are refused rather than folded: the Kelvin
sign ``K`` lowercases to ``k``, and two different raw names must never land on one file unnoticed.
"""

from __future__ import annotations

import re
from pathlib import Path

NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]*")
MAX_NAME = 64


def normalize_name(raw: object) -> str | None:
    """Return the canonical (case-folded) name if it is a safe file stem, else None.

    Names like ``../../tmp/x``, ones with NUL bytes, slashes, dots, spaces or non-ASCII letters
    are rejected rather than "cleaned", so two different raw names can only meet by case.
    """
    if not isinstance(raw, str):
        return None
    name = raw.strip()
    if not name.isascii():
        return None
    name = name.casefold()
    if not name or len(name) > MAX_NAME or not NAME_RE.fullmatch(name):
        return None
    return name


def case_collisions(path: Path) -> list[Path]:
    """Other files in ``path``'s folder whose stem folds to the same agent name (``Picard.md``
    beside ``picard.md``): one agent, so the caller warns. Empty when there are none."""
    name = normalize_name(path.stem)
    if name is None:
        return []
    try:
        siblings = list(path.parent.iterdir())
    except OSError:
        return []
    return sorted(
        p
        for p in siblings
        if p.name != path.name and p.suffix == path.suffix and normalize_name(p.stem) == name
    )


def rename_hint(raw: str) -> str:
    """A valid name close to ``raw`` (``My Notes`` → ``my-notes``), for a message that asks to rename."""
    return re.sub(r"[^a-z0-9_-]+", "-", raw.lower())[:MAX_NAME].strip("-_") or "a-name"


def not_a_name(path: Path, kind: str) -> str | None:
    """Why every listing of agents (``kind`` "agent": hot and cold files, cold folders, agent
    folders) or wiki topics ("topic") leaves ``path`` out, with how to rename it; None when its
    name is one (``index``, the generated page, is a topic here). Said rather than skipped
    unseen: a ``My Notes.md`` dropped into the wiki would otherwise be silently ignored."""
    stem = path.name.removesuffix(".md")
    if normalize_name(stem) == stem:
        return None
    suffix = path.name[len(stem) :]
    return (
        f"{stem!r} is not a valid {kind} name (lowercase ASCII letters, digits, '-' and '_', at most "
        f"{MAX_NAME}): left out of every {kind} listing; rename it to {rename_hint(stem)}{suffix} to have it read"
    )


def slug(text: str, limit: int = 48) -> str:
    """A safe stem derived from free text (for inbox/quarantine file names)."""
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return (s[:limit].rstrip("-")) or "x"

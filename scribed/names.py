"""Agent and topic names become file names, so they are validated before any path is built."""

from __future__ import annotations

import re

NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]*")
MAX_NAME = 64


def normalize_name(raw: object) -> str | None:
    """Return the lowercased name if it is a safe file stem, else None.

    Names like ``../../tmp/x``, ones with NUL bytes, slashes, dots or spaces are rejected rather
    than "cleaned", so two different raw names can never collide on one file.
    """
    if not isinstance(raw, str):
        return None
    name = raw.strip().lower()
    if not name or len(name) > MAX_NAME or not NAME_RE.fullmatch(name):
        return None
    return name


def slug(text: str, limit: int = 48) -> str:
    """A safe stem derived from free text (for inbox/quarantine file names)."""
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return (s[:limit].rstrip("-")) or "x"

"""Where a transcript's session ran, as its tool recorded it, read from the file's first records only.

Codex and Copilot CLI keep every repository's sessions in one folder (``~/.codex/sessions``,
``~/.copilot/session-state``), so the folder a source names does not say which repository a session
belongs to; the session's recorded working directory does. :func:`recorded` reads as little as it
can to learn it (the file is not parsed, its turns never held): Codex's first ``session_meta`` (or a
``turn_context``), Copilot's ``workspace.yaml`` beside ``events.jsonl`` (else ``session.start``'s
context), Claude Code's first record that carries ``cwd``. The working directory wins over the git
root (a squad root inside a monorepo is narrower than its git root).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from scribed.sources.common import get_dict, get_str, iter_jsonl

PROBE_RECORDS = 64  # records read at most to find the working directory (it is in the first few)


def recorded(kind: str, path: Path) -> str | None:
    """The working directory (else the git root) ``path``'s session recorded; None when none of
    its first :data:`PROBE_RECORDS` records (nor Copilot's workspace.yaml) names one."""
    if kind == "copilot" and path.name == "events.jsonl":
        from scribed.sources.copilot import workspace_meta  # its flat YAML reader, bounded

        meta = workspace_meta(path)
        place = meta.get("cwd") or meta.get("git_root")
        if place:
            return place
    gitroot = ""
    with contextlib.suppress(OSError):
        for n, rec in enumerate(iter_jsonl(path)):
            if n >= PROBE_RECORDS:
                break
            obj = rec.obj
            if obj is None:
                continue
            cwd, root = _place(kind, obj)
            if cwd:
                return cwd
            gitroot = gitroot or root
    return gitroot or None


def _place(kind: str, obj: dict[str, object]) -> tuple[str, str]:
    """(cwd, git root) one record names, "" for what it does not."""
    if kind == "codex":
        if obj.get("type") in ("session_meta", "turn_context"):
            return get_str(get_dict(obj, "payload"), "cwd"), ""
        return "", ""
    if kind == "copilot":
        if obj.get("type") == "session.start":
            context = get_dict(get_dict(obj, "data"), "context")
            return get_str(context, "cwd"), get_str(context, "gitRoot")
        return "", ""
    return get_str(obj, "cwd"), ""  # claude: every conversation record carries it


def inside(place: str, scope: tuple[str, ...]) -> bool:
    """Whether the recorded folder ``place`` is one of ``scope``'s folders or under one; compared
    as written and with symlinks resolved (a repository reached through a link is the same one).
    A relative ``place`` (no tool writes one) is inside nothing."""
    if not os.path.isabs(place):
        return False
    written = os.path.normpath(place)
    real = os.path.realpath(written)
    for folder in scope:
        for p, w in ((written, folder), (real, os.path.realpath(folder))):
            if p == w or p.startswith(w.rstrip(os.sep) + os.sep):
                return True
    return False


__all__ = ["PROBE_RECORDS", "inside", "recorded"]

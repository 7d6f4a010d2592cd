"""Where each tool keeps its transcripts inside its own folder: the one table ``scribed setup``
(what it looks for), ``check-config`` (a folder watched for) and discovery (a source one level too
high) read. docs/setup.md and /work/shared/docs/transcript-formats.md describe the layouts.

A tool's own folder holds more than its transcripts (Claude Code's ``~/.claude`` has the prompt
history ``history.jsonl``, settings, todos; Copilot CLI's ``~/.copilot`` its logs and config), so a
source on it reads files that are not transcripts, or, when the kind's patterns expect the
transcript folder's own layout (Copilot's ``<id>/events.jsonl``), finds none at all.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple


class Home(NamedTuple):
    """A tool's folder (``name`` in the user's home, or a repository's) and the folder in it
    where it keeps its sessions."""

    tool: str
    name: str
    transcripts: str


HOMES: dict[str, Home] = {
    "claude": Home("Claude Code", ".claude", "projects"),  # projects/<cwd, dashed>/<session>.jsonl
    "copilot": Home("Copilot CLI", ".copilot", "session-state"),  # session-state/<id>/events.jsonl
    "codex": Home("Codex", ".codex", "sessions"),  # sessions/YYYY/MM/DD/rollout-….jsonl
    "squad-repl": Home("Squad", ".squad", "sessions"),  # a repository's .squad/sessions/<ts>_<id>.json
}


def transcripts_in(kind: str, home: Path) -> Path | None:
    """Where ``kind``'s tool keeps its sessions in its folder ``home`` (None: no known layout)."""
    h = HOMES.get(kind)
    return home / h.transcripts if h is not None else None


def below(kind: str, folder: Path) -> Path | None:
    """The transcript folder of ``kind``'s tool that lies below ``folder`` (the tool's own folder,
    or the folder holding that: a home, a repository), when there is one; else None."""
    h = HOMES.get(kind)
    if h is None:
        return None
    for cand in (folder / h.transcripts, folder / h.name / h.transcripts):
        if os.path.isdir(cand):
            return cand
    return None


__all__ = ["HOMES", "Home", "below", "transcripts_in"]

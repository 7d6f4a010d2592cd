"""Reading a legacy Squad tree for ``scribed import``: which files, and what is in them (with
:mod:`scribed.squad.legacy`): history units, the Core Context, team updates, decisions and the blocks of a
decision file that are not decisions."""

from __future__ import annotations

import contextlib
import re
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from scribed.compress.entry import one_line, parse_date
from scribed.core.import_units import Unit
from scribed.names import normalize_name
from scribed.squad import legacy

_TEAM = re.compile(
    r"📌\s*\**\s*Team update\s*\**\s*\((?P<ts>[^)]*)\)\s*\**\s*:?\s*\**\s*(?P<what>.+?)"
    r"(?:\s+[—–-]{1,2}\s+decided by\s+(?P<by>[^.\n]+?))?\s*\.?\s*$",
    re.I,
)


# A template's placeholder left in a history ("{agents append here}"): never an entry's content.
_FILLER = re.compile(r"^\s*\{[A-Za-z][A-Za-z _-]{2,60}\}\s*$")


@dataclass(slots=True)
class TeamUpdate:
    when: datetime | None
    what: str
    by: str


@dataclass(slots=True)
class History:
    agent: str
    path: Path
    core: str = ""
    team: list[TeamUpdate] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)


@dataclass(slots=True)
class Skipped:
    """A block of a decision file that is not a decision (kept in the archive only)."""

    source: str
    title: str
    reason: str
    first_line: int
    last_line: int


def file_date(path: Path, root: Path) -> tuple[datetime, str]:
    """The file's last git commit date (``git log -1 --format=%cI``), else its mtime; and which."""
    with contextlib.suppress(OSError, subprocess.SubprocessError, ValueError):
        p = subprocess.run(
            ["git", "log", "-1", "--format=%cI", "--", f":(literal){path.relative_to(root)}"],
            cwd=root,
            capture_output=True,
            timeout=15,
            check=False,
        )
        if p.returncode == 0:
            dt = parse_date(p.stdout.decode().strip())
            if dt is not None:
                return dt.astimezone(UTC), "git"
    return datetime.fromtimestamp(path.stat().st_mtime, UTC), "mtime"


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", "replace")


def _team_update(line: str, agent: str) -> TeamUpdate | None:
    m = _TEAM.search(line)
    if not m:
        return None
    who = legacy.author(m.group("by") or "")
    return TeamUpdate(parse_date(m.group("ts")), m.group("what").strip(" *_"), who or agent)


def _drop_team(text: str, agent: str, out: list[TeamUpdate]) -> str:
    """``text`` without its team-update lines (they are collected into ``out``)."""
    keep = []
    for line in text.splitlines():
        tu = _team_update(line, agent) if "📌" in line else None
        if tu is None:
            keep.append(line)
        else:
            out.append(tu)
    return "\n".join(keep)


def parse_history(agent: str, path: Path, rel: str, *, pinned: bool = True) -> History:
    """A history file's Core Context (``pinned``: history.md, not an archive), team updates and
    entries (dates resolved later)."""
    h = History(agent=agent, path=path)
    core: list[str] = []
    for b in legacy.parse_history(_read(path)):
        if b.kind == "other":
            continue
        if b.kind == "core" and pinned:
            core.append(_drop_team(b.statement, agent, h.team))
            continue
        text = "\n".join(ln for ln in _drop_team(b.text, agent, h.team).splitlines() if not _FILLER.match(ln))
        body = "\n".join(text.splitlines()[1:]) if b.text.lstrip().startswith("#") else text
        if not body.strip():
            continue
        h.units.append(
            Unit(
                agent=agent,
                kind="squad-history",
                source=rel,
                title=b.title or one_line(body, 80),
                date=b.date or datetime.min.replace(tzinfo=UTC),
                dated=b.date is not None,
                text=body.strip("\n"),
                first_line=b.first,
                last_line=b.last,
                titled=b.titled,  # False: a dated bullet
            )
        )
    h.core = legacy.clean("\n\n".join(c for c in core if c.strip()))
    return h


def parse_decisions(path: Path, rel: str) -> tuple[list[Unit], list[Skipped]]:
    """The decisions of a decision file (any layout), and the blocks that are not decisions."""
    units: list[Unit] = []
    skipped: list[Skipped] = []
    for b in legacy.parse_decisions(_read(path)):
        if b.kind != "decision":
            if b.reason != "section":
                skipped.append(Skipped(rel, b.title, b.reason, b.first, b.last))
            continue
        units.append(
            Unit(
                agent=b.by or "squad",
                kind="squad-decisions",
                source=rel,
                title=b.title,
                date=b.date or datetime.min.replace(tzinfo=UTC),
                dated=b.date is not None,
                text=b.text,
                first_line=b.first,
                last_line=b.last,
                statement=b.statement,
                titled=b.titled,
                scribed_entry=b.fields.get(legacy.SCRIBED_ENTRY, ""),
            )
        )
    return units, skipped


def history_files(squad: Path, agent: str) -> list[Path]:
    """``agent``'s history and archives, from every folder whose name folds to it (``agents/Rai/``
    for ``rai``), its ``history.md`` first."""
    try:
        folders = sorted(p for p in (squad / "agents").iterdir() if normalize_name(p.name) == agent)
    except OSError:
        return []
    found = [f / "history.md" for f in folders]
    for f in folders:
        found += sorted(p for p in f.glob("history-archive*.md") if p.is_file() and not p.is_symlink())
    return [p for p in found if p.is_file() and not p.is_symlink()]


def decision_files(squad: Path) -> list[Path]:
    """``decisions.md``, ``decisions-archive*.md`` and ``decisions/**/*.md`` (inbox drop-box files)."""
    found = sorted(p for p in squad.glob("decisions*.md") if p.is_file() and not p.is_symlink())
    folder = squad / "decisions"
    if folder.is_dir() and not folder.is_symlink():
        found += sorted(p for p in folder.rglob("*.md") if p.is_file() and not p.is_symlink())
    return found

"""What ``scribed doctor`` reads of the sources: every configured source parsed as compaction parses
it (read-only), and each warning with its file and what to do about it.

The warnings are scribed's own, written by the adapters in :mod:`scribed.sources` from a few
fixed templates; :func:`fix` names the remedy for each template (the template's fixed words,
not guesses about the user's text). A warning no template matches gets no remedy rather than a
wrong one (``tests/test_doctor.py`` meets each template and checks it has one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from scribed.compress.entry import iso
from scribed.core.results import Json
from scribed.models import Session
from scribed.sources.common import LINE_LIMIT_KEY, line_limit

# (words the adapter's template carries, what the user can do). First match wins.
_FIXES: tuple[tuple[str, str], ...] = (
    (
        "line limit",
        f"raise {LINE_LIMIT_KEY} in the config (the line is held in memory while read); a file "
        "compacted already is not read again for that record",
    ),
    (
        "malformed",
        "those records are skipped and the rest of the session is compacted; if every file has them, the "
        "tool changed its format: report it with `scribed doctor --json`",
    ),
    (
        "invalid UTF-8",
        "nothing is lost but those bytes: the session is compacted with each shown as U+FFFD; if the "
        "tool writes another encoding (Latin-1, say), convert the file (`iconv -f latin1 -t utf-8`)",
    ),
    (
        "symlinked folder",
        "give the folder it leads to a source of its own (a source's path may be a symlink), or remove "
        "the link; a folder link is never followed, so nothing is read twice and no loop is walked",
    ),
    ("symlink", "mend or remove the link: nothing is read through it"),  # dangling, a loop
    (
        "cannot read folder",
        "give the user scribed runs as read and search access to the folder (`ls -ld` shows its owner "
        "and mode); its transcripts are read on the next run",
    ),
    ("cannot read", "give the user scribed runs as read access to the file; it is retried on every run"),
    (
        "internal error",
        "a scribed bug on this file: report it (`SCRIBED_DEBUG=1 scribed run-once` shows the traceback); "
        "the other files are not affected",
    ),
    ("binary content", "not a transcript: narrow the source's `glob` so it is not read"),
    ("not a Squad REPL session", "not a Squad REPL session: narrow the source's `glob` so it is not read"),
    ("no usable turns", "nothing to do: the file holds no conversation yet (empty, or tool output only)"),
    (
        "unknown sub-agent id",
        "nothing to do: the tool did not say which sub-agent that is, so the main agent keeps its events",
    ),
    (
        "agent name",  # invalid agent name / invalid sub-agent name
        "use agent names of lowercase letters, digits, '-' and '_' (they name files); until then the "
        "records stay with the source's agent (a hot file so named is not read)",
    ),
    ("no date", "the entry is dated by the file's modification time; a dated header in the file fixes that"),
    (
        "past this machine's clock",
        "set the clock right on the machine that wrote it (and check this one's): until then its entries "
        "are dated by the file's modification time or the run's clock, whichever is earlier",
    ),
    ("session time", "the session is dated by the file's modification time; check its header line"),
)


def fix(warning: str) -> str:
    """What to do about one adapter warning ("" when no template matches)."""
    return next((remedy for words, remedy in _FIXES if words in warning), "")


@dataclass(slots=True)
class SourceReport:
    """One configured source as compaction reads it."""

    kind: str
    path: str
    exists: bool
    files: int = 0
    compressed: int = 0
    sessions: int = 0
    warnings: int = 0
    unreadable: list[str] = field(default_factory=list)
    drift: dict[str, int] = field(default_factory=dict)
    issues: list[dict[str, str]] = field(default_factory=list)  # {"file", "warning", "fix"}

    def to_json(self) -> Json:
        return {
            "kind": self.kind,
            "path": self.path,
            "exists": self.exists,
            "files": self.files,
            "compressed": self.compressed,
            "sessions": self.sessions,
            "warnings": self.warnings,
            "unreadable": self.unreadable[:20],
            "drift": self.drift,
            "issues": self.issues,
        }


def source_report(
    kind: str,
    folder: Path,
    glob: str,
    agent: str,
    *,
    max_line_bytes: int,
    scope: tuple[str, ...] | None = None,
    only: set[Path] | None = None,
    now: datetime | None = None,
) -> SourceReport:
    """Parse one source's files as compaction would (same line limit, the same ``workspace``
    scope: another repository's sessions are not this root's to report; ``only`` the files it
    reads, a file reached by two names, or by two sources, being read once) and collect what did
    not fit; a file whose time stamps lie past ``now`` (default: the clock) is one of those."""
    from scribed import sources
    from scribed.dates import believed, utcnow
    from scribed.sources import drift, homes, place, zst

    drift.take()  # only this source's counts
    exists = not sources.missing(folder)
    links: list[sources.Note] = []
    files = list(sources.discover(kind, folder, glob, links)) if exists else []
    sub = None if glob else homes.below(kind, folder)  # a source above its tool's transcript folder
    if only is not None:
        files = [p for p in files if p in only]
    if scope is not None:
        files = [p for p in files if (w := place.recorded(kind, p)) is not None and place.inside(w, scope)]
    out = SourceReport(kind, str(folder), exists, len(files), sum(1 for p in files if zst.is_zst(p)))
    for n in links:
        if n.warn:  # a second name for a file read under another is no problem
            w = f"{kind}: {n.reason}"
            out.warnings += 1
            out.issues.append({"file": str(n.path), "warning": w, "fix": fix(w)})
    now = now or utcnow()
    with line_limit(max_line_bytes):
        for path in files:
            parsed = sources.parse_file(kind, path, agent)
            out.sessions += len(parsed.sessions)
            newest = max((_newest(s) for s in parsed.sessions), default=None)
            if newest is not None and believed(newest, now) is None:
                parsed.warnings.append(
                    f"{kind}: time stamps up to {iso(newest)} lie past this machine's clock"
                )
            out.warnings += len(parsed.warnings)
            for w in parsed.warnings:
                remedy = fix(w) if sub is None or path.is_relative_to(sub) else _outside(kind, sub)
                out.issues.append({"file": str(path), "warning": w, "fix": remedy})
                if "cannot read" in w or "internal error" in w:
                    out.unreadable.append(w)
    out.drift = drift.take().get(kind, {})
    return out


def _outside(kind: str, sub: Path) -> str:
    """The remedy for a warning about a file the source reads outside its tool's transcript folder
    (Claude Code's prompt history, say): not the format's, the source's path."""
    from scribed.sources.homes import HOMES

    return (
        f"not a transcript: {HOMES[kind].tool} keeps its sessions in {sub}: point the source's `path =` there"
    )


def _newest(s: Session) -> datetime:
    """The latest date a session claims: its newest time stamp, else its end (a header's)."""
    return (
        max((t.ts for t in s.turns if t.ts is not None), default=None)
        or s.end
        or datetime.min.replace(tzinfo=UTC)
    )

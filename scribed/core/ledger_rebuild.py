"""Rebuilding the ledger's entries from the memory files (see :func:`scribed.core.ledger.ensure`).

Every cold entry carries a provenance line (id, agent, session, source, line range); folded entries
keep their originals in ``archive/cold/`` and digests list their ids; promoted entries keep theirs in
``archive/promoted/`` and the wiki names them as sources; ``retired.txt`` lists what left cold on
purpose (an entry removed by hand with its session and line range, so that part of the session is
not compacted again); git has the files of entries it removed (a checkout, a pulled deletion, a
revert). Together they say what was compacted.
"""

from __future__ import annotations

import gzip
import re
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from scribed.compress.entry import DEFAULT_COMPRESSOR, provenance, provenance_fields, split_entries


def _log() -> Any:
    from scribed.log import get

    return get()


_WIKI_REF = re.compile(r"\b(?:entry|folded)=([a-z0-9,-]+)")
_ID = re.compile(r"[a-z]-[0-9a-f]{6,40}")
_QUOTED = re.compile(r"`(.*)`(?: \(\S+\))?$")
MAX_ARCHIVE_BYTES = 64 * 1024 * 1024


def wiki_source_ids(text: str) -> Iterator[str]:
    """The entry ids a wiki page's text names as its sources (``entry=e-…``, ``folded=e-…,e-…``),
    read as text in whatever layout the page has: what a rebuilt ledger counts as compacted
    (:func:`rebuild_rows`) and what :mod:`scribed.core.ledger_reconcile` finds held."""
    for m in _WIKI_REF.finditer(text):
        yield from m.group(1).split(",")


def _entry_rows(text: str, origin: str) -> Iterator[dict[str, Any]]:
    """Ledger rows for the entries a cold file (or an archived one) holds, and the ids digests fold."""
    for e in split_entries(text)[1]:
        prov = provenance(e.text)
        if prov is None:
            continue
        f, (first, last) = prov
        eid = f.get("id", "")
        if _ID.fullmatch(eid) and not eid.startswith("d-"):
            sm = _QUOTED.match(f.get("source", ""))
            src = sm.group(1) if sm else f.get("source", "").strip("`")
            yield _row(
                eid,
                origin,
                session=f.get("session", ""),
                agent=f.get("agent", ""),
                date=e.date,
                lines=(first, last),
                f=f,
                src=src,
            )
        for fid in f.get("folded", "").split(","):
            if _ID.fullmatch(fid) and not fid.startswith("d-"):
                yield _row(
                    fid, origin, session="", agent=f.get("agent", ""), date=e.date, lines=(0, 0), f={}, src=""
                )


def _row(
    eid: str,
    origin: str,
    *,
    session: str,
    agent: str,
    date: str,
    lines: tuple[int, int],
    f: dict[str, str],
    src: str,
) -> dict[str, Any]:
    first, last = lines

    def num(key: str) -> float:
        try:
            return float(f.get(key, "0"))
        except ValueError:
            return 0.0

    # An entry's provenance prints neither the default compressor nor a recall of 1.00 (f is empty
    # for ids a digest or a wiki page names: nothing is known of them).
    return {
        "id": eid,
        "path": src or origin,
        "session": session,
        "agent": agent,
        "session_end": date,
        "start_offset": 0,
        "end_offset": 0,
        "first_line": first,
        "last_line": last,
        "bytes_in": 0,
        "bytes_out": 0,
        "ratio": num("ratio"),
        "recall": num("recall") if "recall" in f else (1.0 if f else 0.0),
        "compressor": f.get("compressor", DEFAULT_COMPRESSOR if f else "rebuilt") or "rebuilt",
        "created_at": date,
    }


def _wiki_rows(text: str, origin: str) -> Iterator[dict[str, Any]]:
    """The entry ids a wiki page names as its sources (``entry=e-…``, ``folded=e-…,e-…``), in
    whatever layout the page has: ids only, matched against a session's whole content."""
    for eid in wiki_source_ids(text):
        if _ID.fullmatch(eid) and eid.startswith("e-"):
            yield _row(eid, origin, session="", agent="", date="", lines=(0, 0), f={}, src="")


def _texts(folder: Path, pattern: str, *, gz: bool) -> Iterator[tuple[str, str]]:
    if not folder.is_dir() or folder.is_symlink():
        return
    for p in sorted(folder.glob(pattern)):
        try:
            if p.is_symlink() or not p.is_file():
                continue
            if gz:
                with gzip.open(p, "rb") as fh:
                    data = fh.read(MAX_ARCHIVE_BYTES)
            else:
                data = p.read_bytes()
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            _log().warning("ledger_rebuild_skipped", file=str(p), reason=str(exc))
            continue
        yield str(p), data.decode("utf-8", "replace")


def _retired_rows(memory: Path) -> Iterator[dict[str, Any]]:
    """The entries ``retired.txt`` lists: what left cold on purpose was compacted. A line written by
    ``scribed cold-remove`` names the entry's session and line range, so a rebuilt ledger covers
    that part of the session even after it grew."""
    from scribed.tiers.cold_store import RETIRED, read_retired

    for origin, text in _texts(memory / "cold", f"*/{RETIRED}", gz=False):
        for eid, rest in read_retired(text).items():
            if not _ID.fullmatch(eid) or eid.startswith(("d-", "x-")):  # digests and id-less entries
                continue
            f, lines = provenance_fields(rest)
            yield _row(eid, origin, session=f.get("session", ""), agent=f.get("agent", ""), date="",
                       lines=lines, f={}, src="")  # fmt: skip


def _git_rows(memory: Path) -> Iterator[dict[str, Any]]:
    """The entries git has files of on some ref (:func:`scribed.core.gittree.entry_ids`) and the ones
    the sync saw git remove: compacted again, they would be untracked files in a checkout that
    lacks them, and undo a teammate's ``git rm``."""
    import json

    from scribed.core import gittree

    try:
        parked = json.loads((memory / ".scribed" / "cold-sync.json").read_bytes()).get("git_removed", {})
    except (OSError, ValueError, AttributeError):
        parked = {}
    ids, why = gittree.entry_ids(memory)
    if why:
        _log().warning("ledger_rebuild_git", reason=why, action="entries git removed may be compacted again")
    origin = str(memory / "cold")
    for eid in sorted(ids | {k for k in parked if isinstance(k, str)}):
        if _ID.fullmatch(eid) and not eid.startswith(("d-", "x-")):
            yield _row(eid, origin, session="", agent="", date="", lines=(0, 0), f={}, src="")


def source_path(shown: str, root: Path) -> str:
    """A source's path as the ledger files it, from the path an entry's provenance shows
    (:func:`scribed.core.discovery.display_path`: ``~/…`` under home, relative inside the root):
    a rebuilt row then names the file that was compacted, and an edit of it in place, or of it
    renamed, is told as the ledger that wrote the entry told it. A path that was cut short or
    redacted stays as shown (no file has that name)."""
    if shown.startswith("~/"):
        return str(Path.home() / shown[2:])
    if shown and not Path(shown).is_absolute() and not shown.endswith("…"):
        return str(root / shown)
    return shown


REFILED = "shown_paths_refiled"  # the meta key set once :func:`refile_shown` ran


def refile_shown(db: sqlite3.Connection, root: Path) -> int:
    """File under the source's path (:func:`source_path`) the entries a ledger rebuilt before
    stop 49 filed under the path their provenance shows (``~/…``, relative to the root): no file
    has that name, so a cut in place, or a rename then a cut, of their transcript was compacted
    again until the ledger was rebuilt again. Once per ledger (marked ``REFILED`` in ``meta``),
    in ``db``'s open transaction; returns the paths refiled."""
    if db.execute("SELECT 1 FROM meta WHERE key=?", (REFILED,)).fetchone() is not None:
        return 0
    shown = [p for (p,) in db.execute("SELECT DISTINCT path FROM entries WHERE substr(path, 1, 1) != '/'")]
    moves = [(real, p) for p in shown if (real := source_path(p, root)) != p]
    db.executemany("UPDATE entries SET path=? WHERE path=?", moves)
    db.execute("INSERT INTO meta(key, value) VALUES(?, '1')", (REFILED,))
    return len(moves)


def rebuild_rows(
    memory: Path, archive: Path, *, git: bool = False, root: Path | None = None
) -> list[dict[str, Any]]:
    """Every entry id the memory files know: cold entries, archived originals, digests, the wiki,
    ``retired.txt``, and with ``git`` the entries git has (one walk of its history). With ``root``
    (the squad root), each entry's source path is the one the ledger files it under
    (:func:`source_path`)."""
    rows: dict[str, dict[str, Any]] = {}

    def take(found: Iterable[dict[str, Any]]) -> None:
        for r in found:
            old = rows.get(r["id"])
            if old is None or (r["last_line"] and not old["last_line"]):  # full provenance wins
                rows[r["id"]] = r

    for origin, text in _texts(memory / "cold", "*.md", gz=False):
        take(_entry_rows(text, origin))
    for sub in ("cold", "promoted"):
        for origin, text in _texts(archive / sub, "**/*.md.gz", gz=True):
            take(_entry_rows(text, origin))
    for origin, text in _texts(memory / "wiki", "**/*.md", gz=False):
        take(_wiki_rows(text, origin))
    take(_retired_rows(memory))
    if git:
        take(_git_rows(memory))
    if root is not None:
        for r in rows.values():
            r["path"] = source_path(r["path"], root)
    return list(rows.values())

"""scribed's audit log: one JSON line per change to the wiki, in its own state folder.

``.squad/memory/.scribed/audit.jsonl`` (never Squad's ``.squad/memory/audit.jsonl``). A record says
when (``at``, the clock at write time), what (``action``: promote, import, wiki-write, inbox, approve,
deprecate; ``change``: added, merged, superseded, deprecated), which fact (``topic``, ``fact``) and
from which source (``source`` id, ``agent``, ``file``, ``proposal``). :meth:`Wiki.flush` appends the
records of the topics it wrote, after the files are durable: a record never names a change that was
not made. A crash between the two leaves a change without its record; the review approval, which
must keep one record per change, writes the missing one on its rerun (:func:`has`).

Appends are single ``write`` calls on an ``O_APPEND`` file, synced; a line torn by a crash is
skipped when reading and the next append starts on a fresh line.

The state folder gets a ``.gitignore`` (``*``) the first time scribed creates it: the ledger, the
archive, proposals and this log are local state, not team memory.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from scribed.compress.entry import iso
from scribed.fsutil import atomic_write, check_inside, ensure_dir, fsync_dir
from scribed.tiers.cold import Layout

AUDIT = "audit.jsonl"
GITIGNORE = "# scribed's local state (ledger, archive, review proposals, audit log): not for git\n*\n"


def ensure_state(layout: Layout) -> Path:
    """The state folder, created with its ``.gitignore`` when missing. The ``.gitignore`` is best
    effort (a full disk must not stop a run before it can report its files): the next call
    writes it."""
    folder = ensure_dir(layout.state)
    ignore = folder / ".gitignore"
    if not ignore.exists() and not ignore.is_symlink():
        with contextlib.suppress(OSError):
            atomic_write(ignore, GITIGNORE, base=layout.memory)
    return folder


def path(layout: Layout) -> Path:
    return layout.state / AUDIT


class AuditLog:
    """Appends records for one operation (``action``), stamped by ``clock``."""

    def __init__(self, layout: Layout, action: str, clock: Callable[[], datetime]) -> None:
        self.layout = layout
        self.action = action
        self.clock = clock

    def append(self, records: list[dict[str, Any]]) -> None:
        if not records:
            return
        at = iso(self.clock())
        rows = [
            {"at": at, "action": self.action, **{k: v for k, v in r.items() if v not in ("", None)}}
            for r in records
        ]
        append(self.layout, rows)


def append(layout: Layout, rows: list[dict[str, Any]]) -> None:
    """Append rows as JSON lines in one synced write."""
    ensure_state(layout)
    target = path(layout)
    check_inside(target, layout.memory)
    if target.is_symlink():
        raise OSError(f"{target}: is a symlink; not writing the audit log through it")
    data = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows).encode()
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        size = os.fstat(fd).st_size
        if size:
            with open(target, "rb") as fh:
                fh.seek(size - 1)
                if fh.read(1) != b"\n":
                    data = b"\n" + data  # a torn last line (crash mid-append) stays on its own
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(target.parent)


def read(layout: Layout) -> Iterator[dict[str, Any]]:
    """Every well-formed record, oldest first (torn or foreign lines are skipped)."""
    target = path(layout)
    if not target.is_file() or target.is_symlink():
        return
    with open(target, "rb") as fh:
        for line in fh:
            try:
                rec = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            if isinstance(rec, dict):
                yield rec


def history(layout: Layout, topic: str) -> list[dict[str, Any]]:
    """The records of one topic, oldest first."""
    return [r for r in read(layout) if r.get("topic") == topic]


def has(layout: Layout, **match: str) -> bool:
    """Whether some record has all these field values (e.g. ``proposal=ID, change="added"``)."""
    return any(all(r.get(k) == v for k, v in match.items()) for r in read(layout))

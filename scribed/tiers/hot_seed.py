"""Seeded hot files: what the next spawn loads once a session has ended.

The design has the Scribe write Hot at session start. Between sessions a blank hot file would give
``scribed context AGENT`` (the default spawn) nothing, so when a session's cold entry is written the
agent's hot file is re-seeded from that entry (what a seed says: :mod:`scribed.tiers.seed_text`).

A seed carries live.py's front matter (``scribed-live: seed:<kind>:<id>``,
``updated:`` = the session's end, ``digest:``), so the hot adapter never compacts it and the live
refresh of a newer session replaces it. Write rules: a missing or blank hot file, the ended session's
own live view, or an older seed are replaced; a hot file an agent wrote (no marker, or a marked file
whose body no longer matches its digest) and another running session's live view are never touched.
An edited seed so holds back every later seed: that is warned about when it happens
(``hot_seed_withheld``) and listed by :func:`withheld` for ``run-once``, ``doctor`` and ``status``.

When a hot file itself was compacted, :func:`reset` does compare-and-swap: the snapshot is the bytes
that were compacted, the file is read again right before the rename, and whatever an agent appended
since stays in hot after the seed (then the file is the agent's again: no marker, compacted next time).
A file that changed in any other way is left in place with a warning.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scribed.compress.entry import Entry, parse_date
from scribed.dates import believed, utcnow
from scribed.log import misnamed
from scribed.names import normalize_name
from scribed.session.door import Redacted, redacted
from scribed.tiers import live
from scribed.tiers.cold import Layout
from scribed.tiers.seed_text import find_entry, last_session, marker, newest_entry, render

if TYPE_CHECKING:
    from scribed.log import Logger

SWAP_ATTEMPTS = 5


def _may_seed(path: Path, agent: str, before: bytes, mine: str, e: Entry | None, *, now: datetime) -> bool:
    """The write rule of the module docstring for a hot file that exists (a seed dated past ``now``
    is older than any: a wrong clock dated it)."""
    fields = live.live_fields(before)
    if live.MARKER not in fields:
        return live.is_blank(path, agent)
    if not live.owned(before):
        return False  # scribed's file, edited by hand since
    value = fields[live.MARKER]
    if value == mine:
        return True
    if value.startswith(live.SEED_PREFIX) and e is not None:
        theirs = believed(parse_date(fields.get("updated", "")), now)
        return theirs is None or e.when is None or e.when >= theirs
    return False  # another session's live view


def _held_back(before: bytes, mine: str, e: Entry, now: datetime) -> bool:
    """Whether only a hand edit keeps ``e``'s seed out: the file is scribed's (marked) but edited,
    and unedited it would be replaced (its own session's view, or an older seed: :func:`_may_seed`)."""
    fields = live.live_fields(before)
    if live.MARKER not in fields or live.owned(before) or fields.get("entry") == e.entry_id:
        return False
    value = fields[live.MARKER]
    if value == mine:
        return True
    theirs = believed(parse_date(fields.get("updated", "")), now)
    return value.startswith(live.SEED_PREFIX) and (theirs is None or e.when is None or e.when >= theirs)


WITHHELD_ACTION = (
    "the file is kept as it is; move a note worth keeping to the wiki (`scribed wiki-write`), "
    "then delete the file: the next session writes it again"
)
_said: dict[str, str] = {}  # file → the last entry warned about by this process (one per hot file)
_said_lock = threading.Lock()


def _say_withheld(log: Logger, path: Path, agent: str, e: Entry, session_id: Redacted) -> None:
    """Warn, once per file and entry, that a finished session's seed was not written: the hot file
    a spawn reads stays what it was (silent, it froze for good: the tester's D3)."""
    file, entry = str(path), e.entry_id or ""
    with _said_lock:
        if _said.get(file) == entry:
            return
        _said[file] = entry
    fields = live.live_fields(live.current_bytes(path) or b"")
    log.warning(
        "hot_seed_withheld",
        file=str(path),
        agent=agent,
        entry=e.entry_id,
        session=session_id,
        reason=live.edited(fields),
        action=WITHHELD_ACTION,
    )


@dataclass(slots=True, frozen=True)
class Withheld:
    """A hot file scribed wrote, edited since, that lacks the agent's newest cold entry: no seed
    replaces it, so every spawn reads the older content (``doctor``, ``status``, ``run-once``)."""

    agent: str
    file: str  # relative to the root
    shows: str  # the entry id it holds ("" for a live view)
    entry: str  # the agent's newest entry, not in it
    reason: str

    def line(self) -> str:
        shows = f" (it shows {self.shows})" if self.shows else ""
        return (
            f"hot file {self.file} was {self.reason}, so no seed replaces it: the newest session's entry "
            f"{self.entry} is not in it{shows} — move a note worth keeping to the wiki "
            "(`scribed wiki-write`), then delete the file: the next session writes it again"
        )

    def to_json(self) -> dict[str, str]:
        return {
            "agent": self.agent,
            "file": self.file,
            "shows": self.shows,
            "entry": self.entry,
            "reason": self.reason,
        }


FRONT_BYTES = 8192  # a hot file's front matter is in its first lines


def withheld(layout: Layout, now: datetime | None = None) -> list[Withheld]:
    """Every hot file an edit holds back from its seeds (read-only: see :class:`Withheld`). A
    running session's edited live view newer than every entry holds nothing back yet."""
    out: list[Withheld] = []
    now = now or utcnow()
    try:
        paths = sorted(layout.hot.glob("*.md"))
    except OSError:
        return out
    for path in paths:
        agent = normalize_name(path.stem)
        if agent is None:
            misnamed(path, "agent")
        if agent is None or path.is_symlink():
            continue
        try:
            with path.open("rb") as fh:
                head = fh.read(FRONT_BYTES)
                fields = live.live_fields(head)
                if live.MARKER not in fields:
                    continue  # not scribed's: compacted as the agent's, then seeded
                data = head + fh.read()
        except OSError:
            continue
        if live.owned(data):
            continue
        try:
            e = newest_entry(layout, agent, now=now)
        except OSError:
            continue  # an unreadable cold file: doctor reports it on its own
        if e is None or not e.entry_id or e.entry_id == fields.get("entry"):
            continue
        theirs = believed(parse_date(fields.get("updated", "")), now)
        if theirs is not None and e.when is not None and e.when < theirs:
            continue
        rel = str(path.relative_to(layout.root))
        out.append(Withheld(agent, rel, fields.get("entry", ""), e.entry_id, live.edited(fields)))
    return out


# What a seed writer decides from the hot file's bytes: the new text and what its log line says
# of it (None: the file is left as it is).
Seeding = tuple[str, dict[str, Any]] | None


def swap_seed(
    layout: Layout,
    agent: str,
    log: Logger,
    made: str,
    make: Callable[[bytes | None], Seeding],
    *,
    failed: str = "hot_seed_failed",
    errors: tuple[type[Exception], ...] = (OSError,),
) -> bool:
    """Write the hot file ``make`` makes from its bytes (None: absent), compare-and-swap: an
    agent's write since they were read wins. A symlink, or the same bytes, are not written; a
    write is logged as ``made``. Never raises ``errors`` (file problems; warned as ``failed``):
    the hot file is a convenience and what came before it is already durable."""
    path = layout.hot_file(agent)
    try:
        if path.is_symlink():
            return False
        before = live.current_bytes(path)
        got = make(before)
        if got is None:
            return False
        text, said = got
        new = text.encode()
        if new == before or not live.swap(path, before, new, base=layout.memory):
            return False
    except errors as exc:
        log.warning(failed, file=str(path), agent=agent, reason=str(getattr(exc, "strerror", None) or exc))
        return False
    log.info(made, agent=agent, **said)
    return True


def reseed(
    layout: Layout, agent: str, kind: str, session_id: Redacted, log: Logger, *, now: datetime | None = None
) -> bool:
    """After a transcript session ended and was compacted: seed the agent's hot file from its newest
    cold entry (rules in the module docstring; ``now``: the run's clock). Returns whether the file
    was written. Never raises for file problems: the compaction is already durable."""
    name = normalize_name(agent)
    at = now or utcnow()
    if name is None:
        return False
    path = layout.hot_file(name)
    mine = live.marker_value(kind, session_id)

    def make(before: bytes | None) -> Seeding:
        e = find_entry(layout, name, session_id)
        if before is not None and not _may_seed(path, name, before, mine, e, now=at):
            if e is not None and _held_back(before, mine, e, at):
                _say_withheld(log, path, name, e, session_id)
            return None
        if e is not None:
            text = render(name, marker(kind, session_id), last_session(layout, name, e))
        elif before is not None and live.live_fields(before).get(live.MARKER) == mine:
            text = live.TEMPLATE.format(agent=name)  # nothing in cold to seed from: clear the live view
        else:
            return None
        return text, {"session": session_id, "entry": e.entry_id if e else None}

    return swap_seed(layout, name, log, "hot_seeded", make)


def repoint(layout: Layout, agent: str, moved: dict[str, tuple[Entry, Path]], log: Logger) -> bool:
    """After promotion took entries out of ``cold/{agent}.md`` (``moved``: entry id → the entry and
    its archive file): a seed of one of them points at its archive instead of the cold file it
    left, so the pointer a spawn reads still leads somewhere. Only scribed's own, unedited seed is
    rewritten (compare-and-swap); the rest of it is the same. Never raises for file problems."""

    def make(before: bytes | None) -> Seeding:
        if before is None or not live.owned(before):
            return None
        fields = live.live_fields(before)
        value = fields.get(live.MARKER, "")
        got = moved.get(fields.get("entry", ""))
        if not value.startswith(live.SEED_PREFIX) or got is None:
            return None
        e, archived = got
        seed = replace(last_session(layout, agent, e), cold=str(archived.relative_to(layout.root)))
        return render(agent, value, seed), {"entry": e.entry_id}

    return swap_seed(
        layout, agent, log, "hot_repointed", make, failed="hot_repoint_failed", errors=(OSError, ValueError)
    )


def snapshot(current: bytes, size: int, session_id: str) -> bytes | None:
    """The bytes a hot file held when it was parsed (its session id is ``hot-`` + their sha256
    prefix), if ``current`` still starts with them; None when the file changed in another way."""
    if not session_id.startswith("hot-"):
        return current  # an id this module does not know how to check: the file as it is now
    snap = current[:size]
    return snap if hashlib.sha256(snap).hexdigest().startswith(session_id[4:]) else None


def reset(
    layout: Layout,
    path: Path,
    agent: str,
    snap: bytes,
    *,
    session_id: Redacted,
    log: Logger,
    now: datetime | None = None,
) -> bool:
    """Replace a compacted hot file (``snap`` = the bytes compacted) by its seed, compare-and-swap.

    Returns True when hot holds only the seed; False when an agent's appended text was kept after
    the seed (the file is then the agent's, to be compacted on the next run) or the file changed in
    another way (left in place, warned).
    """
    e = find_entry(layout, agent, session_id) or newest_entry(layout, agent, now=now)
    seed = render(agent, marker("hot", session_id), last_session(layout, agent, e)) if e else ""
    plain = render(agent, "", last_session(layout, agent, e), marked=False) if e else ""
    for _ in range(SWAP_ATTEMPTS):
        current = live.current_bytes(path)
        if current is None or not current.startswith(snap):
            log.warning("hot_changed_during_compaction", file=str(path), reason="left in place")
            return False
        extra = current[len(snap) :]
        if extra.strip():
            head = (plain or live.TEMPLATE.format(agent=agent)).encode()
            new, clean = (
                head + b"\n" + redacted(extra.decode("utf-8", "replace")).encode(),
                False,
            )  # a hot read
        else:
            new, clean = (seed or live.TEMPLATE.format(agent=agent)).encode(), True
        if live.swap(path, current, new, base=layout.memory):
            if not clean:
                log.info("hot_appended_kept", file=str(path), agent=agent, bytes=len(extra))
            return clean
    log.warning("hot_changed_during_compaction", file=str(path), reason="kept changing; left in place")
    return False

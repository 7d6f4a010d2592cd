"""A ledger row's identities and freshness: a source's row, an entry's shared id and how this
machine recognises its turns, the ids entries had before them, and whether a row still describes
the file on disk.

Kept beside :mod:`scribed.core.ledger` (which re-exports them) so that module holds the database.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from scribed.compress.entry import iso
from scribed.core.content_key import DIGEST_BYTES, Keyring
from scribed.models import Session, Turn
from scribed.session.door import RedactedSession, redact_session


@dataclass(slots=True)
class SourceRow:
    """One transcript as the ledger last saw it (the ``sources`` table's row)."""

    path: str
    kind: str
    agent: str
    size: int
    mtime_ns: int
    sha256: str
    offset_done: int
    status: str
    attempts: int
    last_error: str
    updated_at: str
    retry_at: str = ""


@dataclass(slots=True)
class OwedCopy:
    """A transcript copy a failed archive write still owes (the ``copies_owed`` table's row): the
    source's ledger key, its size:mtime_ns when compacted, and the sessions the copy is for."""

    path: str
    kind: str
    shown_as: str
    stamp: str
    sessions: list[str]
    agents: list[str]


def same_state(row: SourceRow | None, st: os.stat_result) -> bool:
    """The row was written for the file as it is now (same size and modification time)."""
    return row is not None and row.size == st.st_size and row.mtime_ns == st.st_mtime_ns


def effective_mtime(st: os.stat_result, row: SourceRow | None, now: datetime) -> float:
    """The file's modification time, except that a time in the future (clock skew, a copied file)
    counts as the moment scribed first saw the file in that state: its row's time, else now."""
    current = now.timestamp()
    if st.st_mtime <= current:
        return st.st_mtime
    if same_state(row, st) and row is not None and row.updated_at:
        with contextlib.suppress(ValueError):
            seen = datetime.fromisoformat(row.updated_at.replace("Z", "+00:00"))
            return min(seen.timestamp(), current)
    return current


# --- identity ---------------------------------------------------------------------------------
# An entry has two identities. Its id (``e-`` + 12 hex, in its provenance and its file name) is
# shared: every clone that compacts the same session must find the same id, so it is made from
# what the entry may show, the redacted turns (:func:`content_id`), with no machine's key. The
# ledger also files the entry under this machine's keyed digest of the raw turns
# (:meth:`~scribed.core.content_key.Keyring.content_key`) and keeps keyed per-turn digests: a
# lookup without a redaction, and nothing a guess can be checked against.


def content_id(red: RedactedSession) -> str:
    """An entry's shared id from what it holds: the session id and its turns (role, kind, tool,
    time and text), as redacted. The same records give the same id on every clone and wherever
    the file lives, so a renamed, rotated or copied transcript maps onto the entries already
    written for it, and two clones compacting one session at the same points write one file
    (cut at different points, they write entries of the same turns that the team sync makes one:
    :mod:`scribed.tiers.cold_overlap`).

    A turn that is one word (no space in it, as a password typed at a prompt is) counts by its
    place, role and time, not its text: redaction cannot tell such a word is a secret, and its
    text would make the id a check for a guess. The other turns, times and lines tell sessions
    apart; a transcript edited in one such word is told by the keyed digests."""
    sess = red.session
    h = hashlib.sha256(b"scribed-entry-3\0")
    h.update(sess.session_id.encode("utf-8", "surrogatepass") + b"\0")
    for t in sess.turns:
        ts = t.ts.isoformat() if t.ts else ""
        word = _one_word(t.text)
        h.update(f"{t.role}\0{t.kind}\0{t.tool_name or ''}\0{ts}\0{'w' if word else len(t.text)}\0".encode())
        if not word:
            h.update(t.text.encode("utf-8", "surrogatepass"))
    return "e-" + h.hexdigest()[:12]


def _one_word(text: str) -> bool:
    s = text.strip()
    return bool(s) and not any(c.isspace() for c in s)


def legacy_content_id(session_id: str, turns: Sequence[Turn]) -> str:
    """The id entries had before ids were made from redacted turns (an unkeyed sha256 of the raw
    turns): computed to recognise those entries, never written again."""
    h = hashlib.sha256(b"scribed-entry-2\0")
    h.update(session_id.encode("utf-8", "surrogatepass") + b"\0")
    for t in turns:
        ts = t.ts.isoformat() if t.ts else ""
        h.update(f"{t.role}\0{t.kind}\0{t.tool_name or ''}\0{ts}\0{len(t.text)}\0".encode())
        h.update(t.text.encode("utf-8", "surrogatepass"))
    return "e-" + h.hexdigest()[:12]


def legacy_id(path: Path, session_id: str, start: int, end: int, *, hot: bool) -> str:
    """The id entries had before content ids (path, session, byte range): ledgers keep working."""
    ident = f"{path}\0{session_id}" if hot else f"{path}\0{session_id}\0{start}\0{end}"
    return "e-" + hashlib.sha256(ident.encode()).hexdigest()[:12]


def legacy_turn_digests(turns: Sequence[Turn]) -> bytes:
    """The per-turn digests ledgers kept before keys (unkeyed sha256 of each redacted turn), which
    :meth:`~scribed.core.content_key.Keyring.legacy` keys: computed to recognise what such an
    entry holds, never stored as they are."""
    out = bytearray()
    for t in turns:
        ts = t.ts.isoformat() if t.ts else ""
        h = hashlib.sha256(f"scribed-turn-1\0{t.role}\0{t.kind}\0{t.tool_name or ''}\0{ts}\0".encode())
        h.update(t.text.encode("utf-8", "surrogatepass"))
        out += h.digest()[:DIGEST_BYTES]
    return bytes(out)


class SessionEntry(NamedTuple):
    """What :func:`uncovered` needs of one entry of a session (a ledger row)."""

    id: str
    first_line: int
    last_line: int
    path: str
    session_end: str
    key: str = ""  # its keyed content key; empty when written before keys or rebuilt from files
    turn_keys: bytes = b""  # :meth:`Keyring.turn_digests` of its raw turns
    legacy_keys: bytes = b""  # an entry from before keys: its old digests, keyed (:meth:`Keyring.legacy`)


class Recognizer:
    """Tells which of a session's turns an entry holds, computing each identity only when asked:
    the keyed ones from the raw turns (cheap), the shared id and old digests through the
    redaction door (only for entries the keyed ones cannot tell: rebuilt from files, written
    by another clone or before keys, or under a key since replaced)."""

    def __init__(self, session: Session, keys: Keyring) -> None:
        self.session, self.keys = session, keys
        self._keyed: bytes | None = None
        self._legacy: bytes | None = None

    def covers(self, e: SessionEntry, inside: list[Turn]) -> bool:
        """``inside`` (the turns of ``e``'s line range now) are what ``e`` was made from."""
        sid = self.session.session_id
        if e.key and self.keys.content_key(sid, inside) == e.key:
            return True
        if not e.key and legacy_content_id(sid, inside) == e.id:
            return True
        return content_id(redact_session(self.session, inside)) == e.id

    def keyed_digests(self) -> bytes:
        if self._keyed is None:
            self._keyed = self.keys.turn_digests(self.session.turns)
        return self._keyed

    def legacy_digests(self) -> bytes:
        if self._legacy is None:
            self._legacy = self.keys.legacy(legacy_turn_digests(redact_session(self.session).session.turns))
        return self._legacy


def uncovered(
    entries: Sequence[SessionEntry],
    all_turns: Sequence[Turn],
    turns: list[Turn],
    *,
    path: str = "",
    rec: Recognizer,
) -> list[Turn]:
    """``turns`` minus those an entry already holds (``entries``: the session's, as
    :meth:`~scribed.core.ledger.Ledger.session_entries` gives them), from whatever path.

    An entry covers its line range if the current turns of that range are what it was made from
    (``rec``: a transcript that only moved is not compacted again), or if it is the same session
    edited in place: the entry came from this ``path``, every turn of its range has a time stamp,
    and the newest still is the entry's end (a line removed in the middle) or is earlier with
    nothing after it (the tail cut). Outside those ranges, a turn that an entry from this ``path``
    holds word for word is covered too, one turn per digest (the entry's keyed digests). So an
    Aider history edited in place (no time stamps: its end is the session's start, which an edit
    never moves) is compacted again only in the turns the edit changed, with the message before
    them when they are tool output alone (a session's part with no message is not compacted);
    entries without digests (written before them, or by a ledger rebuild) leave a range rewritten
    with other content to be compacted again whole: a duplicate is better than new content lost.
    """
    ranges = []
    for e in entries:
        inside = [t for t in all_turns if e.first_line <= t.line <= e.last_line]
        if not inside:
            continue
        stamps = [t.ts for t in inside if t.ts is not None]
        end = max(stamps) if len(stamps) == len(inside) else None  # untimed turns: no such test
        tail_cut = all_turns[-1].line <= e.last_line
        if (e.path == path and _edited(end, e.session_end, tail_cut)) or rec.covers(e, inside):
            ranges.append((e.first_line, e.last_line))
    mine = [e for e in entries if e.path == path]  # another file's session may share the id
    held = _held_turns(mine, all_turns, ranges, rec)
    if not ranges and not held:
        return turns
    left = [t for t in turns if id(t) not in held and not any(a <= t.line <= b for a, b in ranges)]
    if held and left and not any(map(says, left)):
        left = _with_context(left, all_turns)
    return left


def says(t: Turn) -> bool:
    """A turn that makes a session's part worth an entry: a part of only tool output (a banner,
    a command's output) has nothing to remember (``Compactor._compact_session``)."""
    return t.kind in ("message", "summary") and bool(t.text.strip())


def _with_context(left: list[Turn], all_turns: Sequence[Turn]) -> list[Turn]:
    """``left`` (tool output an edit changed) with the message nearest before it (else after it),
    so that it is compacted: alone it would be a part with nothing to remember, and lost."""
    at = next((k for k, t in enumerate(all_turns) if t is left[0]), 0)
    before = [t for t in all_turns[:at] if says(t)]
    if before:
        return [before[-1], *left]
    after = [t for t in all_turns[at:] if says(t)]
    return sorted([*left, after[0]], key=lambda t: t.line) if after else left


def _held_turns(
    entries: Sequence[SessionEntry], all_turns: Sequence[Turn], ranges: list[tuple[int, int]], rec: Recognizer
) -> set[int]:
    """The ``id()`` of the turns outside ``ranges`` that an entry holds word for word: each entry's
    digest covers one turn, the turns inside ``ranges`` taking theirs first (so a turn said twice
    is covered only as often as entries hold it). An entry's digests are keyed digests of raw
    turns, or (written before keys) its old digests of redacted turns, keyed."""
    keyed = _stock(e.turn_keys for e in entries)
    legacy = _stock(e.legacy_keys for e in entries)
    if not keyed and not legacy:
        return set()
    kd = rec.keyed_digests() if keyed else b""
    ld = rec.legacy_digests() if legacy else b""

    def take(k: int) -> bool:
        for stock, ds in ((keyed, kd), (legacy, ld)):
            d = ds[k * DIGEST_BYTES : (k + 1) * DIGEST_BYTES]
            if d and stock[d] > 0:
                stock[d] -= 1
                return True
        return False

    inside = [any(a <= t.line <= b for a, b in ranges) for t in all_turns]
    for k, within in enumerate(inside):
        if within:
            take(k)
    return {
        id(t) for k, (t, within) in enumerate(zip(all_turns, inside, strict=True)) if not within and take(k)
    }


def _stock(blobs: Iterable[bytes]) -> Counter[bytes]:
    return Counter(b[i : i + DIGEST_BYTES] for b in blobs for i in range(0, len(b), DIGEST_BYTES))


def _edited(end: datetime | None, entry_end: str, tail_cut: bool) -> bool:
    """A range of the entry's session edited in place (see :func:`uncovered`)."""
    if end is None or not entry_end:
        return False
    now = iso(end)  # as the entry's end was written
    return now == entry_end or (tail_cut and now < entry_end)

"""A ledger row's identities and freshness: a source's row, content ids, the ids entries had
before them, and whether a row still describes the file on disk.

Kept beside :mod:`scribed.core.ledger` (which re-exports them) so that module holds the database.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from scribed.compress.entry import iso
from scribed.models import Turn


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
def content_id(session_id: str, turns: Sequence[Turn]) -> str:
    """An entry's id from what it holds: the session id and its turns (role, kind, time, text).

    The same records give the same id wherever the file lives, so a renamed, rotated or copied
    transcript maps onto the entries already written for it.
    """
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


DIGEST_BYTES = 8  # per turn: told apart within one session, never read back into text


def turn_digests(turns: Sequence[Turn]) -> bytes:
    """Each turn's digest (role, kind, tool, time and text, as :func:`content_id` reads them),
    concatenated: what the ledger keeps of an entry's turns, to tell later which turns of an edited
    transcript an entry already holds. Give it redacted turns: an unkeyed digest of a short raw
    text (a password typed as a turn) could be confirmed by guessing."""
    out = bytearray()
    for t in turns:
        ts = t.ts.isoformat() if t.ts else ""
        h = hashlib.sha256(f"scribed-turn-1\0{t.role}\0{t.kind}\0{t.tool_name or ''}\0{ts}\0".encode())
        h.update(t.text.encode("utf-8", "surrogatepass"))  # sha256: 0.66 ms/MB here, blake2b 1.28
        out += h.digest()[:DIGEST_BYTES]
    return bytes(out)


class SessionEntry(NamedTuple):
    """What :func:`uncovered` needs of one entry of a session (a ledger row)."""

    id: str
    first_line: int
    last_line: int
    path: str
    session_end: str
    digests: bytes = b""  # :func:`turn_digests` of its redacted turns; empty before migration 4


def uncovered(
    entries: Sequence[SessionEntry],
    session_id: str,
    all_turns: Sequence[Turn],
    turns: list[Turn],
    *,
    path: str = "",
    digests: Callable[[], bytes] | None = None,
) -> list[Turn]:
    """``turns`` minus those an entry already holds (``entries``: the session's, as
    :meth:`~scribed.core.ledger.Ledger.session_entries` gives them), from whatever path.

    An entry covers its line range if the current turns of that range hash to its id (a
    transcript that only moved is not compacted again), or if it is the same session edited in
    place: the entry came from this ``path``, every turn of its range has a time stamp, and the
    newest still is the entry's end (a line removed in the middle) or is earlier with nothing
    after it (the tail cut). Outside those ranges, a turn that an entry from this ``path`` holds
    word for word is covered too, one turn per digest (``digests``: :func:`turn_digests` of
    ``all_turns`` redacted, asked for only then). So an Aider history edited in place (no time
    stamps: its end is the session's start, which an edit never moves) is compacted again only
    in the turns the edit changed, with the message before them when they are tool output alone
    (a session's part with no message is not compacted); entries without digests (written
    before them, or by a ledger rebuild) leave a range rewritten with other content to be
    compacted again whole: a duplicate is better than new content lost.
    """
    ranges = []
    for e in entries:
        inside = [t for t in all_turns if e.first_line <= t.line <= e.last_line]
        if not inside:
            continue
        stamps = [t.ts for t in inside if t.ts is not None]
        end = max(stamps) if len(stamps) == len(inside) else None  # untimed turns: no such test
        tail_cut = all_turns[-1].line <= e.last_line
        if content_id(session_id, inside) == e.id or (
            e.path == path and _edited(end, e.session_end, tail_cut)
        ):
            ranges.append((e.first_line, e.last_line))
    mine = [e for e in entries if e.path == path]  # another file's session may share the id
    held = _held_turns(mine, all_turns, ranges, digests) if digests is not None else set()
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
    entries: Sequence[SessionEntry],
    all_turns: Sequence[Turn],
    ranges: list[tuple[int, int]],
    digests_of: Callable[[], bytes],
) -> set[int]:
    """The ``id()`` of the turns outside ``ranges`` that an entry holds word for word: each entry's
    digest covers one turn, the turns inside ``ranges`` taking theirs first (so a turn said twice
    is covered only as often as entries hold it)."""
    stock = Counter(
        e.digests[i : i + DIGEST_BYTES] for e in entries for i in range(0, len(e.digests), DIGEST_BYTES)
    )
    if not stock:
        return set()
    digests = digests_of()
    pairs = [(t, digests[k * DIGEST_BYTES : (k + 1) * DIGEST_BYTES]) for k, t in enumerate(all_turns)]
    inside = [any(a <= t.line <= b for a, b in ranges) for t, _ in pairs]
    for (_, d), within in zip(pairs, inside, strict=True):
        if within and stock[d] > 0:
            stock[d] -= 1
    held: set[int] = set()
    for (t, d), within in zip(pairs, inside, strict=True):
        if not within and stock[d] > 0:
            stock[d] -= 1
            held.add(id(t))
    return held


def _edited(end: datetime | None, entry_end: str, tail_cut: bool) -> bool:
    """A range of the entry's session edited in place (see :func:`uncovered`)."""
    if end is None or not entry_end:
        return False
    now = iso(end)  # as the entry's end was written
    return now == entry_end or (tail_cut and now < entry_end)

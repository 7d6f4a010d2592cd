"""The cold tier: one file per agent of dated entries, kept under ``cold.max_bytes`` by folding.

Appends re-read the file right before the atomic rewrite, so text an agent added in the
meantime is kept. When the file would exceed its budget, the oldest entries are folded into a
shorter dated digest that keeps their anchors (decisions, open items, files, key facts); the
originals are archived (gzip) *before* the cold file is rewritten, so nothing is lost.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from scribed.compress.entry import Entry, fence_step, has_fence, iso, join_entries, one_line, split_entries
from scribed.dates import utcnow
from scribed.fsutil import atomic_write, fsync_dir, read_text, write_gzip_archive
from scribed.models import SECTIONS, Summary
from scribed.tiers.layout import Layout as Layout  # re-exported: most callers import it from here

_SECTION_KEYS = {title: key for key, title in SECTIONS}
_write_lock = threading.Lock()
FOLDED_ID_CAP = 48
# A digest's text field is halved to fit its budget only while longer than this many characters.
_DIGEST_TEXT_MIN = 60
# A fold merges at least this many entries into one digest (fewer would not shrink the file).
_FOLD_MIN_ENTRIES = 2
# At most this many fold rounds per append, so a budget no digest can meet cannot loop forever.
_FOLD_MAX_ROUNDS = 20


def preamble(agent: str) -> str:
    return (
        f"# Cold memory: {agent}\n\n"
        "<!-- Maintained by scribed: one dated entry per finished session, newest last. Older entries are folded\n"
        "     into digests and archived under .squad/memory/.scribed/archive/. Edit with care. -->\n"
    )


def sections(entry_text: str) -> dict[str, list[str]]:
    """Parse an entry's ``#### Section`` blocks into lists of lines (bullets without the dash)."""
    out: dict[str, list[str]] = {}
    cur: str | None = None
    for line in entry_text.splitlines():
        if line.startswith("#### "):
            cur = _SECTION_KEYS.get(line[5:].strip())
            if cur is not None:
                out.setdefault(cur, [])
            continue
        if cur is None or not line.strip():
            continue
        out[cur].append(line[2:].strip() if line.startswith("- ") else line.strip())
    return out


def _merged_sections(folded: list[Entry]) -> dict[str, list[str]]:
    """The folded entries' section items, deduplicated in order, less the decisions a later one supersedes."""
    merged: dict[str, list[str]] = {k: [] for k, _ in SECTIONS}
    seen: dict[str, set[str]] = {k: set() for k, _ in SECTIONS}
    superseded: set[str] = set()
    for e in folded:
        sec = sections(e.text)
        for key, items in sec.items():
            if key in ("goal", "outcome"):
                continue
            for it in items:
                if it not in seen[key]:
                    seen[key].add(it)
                    merged[key].append(it)
        for d in sec.get("decisions", []):
            m = re.search(r"\(supersedes: (.+)\)\s*$", d)
            if m:
                superseded.add(m.group(1).strip())
    merged["decisions"] = [d for d in merged["decisions"] if d not in superseded]
    return merged


def _folded_ids(folded: list[Entry]) -> list[str]:
    """The ids a digest lists: the ones it folds, then (newest last) the ids older digests folded, capped
    so the line stays bounded however many sessions an agent has; older ones trace through the archive
    chain. Only session entries are listed (an earlier digest's own id names no session)."""
    own = [e.entry_id or "" for e in folded]
    nested = [i for e in folded for i in sorted(e.ids - {e.entry_id})]
    ids = [i for i in own if i and not i.startswith("d-")]
    room = max(0, FOLDED_ID_CAP - len(ids))
    # once each: two digests merged after two clones folded before they pulled list the same ids
    more = [i for i in dict.fromkeys(nested) if i not in ids and not i.startswith("d-")]
    ids += more[-room:] if room else []
    return ids


def _sections_text(s: Summary) -> str:
    """A summary's non-empty sections as ``####`` blocks."""
    body = []
    for key, title in SECTIONS:
        v = getattr(s, key)
        if isinstance(v, str) and v:
            body.append(f"#### {title}\n{v}")
        elif isinstance(v, list) and v:
            body.append(f"#### {title}\n" + "\n".join(f"- {x}" for x in v))
    return "\n".join(body)


# Which digest fields give way first when it is over budget (lists lose their last item, text is halved).
_DIGEST_TRIM_ORDER = ["knowledge", "errors", "key_facts", "files", "outcome", "open_items", "decisions"]


def _block_size(title: str, value: str | list[str]) -> int:
    """The UTF-8 size of ``value``'s ``####`` block in :func:`_sections_text` (0: no block)."""
    if not value:
        return 0
    head = len(f"#### {title}\n".encode())
    if isinstance(value, str):
        return head + len(value.encode())
    return head + sum(len(x.encode()) + 2 for x in value) + len(value) - 1


def _shrink(s: Summary, head: Callable[[Summary], str], budget: int) -> str:
    """``head(s) + _sections_text(s) + "\n"``, trimming ``s`` in :data:`_DIGEST_TRIM_ORDER` until it
    fits ``budget`` bytes (or nothing is left to trim). The size is kept as items go, not measured
    again per item: a digest of hundreds of items made a fold quadratic."""
    titles = dict(SECTIONS)
    blocks = {key: _block_size(title, getattr(s, key)) for key, title in SECTIONS}

    def size() -> int:
        filled = [b for b in blocks.values() if b]
        return len(head(s).encode()) + sum(filled) + max(0, len(filled) - 1) + 1

    while size() > budget:
        for key in _DIGEST_TRIM_ORDER:
            v = getattr(s, key)
            if isinstance(v, list) and v:
                dropped = v.pop()
                blocks[key] = blocks[key] - len(dropped.encode()) - 3 if v else 0
                break
            if isinstance(v, str) and len(v) > _DIGEST_TEXT_MIN:
                setattr(s, key, one_line(v, len(v) // 2))
                blocks[key] = _block_size(titles[key], getattr(s, key))
                break
        else:
            break
    return head(s) + _sections_text(s) + "\n"


def _digest(agent: str, folded: list[Entry], archive_name: str, budget: int) -> Entry:
    """A shorter entry standing for ``folded``: their anchors, deduplicated, newest decisions win."""
    merged = _merged_sections(folded)
    first = min((_first_date(e) for e in folded), default="")
    last = max((e.date for e in folded), default="")
    summary = Summary(
        goal=f"Digest of {sessions_held(folded)} sessions, {first[:10]} – {last[:10]}",
        outcome="; ".join(f"{e.date[:10]} {one_line(e.title, 60)}" for e in folded),
        decisions=merged["decisions"],
        files=merged["files"],
        errors=merged["errors"],
        open_items=merged["open_items"],
        knowledge=merged["knowledge"],
        key_facts=merged["key_facts"],
    )
    ids = _folded_ids(folded)
    held = sessions_held(folded)
    listed = f" · listed={len(ids)} of {held}" if len(ids) < held else ""
    digest_id = (
        "d-" + hashlib.sha256(",".join(e.entry_id for e in folded if e.entry_id).encode()).hexdigest()[:12]
    )
    when = max((e.when for e in folded if e.when), default=utcnow())
    total_items = sum(len(getattr(summary, k)) for k, _ in SECTIONS[2:])

    def head(s: Summary) -> str:
        kept = sum(len(getattr(s, k)) for k, _ in SECTIONS[2:])
        trimmed = (
            f" · trimmed={total_items - kept} items (full text in archive)" if kept < total_items else ""
        )
        return (
            f"### {iso(when)}: {s.goal}\n"
            f"- provenance: id={digest_id} · agent={agent} · folded={','.join(ids)}{listed} · archive=`{archive_name}`"
            f"{trimmed}\n\n"
        )

    text = _shrink(summary, head, budget)
    m = re.match(r"### (\S+): (.*)", text)
    assert m is not None
    return Entry(heading=text.split("\n", 1)[0], date=m.group(1), title=m.group(2), text=text)


_HELD = re.compile(r"^Digest of (\d+) sessions?\b")
_SINCE = re.compile(r"^Digest of \d+ sessions?, (\d{4}-\d\d-\d\d) – ")


def _first_date(e: Entry) -> str:
    """The day of the oldest session ``e`` holds: a digest's first day (its own date is its
    newest's), else its date."""
    m = _SINCE.match(e.title) if (e.entry_id or "").startswith("d-") else None
    return min(m.group(1), e.date) if m else e.date


def sessions_held(entries: list[Entry]) -> int:
    """How many sessions these entries stand for: one each, or what an earlier digest says it holds.
    A session two of them hold (digests two clones folded before they pulled, merged by
    :func:`merge_digests`) counts once: each listed id once, plus what each digest holds unlisted."""
    listed: set[str] = set()
    unlisted = 0
    for e in entries:
        m = _HELD.match(e.title)
        if m and e.entry_id and e.entry_id.startswith("d-"):
            mine = {i for i in e.ids if i.startswith("e-")}
            listed |= mine
            unlisted += max(0, int(m.group(1)) - len(mine))
        elif e.entry_id:
            listed.add(e.entry_id)
        else:
            unlisted += 1
    return len(listed) + unlisted


def _size(pre: str, entries: list[Entry]) -> int:
    return len(join_entries(pre, entries).encode())


def fold(
    agent: str, pre: str, entries: list[Entry], max_bytes: int, *, archive_dir: Path, now: datetime
) -> tuple[list[Entry], int]:
    """Fold oldest entries until the file fits. Archives originals first. Returns (entries, folded count)."""
    folded_total = 0
    guard = 0
    while _size(pre, entries) > max_bytes and len(entries) >= _FOLD_MIN_ENTRIES and guard < _FOLD_MAX_ROUNDS:
        guard += 1
        k = max(_FOLD_MIN_ENTRIES, len(entries) // 2)
        victims, rest = entries[:k], entries[k:]
        stamp = now.strftime("%Y%m%dT%H%M%S")
        blob = "".join(e.text for e in victims).encode()
        name = f"cold/{agent}-{stamp}-{hashlib.sha256(blob).hexdigest()[:10]}.md.gz"
        write_gzip_archive(archive_dir / name, blob)
        fsync_dir((archive_dir / name).parent, now=True)  # on disk before the file that drops them
        budget = max(1024, max_bytes // 3)
        digest = _digest(agent, victims, name, budget)
        entries = [digest, *rest]
        folded_total += len(victims)
    return entries, folded_total


def merge_digests(agent: str, entries: list[Entry]) -> tuple[list[Entry], list[str]]:
    """Digests that fold some of the same entries (two clones folded before they pulled) made one,
    so every folded session is in one digest: the merged digest's id and text depend only on the
    digests merged, so each clone that merges them writes the same file. Returns the entries and
    the ids of the digests merged away."""
    digests = [e for e in entries if (e.entry_id or "").startswith("d-")]
    groups: list[list[Entry]] = []
    for d in sorted(digests, key=lambda e: e.entry_id or ""):
        mine = d.ids - {d.entry_id}
        hit = [g for g in groups if any(mine & (x.ids - {x.entry_id}) for x in g)]
        for g in hit:
            groups.remove(g)
        groups.append([x for g in hit for x in g] + [d])
    gone: list[str] = []
    out = list(entries)
    for g in groups:
        if len(g) < _FOLD_MIN_ENTRIES:
            continue
        g.sort(key=lambda e: e.entry_id or "")
        archives = sorted({m.group(1) for e in g for m in re.finditer(r"archive=`([^`]+)`", e.text)})
        merged = _digest(agent, g, "; ".join(archives), sum(len(e.text.encode()) for e in g))
        ids = {e.entry_id for e in g}
        gone += [i for i in ids if i]
        at = min(i for i, e in enumerate(out) if e.entry_id in ids)
        out = [e for e in out if e.entry_id not in ids]
        out.insert(at, merged)
    return out, gone


def known_ids(path: Path) -> set[str]:
    return set(_parse(read_text(path), path).ids)


@dataclass(slots=True)
class _Parsed:
    """A cold file's text and its parse (preamble, entries, every id they hold). The text of an
    append's result is joined when first read: a batch of appends to one file writes it once."""

    built: str | None  # the text, when known
    pre: str
    entries: list[Entry]
    ids: set[str]
    # Each entry's share of the file's bytes (:func:`_part_bytes`), when known: a file is measured
    # per append, and encoding all of it (non-ASCII, so transcoded) was most of a small append's cost.
    sizes: list[int] | None = None

    @property
    def text(self) -> str:
        if self.built is None:
            self.built = join_entries(self.pre, self.entries)
        return self.built

    def part_sizes(self) -> list[int]:
        if self.sizes is None:
            self.sizes = [_part_bytes(e.text) for e in self.entries]
        return self.sizes


def _part_bytes(text: str) -> int:
    """An entry's share of its file: ``len((text.rstrip("\n") + "\n\n").encode())``, whatever
    newlines it ends with (so :func:`_ended` keeps it)."""
    return len(text.rstrip("\n").encode()) + 2


def _file_bytes(pre: str, entries: list[Entry], sizes: list[int]) -> int:
    """``len(join_entries(pre, entries).encode())`` from the entries' shares ``sizes``."""
    if entries and sizes[-1] == 2:  # noqa: PLR2004 (a blank last entry: join it)
        return len(join_entries(pre, entries).encode())
    total = len((pre.rstrip("\n") + "\n\n").encode()) if pre.strip() else 0
    total += sum(sizes)
    return total - 1 if total else 0  # the file ends with one newline, not two


# The last parse of each cold file, keyed by path and checked against the text just read: a run
# appends hundreds of entries to the same few files, and parsing a full file per append (twice, with
# the hot seed's look-up) was most of a small session's cost and grew with the file.
_parsed: dict[Path, _Parsed] = {}
_parsed_lock = threading.Lock()
_PARSED_MAX = 256


def _entry_ids(entries: list[Entry]) -> set[str]:
    out: set[str] = set()
    for e in entries:
        out |= e.ids
    return out


def _parse(text: str, path: Path) -> _Parsed:
    """``split_entries(text)``, reused when ``path`` was last seen holding exactly ``text``."""
    with _parsed_lock:
        hit = _parsed.get(path)
    if hit is not None and hit.text == text:
        return hit
    pre, entries = split_entries(text)
    got = _Parsed(text, pre, entries, _entry_ids(entries))
    _remember(path, got)
    return got


def _remember(path: Path, got: _Parsed) -> None:
    with _parsed_lock:
        if len(_parsed) >= _PARSED_MAX and path not in _parsed:
            _parsed.clear()
        _parsed[path] = got


def parsed(path: Path) -> tuple[str, list[Entry]]:
    """A cold file's preamble and entries as :func:`split_entries` gives them (a fresh list); inside
    :func:`batched_appends`, as the batch will write it."""
    pending = _held()
    held = pending.get(path) if pending is not None else None
    got = held.state if held is not None else _parse(read_text(path), path)
    return got.pre, list(got.entries)


def _balanced(text: str) -> bool:
    """No code fence is left open at the end of ``text``."""
    if not has_fence(text):
        return True
    fence = ""
    for line in text.splitlines():
        fence = fence_step(line.rstrip("\r\n"), fence)
    return not fence


def _ended(e: Entry, end: str) -> Entry:
    """``e`` with its text ending ``end`` after its last non-newline (itself when it does)."""
    t = e.text
    if t.endswith(end) and not t.endswith("\n" + end):
        return e
    return Entry(e.heading, e.date, e.title, t.rstrip("\n") + end)


def _as_written(
    pre: str, entries: list[Entry], text: str | None, fresh: list[Entry], ids: set[str] | None
) -> _Parsed | None:
    """The parse of ``text = join_entries(pre, entries)`` (None: not joined yet) without parsing it,
    or None when it could differ from :func:`split_entries` (a preamble or a new entry leaves a
    fence open, or a new entry is not one entry on its own). Entries parsed from a file are closed
    by the heading after them; ``fresh`` (new entries and digests) and the last entry are checked
    here. ``ids``: every id the entries hold, when the caller knows it."""
    if entries and not _balanced(entries[-1].text):
        return None
    if pre.strip() and not _balanced(pre):
        return None
    for e in fresh:
        one_pre, alone = split_entries(e.text)
        if one_pre or len(alone) != 1 or not _balanced(e.text):
            return None
    out = [_ended(e, "\n\n") for e in entries]
    if out:
        out[-1] = _ended(out[-1], "\n")
    new_pre = pre.rstrip("\n") + "\n\n" if pre.strip() else ""
    return _Parsed(text, new_pre, out, _entry_ids(out) if ids is None else ids)


@dataclass(slots=True)
class _Pending:
    """A cold file's appends held for the end of a batch: the text it was read with, the entries
    added, and the file as it will be written."""

    layout: Layout
    agent: str
    base: str
    appends: list[tuple[str, str, int, datetime]]  # entry text, id, max_bytes, now
    state: _Parsed


_batch = threading.local()


@contextlib.contextmanager
def batched_appends(checkpoint: Callable[[], None] | None = None) -> Iterator[None]:
    """Inside, in this thread, :func:`append` changes each cold file in memory (later appends and
    :func:`parsed` see it) and leaving writes each changed file once: one rewrite and fsync per agent
    per batch, not per session. The caller syncs the folder and commits the ledger rows of the
    batch after this, as for a single append; a crash before leaves the old file and no rows, and a
    rerun writes the entries again. On an error (an interrupt) the held appends are written too, as
    unbatched ones would have been; their rows roll back and a rerun finds them. Nested: the outer
    one writes.

    A fold inside the batch first writes every held file and calls ``checkpoint`` (the caller syncs
    the folders and commits the batch's ledger rows so far): a fold drops entry ids from the cold
    file (a digest lists at most a few dozen), so an entry folded away before its row committed
    would be compacted again after a crash."""
    if getattr(_batch, "pending", None) is not None:
        yield
        return
    _batch.pending = pending = dict[Path, _Pending]()
    _batch.checkpoint = checkpoint
    try:
        yield
    except BaseException:
        _batch.pending = _batch.checkpoint = None
        with contextlib.suppress(Exception):  # the error in flight is the one to report
            for path, p in pending.items():
                _flush(path, p)
        raise
    _batch.pending = _batch.checkpoint = None
    for path, p in pending.items():
        _flush(path, p)


def _before_fold(pending: dict[Path, _Pending]) -> None:
    """Write every held file and let the batch's owner commit what they hold (see :func:`batched_appends`)."""
    held = list(pending.items())
    pending.clear()
    for path, p in held:
        _flush(path, p)
    checkpoint: Callable[[], None] | None = getattr(_batch, "checkpoint", None)
    if checkpoint is not None:
        checkpoint()


def _flush(path: Path, p: _Pending) -> None:
    """Write a batch's appends to one file: at once when the file still holds what they were made
    on, else (an agent or another tool wrote it meanwhile) one by one on what it holds now."""
    with _write_lock:
        if read_text(path) == p.base:
            atomic_write(path, p.state.text, base=p.layout.memory)
            _remember(path, p.state)
            return
    for text, entry_id, max_bytes, now in p.appends:
        _append_now(p.layout, p.agent, text, entry_id, max_bytes=max_bytes, now=now)


def _held() -> dict[Path, _Pending] | None:
    pending: dict[Path, _Pending] | None = getattr(_batch, "pending", None)
    return pending


def _insert(
    got: _Parsed, agent: str, entry_text: str, *, max_bytes: int, archive_dir: Path | None, now: datetime
) -> tuple[_Parsed, int] | None:
    """``got`` with the entry added in date order and folded to fit; the result's text is the file.
    None when it would need a fold and ``archive_dir`` is None (no fold allowed)."""
    pre, entries, sizes = got.pre, list(got.entries), list(got.part_sizes())
    if not pre.strip() and not entries:
        pre = preamble(agent)
    _, new = split_entries(entry_text)
    if not new:
        raise ValueError("entry text has no dated heading")
    entry = new[0]
    when = entry.when
    pos = len(entries)
    while pos > 0 and when is not None and (entries[pos - 1].when or when) > when:
        pos -= 1
    entries.insert(pos, entry)
    sizes.insert(pos, _part_bytes(entry.text))
    kept = {id(e) for e in got.entries}
    text = None
    folded = 0
    if _file_bytes(pre, entries, sizes) > max_bytes and len(entries) >= _FOLD_MIN_ENTRIES:
        if archive_dir is None:
            return None
        entries, folded = fold(agent, pre, entries, max_bytes, archive_dir=archive_dir, now=now)
        text = join_entries(pre, entries)
    after = None
    if not got.entries or _balanced(got.entries[-1].text):  # else the old last entry leaves a fence open
        ids = None if folded else got.ids | entry.ids
        after = _as_written(pre, entries, text, [e for e in entries if id(e) not in kept], ids)
        if after is not None and not folded:
            after.sizes = sizes  # _as_written changes only the newlines entries end with
    if after is None:
        text = join_entries(pre, entries) if text is None else text
        pre, entries = split_entries(text)
        after = _Parsed(text, pre, entries, _entry_ids(entries))
    return after, folded


def _append_now(
    layout: Layout, agent: str, entry_text: str, entry_id: str, *, max_bytes: int, now: datetime
) -> tuple[bool, int]:
    """:func:`append` outside a batch: read, add, fold, write."""
    path = layout.cold_file(agent)
    with _write_lock:
        got = _parse(read_text(path), path)
        if entry_id in got.ids:
            return False, 0
        done = _insert(got, agent, entry_text, max_bytes=max_bytes, archive_dir=layout.archive, now=now)
        assert done is not None  # a fold is allowed here
        after, folded = done
        atomic_write(path, after.text, base=layout.memory)
        _remember(path, after)
        return True, folded


def append(
    layout: Layout, agent: str, entry_text: str, entry_id: str, *, max_bytes: int, now: datetime
) -> tuple[bool, int]:
    """Add an entry to ``cold/{agent}.md`` in date order; fold if over budget (inside
    :func:`batched_appends`, the file is written when the batch ends, or before a fold: a fold
    archives entries, and a crash must not leave one archived that the file never held).

    Returns (written, folded). ``written`` is False when the entry was already there (a rerun
    after a crash between the cold write and the ledger update).
    """
    path = layout.cold_file(agent)
    pending = _held()
    if pending is None:
        return _append_now(layout, agent, entry_text, entry_id, max_bytes=max_bytes, now=now)
    with _write_lock:
        held = pending.get(path)
        got = held.state if held is not None else _parse(read_text(path), path)
        if entry_id in got.ids:
            return False, 0
        done = _insert(got, agent, entry_text, max_bytes=max_bytes, archive_dir=None, now=now)
        if done is not None:
            if held is None:
                held = pending[path] = _Pending(layout, agent, got.text, [], done[0])
            held.appends.append((entry_text, entry_id, max_bytes, now))
            held.state = done[0]
            return True, 0
    _before_fold(pending)
    return _append_now(layout, agent, entry_text, entry_id, max_bytes=max_bytes, now=now)

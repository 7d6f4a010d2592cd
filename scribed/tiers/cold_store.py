"""The cold tier as git shares it: one file per entry under ``cold/{agent}/``, keyed by entry id.

Why not the one ``cold/{agent}.md`` file: git merges text line by line, and two clones that each
appended an entry to the same file conflict on every pull; with ``merge=union`` git keeps both
sides but lines the two entries share (``#### Goal``, a blank line, a common command) are matched
and kept once, so the entries come out interleaved (300 random pairs of appended entries,
``git merge-file --union``: 31 came out mixed). A file per entry never meets another entry in a
merge: two clones add different files, an entry both compacted is the same file with the same
text, and a removal is a file deleted. ``cold/{agent}.md`` stays, as the machine's own view of
those files (git-ignored, rewritten from them under the lock: see :mod:`scribed.core.cold_sync`).

Entries that leave cold (folded into a digest, promoted, expired, removed by hand with ``scribed
cold-remove``, a session told twice: :mod:`scribed.tiers.cold_overlap`) are listed in ``cold/{agent}/retired.txt``, one line each, so a teammate's clone
tells an entry that left on purpose from one a merge lost; line files merge cleanly with git's
``union`` driver.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from scribed.compress.entry import Entry, fence_step, join_entries, parse_date, split_entries
from scribed.tiers.layout import store_newer as store_newer  # re-exported: the store's own rule
from scribed.tiers.text_merge import Merged, Part, conflicted, decide, marked, merge_text, plain, union

RETIRED = "retired.txt"
# An entry file's name: its date (colons dropped, so every file system takes it) and its key.
_NAME = re.compile(r"^(?P<date>[0-9T:.Z -]*?)-?(?P<key>[a-z]-[0-9a-f]{6,40})\.md$")
# A conflict marker: 7 or more of one character (longer when a side holds a line of 7), a label.
_MARKER = re.compile(r"^(?P<run>(?P<c>[<=>|])(?P=c){6,})(?: .*)?$")
_NEXT = {("ours", "|"): "base", ("ours", "="): "theirs", ("base", "="): "theirs", ("theirs", ">"): ""}
_SAFE_DATE = re.compile(r"[^0-9TZ-]")


def key(e: Entry) -> str:
    """An entry's identity in the store: its id, or (an entry written by hand with none) a hash
    of its text as the store holds it (:func:`canonical`: wherever it sits in a view), so the
    same text is one entry on every clone."""
    return e.entry_id or "x-" + hashlib.sha256(_stored_text(e).encode()).hexdigest()[:16]


def entry_ref(entry: Entry) -> str:
    """The entry's id; hand-written entries without one get a stable id from their text as the
    store holds it (the promotion archive's and the wiki provenance's name for it: promotion reads
    the view, the sync the store)."""
    return entry.entry_id or "h-" + hashlib.sha256(_stored_text(entry).encode()).hexdigest()[:12]


def _stored_text(e: Entry) -> str:
    return e.text.rstrip("\n") + "\n"


def promoted_archive_name(agent: str, entry: Entry) -> str:
    """Where promotion archives an entry, under the state folder's ``archive/``: the evidence that
    an entry left cold on purpose."""
    return f"promoted/{agent}/{entry.date[:10]}-{entry_ref(entry)}.md.gz"


def file_name(e: Entry) -> str:
    return f"{_SAFE_DATE.sub('', e.date)}-{key(e)}.md"


def key_of_name(name: str) -> str | None:
    m = _NAME.match(name)
    return m.group("key") if m else None


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def sides(text: str) -> tuple[str, str] | None:
    """The two versions a file with git's conflict markers holds (ours, theirs; a ``diff3`` base
    section is dropped), or None when it has none. Markers inside code fences are text, and so is
    a line of ``=======`` (a Markdown heading) outside a conflict or inside one whose markers are
    longer."""
    got = sides3(text)
    return None if got is None else (got[1], got[2])


def sides3(text: str) -> tuple[str | None, str, str] | None:
    """:func:`sides` with the base version too when the markers carry one (``diff3`` style, what
    the merge driver writes), so a repair merges three ways; None for the base without one."""
    got = versions(text)
    return None if got is None else ((got[0] if got[3] else None), got[1], got[2])


def versions(text: str) -> tuple[str, str, str, bool] | None:
    """The base, ours and theirs a file with conflict markers holds, and whether the markers
    carried the base (None: no markers). Without a base section (git's default conflict style, a
    clone without the merge driver) the base given is a stand-in: the lines both sides share, each
    conflict's base empty. Merged three ways against it, a conflict is two insertions at one place:
    both versions are kept, one after the other, by the same code as the driver's own conflicts
    (:func:`scribed.tiers.text_merge.union`), and never the longer side alone."""
    if "<<<<<<<" not in text:
        return None
    ours: list[str] = []
    theirs: list[str] = []
    base: list[str] = []
    where = ""  # "", "ours", "base", "theirs"
    size = 0  # the length of the open conflict's markers: a shorter or longer run is text
    fence = ""
    found = has_base = False
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        m = None if fence else _MARKER.match(bare)
        if m is not None and not where and m["c"] == "<":
            found, where, size = True, "ours", len(m["run"])
            continue
        if m is not None and len(m["run"]) == size and (where, m["c"]) in _NEXT:
            where = _NEXT[where, m["c"]]
            has_base = has_base or where == "base"
            continue
        if where in ("", "ours"):
            ours.append(line)
        if where in ("", "theirs"):
            theirs.append(line)
        if where in ("", "base"):
            base.append(line)
        if where != "base":
            fence = fence_step(bare, fence)
    if not found:
        return None
    return "".join(base), "".join(ours), "".join(theirs), has_base


@dataclass(slots=True)
class StoredFile:
    """One file of ``cold/{agent}/`` as read: the entries it holds and whether it needs rewriting
    (conflict markers, two versions of an entry, a second entry, a name that is not its own)."""

    path: Path
    entries: list[Entry]
    damaged: bool
    unbased: bool = False  # repaired from markers without a base: both versions of each conflict kept
    conflicts: tuple[str, ...] = ()  # the entries with lines both sides changed ("entry e-…")
    broken: str = ""  # why it holds no entry of its own (:func:`broken`): then it holds none at all


def canonical(e: Entry) -> Entry:
    """``e`` as its store file holds it: its text ending in one newline. In the view an entry ends
    in a blank line unless it is the last, so the text read back depends on where it sat; taken
    as it was, a run that only moved an entry rewrote committed files (a blank line added or
    taken off), and a promotion on one clone then met that change in a merge (modify/delete)."""
    text = _stored_text(e)
    return e if text == e.text else Entry(e.heading, e.date, e.title, text)


def lf(text: str) -> str:
    """``text`` with CRLF line endings read as LF: what a store file holds whatever the checkout
    (``core.autocrlf``, a Windows editor). Read as written, a CRLF checkout was another text (a
    hand-written entry another key: renamed back and forth between clones by every run)."""
    return text.replace("\r\n", "\n") if "\r" in text else text


def read_file(path: Path, text: str) -> StoredFile:
    """A store file; one a merge left with conflict markers is read as its versions merged three
    ways: against the base when the markers carry it (the driver's do), else against the lines both
    sides share (:func:`versions`: both versions of each conflict kept). Read as LF (:func:`lf`)."""
    text = lf(text)
    got = versions(text)
    merged = None
    if got is not None:
        base, ours, theirs, has_base = got
        merged = merge_entries(ours, theirs, base, stand_in=not has_base)
        text = merged.text
    entries = [canonical(e) for e in split_entries(text)[1]]
    why = broken(path.name, entries, text)
    if why:
        return StoredFile(path, [], damaged=True, broken=why)
    name_ok = len(entries) == 1 and file_name(entries[0]) == path.name
    return StoredFile(
        path,
        entries,
        damaged=got is not None or not name_ok,
        unbased=got is not None and not got[3],
        conflicts=() if merged is None else merged.conflicts,
    )


EMPTY = "empty"
NO_ID = "holds no entry id (cut short?)"


def broken(name: str, entries: list[Entry], text: str) -> str:
    """Why a store file named for an entry holds none: :data:`EMPTY` (nothing, or blank lines), or
    :data:`NO_ID` (a file named for a compacted entry, ``e-``/``d-``, whose text has no entry
    carrying an id: a heading and no provenance line, a file cut short). Neither is git's way of
    removing an entry (git deletes the file): the entry is written back (:mod:`scribed.core.cold_sync`),
    and a fragment is never read as an entry of its own. "" for any other file (a hand-written
    entry's, ``x-``, is keyed by its text: an edit renames it)."""
    k = key_of_name(name)
    if k is None:
        return ""
    if not entries:
        return EMPTY if not text.strip() else NO_ID
    if not k.startswith("x-") and all(e.entry_id is None for e in entries):
        return NO_ID
    return ""


def pick(versions: list[Entry]) -> Entry:
    """Of two versions of one entry that share no base (each clone compacted the same session, with
    other settings: no person edited either), the one every clone picks: the longer text, then the
    greater, so a repair is the same file everywhere. Two edits of one entry are merged three ways
    instead (:func:`scribed.tiers.git_merge.merge_entries`)."""
    return max(versions, key=lambda e: (len(e.text), e.text))


def merge_entries(ours: str, theirs: str, base: str | None = None, *, stand_in: bool = False) -> Merged:
    """Two versions of a store file (its entries) merged, three ways given ``base`` (see
    :mod:`scribed.tiers.git_merge`); without it, each entry of both once, :func:`pick` of two.
    ``stand_in``: ``base`` is :func:`versions`' stand-in (markers without a base), so an entry
    both sides hold and the stand-in lacks (its heading or id line in a conflict) is no pair of
    compactions to pick from: its two versions are merged line by line, both kept."""
    pre, mine = split_entries(ours)
    pre2, other = split_entries(theirs)
    head = pre if pre.strip() else pre2
    if base is None:
        by_key: dict[str, list[Entry]] = {}
        for e in map(canonical, [*mine, *other]):
            by_key.setdefault(key(e), []).append(e)
        return plain(join_entries(head, order([pick(v) for v in by_key.values()])))
    o, t, b = _keyed_entries(mine), _keyed_entries(other), _keyed_entries(split_entries(base)[1])
    reps: list[Entry] = []
    parts: dict[str, list[Part]] = {}
    both = _entry_lines if stand_in else _entry_both
    for k in o.keys() | t.keys() | b.keys():
        got = decide(_text(b.get(k)), _text(o.get(k)), _text(t.get(k)), both=both)
        if got is not None:
            reps.append(o.get(k) or t.get(k) or b[k])
            parts[k] = got
    keys = [key(e) for e in order(reps)]
    names = tuple(f"entry {k}" for k in keys if conflicted(parts[k]))
    text = join_entries(head, [_as_entry(union(parts[k])) for k in keys])
    if not names:
        return plain(text)
    return Merged(text, join_entries(head, [_as_entry(marked(parts[k])) for k in keys]), names)


def _keyed_entries(entries: list[Entry]) -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for e in map(canonical, entries):
        k = key(e)
        out[k] = pick([out[k], e]) if k in out else e
    return out


def _text(e: Entry | None) -> str | None:
    return None if e is None else e.text


def _entry_both(b: str | None, o: str, t: str) -> list[Part]:
    if b is None:  # added on both sides: two compactions of one session, no person's edit
        return [max(o, t, key=lambda x: (len(x), x))]
    return merge_text(b, o, t)


def _entry_lines(b: str | None, o: str, t: str) -> list[Part]:
    if b is None:
        o, t = _one_provenance(o, t)
    return merge_text(b or "", o, t)


_PROVENANCE_LINE = re.compile(r"^- provenance: .*$", re.M)


def _one_provenance(o: str, t: str) -> tuple[str, str]:
    """Two versions of one entry (one id) the stand-in lacks, each with its own provenance line:
    two clones' compactions of one session, each naming its own transcript path. Both given the
    same line, :func:`pick`'s (the longer, then the greater), so the line merge keeps one: an
    entry has one provenance line (F5: both were kept), and every clone keeps the same."""
    po, pt = _PROVENANCE_LINE.search(o), _PROVENANCE_LINE.search(t)
    if po is None or pt is None or po[0] == pt[0]:
        return o, t
    line = max(po[0], pt[0], key=lambda x: (len(x), x))
    return o[: po.start()] + line + o[po.end() :], t[: pt.start()] + line + t[pt.end() :]


def _as_entry(text: str) -> Entry:
    """Merged text as :func:`join_entries` takes it (only its text is read)."""
    return Entry("", "", "", text)


def order(entries: list[Entry]) -> list[Entry]:
    """Entries as every clone's view lists them: by date, then key (a digest before the entries
    of its second)."""

    def when(e: Entry) -> tuple[str, str]:
        dt = e.when or parse_date(e.date)
        return (dt.isoformat() if dt else e.date, key(e))

    return sorted(entries, key=when)


def read_retired(text: str) -> dict[str, str]:
    """``retired.txt``: key → the rest of its line (first line kept for a key listed twice)."""
    out: dict[str, str] = {}
    both = sides(text)
    for line in (both[0] + both[1] if both else text).splitlines():
        k, _, rest = line.strip().partition(" ")
        if re.fullmatch(r"[a-z]-[0-9a-f]{6,40}", k) and k not in out:
            out[k] = rest.strip()
    return out


RETIRED_DAYS = 400  # a retirement line is kept this long: a clone away longer may write the entry back
_DATED = re.compile(r"^(\d{4}-\d{2}-\d{2}) ")
BY_HAND = "removed by hand"  # the reason ``scribed cold-remove`` writes
_BY_HAND = re.compile(r"^(?:\d{4}-\d{2}-\d{2} )?" + BY_HAND + r"\b")


def by_hand(reason: str) -> bool:
    """Whether a ``retired.txt`` line's reason (the rest of its line) is a removal by hand: such
    an entry is kept out of every view and store, whatever a side holds, and its line never goes
    (a rebuilt ledger reads it, so the entry's session is not compacted again)."""
    return _BY_HAND.match(reason) is not None


def prune_retired(rows: dict[str, str], today: str, *, kept: Iterable[str] = ()) -> dict[str, str]:
    """``retired.txt`` bounded: lines dated more than :data:`RETIRED_DAYS` before ``today`` go (every
    clone has long synced past them), and so does a line for an entry the store holds again. Lines
    written before retirements were dated stay, and so do removals by hand (:func:`by_hand`)."""
    from datetime import date, timedelta

    try:
        horizon = (date.fromisoformat(today) - timedelta(days=RETIRED_DAYS)).isoformat()
    except ValueError:
        return rows
    back = set(kept)
    out = {}
    for k, v in rows.items():
        m = _DATED.match(v)
        if not by_hand(v) and (k in back or (m is not None and m.group(1) < horizon)):
            continue
        out[k] = v
    return out


def render_retired(rows: dict[str, str]) -> str:
    """One sorted line a key: a union merge of two versions is read as the set it holds."""
    return "".join(f"{k} {v}".rstrip() + "\n" for k, v in sorted(rows.items()))

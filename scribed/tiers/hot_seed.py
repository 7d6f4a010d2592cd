"""Seeded hot files: what the next spawn loads once a session has ended.

The design has the Scribe write Hot at session start. Between sessions a blank hot file would give
``scribed context AGENT`` (the default spawn) nothing, so when a session's cold entry is written the
agent's hot file is re-seeded from that entry, in the Squad spawn-block fields:

* ``Current task:`` none running, followed by the last session's open items (a session that
  asked nothing and left nothing: the newest earlier entry's, said to be that session's);
* ``Active decisions:`` the entry's decisions (final forms); none: the last deciding session's, dated;
* ``Last actions:`` the last session's date and goal, its outcome, and a pointer to its cold entry
  (cold file relative to the root, entry id);
* ``Blockers:`` its errors that no fix resolved;
* ``Talking to:`` (none).

It is ≤ 4096 bytes and redacted, and carries live.py's front matter (``scribed-live: seed:<kind>:<id>``,
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
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scribed.compress.content import content_free
from scribed.compress.entry import Entry, iso, one_line, parse_date
from scribed.compress.entry_fit import fewer_sentences
from scribed.dates import believed, utcnow
from scribed.names import normalize_name
from scribed.session.door import Redacted, redacted
from scribed.tiers import cold, live
from scribed.tiers.cold import Layout

if TYPE_CHECKING:
    from scribed.log import Logger

# What one item or the outcome may take of the 4 KB; they are kept whole below these (an entry's
# item is at most 1,200 characters) and shortened by whole sentences above them.
ITEM_CHARS = 1200
OUTCOME_CHARS = 1200
SWAP_ATTEMPTS = 5
_UNRESOLVED = ("unresolved", "(unresolved", "not fixed", "not resolved", "open", "still failing")


@dataclass(slots=True)
class LastSession:
    """What a seed says about the session that ended (all redacted, one line per item)."""

    entry_id: str
    when: str
    cold: str
    goal: str
    outcome: str
    decisions: list[str] = field(default_factory=list)
    open_items: list[str] = field(default_factory=list)
    blockers: list[str] = field(default_factory=list)
    carried: str = ""  # when the items are an earlier session's (the last one asked nothing): its date


def _provenance(e: Entry) -> str:
    for line in e.text.splitlines()[1:6]:
        if line.startswith("- provenance:"):
            return line + " · "
    return ""


def find_entry(layout: Layout, agent: str, session_id: Redacted) -> Entry | None:
    """The newest cold entry of ``session_id`` in the agent's cold file (None when there is none)."""
    want = f" · session={one_line(session_id, 200)} · "
    _, entries = cold.parsed(layout.cold_file(agent))
    near = want[:-3]  # _provenance adds " · ": an entry holding want has at least this
    found = [(i, e) for i, e in enumerate(entries) if near in e.text and want in _provenance(e)]
    if not found:
        return None
    return max(found, key=lambda ie: (ie[1].date, ie[0]))[1]


def newest_entry(
    layout: Layout,
    agent: str,
    skip: frozenset[str] = frozenset(),
    prefer: str = "",
    now: datetime | None = None,
) -> Entry | None:
    """The agent's newest cold entry, leaving out the entries whose id is in ``skip``; of entries of
    one date, the one whose id is ``prefer``, else the last written. An entry dated past ``now``
    (a wrong clock's: :mod:`scribed.dates`) is newest only when every other one is too."""
    _, entries = cold.parsed(layout.cold_file(agent))
    kept = [(i, e) for i, e in enumerate(entries) if not skip or e.entry_id not in skip]
    now = now or utcnow()

    def order(ie: tuple[int, Entry]) -> tuple[bool, str, bool, int]:
        e = ie[1]
        return (e.when is None or believed(e.when, now) is not None, e.date, e.entry_id == prefer, ie[0])

    return max(kept, key=order)[1] if kept else None


def _still_open(fix: str) -> bool:
    """Whether an error's ``→`` part leaves it open: unresolved, unless it went away when the
    command that showed it ran again (``unresolved (gone when `make` ran again)``)."""
    low = fix.strip().lower()
    return low.startswith(_UNRESOLVED) and "(gone when" not in low


def unresolved(errors: list[str], key_facts: list[str]) -> list[str]:
    """Errors of an entry that nothing fixed: ``err → unresolved``, a bare ``err``, or an ``error:``
    key fact, unless a resolved line of the same entry names it."""
    resolved: list[str] = []
    open_: list[str] = []
    facts = [fact.split(":", 1)[1].strip() for fact in key_facts if fact.lower().startswith("error:")]
    for item in [*errors, *facts]:  # a fixed error restored under Key facts is a "fixed:" fact
        err, arrow, fix = item.partition(" → ")
        if arrow and not _still_open(fix):
            resolved.append(item)
        else:
            open_.append(err.strip())
    out: list[str] = []
    for err in open_:
        bare = err.strip("` ")
        if bare and not any(bare in r for r in resolved) and err not in out:
            out.append(err)
    return out


def last_session(layout: Layout, agent: str, e: Entry) -> LastSession:
    """The seed's content, read back from the cold entry as written (a file anyone may edit: each
    field passes the door). A session that asked nothing ("ok", "thanks": its goal names nothing)
    and left no decision, open item or blocker does not wipe the work before it: the newest
    earlier entry that left some gives them, said to be that session's. A session that decided
    nothing shows the decisions of the last one that did (:func:`_last_decided`)."""
    s = _session(layout, agent, e)
    if s.decisions:
        return s  # the earlier entries are read only for what it lacks: its cold file is not parsed
    _, entries = cold.parsed(layout.cold_file(agent))
    before = sorted((x for x in entries if x.date < e.date), key=lambda x: x.date, reverse=True)
    if not (s.decisions or s.open_items or s.blockers or not content_free(s.goal)):
        for earlier in before[:CARRY_BACK]:
            p = _session(layout, agent, earlier)
            if p.decisions or p.open_items or p.blockers:
                s.decisions, s.open_items, s.blockers, s.carried = (
                    p.decisions,
                    p.open_items,
                    p.blockers,
                    p.when,
                )
                break
            if not content_free(p.goal):
                break  # a session that did work and left nothing open: what came before it is closed
    if not s.decisions and not s.carried:
        s.decisions = _last_decided(before[:CARRY_BACK])
    return s


CARRY_BACK = 5  # earlier entries looked at for the work a session of chatter left as it was


def _last_decided(before: list[Entry]) -> list[str]:
    """The decisions of the newest of the entries ``before`` the seed's that made some, each with
    its day: a session that decided nothing did not undo them (the hot file held only the last
    session's, so "use the stdlib csv module, not pandas" left the next spawn's hot file when a
    session about the deploy followed). Only that session's: an older decision it may have
    reversed in other words is never shown beside it as current (a review's: a shared-term test
    let "use Postgres for the job queue" stand beside "move background jobs onto SQS")."""
    for earlier in before:
        decisions = cold.sections(earlier.text).get("decisions", [])
        if decisions:
            day = earlier.date[:10]
            return [f"{live.whole_line(redacted(d), ITEM_CHARS)} ({day})" for d in decisions]
    return []


def _session(layout: Layout, agent: str, e: Entry) -> LastSession:
    """:func:`last_session` of entry ``e`` alone."""
    sec = cold.sections(e.text)

    def items(key: str) -> list[str]:
        return [live.whole_line(redacted(v), ITEM_CHARS) for v in sec.get(key, []) if v.strip()]

    goal = " ".join(sec.get("goal", [])) or e.title.strip()  # the title is clipped shorter
    return LastSession(
        entry_id=e.entry_id or "",
        when=iso(e.when) if e.when else e.date,
        cold=str(layout.cold_file(agent).relative_to(layout.root)),
        goal=live.whole_line(redacted(goal), ITEM_CHARS),
        outcome=live.whole_line(redacted(" ".join(sec.get("outcome", []))), OUTCOME_CHARS),
        decisions=items("decisions"),
        open_items=items("open_items"),
        blockers=[
            live.whole_line(redacted(b), ITEM_CHARS)
            for b in unresolved(sec.get("errors", []), sec.get("key_facts", []))
        ],
    )


def _body(agent: str, s: LastSession, outcome: str, *, marked: bool) -> str:
    """The spawn-block fields. Unmarked (an agent's text follows it), it states no current task, so
    the agent's own ``Current task:`` is the one read, and the open items go under Last actions."""

    def block(label: str, items: list[str]) -> str:
        return f"{label}\n" + "".join(f"- {i}\n" for i in items) if items else f"{label} (none)\n"

    origin = f"the session of {s.carried} (the last one asked nothing)" if s.carried else "the last session"
    if s.open_items:
        task = f"Current task: (no session running) open items from {origin}:\n"
        task += "".join(f"- {i}\n" for i in s.open_items)
    else:
        task = "Current task: (no session running; the last session left no open items)\n"
    actions = [f"{s.when} session ended: {s.goal or '(no goal recorded)'}"]
    if outcome:
        actions.append(f"outcome: {outcome}")
    if not marked:
        actions += [f"open: {i}" for i in s.open_items]
    actions.append(f"cold entry: {s.cold} (id {s.entry_id})" if s.entry_id else f"cold entry: {s.cold}")
    if s.carried:
        actions.append(f"decisions, open items and blockers: from {origin}")
    notice = f"{live.SEED_NOTICE}\n\n" if marked else ""
    return (
        f"# Hot memory: {agent}\n\n{notice}"
        + (task if marked else "")
        + block("Active decisions:", s.decisions)
        + block("Last actions:", actions)
        + block("Blockers:", s.blockers)
        + "Talking to: (none)\n"
    )


def render(agent: str, marker: str, s: LastSession, *, marked: bool = True) -> str:
    """The seeded hot file, ≤ 4096 bytes. Every item and the outcome are whole; only when the
    budget is reached do whole items go (decisions and blockers before open items), then the
    outcome's sentences that name the least (see ``entry_fit.fewer_sentences``)."""
    s = replace(s, decisions=list(s.decisions), open_items=list(s.open_items), blockers=list(s.blockers))
    head = f"---\n{live.MARKER}: {marker}\ncold: {s.cold}\nentry: {s.entry_id}\nupdated: {s.when}\n---\n"
    outcome = s.outcome
    budget = live.HOT_BUDGET - live.DIGEST_LINE

    def size() -> int:
        return len((head + _body(agent, s, outcome, marked=marked)).encode())

    rounds = [(s.decisions, 3), (s.blockers, 3), (s.open_items, 5), (s.decisions, 1), (s.blockers, 1)]
    rounds += [(s.open_items, 1), (s.decisions, 0), (s.blockers, 0)]
    for items, keep in rounds:
        while size() > budget and len(items) > keep:
            items.pop()
    while size() > budget and fewer_sentences(outcome):
        outcome = fewer_sentences(outcome)  # whole sentences, those naming least first
    while size() > budget and len(outcome) > 1:  # one sentence over 4 KB: only then cut
        outcome = live.whole_line(outcome, max(1, len(outcome) * 3 // 4))
    body = _body(agent, s, outcome, marked=marked)
    return live.sign(head + body) if marked else body


def marker(kind: str, session_id: Redacted) -> str:
    return live.SEED_PREFIX + live.marker_value(kind, session_id)


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

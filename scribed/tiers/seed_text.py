"""What a seeded hot file says, read back from a cold entry. Kept apart from
:mod:`scribed.tiers.hot_seed` (whether a seed may replace the hot file, and its compare-and-swap
write) because the words have rules of their own: every field passes the door again (a cold file
anyone may edit), a session of chatter does not wipe the work before it, and all of it fits 4 KB.

Between sessions a blank hot file would give ``scribed context AGENT`` (the default spawn)
nothing, so a seed restates the agent's last session in the Squad spawn-block fields:

* ``Current task:`` none running, followed by the last session's open items (a session that
  asked nothing and left nothing: the newest earlier entry's, said to be that session's);
* ``Active decisions:`` the entry's decisions (final forms); none: the last deciding session's, dated;
* ``Last actions:`` the last session's date and goal, its outcome, and a pointer to its cold entry
  (cold file relative to the root, entry id);
* ``Blockers:`` its errors that no fix resolved;
* ``Talking to:`` (none).

It is ≤ 4096 bytes (:func:`render`: whole items go before any item is cut) and redacted.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from scribed.compress.content import content_free
from scribed.compress.entry import Entry, dated_by_file, iso, one_line
from scribed.compress.entry_fit import fewer_sentences
from scribed.compress.outcome import open_line
from scribed.dates import believed, utcnow
from scribed.session.door import Redacted, redacted
from scribed.tiers import cold, live
from scribed.tiers.cold import Layout

# What one item or the outcome may take of the 4 KB; they are kept whole below these (an entry's
# item is at most 1,200 characters) and shortened by whole sentences above them.
ITEM_CHARS = 1200
OUTCOME_CHARS = 1200
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
    (a wrong clock's: :mod:`scribed.dates`), or only by its file (an imported "Project Context":
    :func:`dated_by_file`, on a clone that did not import it too), is newest only when every other
    one is too."""
    _, entries = cold.parsed(layout.cold_file(agent))
    kept = [(i, e) for i, e in enumerate(entries) if not skip or e.entry_id not in skip]
    now = now or utcnow()

    def order(ie: tuple[int, Entry]) -> tuple[bool, bool, str, bool, int]:
        e = ie[1]
        believable = e.when is None or believed(e.when, now) is not None
        return (believable, not dated_by_file(e.text), e.date, e.entry_id == prefer, ie[0])

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
    outcome = live.whole_line(redacted(" ".join(sec.get("outcome", []))), OUTCOME_CHARS)
    open_items = items("open_items")
    if open_line(outcome):  # an entry written when "Open: …" could be the outcome: it is an open item
        open_items += [] if outcome in open_items else [outcome]
        outcome = ""
    return LastSession(
        entry_id=e.entry_id or "",
        when=iso(e.when) if e.when else e.date,
        cold=str(layout.cold_file(agent).relative_to(layout.root)),
        goal=live.whole_line(redacted(goal), ITEM_CHARS),
        outcome=outcome,
        decisions=items("decisions"),
        open_items=open_items,
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

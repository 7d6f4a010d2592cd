"""Live hot files: ``hot/{agent}.md`` kept current while a transcript session is still running.

Squad agents load their hot file at every spawn, but a session that lives only in a Copilot,
Claude Code or Codex transcript never writes one. While such a session is not finished, the
pipeline calls :func:`refresh` on each change of its file; the hot file then says what the
agent is doing right now (task, decisions, last actions, blockers, who it talks to) in ≤ 4 KB.

Rules that keep this safe next to agents that write their own hot files:

* The file starts with front matter ``scribed-live: <kind>:<session id>``. The hot adapter skips
  such files, so a live view is never compacted as a session of its own.
* A hot file without that marker belongs to the agent: it is never overwritten (one warning),
  except the blank template (nothing in it to lose). So does a marked file whose body no longer
  matches the ``digest:`` scribed recorded (the agent edited it). A symlinked hot file is never
  written. Writes are compare-and-swap (:func:`swap`): re-read right before the rename.
* It is rewritten only when its content changes (the debounce for run-once and the daemon):
  nothing in it depends on the clock, only on the transcript.
* ``Current task`` is the session's substantive request, never a go-ahead or an FYI (:func:`_current_task`),
  followed by the agent's own plan when it keeps one (``Plan: 2 of 5 done`` and its open steps, what
  is in progress first; see :mod:`scribed.compress.plan`).
* When the session finishes and is compacted, the pipeline re-seeds the file from its cold entry
  (:mod:`scribed.tiers.hot_seed`); :func:`clear` (reset to the blank template while the file still
  carries that session's marker) is the fallback when there is no entry to seed from.
* Blockers are the errors seen in the session's latest turns that no later turn fixed: a tool
  result that itself shows no error and says passed/succeeded, or an assistant message saying
  what fixed them, that the check is clean now or that they are resolved (not "the fix did not
  work", "I'll check it passes", "should be fixed by …": :func:`scribed.compress.fix_report.reports_fix`)
  clears every error before it, except one the user put off ("I'll ask Piotr for the grant, leave
  the deploy for now": :func:`scribed.compress.error_fixes.deferred`), which only its own fix ends.
* Everything is redacted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scribed import dates, sources
from scribed.compress import anchors, error_fixes, fix_report, tool_call
from scribed.compress import plan as plan_mod
from scribed.compress.content import content_free
from scribed.compress.entry import iso, parse_date
from scribed.compress.errors import errors_in_turn
from scribed.compress.request import request
from scribed.fsutil import NotReplaced, atomic_write, check_inside, sync_deferred
from scribed.models import Session, Turn
from scribed.names import normalize_name
from scribed.session.door import Redacted, RedactedSession, unwrap
from scribed.sources.markdown import front_matter, split_lines
from scribed.tiers.cold import Layout

if TYPE_CHECKING:
    from scribed.log import Logger

MARKER = "scribed-live"
HOT_BUDGET = 4096
MAX_ACTIONS = 5
MIN_ACTIONS = 3
ITEM_CHARS = 300
TASK_CHARS = 800
PATH_CHARS = 240
SCAN_TURNS = 500  # actions and blockers look at the latest turns only: bounded work per change
NOTICE = "<!-- Written by scribed from a running session; replaced on each change, cleared when it ends. -->"
SEED_NOTICE = (
    "<!-- Seeded by scribed from the last session's cold entry; replaced when a new session starts. -->"
)
SEED_PREFIX = "seed:"  # marker value prefix of a seeded hot file: ``seed:<kind>:<session id>``
DIGEST = "digest"  # front-matter key: sha256 (12 hex) of the body scribed wrote
DIGEST_LINE = len(f"{DIGEST}: {'0' * 12}\n")
TEMPLATE = (
    "# Hot memory: {agent}\n\nCurrent task:\nActive decisions:\nLast actions:\nBlockers:\nTalking to:\n"
)

_FIX = re.compile(
    r"\b(?:fix(?:ed|es)?|resolved|solved|pass(?:es|ed|ing)?|works now|working now|succeeded|green)\b",
    re.IGNORECASE,
)
# Tool-call argument keys that name the sub-agent a task is handed to (Claude Task, Copilot task).
_AGENT_KEYS = ("subagent_type", "agent_type", "agentName", "agent_name", "agent")
_DELEGATE_TOOLS = {"task", "agent", "subagent", "delegate", "spawn_agent", "run_subagent"}

_warned: set[tuple[str, str]] = set()
_warn_lock = threading.Lock()


def _warn_once(log: Logger, event: str, path: Path, **kw: Any) -> None:
    """Warn about a hot file once per process, not on every change of its transcript."""
    key = (event, str(path))
    with _warn_lock:
        if key in _warned:
            return
        _warned.add(key)
    log.warning(event, file=str(path), **kw)


def redacted_line(text: str, limit: int) -> str:
    """Collapse and clip text that came through the door (redacted before the clip: a clip must
    never cut a secret in half). Plain ``str`` is accepted for the texts of a RedactedSession."""
    s = re.sub(r"\s+", " ", text).strip()
    if len(s) > limit:
        s = s[: limit - 1].rstrip() + "…"
    return s


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")


def whole_line(text: str, limit: int) -> str:
    """Redacted text on one line within ``limit`` characters, by whole sentences: the sentences
    that fit; only a first sentence longer than ``limit`` is cut (between words, marked "…")."""
    s = re.sub(r"\s+", " ", text).strip()
    if len(s) <= limit:
        return s
    out = ""
    for sent in _SENTENCE_END.split(s):
        if len(out) + len(sent) + 1 > limit:
            break
        out = f"{out} {sent}".strip()
    if out:
        return out
    head = s[: limit - 1]
    return (head.rsplit(" ", 1)[0] if " " in head else head).rstrip() + "…"


def marker_value(kind: str, session_id: Redacted) -> str:
    return f"{kind}:{session_id}"


def _last_ts(session: Session, now: datetime) -> datetime:
    """When the session last did something, as the door dates it (a stamp past ``now`` is a wrong
    clock's: see :mod:`scribed.dates`)."""
    stamps = (t.ts for t in session.turns)
    mtime = lambda: dates.file_mtime(session.source)  # noqa: E731  (asked only when needed)
    return dates.session_dates(stamps, session.start, session.end, now=now, mtime=mtime).end


def _current_task(session: Session) -> str:
    """The session's substantive request: what the latest user message that adds something asks.

    Acknowledgements and go-aheads, however phrased, greetings, slash commands, harness text, an
    offer or FYI that asks nothing ("here's the deploy hook if you need it: …") and what the user
    will do himself ("I'll push it after standup") never qualify
    (:func:`scribed.compress.request.request` judges what a message adds and asks), so a
    go-ahead never hides what the session is about; a message that acknowledges and asks ("yes, and
    then rename the flag") gives its request; a later request (a pivot) replaces the earlier one.
    """
    for t in reversed(session.turns):
        asked = request(t.text) if t.role == "user" and t.kind == "message" else ""
        if asked:
            return redacted_line(asked, TASK_CHARS)
    for t in reversed(session.turns):
        if t.kind == "summary" and t.text.strip():
            return redacted_line(t.text.strip().splitlines()[0], TASK_CHARS)
    return "(not stated yet)"


def _stamp(t: Turn) -> str:
    return t.ts.astimezone(UTC).strftime("%H:%M ") if t.ts else ""


def _actions(session: Session) -> list[str]:
    """The latest distinct tool calls and assistant messages, most recent first: an action done
    or said again is listed once (at its latest time), and a message that names nothing ("That
    looks fine.", :func:`content_free`) is no action. A call reads as what it did
    (:func:`tool_call.describe`: ``Edit docs/cli.md``, not its JSON), a shell call with its
    run's result (``ran pytest -q → 312 passed in 4.66s``)."""
    out: list[str] = []
    seen: set[str] = set()
    turns = session.turns[-SCAN_TURNS:]
    for k in range(len(turns) - 1, -1, -1):
        if len(out) >= MAX_ACTIONS:
            break
        t = turns[k]
        if t.kind != "tool_call" and not (t.role == "assistant" and t.kind == "message"):
            continue
        first = t.text.strip().split("\n", 1)[0]  # the door redacted the whole text: a secret may span lines
        if not first:
            continue
        if t.kind == "tool_call":
            did = tool_call.describe(t.text, t.tool_name)
            if did.startswith("ran "):
                got = _outcome(turns, k)
                did = f"{did} → {got}" if got else did
            what = redacted_line(did, ITEM_CHARS)
        elif content_free(first):
            continue
        else:
            what = f"said: {redacted_line(first, ITEM_CHARS)}"
        if what not in seen:
            seen.add(what)
            out.append(f"{_stamp(t)}{what}")
    return out


OUTCOME_CHARS = 120  # a run's result shown after its command
OUTCOME_AHEAD = 4  # turns after a call where its result is looked for (parallel calls come first)
_TALLY = re.compile(r"\b\d+\s+(?:passed|failed|errors?|tests?|warnings?|skipped|ok)\b", re.I)


def _outcome(turns: list[Turn], k: int) -> str:
    """The result of the call at ``k``, when its output says one: its first error, else its last
    line when that is a tally (``312 passed in 4.66s``)."""
    for t in turns[k + 1 : k + 1 + OUTCOME_AHEAD]:
        if t.kind != "tool_result" or (t.tool_name and t.tool_name != turns[k].tool_name):
            continue
        errs = errors_in_turn(t)
        if errs:
            return error_fixes.one_line(errs[0], OUTCOME_CHARS)
        last = next((ln.strip(" =-") for ln in reversed(t.text.splitlines()) if ln.strip(" =-")), "")
        return last if len(last) <= OUTCOME_CHARS and _TALLY.search(last) else ""
    return ""


def _blockers(session: Session) -> list[str]:
    """Errors no later turn fixed, most recent first (rule in the module docstring)."""
    open_: dict[str, None] = {}
    for t in session.turns[-SCAN_TURNS:]:
        if t.kind not in ("message", "summary", "tool_result"):
            continue
        errors = [a.text for a in anchors.extract(session, [t]) if a.type == "error"]
        if errors:
            for e in errors:
                open_.pop(e, None)
                open_[e] = None
        elif _resolves(t):
            open_.clear()
    for e in error_fixes.deferred(session.turns[-SCAN_TURNS:]):  # put off by the user: a report
        if not any(e in x or x in e for x in open_):  # of other work clean does not end it
            open_[e] = None
    return [redacted_line(e, ITEM_CHARS) for e in reversed(open_)]


def _resolves(t: Turn) -> bool:
    """Whether turn ``t`` (with no error of its own) ends the blockers before it: a clean tool
    result ("12 passed"), or a message saying what fixed them or that the check is clean now
    (:func:`scribed.compress.fix_report.reports_fix`: not "the fix did not work", nor "I'll check
    that it passes")."""
    if t.role == "tool" or t.kind == "tool_result":
        return _FIX.search(t.text) is not None
    return t.role in ("assistant", "summary") and fix_report.reports_fix(t.text)


def _delegates(session: Session) -> list[str]:
    """Sub-agents this session handed work to through a task/agent tool call."""
    out: list[str] = []
    for t in session.turns:
        if t.kind != "tool_call" or (t.tool_name or "").lower() not in _DELEGATE_TOOLS:
            continue
        _, _, rest = t.text.partition(" ")
        try:
            args = json.loads(rest)
        except ValueError:
            continue
        if isinstance(args, dict):
            for key in _AGENT_KEYS:
                v = args.get(key)
                if isinstance(v, str) and v.strip():
                    out.append(redacted_line(v, 60))
                    break
    return out


def _talking_to(session: Session, extra: Iterable[str]) -> list[str]:
    names: list[str] = []
    if any(t.role == "user" and t.kind == "message" for t in session.turns):
        names.append("user")
    if "/" in session.session_id:
        names.append("coordinator (parent session)")
    names += [redacted_line(n, 60) for n in extra]
    names += _delegates(session)
    out: list[str] = []
    for n in names:
        if n and n != session.agent and n not in out:
            out.append(n)
    return out


def _plan(session: Session) -> tuple[str, list[str]]:
    """The agent's current plan: a ``Plan:`` line (how much is done) and its open steps, what is in
    progress first, then what comes next; ("", []) when the session keeps no plan."""
    plan = plan_mod.final(session.turns)
    if plan is None:
        return "", []
    live_items = [i for i in plan.items if i.status != plan_mod.CANCELLED]
    done = sum(i.status == plan_mod.DONE for i in live_items)
    label = {plan_mod.IN_PROGRESS: "in progress", plan_mod.BLOCKED: "blocked"}
    steps = [
        f"{label.get(i.status, 'next')}: {redacted_line(i.text, ITEM_CHARS * 2)}"
        for s in (plan_mod.IN_PROGRESS, plan_mod.PENDING, plan_mod.PLANNED, plan_mod.BLOCKED)
        for i in live_items
        if i.status == s
    ]
    return f"Plan: {done} of {len(live_items)} done\n", steps


def _render(
    head: str,
    agent: str,
    task: str,
    *,
    plan: tuple[str, list[str]] = ("", []),
    decisions: list[str],
    actions: list[str],
    blockers: list[str],
    talking: list[str],
) -> str:
    def block(label: str, items: list[str]) -> str:
        if not items:
            return f"{label} (none)\n"
        return f"{label}\n" + "".join(f"- {i}\n" for i in items)

    return (
        f"{head}"
        f"# Hot memory: {agent}\n\n"
        f"{NOTICE}\n\n"
        f"Current task: {task}\n"
        + plan[0]
        + "".join(f"- {i}\n" for i in plan[1])
        + block("Active decisions:", decisions)
        + block("Last actions:", actions)
        + block("Blockers:", blockers)
        + f"Talking to: {', '.join(talking) if talking else '(none)'}\n"
    )


def render_live(
    red: RedactedSession, kind: str, *, talking_to: Iterable[Redacted] = (), now: datetime | None = None
) -> str:
    """The live hot file of a running session, ≤ 4096 bytes, oldest items trimmed first (``now``:
    the run's clock, which dates ``updated:``, see :func:`_last_ts`)."""
    session = unwrap(red)
    src = redacted_line(red.source, PATH_CHARS)
    last = _last_ts(session, now or dates.utcnow())
    head = f"---\n{MARKER}: {marker_value(kind, red.session_id)}\nsource: {src}\n"
    head += f"updated: {iso(last)}\n---\n"
    task = _current_task(session)
    decisions = [
        redacted_line(a.text, ITEM_CHARS) for a in reversed(anchors.extract(session)) if a.type == "decision"
    ]
    actions = _actions(session)
    blockers = _blockers(session)
    talking = _talking_to(session, talking_to)
    plan_head, steps = _plan(session)

    budget = HOT_BUDGET - DIGEST_LINE

    def render() -> str:  # the lists are trimmed in place below, the task cut: each call sees both
        return _render(
            head,
            session.agent,
            task,
            plan=(plan_head, steps),
            decisions=decisions,
            actions=actions,
            blockers=blockers,
            talking=talking,
        )

    def size() -> int:
        return len(render().encode())

    # Lists are newest first, so trimming pops from the end; keep a few of each as long as possible.
    rounds = [
        (actions, MIN_ACTIONS),
        (steps, 4),  # what is in progress and the next steps stay longest
        (decisions, 3),
        (blockers, 3),
        (actions, 1),
        (steps, 1),
        (decisions, 1),
        (blockers, 1),
        (talking, 1),
        (actions, 0),
        (decisions, 0),
        (blockers, 0),
        (talking, 0),
        (steps, 0),
    ]
    for items, keep in rounds:
        while size() > budget and len(items) > keep:
            items.pop()
    while size() > budget and len(task) > 1:
        task = task[: max(1, len(task) * 3 // 4)].rstrip() + "…"
    text = render()
    data = text.encode()
    if len(data) > budget:  # only a pathological source path gets here
        text = data[:budget].decode("utf-8", "ignore").rsplit("\n", 1)[0] + "\n"
    return sign(text)


def body_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:12]


def _split_front(data: bytes) -> tuple[dict[str, str], int, int]:
    """(front-matter fields, byte offset where its closing line starts, byte offset of the body)."""
    lines = split_lines(data)
    fields, skip = front_matter(lines)
    if not skip:
        return fields, 0, 0
    return fields, lines[skip - 2].end, lines[skip - 1].end


def sign(text: str) -> str:
    """Add ``digest:`` (of the body) to scribed's front matter, so a later hand edit is recognised."""
    data = text.encode()
    fields, close, body = _split_front(data)
    if not body or DIGEST in fields:
        return text
    line = f"{DIGEST}: {body_digest(data[body:])}\n".encode()
    return (data[:close] + line + data[close:]).decode("utf-8", "replace")


def owned(data: bytes) -> bool:
    """Whether these hot-file bytes are scribed's own to replace: its marker is in the front matter
    and, when it recorded a body digest, the body is still exactly what it wrote (an agent that
    edited a live or seeded file keeps its words)."""
    fields, _, body = _split_front(data)
    if MARKER not in fields:
        return False
    want = fields.get(DIGEST)
    return not want or body_digest(data[body:]) == want


def current_bytes(path: Path) -> bytes | None:
    """The file's bytes (None: absent); inside :func:`batched_writes`, as the batch will write it."""
    held = _held_files()
    h = held.get(path) if held is not None else None
    return h.data if h is not None else _disk_bytes(path)


def _disk_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


@dataclass(slots=True)
class _Held:
    """A hot file's write held for the end of a batch: the bytes on disk it replaces, the new ones."""

    base: Path
    disk: bytes | None
    data: bytes


_hold = threading.local()


def _held_files() -> dict[Path, _Held] | None:
    files: dict[Path, _Held] | None = getattr(_hold, "files", None)
    return files


@contextlib.contextmanager
def batched_writes(log: Logger) -> Iterator[None]:
    """Inside, in this thread, :func:`swap` keeps each hot file's new bytes in memory (later reads
    and swaps see them) and leaving writes each changed file once: one fsync per agent per batch,
    not one per session re-seeded. Its folders are synced first (:func:`scribed.fsutil.sync_deferred`),
    so a seed on disk points only at cold entries already durable (the cold files are written
    before this ends). A file an agent changed meanwhile is left as it is (warned). On an error (the
    cold files may not be written; the batch rolls back) nothing is written: the redo re-seeds.
    Never raises for file problems: a hot file is a convenience. Nested: the outer one writes."""
    if _held_files() is not None:
        yield
        return
    _hold.files = files = dict[Path, _Held]()
    try:
        yield
    except BaseException:
        _hold.files = None
        raise
    else:
        _hold.files = None
        if any(h.data != h.disk for h in files.values()):
            with contextlib.suppress(OSError):
                sync_deferred()
        for path, h in files.items():
            _write_held(path, h, log)


def _write_held(path: Path, h: _Held, log: Logger) -> None:
    if h.data == h.disk:
        return
    try:
        if _swap_now(path, h.disk, h.data, base=h.base):
            return
        log.warning("hot_changed_during_batch", file=str(path), reason="left in place")
    except OSError as exc:
        log.warning("hot_write_failed", file=str(path), reason=str(exc.strerror or exc))


def _write_now(path: Path) -> None:
    """Write a held file at once (before reading it from disk) and stop holding it."""
    held = _held_files()
    h = held.pop(path, None) if held is not None else None
    if h is not None and h.data != h.disk and not _swap_now(path, h.disk, h.data, base=h.base):
        raise OSError(f"hot file changed during the batch: {path}")


def _still(path: Path, expected: bytes | None) -> bool:
    """The compare of compare-and-swap: the file still holds ``expected`` (None: absent)."""
    return _disk_bytes(path) == expected


def swap(path: Path, expected: bytes | None, data: bytes, *, base: Path) -> bool:
    """Replace ``path`` with ``data`` only if it still holds ``expected`` (None: it is absent).

    The new bytes are written and synced to a temp file first and the target is read again right
    before the rename, so an agent's write can only be lost inside the rename itself. Private mode,
    no symlinks, nothing outside ``base``. Returns False (and leaves the file alone) if it changed.
    Inside :func:`batched_writes` the compare is against the held bytes and the write is held.
    """
    held = _held_files()
    if held is None:
        return _swap_now(path, expected, data, base=base)
    check_inside(path, base)
    h = held.get(path)
    if (h.data if h is not None else _disk_bytes(path)) != expected:
        return False
    if h is None:
        held[path] = _Held(base, expected, data)
    else:
        h.data = data
    return True


def _swap_now(path: Path, expected: bytes | None, data: bytes, *, base: Path) -> bool:
    """:func:`swap` on disk: the compare is the write's last step before its rename."""
    try:
        atomic_write(path, data, base=base, only_if=lambda: _still(path, expected))
    except NotReplaced:
        return False
    return True


def live_fields(data: bytes) -> dict[str, str]:
    """The front matter of a hot file's bytes (empty when it has none)."""
    fields, _ = front_matter(split_lines(data))
    return fields


def is_blank(path: Path, agent: str) -> bool:
    """Whether the hot adapter sees nothing in the file (empty or only the template's labels)."""
    _write_now(path)  # the adapter reads the file: a held write goes first
    parsed = sources.parse_file("hot", path, agent)
    return not parsed.sessions and not parsed.warnings


def edited(fields: dict[str, str]) -> str:
    """How a hot file that is not scribed's as written came to be, in neutral words: a person or an
    agent may have edited it, and the file does not say which."""
    if MARKER not in fields:
        return "not written by scribed"
    if fields[MARKER].startswith(SEED_PREFIX):
        return "edited since scribed seeded it"
    return "edited since scribed wrote it"


def refresh(
    layout: Layout,
    red: RedactedSession,
    kind: str,
    log: Logger,
    *,
    talking_to: Iterable[Redacted] = (),
    now: datetime | None = None,
) -> bool:
    """Write the session's live hot file if its content changed. Returns whether it was written.
    Another session's view or seed dated past ``now`` (the run's clock) holds it back no more.

    Never raises for file problems: a live view is a convenience, the compaction must go on.
    """
    session = unwrap(red)
    now = now or dates.utcnow()
    agent = normalize_name(session.agent)
    if agent is None:
        return False
    path = layout.hot_file(agent)
    try:
        if path.is_symlink():
            _warn_once(
                log, "hot_symlink_not_written", path, reason="hot files that are symlinks are never written"
            )
            return False
        before = current_bytes(path)
        if before is not None:
            fields = live_fields(before)
            if MARKER not in fields or not owned(before):
                if MARKER in fields or not is_blank(path, agent):
                    _warn_once(
                        log,
                        "hot_agent_written",
                        path,
                        agent=agent,
                        reason=f"{edited(fields)}; no live hot file written",
                    )
                    return False
            elif fields[MARKER] != marker_value(kind, red.session_id):
                theirs = dates.believed(parse_date(fields.get("updated", "")), now)
                if theirs is not None and theirs > _last_ts(session, now):
                    return False  # another running session of this agent is more recent
        text = render_live(red, kind, talking_to=talking_to, now=now)
        if before == text.encode():
            return False
        if not swap(path, before, text.encode(), base=layout.memory):
            return False  # changed under us (an agent writing): look again on the next change
    except OSError as exc:
        log.warning("live_hot_failed", file=str(path), agent=agent, reason=str(exc.strerror or exc))
        return False
    log.info("live_hot_written", agent=agent, session=red.session_id, file=str(path))
    return True


def clear(layout: Layout, agent: str, kind: str, session_id: Redacted) -> bool:
    """Reset the agent's hot file to the blank template if it is still this session's live view
    (the pipeline re-seeds instead, see :mod:`scribed.tiers.hot_seed`; this is the fallback)."""
    name = normalize_name(agent)
    if name is None:
        return False
    path = layout.hot_file(name)
    try:
        data = None if path.is_symlink() else current_bytes(path)
        if data is None:
            return False
        if live_fields(data).get(MARKER) != marker_value(kind, session_id) or not owned(data):
            return False
        return swap(path, data, TEMPLATE.format(agent=name).encode(), base=layout.memory)
    except OSError:
        return False

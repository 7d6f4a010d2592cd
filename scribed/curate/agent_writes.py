"""What agents write to the wiki (``scribed wiki-write``, the inbox drop folder, deprecation) and
where facts go: the wiki of a root (with its audit log), or review proposals in review mode."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from scribed.compress.entry import one_line
from scribed.compress.terms import strip_supersedes
from scribed.config import Config
from scribed.curate import review
from scribed.dates import Clock, utcnow
from scribed.fsutil import atomic_write, ensure_dir
from scribed.log import get as get_logger
from scribed.names import normalize_name
from scribed.session.door import NOTHING, Redacted, redacted
from scribed.tiers import audit
from scribed.tiers.cold import Layout
from scribed.tiers.records import (
    DeprecateResult,
    FactReport,
    FactResult,
    InboxApplied,
    InboxQuarantined,
    InboxResult,
)
from scribed.tiers.wiki import (
    TOPIC_KIND,
    Fact,
    MergeResult,
    Source,
    Wiki,
    WikiError,
    conflict_refusal,
    mark_refusal,
    safe_body,
    valid_topic,
)

# One limit for every way an agent writes a fact (`wiki-write`, MCP's `wiki_write`, an inbox file):
# a fact is a few lines; a build log pasted whole would be read by every search and context after.
MAX_FACT_BYTES = 1_000_000
_SUPERSEDES_LINE = re.compile(r"^\s*(?:[-*]\s+)?supersedes:\s*(?P<s>.+?)\s*$", re.I | re.M)


class FactTooLargeError(WikiError):
    """A fact over :data:`MAX_FACT_BYTES`; the message names where it came from."""


def too_large(size: int | None) -> str:
    """Why a fact of ``size`` bytes (None: more than the limit, a stream's length unknown) is refused."""
    got = f"{size:,} bytes" if size is not None else f"more than {MAX_FACT_BYTES:,} bytes"
    return (
        f"{got}, over the {MAX_FACT_BYTES:,}-byte limit of a wiki fact; a fact is a few lines: "
        "write what holds and name the file the rest is in"
    )


def check_fact_size(text: str, what: str = "text") -> None:
    """Refuse a fact's text over the limit (counted in UTF-8 bytes, as a file of it would be)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_FACT_BYTES:
        raise FactTooLargeError(f"{what}: {too_large(size)}")


def read_fact(src: BinaryIO, what: str) -> bytes:
    """All of ``src`` if it holds at most the limit; never reads more than one byte past it, so a
    20 MB log, an endless pipe or ``/dev/urandom`` is refused without being held."""
    limit = MAX_FACT_BYTES
    buf = bytearray()
    while len(buf) <= limit:
        chunk = src.read(limit + 1 - len(buf))
        if not chunk:
            return bytes(buf)
        buf += chunk
    size = None
    with contextlib.suppress(OSError, ValueError, AttributeError):  # a pipe, a stream with no file
        st = os.fstat(src.fileno())
        size = st.st_size if stat.S_ISREG(st.st_mode) else None
    raise FactTooLargeError(f"{what}: {too_large(size)}")


def inbox_dir(layout: Layout) -> Path:
    return layout.memory / "inbox" / "wiki"


def wiki_of(layout: Layout, action: str = "promote", clock: Clock = utcnow) -> Wiki:
    """The wiki of a root; its changes go to the audit log as ``action``."""
    return Wiki(layout.wiki, layout.memory, audit=audit.AuditLog(layout, action, clock))


FactSink = Wiki | review.ReviewSink  # where facts go; both add, doc and flush alike


def fact_sink(layout: Layout, cfg: Config | None, wiki: Wiki, action: str, clock: Clock) -> FactSink:
    """Where facts go: the wiki, or proposals when ``[promote] mode = "review"``."""
    if cfg is None or cfg.promote.mode != "review":
        return wiki
    return review.ReviewSink(wiki, review.Proposals(layout), action, clock)


def fact_report(f: Fact, r: MergeResult) -> FactReport:
    """What adding ``f`` did, as the write's result reports it."""
    return FactReport(
        topic=f.topic,
        kind=f.kind,
        title=f.title,
        action=r.action,
        block=r.block,
        supersedes=f.supersedes,
        superseded=tuple(r.superseded),
        superseded_by=r.superseded_by,
    )


# --- agent-written facts -------------------------------------------------------------------------
def agent_fact(
    topic: str, agent: str, text: Redacted, *, title: Redacted = NOTHING, date: str, via: str
) -> Fact:
    """A fact an agent wrote (redacted at the door), dated, with the author as its source.

    The id hashes topic, author, title and text (not the date), so writing the same fact again
    (or re-applying an inbox file after a crash) merges nothing twice.
    """
    refused = conflict_refusal(text)
    if refused:
        raise WikiError(refused)
    body = safe_body(text.strip("\n"))
    supersedes = ""
    m = _SUPERSEDES_LINE.search(body)
    if m:
        supersedes = m.group("s").strip()
        body = (body[: m.start()] + body[m.end() :]).strip("\n")
    else:
        first, old = strip_supersedes(body)
        if old and "\n" not in body:
            body, supersedes = first, old
    if not body.strip():
        raise WikiError("empty text: nothing to write")
    first_line = next((ln for ln in body.splitlines() if ln.strip()), "")
    label = one_line(title or first_line.lstrip("#-*> ").strip(), 100)
    refused = mark_refusal(label, body.strip())
    if refused:
        raise WikiError(refused)
    ref = "w-" + hashlib.sha256(f"{topic}\0{agent}\0{label}\0{body}".encode()).hexdigest()[:12]
    return Fact(
        topic=topic,
        kind=TOPIC_KIND.get(topic, "note"),
        text=body.strip(),
        date=date,
        source=Source(date=date, ref=ref, agent=agent, via=via),
        title=label,
        supersedes=supersedes,
    )


def _check_names(topic: str, agent: str) -> tuple[str, str]:
    t = valid_topic(topic)
    if t is None:
        raise WikiError(f"bad topic name {topic!r} (lowercase letters, digits, '-' and '_'; not 'index')")
    a = normalize_name(agent)
    if a is None:
        raise WikiError(f"bad agent name {agent!r} (lowercase letters, digits, '-' and '_')")
    return t, a


def write_agent_fact(
    layout: Layout,
    topic: str,
    agent: str,
    text: Redacted,
    *,
    title: Redacted = NOTHING,
    clock: Clock = utcnow,
    via: str = "wiki-write",
) -> FactResult:
    """Append (or merge) an agent's fact into ``wiki/{topic}.md``. The caller holds the root lock."""
    topic, agent = _check_names(topic, agent)
    fact = agent_fact(topic, agent, text, title=title, date=clock().date().isoformat(), via=via)
    wiki = wiki_of(layout, via, clock)
    r = wiki.add(fact)
    wiki.flush()
    return FactResult(agent=agent, date=fact.date, entry=fact.source.ref, fact=fact_report(fact, r))


def deprecate(
    layout: Layout,
    topic: str,
    title: str,
    agent: str,
    *,
    reason: Redacted = NOTHING,
    clock: Clock = utcnow,
) -> DeprecateResult:
    """Mark a wiki block deprecated by ``agent`` (kept, never deleted). The caller holds the root lock.
    A block deprecated already is left as it is: nothing is written (not even the index)."""
    topic, agent = _check_names(topic, agent)
    if not (layout.wiki / f"{topic}.md").is_file():
        raise WikiError(f"no wiki topic {topic!r} (wiki/{topic}.md does not exist)")
    wiki = wiki_of(layout, "deprecate", clock)
    block, changed = wiki.deprecate(topic, title, agent, clock().date().isoformat(), reason)
    if changed:
        wiki.flush()
    return DeprecateResult(topic=topic, block=block.label, status=block.status, changed=changed)


# --- the inbox ---------------------------------------------------------------------------------
def _front_matter(text: str) -> tuple[dict[str, str], str] | None:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    for i in range(1, min(len(lines), 50)):
        if lines[i].strip() in ("---", "..."):
            fields: dict[str, str] = {}
            for ln in lines[1:i]:
                k, sep, v = ln.partition(":")
                if sep and k.strip():
                    fields.setdefault(k.strip().lower(), v.strip().strip("\"'"))
            return fields, "\n".join(lines[i + 1 :])
    return None


def _inbox_files(folder: Path) -> Iterator[Path]:
    if not folder.is_dir():
        return
    for p in sorted(folder.iterdir()):
        if p.name.endswith(".md") and not p.name.startswith("."):
            yield p


def _quarantine(layout: Layout, path: Path, data: bytes, reason: Redacted) -> Path:
    """Move a bad inbox file to ``{state}/quarantine/`` with a ``.reason`` file next to it."""
    ensure_dir(layout.quarantine)
    dest = layout.quarantine / f"wiki-inbox-{path.name}"
    n = 0
    while dest.exists() or dest.is_symlink():
        n += 1
        dest = layout.quarantine / f"wiki-inbox-{path.stem}-{hashlib.sha256(data).hexdigest()[:8]}-{n}.md"
    os.replace(path, dest)
    atomic_write(dest.with_name(dest.name + ".reason"), reason + "\n", base=layout.memory)
    return dest


def _inbox_bytes(path: Path) -> tuple[bytes, Redacted]:
    """An inbox file's bytes (at most the fact limit, read bounded), or why it is not read. Opened
    without following a link or waiting on a FIFO, checked on the open file."""
    not_regular = Redacted("not a regular file (symlinks are never followed)")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        return b"", not_regular if path.is_symlink() else Redacted(f"unreadable ({exc.strerror or exc})")
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return b"", not_regular
        if st.st_size > MAX_FACT_BYTES:
            return b"", Redacted(too_large(st.st_size))
        try:
            return read_fact(f, path.name), Redacted("")
        except FactTooLargeError:  # it grew since the fstat
            return b"", Redacted(too_large(None))
        except OSError as exc:
            return b"", Redacted(f"unreadable ({exc.strerror or exc})")


def _read_inbox_file(path: Path, date: str) -> tuple[Fact | None, bytes, Redacted]:
    """One inbox file → its fact, or None and why not. Its text passes the door as it is read, so
    every field (and a reason quoting one) is redacted."""
    data, refused = _inbox_bytes(path)
    if refused:
        return None, data, refused
    try:
        text = redacted(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None, data, Redacted("not UTF-8 text")
    parsed = _front_matter(text)
    if parsed is None:
        return None, data, Redacted("no front matter (--- topic: NAME / agent: NAME ---)")
    fields, body = parsed
    try:
        topic, agent = _check_names(fields.get("topic", ""), fields.get("agent", ""))
        title = Redacted(fields.get("title", ""))
        return (
            agent_fact(topic, agent, Redacted(body), title=title, date=date, via="inbox"),
            data,
            Redacted(""),
        )
    except WikiError as exc:
        return None, data, Redacted(str(exc))


def apply_inbox(
    layout: Layout,
    cfg: Config | None = None,
    clock: Clock = utcnow,
    *,
    dry_run: bool = False,
    wiki: Wiki | None = None,
) -> InboxResult:
    """Apply the drop folder ``.squad/memory/inbox/wiki/*.md`` to the wiki, then remove the files.

    Each file has front matter ``topic:``, ``agent:`` and optionally ``title:``. A malformed one
    goes to quarantine with its reason. The caller holds the root lock (``run-once`` and the
    daemon do).
    """
    log = get_logger()
    wk = wiki or wiki_of(layout, "inbox", clock)
    sink = fact_sink(layout, cfg, wk, "inbox", clock)
    applied: list[InboxApplied] = []
    quarantined: list[InboxQuarantined] = []
    warnings: list[str] = []
    done: list[Path] = []
    date = clock().date().isoformat()
    for path in _inbox_files(inbox_dir(layout)):
        fact, data, reason = _read_inbox_file(path, date)
        if fact is None:
            reason = reason or Redacted("unreadable")
            warnings.append(f"inbox/wiki/{path.name}: {reason}; quarantined")
            moved_to = ""
            if not dry_run:
                moved_to = str(_quarantine(layout, path, data, reason).relative_to(layout.memory))
                log.warning("inbox_quarantined", file=path.name, reason=reason, moved_to=moved_to)
            quarantined.append(InboxQuarantined(path.name, reason, moved_to))
            continue
        r = sink.add(fact, note={"action": "inbox"})
        applied.append(InboxApplied(path.name, fact.source.agent, fact_report(fact, r)))
        done.append(path)
    if not dry_run and done:
        sink.flush()  # the inbox's facts (or proposals) are durable before their files go
        for p in done:
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
        log.info("inbox_applied", files=len(done))
    return InboxResult(tuple(applied), tuple(quarantined), tuple(warnings))

"""Full-text search over the memory: cold entries, wiki facts (superseded ones marked), archived
originals and the transcript archive.

The index is an SQLite FTS5 table in scribed's state folder (``search.sqlite``), ranked by bm25.
It is derived data: every query first refreshes the files whose size or mtime changed since they
were indexed (a stat per file, so it stays current with every write the core makes, whoever made
it, a transcript archived by run-once included), and ``rebuild`` recreates it from the files alone.
Each hit carries its provenance: tier, file, entry heading, agent, session id, date and line; a
transcript hit also names the transcript it was copied from (``source``). A wiki fact's or a
transcript's agent may be several names, space-separated: every agent its sources name (the fact's
authors included), every agent whose sessions it holds; ``agent=`` filters match any of them.

An archived transcript (:mod:`scribed.tiers.transcripts`, already redacted) is indexed in chunks of
about :data:`CHUNK_CHARS` characters, each with its first line; a JSON line contributes its string
values (ids, timestamps and signatures left out), so a hit's snippet reads as the conversation.
"""

from __future__ import annotations

import gzip
import io
import json
import logging
import re
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scribed.compress.entry import split_entries
from scribed.log import utf8_named
from scribed.session.door import redacted, redacted_path
from scribed.tiers import wiki_mark
from scribed.tiers.cold import Layout
from scribed.tiers.records import Json

if TYPE_CHECKING:
    from scribed.tiers.transcripts import Archived

TIERS = ("cold", "wiki", "archive", "transcript")
INDEX_NAME = "search.sqlite"
# An index of another version is dropped and rebuilt (it is derived data): 3, words stemmed; 4, a
# wiki fact's agents are every agent its provenance names, ``author=`` (an agent's own write) too.
SCHEMA_VERSION = 4
CHUNK_CHARS = 4000  # a transcript is indexed in chunks of about this much text
_CHUNK_LINES = 200
_JSON_DEPTH = 12
# JSON keys whose values are identifiers or opaque data, not words anyone searches for
_NOISE_KEYS = frozenset({
    "id", "uuid", "parentUuid", "parentId", "sessionId", "requestId", "messageId", "toolCallId",
    "tool_use_id", "call_id", "interactionId", "turnId", "agentId", "timestamp", "signature",
    "encrypted_content", "type", "role", "model", "version", "userType", "cwd", "gitBranch",
})  # fmt: skip
log = logging.getLogger(__name__)
MARK_OPEN, MARK_CLOSE = "«", "»"
_SESSION = re.compile(r"\bsession=(?P<s>[^\s·]+)")
_AGENT = re.compile(r"\bagent=(?P<a>[a-z0-9][a-z0-9_-]*)")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# A wiki fact's sources: promoted from cold they say ``agent=``, written by an agent (wiki-write,
# the inbox) ``author=`` (:class:`scribed.tiers.wiki_block.Source`); the older format's too.
_PROVENANCE = ("*Source:* ", "- source:")
_WHO = re.compile(r"(?:^|[\s·;])(?:agent|author)=(?P<a>[A-Za-z0-9][A-Za-z0-9_-]*)")
_WORD = re.compile(r"[\w.#/-]+", re.UNICODE)
# A markdown transcript's heading or speaker line stamped with a date and time ("# aider chat
# started at 2026-11-22 15:40:12", "_**User (2026-11-25 13:02Z)**_"), not a date said in a message
# (a title, "# …": Aider writes a user's message as a "#### " line, an agent its own sections as "## ").
_MARKED_DATE = re.compile(r"(?:#\s|_\*\*)[^\n]{0,60}?(?P<d>\d{4}-\d{2}-\d{2})[ T]\d{2}:\d{2}")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, tier TEXT, size INTEGER, mtime_ns INTEGER);
CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(
    text, heading, tier UNINDEXED, agent UNINDEXED, topic UNINDEXED, session UNINDEXED,
    date UNINDEXED, file UNINDEXED, line UNINDEXED, status UNINDEXED, source UNINDEXED,
    tokenize = 'porter unicode61'
);
"""


@dataclass(slots=True, frozen=True)
class Hit:
    """One search result with where it comes from."""

    tier: str
    file: str  # relative to the root
    heading: str
    agent: str
    topic: str
    session: str
    date: str
    line: int
    status: str  # active | superseded | deprecated | archived
    snippet: str
    score: float
    source: str = ""  # a transcript hit: the transcript it was copied from (redacted, as provenance shows it)
    text: str = ""  # the whole entry or fact (for the spawn context); not printed by the CLI

    def public(self) -> Json:
        out = asdict(self)
        del out["text"]
        return out


@dataclass(slots=True, frozen=True)
class _Doc:
    text: str
    heading: str
    tier: str
    agent: str
    topic: str
    session: str
    date: str
    line: int
    status: str
    source: str = ""


class SearchError(ValueError):
    """A bad query or filter; the message is one line."""


def _blocks(text: str) -> Iterator[tuple[int, str, str]]:
    """``(line, heading, body)`` for each ``### `` block of a tier file (fences respected); a
    ``## `` section heading ends the block before it."""
    start = 0
    heading = ""
    body: list[str] = []
    fence = False
    for no, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        if not fence and line.startswith("## "):
            if heading:
                yield start, heading, "\n".join(body)
            heading, body = "", []
            continue
        if not fence and line.startswith("### "):
            if heading:
                yield start, heading, "\n".join(body)
            heading, body, start = line[4:].strip(), [], no
            continue
        if heading:
            body.append(line)
    if heading:
        yield start, heading, "\n".join(body)


def _cold_docs(text: str, agent: str, tier: str) -> Iterator[_Doc]:
    _, entries = split_entries(text)
    offset: dict[str, int] = {}
    for no, line in enumerate(text.splitlines(), start=1):
        if line.startswith("### "):
            offset.setdefault(line, no)
    for e in entries:
        session = _SESSION.search(e.text)
        who = _AGENT.search(e.text)
        yield _Doc(
            text=e.text,
            heading=e.heading.removeprefix("### "),
            tier=tier,
            agent=who.group("a") if who else agent,
            topic="",
            session=session.group("s") if session else (e.entry_id or ""),
            date=e.date[:10],
            line=offset.get(e.heading, 0),
            status="archived" if tier == "archive" else "active",
        )


def _fact_agents(body: str) -> str:
    """Every agent a wiki fact's provenance names, space-separated, in order: ``--agent alice``
    finds the facts alice wrote or that came from her sessions (a name in the statement is not one)."""
    names = (
        m.group("a").lower()
        for line in body.splitlines()
        if line.startswith(_PROVENANCE)
        for m in _WHO.finditer(line.partition(" | ")[0])  # not what "| replaces:" quotes
    )
    return " ".join(dict.fromkeys(names))


def _wiki_docs(text: str, topic: str) -> Iterator[_Doc]:
    for line, heading, body in _blocks(text):
        state = wiki_mark.state(wiki_mark.status(f"### {heading}\n{body}"))  # its mark, not its section
        session = _SESSION.search(body)
        date = _DATE.search(heading) or _DATE.search(body)
        yield _Doc(
            text=f"### {heading}\n{body}",
            heading=heading,
            tier="wiki",
            agent=_fact_agents(body),
            topic=topic,
            session=session.group("s") if session else "",
            date=date.group(0) if date else "",
            line=line,
            status=state,
        )


def _strings(value: object, out: list[str], depth: int = 0) -> None:
    """The string values of a parsed JSON record, in order, without identifier-like keys."""
    if depth > _JSON_DEPTH:
        return
    if isinstance(value, str):
        if value.strip():
            out.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in _NOISE_KEYS:
                _strings(item, out, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out, depth + 1)


def _line_text(line: str) -> tuple[str, str]:
    """(searchable text, date) of one transcript line: a JSON record's strings, else the line."""
    stripped = line.strip()
    if not stripped.startswith("{"):
        marker = _MARKED_DATE.match(stripped)  # Aider's "# aider chat started at …", SpecStory's speaker
        return stripped, marker.group("d") if marker else ""
    try:
        record = json.loads(stripped)
    except (ValueError, RecursionError):
        return stripped, ""
    out: list[str] = []
    _strings(record, out)
    when = record.get("timestamp") if isinstance(record, dict) else None
    return "\n".join(out), when[:10] if isinstance(when, str) and _DATE.match(when) else ""


def _transcript_docs(lines: Iterable[str], rec: Archived) -> Iterator[_Doc]:
    """An archived transcript in chunks of about ``CHUNK_CHARS``, each with its first line and the
    first date its records or its heading and speaker lines carry, else the last date before it
    (a markdown session's turns are dated at its start), else its first session's (ids end in
    ``@<start>``), else the day it was archived."""
    heading = redacted(f"{rec.kind} transcript {rec.source}")
    source, agents, sessions = redacted_path(rec.source), " ".join(rec.agents), " ".join(rec.sessions)
    started = sorted(m.group(0) for s in rec.sessions if (m := _DATE.search(s.rpartition("@")[2])))
    fallback = started[0] if started else rec.archived_at[:10]

    def doc(chunk: list[str], start: int, date: str) -> _Doc:
        return _Doc(
            text=redacted("\n".join(chunk)), heading=heading, tier="transcript", agent=agents, topic="",
            session=sessions, date=date or fallback, line=start, status="archived", source=source,
        )  # fmt: skip

    chunk: list[str] = []
    size, start, date, last = 0, 1, "", ""
    for no, line in enumerate(lines, start=1):
        text, when = _line_text(line)
        if not text:
            continue
        if not chunk:
            start, date = no, ""
        chunk.append(text)
        size += len(text)
        date, last = date or when, when or last
        if size >= CHUNK_CHARS or len(chunk) >= _CHUNK_LINES:
            yield doc(chunk, start, date or last)
            chunk, size = [], 0
    if chunk:
        yield doc(chunk, start, date or last)


def _read(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return data.decode("utf-8", "replace")


class Index:
    """The search index of one squad root; ``transcripts`` is the transcript archive's folder
    (:func:`scribed.tiers.transcripts.folder`; the state folder's ``transcripts/`` by default)."""

    def __init__(self, layout: Layout, transcripts: Path | None = None) -> None:
        self.layout = layout
        self.transcripts = transcripts if transcripts is not None else layout.state / "transcripts"
        from scribed.tiers import audit  # here: a spawn that never indexes imports no datetime

        audit.ensure_state(layout)  # with its .gitignore
        self.path = layout.state / INDEX_NAME
        self._db = sqlite3.connect(self.path, timeout=30)
        if self._db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            self._migrate()

    def _migrate(self) -> None:
        """Create the tables, dropping an index of another version (it is derived data)."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")  # one process migrates; the others see the new version
        try:
            if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                db.execute("DROP TABLE IF EXISTS files")
                db.execute("DROP TABLE IF EXISTS docs")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.commit()
        except BaseException:
            db.rollback()
            raise

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- files -> docs ------------------------------------------------------------------------
    def _files(self, tiers: tuple[str, ...]) -> Iterator[tuple[Path, str]]:
        lay = self.layout
        if "cold" in tiers:
            yield from ((p, "cold") for p in utf8_named(sorted(lay.cold.glob("*.md"))))
        if "wiki" in tiers:
            yield from ((p, "wiki") for p in utf8_named(sorted(lay.wiki.glob("*.md"))) if p.stem != "index")
        if "archive" in tiers:
            yield from ((p, "archive") for p in utf8_named(sorted((lay.archive / "cold").glob("*.md.gz"))))
            promoted = sorted((lay.archive / "promoted").glob("*/*.md.gz"))
            yield from ((p, "archive") for p in utf8_named(promoted))
        if "transcript" in tiers:
            from scribed.tiers.transcripts import META_SUFFIX, SUFFIX

            try:
                metas = sorted(self.transcripts.glob("*" + META_SUFFIX))
            except OSError:
                metas = []
            for meta in metas:
                if not meta.name.startswith("."):
                    yield meta.with_name(meta.name.removesuffix(META_SUFFIX) + SUFFIX), "transcript"

    @staticmethod
    def _stamp(path: Path, tier: str) -> tuple[int, int] | None:
        """(size, mtime) that changes whenever the file does; an archived transcript's counts its
        sidecar too (a session added to an unchanged copy rewrites only the sidecar)."""
        try:
            st = path.stat()
            if tier != "transcript":
                return st.st_size, st.st_mtime_ns
            meta = path.with_suffix(".json").stat()
        except OSError:
            return None
        return st.st_size + (meta.st_size << 40), max(st.st_mtime_ns, meta.st_mtime_ns)

    def _docs(self, path: Path, tier: str) -> Iterator[_Doc]:
        if tier == "transcript":
            yield from self._transcript(path)
            return
        text = redacted(_read(path))
        if tier == "wiki":
            yield from _wiki_docs(text, path.stem)
        elif tier in ("cold", "archive"):
            agent = path.stem if tier == "cold" else path.parent.name
            yield from _cold_docs(text, agent, tier)

    @staticmethod
    def _transcript(path: Path) -> Iterator[_Doc]:
        from scribed.sources import zst
        from scribed.tiers import transcripts

        rec = transcripts._load(path.with_suffix(".json"))  # the sidecar has one reader
        if rec is None:
            log.debug("search: %s has no readable sidecar; not indexed", path)
            return
        with zst.open_binary(path) as raw:
            yield from _transcript_docs(io.TextIOWrapper(raw, encoding="utf-8", errors="replace"), rec)

    def _rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.layout.root))
        except ValueError:
            return str(path)  # an [archive] folder outside the root

    def _index(self, path: Path, tier: str, rel: str, stamp: tuple[int, int]) -> bool:
        db = self._db
        db.execute("DELETE FROM docs WHERE file = ?", (rel,))
        try:
            docs = list(self._docs(path, tier))
        except (OSError, EOFError, ValueError) as exc:
            log.debug("search: %s not indexed: %s", rel, exc)
            return False  # a torn archive is skipped, the rest stays searchable
        db.executemany(
            "INSERT INTO docs (text, heading, tier, agent, topic, session, date, file, line, status, source) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(d.text, d.heading, d.tier, d.agent, d.topic, d.session, d.date, rel, d.line, d.status, d.source)
             for d in docs],
        )  # fmt: skip
        db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)", (rel, tier, *stamp))
        return True

    def refresh(self, *, rebuild: bool = False, tiers: tuple[str, ...] = TIERS) -> int:
        """Index what changed in ``tiers`` since the last call (everything with ``rebuild``);
        returns how many files were indexed."""
        db = self._db
        done = 0
        with db:
            if rebuild:
                db.execute("DELETE FROM docs")
                db.execute("DELETE FROM files")
            marks = ",".join("?" * len(tiers))
            known = {
                r[0]: (r[1], r[2])
                for r in db.execute(f"SELECT path, size, mtime_ns FROM files WHERE tier IN ({marks})", tiers)
            }
            seen: set[str] = set()
            for path, tier in self._files(tiers):
                stamp = self._stamp(path, tier)
                if stamp is None:
                    continue
                rel = self._rel(path)
                seen.add(rel)
                if known.get(rel) != stamp and self._index(path, tier, rel, stamp):
                    done += 1
            for gone in set(known) - seen:
                db.execute("DELETE FROM docs WHERE file = ?", (gone,))
                db.execute("DELETE FROM files WHERE path = ?", (gone,))
        return done

    def forget_removed(self) -> None:
        """After ``scribed cold-remove`` (a secret, a customer's name): the cold views indexed again,
        with the removed text zeroed in the file, not just unlinked (``secure_delete``), and the
        full-text segments that still listed its words merged away (``optimize``)."""
        self._db.execute("PRAGMA secure_delete = ON")
        self.refresh(tiers=("cold",))
        with self._db:
            self._db.execute("INSERT INTO docs(docs) VALUES('optimize')")

    # --- queries ------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        agent: str = "",
        tiers: tuple[str, ...] = (),
        since: str = "",
        limit: int = 10,
    ) -> list[Hit]:
        """The best matches for ``query``, best first: entries holding every word, else any word."""
        hits = self._search(fts_query(query), agent, tiers, since, limit)
        if not hits and len(_WORD.findall(query)) > 1:
            hits = self._search(fts_query(query, any_word=True), agent, tiers, since, limit)
        return hits

    def agents(self) -> list[str]:
        """Every agent the index holds something of (a transcript's row may name several)."""
        rows = self._db.execute("SELECT DISTINCT agent FROM docs").fetchall()
        return sorted({a for (names,) in rows for a in str(names or "").split()})

    def _search(self, match: str, agent: str, tiers: tuple[str, ...], since: str, limit: int) -> list[Hit]:
        where = ["docs MATCH ?"]
        args: list[Any] = [match]
        if agent:  # a transcript may hold several agents' sessions: its agents are space-separated
            where.append("(agent = ? OR instr(' ' || agent || ' ', ?) > 0)")
            args.extend((agent, f" {agent} "))
        if tiers:
            where.append(f"tier IN ({','.join('?' * len(tiers))})")
            args.extend(tiers)
        if since:
            where.append("date >= ?")
            args.append(since)
        sql = (
            "SELECT tier, file, heading, agent, topic, session, date, line, status, "
            f"snippet(docs, 0, '{MARK_OPEN}', '{MARK_CLOSE}', '…', 24), bm25(docs, 1.0, 2.0) AS score, source, text "
            f"FROM docs WHERE {' AND '.join(where)} ORDER BY score LIMIT ?"
        )
        args.append(max(1, limit))
        try:
            rows = self._db.execute(sql, args).fetchall()
        except sqlite3.OperationalError as exc:
            raise SearchError(redacted(f"cannot search for {match!r}: {exc}")) from exc
        return [
            Hit(r[0], r[1], r[2], r[3], r[4], r[5], r[6], int(r[7] or 0), r[8], " ".join(r[9].split()), -r[10],
                source=r[11], text=r[12])
            for r in rows
        ]  # fmt: skip


def fts_query(query: str, *, any_word: bool = False) -> str:
    """A user's words as an FTS5 query: each word quoted (no operator injection), all required
    (or any, ranked by bm25)."""
    words = [w.strip(".-/") for w in _WORD.findall(query)]
    words = [w for w in words if w]
    if not words:
        raise SearchError("empty query: give one or more words")
    return (" OR " if any_word else " ").join('"' + w.replace('"', '""') + '"' for w in words)

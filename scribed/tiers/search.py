"""Full-text search over the memory: cold entries, wiki facts (superseded ones marked), archives.

The index is an SQLite FTS5 table in scribed's state folder (``search.sqlite``), ranked by bm25.
It is derived data: every query first refreshes the files whose size or mtime changed since they
were indexed (a stat per file, so it stays current with every write the core makes, whoever made
it), and ``rebuild`` recreates it from the files alone. Each hit carries its provenance: tier,
file, entry heading, agent, session id, date and line.
"""

from __future__ import annotations

import gzip
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from scribed.compress.entry import split_entries
from scribed.fsutil import ensure_dir
from scribed.session.redact import redact
from scribed.tiers.cold import Layout

TIERS = ("cold", "wiki", "archive")
INDEX_NAME = "search.sqlite"
MARK_OPEN, MARK_CLOSE = "«", "»"
_SESSION = re.compile(r"\bsession=(?P<s>[^\s·]+)")
_AGENT = re.compile(r"\bagent=(?P<a>[a-z0-9][a-z0-9_-]*)")
_STATUS = re.compile(r"^- status:\s*(?P<s>\w+)", re.M)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_WORD = re.compile(r"[\w.#/-]+", re.UNICODE)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER);
CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(
    text, heading, tier UNINDEXED, agent UNINDEXED, topic UNINDEXED, session UNINDEXED,
    date UNINDEXED, file UNINDEXED, line UNINDEXED, status UNINDEXED, tokenize = 'unicode61'
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
    text: str = ""  # the whole entry or fact (for the spawn context); not printed by the CLI

    def public(self) -> dict[str, Any]:
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


class SearchError(ValueError):
    """A bad query or filter; the message is one line."""


def _blocks(text: str) -> Iterator[tuple[int, str, str, str]]:
    """``(line, heading, body, section)`` for each ``### `` block of a tier file (fences respected)."""
    section = ""
    start = 0
    heading = ""
    body: list[str] = []
    fence = False
    for no, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        if not fence and line.startswith("## "):
            if heading:
                yield start, heading, "\n".join(body), section
            heading, body, section = "", [], line[3:].strip().lower()
            continue
        if not fence and line.startswith("### "):
            if heading:
                yield start, heading, "\n".join(body), section
            heading, body, start = line[4:].strip(), [], no
            continue
        if heading:
            body.append(line)
    if heading:
        yield start, heading, "\n".join(body), section


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


def _wiki_docs(text: str, topic: str) -> Iterator[_Doc]:
    for line, heading, body, section in _blocks(text):
        status = _STATUS.search(body)
        state = "superseded" if "supersed" in section else (status.group("s") if status else "active")
        session = _SESSION.search(body)
        who = _AGENT.search(body)
        date = _DATE.search(heading) or _DATE.search(body)
        yield _Doc(
            text=f"### {heading}\n{body}",
            heading=heading,
            tier="wiki",
            agent=who.group("a") if who else "",
            topic=topic,
            session=session.group("s") if session else "",
            date=date.group(0) if date else "",
            line=line,
            status=state,
        )


def _read(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return data.decode("utf-8", "replace")


class Index:
    """The search index of one squad root."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        ensure_dir(layout.state)
        self.path = layout.state / INDEX_NAME
        self._db = sqlite3.connect(self.path, timeout=30)
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- files -> docs ------------------------------------------------------------------------
    def _files(self) -> Iterator[tuple[Path, str]]:
        lay = self.layout
        for p in sorted(lay.cold.glob("*.md")):
            yield p, "cold"
        for p in sorted(lay.wiki.glob("*.md")):
            if p.stem != "index":
                yield p, "wiki"
        for p in sorted((lay.archive / "cold").glob("*.md.gz")):
            yield p, "archive"
        for p in sorted((lay.archive / "promoted").glob("*/*.md.gz")):
            yield p, "archive"

    def _docs(self, path: Path, tier: str) -> Iterator[_Doc]:
        text = redact(_read(path))
        if tier == "wiki":
            yield from _wiki_docs(text, path.stem)
        elif tier in ("cold", "archive"):
            agent = path.stem if tier == "cold" else path.parent.name
            yield from _cold_docs(text, agent, tier)

    def refresh(self, *, rebuild: bool = False) -> int:
        """Index what changed since the last call (everything with ``rebuild``); returns files indexed."""
        root = self.layout.root
        db = self._db
        done = 0
        with db:
            if rebuild:
                db.execute("DELETE FROM docs")
                db.execute("DELETE FROM files")
            known = {r[0]: (r[1], r[2]) for r in db.execute("SELECT path, size, mtime_ns FROM files")}
            seen: set[str] = set()
            for path, tier in self._files():
                try:
                    st = path.stat()
                except OSError:
                    continue
                rel = str(path.relative_to(root))
                seen.add(rel)
                if known.get(rel) == (st.st_size, st.st_mtime_ns):
                    continue
                db.execute("DELETE FROM docs WHERE file = ?", (rel,))
                try:
                    docs = list(self._docs(path, tier))
                except (OSError, EOFError, ValueError):
                    continue  # a torn archive is skipped, the rest stays searchable
                db.executemany(
                    "INSERT INTO docs (text, heading, tier, agent, topic, session, date, file, line, status) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(d.text, d.heading, d.tier, d.agent, d.topic, d.session, d.date, rel, d.line, d.status)
                     for d in docs],
                )
                db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?)", (rel, st.st_size, st.st_mtime_ns))
                done += 1
            for gone in set(known) - seen:
                db.execute("DELETE FROM docs WHERE file = ?", (gone,))
                db.execute("DELETE FROM files WHERE path = ?", (gone,))
        return done

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

    def _search(self, match: str, agent: str, tiers: tuple[str, ...], since: str, limit: int) -> list[Hit]:
        where = ["docs MATCH ?"]
        args: list[Any] = [match]
        if agent:
            where.append("agent = ?")
            args.append(agent)
        if tiers:
            where.append(f"tier IN ({','.join('?' * len(tiers))})")
            args.extend(tiers)
        if since:
            where.append("date >= ?")
            args.append(since)
        sql = (
            "SELECT tier, file, heading, agent, topic, session, date, line, status, "
            f"snippet(docs, 0, '{MARK_OPEN}', '{MARK_CLOSE}', '…', 24), bm25(docs, 1.0, 2.0) AS score, text "
            f"FROM docs WHERE {' AND '.join(where)} ORDER BY score LIMIT ?"
        )
        args.append(max(1, limit))
        try:
            rows = self._db.execute(sql, args).fetchall()
        except sqlite3.OperationalError as exc:
            raise SearchError(f"cannot search for {match!r}: {exc}") from exc
        return [
            Hit(r[0], r[1], r[2], r[3], r[4], r[5], r[6], int(r[7] or 0), r[8], " ".join(r[9].split()), -r[10], r[11])
            for r in rows
        ]


def fts_query(query: str, *, any_word: bool = False) -> str:
    """A user's words as an FTS5 query: each word quoted (no operator injection), all required
    (or any, ranked by bm25)."""
    words = [w.strip(".-/") for w in _WORD.findall(query)]
    words = [w for w in words if w]
    if not words:
        raise SearchError("empty query: give one or more words")
    return (" OR " if any_word else " ").join('"' + w.replace('"', '""') + '"' for w in words)


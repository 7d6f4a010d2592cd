"""Opening and reading one source file, the first steps of :class:`scribed.core.compact.Compactor`:
its stat and ledger row, whether it is in the source's workspace, and its reading (a pool
worker's when the file is still the one it read, else the parser's). Kept apart from the steps
that decide what to compact, because these alone know where a reading comes from (a worker, a
whole parse kept for the parent, a stream); the file's ledger row is written here too
(:meth:`Reader._mark`), the one record every step ends in.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime

from scribed import sources
from scribed.core import ledger as ledger_mod
from scribed.core import scope_mark
from scribed.core.compact_session import Prefetched, SessionCompactor, Step, Ticket
from scribed.core.discovery import adopt_twin, file_stat
from scribed.core.ledger import SourceRow, source_key
from scribed.core.results import SKIP_ELSEWHERE, SKIP_NO_PLACE, FileOutcome, SourceItem
from scribed.fsutil import read_error
from scribed.models import ParseResult
from scribed.names import case_collisions
from scribed.session.door import redacted
from scribed.sources import place
from scribed.sources.common import hold_partial_tail, line_limit

# A pool worker hands the parent the parse of a file up to this size; a larger one the parent
# streams itself (a markdown file's sessions are never all held in the parent at once).
PARSE_MAX_BYTES = 8 << 20
# Prepared in this process (see scribed.core.prepare), a markdown or Squad REPL file up to this
# size is parsed whole and the parse kept; a larger one keeps its briefs and is read again, a
# session at a time (sources.read_file streams them).
MARKDOWN_WHOLE_MAX = sources.STREAM_MIN_BYTES
STREAMED = ("markdown", "squad-repl")


def _outside_outcome(why: str) -> FileOutcome:
    """A file whose one session (with its sub-agents) is not this root's: one session skipped."""
    reason = "another repository's session" if why == SKIP_ELSEWHERE else "no recorded working directory"
    out = FileOutcome("skipped", reason=reason)
    out.skip(why)
    return out


@dataclass(slots=True)
class Job:
    """One source file between the steps of :meth:`Compactor.process`.

    The steps decide from the sessions' briefs (``todo`` and ``live`` are indices into them) and
    meet the sessions themselves one at a time (:meth:`sources.Reading.sessions`), so a file of
    many sessions (an Aider history) costs the memory of its largest session, not of the file.
    """

    item: SourceItem
    st: os.stat_result
    row: SourceRow | None
    reading: sources.Reading
    finished: bool
    mtime: float = 0.0  # when the file last changed (epoch; a future mtime counts from when seen)
    todo: list[int] = field(default_factory=list)
    live: list[int] = field(default_factory=list)
    offset_done: int = 0
    new_offset: int = 0

    @property
    def key(self) -> str:
        return str(self.item.path)

    @property
    def parsed(self) -> ParseResult:
        return self.reading.result

    @property
    def briefs(self) -> list[sources.Brief]:
        return self.reading.briefs


class Reader(Step):
    """Open a file and read it; the :class:`scribed.core.compact.Compactor` sets these fields."""

    sessions: SessionCompactor
    given: Prefetched | None
    kept: Prefetched | None
    tickets: dict[int, Ticket]
    from_pool: int
    keep_max: int | None
    warned: int

    def _open(self, item: SourceItem) -> FileOutcome | tuple[os.stat_result, SourceRow | None]:
        """The file's stat and ledger row, or the outcome when there is nothing to do."""
        path, key = item.path, source_key(item.path)
        try:
            st = file_stat(item)
        except FileNotFoundError:
            return FileOutcome("skipped", reason="disappeared")
        if item.kind == "hot" and path.is_symlink():
            self.log.warning(
                "hot_symlink_skipped", file=key, reason="hot files that are symlinks are never read or reset"
            )
            return FileOutcome("skipped", reason="symlink")
        row = self.ledger.source(key) or adopt_twin(self.ledger, path, st)  # .jsonl.zst: its twin's row
        if row and ledger_mod.same_state(row, st) and row.status in ("done", "quarantined"):
            was = scope_mark.skipped(row.last_error, item.scope)
            if was is None:
                return FileOutcome("unchanged")
            if was:  # skipped before for the scope it has now: counted again, not read again
                return _outside_outcome(was)
            # else skipped for a scope the config has changed since: asked again
        if item.kind == "hot":
            for other in case_collisions(path):
                self.log.warning(
                    "agent_name_collision", file=key, other=str(other), agent=item.agent,
                    reason="names that differ only by case are one agent",
                )  # fmt: skip
        return st, row

    def _outside(self, item: SourceItem, st: os.stat_result, row: SourceRow | None) -> FileOutcome | None:
        """The outcome for a session recorded as run outside the source's workspace (another
        repository's, or one that records no folder): skipped, counted, never parsed. Only the
        file's first records are read (:func:`scribed.sources.place.recorded`). None: in scope."""
        if item.scope is None or item.kind == "hot":
            return None
        with line_limit(self.cfg.session.max_line_bytes):
            where = place.recorded(item.kind, item.path)
        if where is not None and place.inside(where, item.scope):
            return None
        why = SKIP_ELSEWHERE if where is not None else SKIP_NO_PLACE
        again = row is not None and scope_mark.skipped(row.last_error, item.scope) == why
        say = self.log.debug if again else self.log.info  # a foreign session that grows: said once
        say("session_outside_workspace", file=source_key(item.path), kind=item.kind, reason=why)
        offset, sha = (row.offset_done, row.sha256) if row else (0, "")  # what was compacted stays known
        error = scope_mark.text(why, item.scope)
        self._mark(item, st, row, status="done", offset=offset, sha=sha, error=error)
        return _outside_outcome(why)

    def _parse(
        self, item: SourceItem, st: os.stat_result, row: SourceRow | None, *, hold: bool
    ) -> sources.Reading | FileOutcome:
        """Parse the file; a failed read is a retry (with backoff under the daemon), never "done".
        Whether the file can be read is asked only when the reading found nothing (one open less
        per file): the parser reports a failed read as a warning."""
        key = source_key(item.path)
        problem: str | None = None
        try:
            reading = self._read(item, st, hold)
        except FileNotFoundError:  # gone since its stat (the pool's sha check reads it too)
            return FileOutcome("skipped", reason="disappeared")
        except OSError as exc:
            problem = read_error(item.path) or f"cannot read {item.path}: {exc.strerror or exc}"
        else:
            parsed = reading.result
            if not reading.briefs:
                problem = read_error(item.path) or next(
                    (w for w in parsed.warnings if ": cannot read " in w), None
                )
        if problem is not None:
            attempts = (row.attempts if row else 0) + 1
            self.log.error("source_unreadable", file=key, reason=problem, attempts=attempts)
            offset, sha = (row.offset_done, row.sha256) if row else (0, "")
            self._mark(
                item, st, row, status="failed", offset=offset, sha=sha, error=problem, attempts=attempts
            )
            return FileOutcome("failed", file_failed=True, reason=problem)
        for w in parsed.warnings:
            self.log.warning("source_warning", file=key, kind=item.kind, reason=w)
        self.warned += len(parsed.warnings)
        return reading

    def _read(self, item: SourceItem, st: os.stat_result, hold: bool) -> sources.Reading:
        """The file's reading: a pool worker's when the file is still the one it read (its stamp, its
        sha), else the parser's. In a worker, a file small enough to hold (:data:`PARSE_MAX_BYTES`)
        is parsed whole and kept for the parent (its sessions are what the streamed reading yields;
        only ``Session.warnings``, which nothing after the parse reads, may differ)."""
        given = self.given
        if (
            given is not None
            and given.reading is not None
            and given.hold == hold
            and given.stamp == (st.st_size, st.st_mtime_ns)
            and given.sha == self.sessions._source_sha(item)
        ):
            self.from_pool += 1
            self.sessions.copy = given.copy
            self.tickets = given.tickets
            return given.reading
        kept = self.kept
        whole = kept is not None and (self.keep_max is None or st.st_size <= self.keep_max)
        if item.kind in STREAMED and self.keep_max is None and st.st_size > MARKDOWN_WHOLE_MAX:
            whole = False  # its sessions are read again one at a time: memory follows the largest
        # an open session's unterminated line waits; a record over [session] max_line_bytes is skipped
        with hold_partial_tail(hold), line_limit(self.cfg.session.max_line_bytes):
            if not whole:
                streamed = sources.read_file(item.kind, item.path, item.agent)
                if (
                    kept is not None
                    and self.keep_max is None
                    and streamed.stream is not None
                    and streamed.briefs
                ):
                    kept.reading, kept.hold, kept.sha = streamed, hold, self.sessions._source_sha(item)
                return streamed
            # one pass, the sessions held (read_file's streamed markdown reads its sessions twice)
            parsed = sources.parse_file(item.kind, item.path, item.agent)
        reading = sources.Reading(parsed, [sources.Brief.of(s) for s in parsed.sessions])
        if kept is not None and reading.briefs:
            kept.reading, kept.hold, kept.sha = reading, hold, self.sessions._source_sha(item)
        return reading

    def _note_future_mtime(
        self, item: SourceItem, st: os.stat_result, row: SourceRow | None, now: datetime
    ) -> None:
        if st.st_mtime > now.timestamp() and not ledger_mod.same_state(row, st) and not self.dry_run:
            self.log.warning(
                "future_mtime", file=str(item.path), reason="modified in the future: counted from now"
            )
            offset, sha = (row.offset_done, row.sha256) if row else (0, "")
            self._mark(item, st, row, status="pending", offset=offset, sha=sha)  # remembers when it was seen

    def _mark(
        self,
        item: SourceItem,
        st: os.stat_result,
        row: SourceRow | None,
        *,
        status: str,
        offset: int,
        sha: str,
        error: str = "",
        attempts: int | None = None,
    ) -> None:
        if self.dry_run:
            return
        if attempts is None:
            attempts = 0 if status == "done" else (row.attempts if row else 0)
        self.ledger.upsert_source(
            SourceRow(
                path=source_key(item.path),
                kind=item.kind,
                agent=item.agent,
                size=st.st_size,
                mtime_ns=st.st_mtime_ns,
                sha256=sha,
                offset_done=offset,
                status=status,
                attempts=attempts,
                last_error=redacted(error),
                updated_at=self.sessions.iso_now(),
            )
        )

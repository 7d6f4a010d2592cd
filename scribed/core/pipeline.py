"""The compaction core shared by ``scribed run-once`` and the daemon.

One unit of work is one source file: parse it (streaming), decide whether it is finished,
take the part not compacted yet, redact it, extract anchors, compress, guard, append the
entry to ``cold/{agent}.md``, and record it in the ledger. Entry ids are derived from the
session and the content it holds (not the path), so a rerun after any crash, a lost ledger or a
renamed transcript finds what is already written.
"""

from __future__ import annotations

import hashlib
import os
import resource
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from scribed import sources
from scribed.compress import anchors, entry
from scribed.compress.base import CompressError, Compressor, CompressResult
from scribed.compress.extractive import ENTRY_OVERHEAD, ExtractiveCompressor
from scribed.config import CompressCfg, Config, ConfigError
from scribed.core import ledger as ledger_mod
from scribed.core.ledger import Ledger, SourceRow, adopt_twin
from scribed.fsutil import (
    UnsafePathError,
    clean_temp_files,
    ensure_dir,
    read_error,
    read_text,
    skip_newline,
    write_gzip_archive,
)
from scribed.log import get as get_logger
from scribed.models import Anchor, ParseResult, Session, Turn
from scribed.names import case_collisions, normalize_name
from scribed.session.redact import redact
from scribed.sources import zst
from scribed.sources.common import hold_partial_tail
from scribed.tiers import cold, hot_seed, live, transcripts
from scribed.tiers.cold import Layout

# Kinds whose Turn.end_offset is a byte offset in an append-only file.
BYTE_KINDS = {"copilot", "claude", "codex", "markdown"}
# After this many consecutive LLM failures the endpoint is paused (extractive fallback or queued).
BREAKER_FAILURES = 3
BREAKER_PAUSE_SECONDS = 300
HOT_TEMPLATE = live.TEMPLATE


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(slots=True, frozen=True)
class SourceItem:
    """One file to consider, with the agent its sessions default to."""

    path: Path
    kind: str
    agent: str


@dataclass(slots=True)
class EntryReport:
    agent: str
    session: str
    source: str
    bytes_in: int
    bytes_out: int
    ratio: float
    recall: float
    compressor: str
    entry_id: str = ""
    llm_error: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    ms: int = 0

    def public(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "session": self.session,
            "source": self.source,
            "bytes_in": self.bytes_in,
            "bytes_out": self.bytes_out,
            "ratio": round(self.ratio, 4),
            "recall": round(self.recall, 4),
            "compressor": self.compressor,
        }


@dataclass(slots=True)
class FileOutcome:
    """What happened to one source file."""

    status: str  # compacted | unchanged | not-finished | empty | failed | skipped
    sessions: int = 0
    entries: list[EntryReport] = field(default_factory=list)
    skipped: int = 0
    failed: int = 0
    reason: str = ""


@dataclass(slots=True)
class RunReport:
    sessions: int = 0
    compacted: int = 0
    skipped: int = 0
    failed: int = 0
    files: int = 0
    warnings: int = 0
    entries: list[EntryReport] = field(default_factory=list)
    failures: list[dict[str, str]] = field(default_factory=list)
    inbox: dict[str, int] = field(default_factory=dict)

    def add(self, item: SourceItem, out: FileOutcome) -> None:
        self.files += 1
        self.sessions += out.sessions
        self.compacted += len(out.entries)
        self.skipped += out.skipped
        self.failed += out.failed
        self.entries.extend(out.entries)
        if out.failed:
            self.failures.append({"source": redact(str(item.path)), "reason": out.reason})

    def public(self) -> dict[str, Any]:
        return {
            "sessions": self.sessions,
            "compacted": self.compacted,
            "skipped": self.skipped,
            "failed": self.failed,
            "files": self.files,
            "warnings": self.warnings,
            "entries": [e.public() for e in self.entries],
            "failures": self.failures,
            "inbox": self.inbox,
        }


def peak_rss_mb() -> float:
    """This process's peak RSS. VmHWM, not ru_maxrss: the latter survives exec and would report
    the parent's size for a process started by fork+exec."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def entry_budget(ccfg: CompressCfg, bytes_in: int, anchor_list: list[Anchor]) -> int:
    """An entry's size: ``ratio`` of the session, never below what its anchors need (small sessions
    get that floor, not padding), and ``max_bytes`` only as a guard for giant sessions."""
    floor = ENTRY_OVERHEAD + sum(len(anchors.format_anchor(a).encode()) + 3 for a in anchor_list)
    floor = min(floor, max(ccfg.min_bytes, bytes_in // 2))
    return int(min(ccfg.max_bytes, max(ccfg.min_bytes, floor, bytes_in * ccfg.ratio)))


def _far_under(result: CompressResult, budget: int) -> bool:
    """An LLM answer under half its budget left room the extractive key points can use."""
    return len(result.summary.model_dump_json().encode()) < budget // 2


def sha256_prefix(path: Path, length: int) -> str:
    """sha256 of the first ``length`` bytes, streamed."""
    h = hashlib.sha256()
    left = length
    with zst.open_binary(path) as fh:  # a .jsonl.zst: its decompressed content, as offsets count it
        while left > 0:
            chunk = fh.read(min(1 << 20, left))
            if not chunk:
                break
            h.update(chunk)
            left -= len(chunk)
    return h.hexdigest()


def sha256_bytes(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


class Scribe:
    """The core object both drivers (run-once and the daemon) call."""

    def __init__(
        self,
        cfg: Config,
        *,
        dry_run: bool = False,
        clock: Callable[[], datetime] = utcnow,
        environ: Mapping[str, str] | None = None,
        llm_factory: Callable[[], Compressor] | None = None,
    ) -> None:
        self.cfg = cfg
        self.dry_run = dry_run
        self.clock = clock
        self.environ = dict(os.environ if environ is None else environ)
        self.layout = Layout(cfg.root_path)
        self.log = get_logger()
        self._validate_sources()
        try:
            self.layout.check_state()  # before anything is created in them
        except UnsafePathError as exc:
            raise ConfigError(str(exc.strerror or exc)) from exc
        if dry_run:
            self.ledger = (
                Ledger(self.layout.ledger, readonly=True) if self.layout.ledger.exists() else Ledger(None)
            )
        else:
            ensure_dir(self.layout.state)
            self.ledger = Ledger(self.layout.ledger)
        self.extractive = ExtractiveCompressor()
        self._llm_factory = llm_factory
        self._llm: Compressor | None = None
        self._llm_state: str | None = None  # None = not probed; "" = usable; else the reason it is not
        self._llm_lock = threading.Lock()
        self._llm_failures = 0
        self._llm_last_error = ""
        self._llm_paused_until = datetime.min.replace(tzinfo=UTC)
        self._llm_probe_again = datetime.min.replace(tzinfo=UTC)
        self._sha_cache: dict[str, str] = {}
        self._sha_lock = threading.Lock()

    def close(self) -> None:
        self.ledger.close()

    # --- discovery ----------------------------------------------------------------------------
    def _validate_sources(self) -> None:
        root = self.cfg.root_path
        if not root.is_dir():
            raise ConfigError(f"root: not a folder: {root}")
        for i, src in enumerate(self.cfg.sources):
            if src.agent and normalize_name(src.agent) is None:
                raise ConfigError(
                    f"bad value for 'sources.{i}.agent': {src.agent!r} is not a valid agent name "
                    "(lowercase letters, digits, '-' and '_')"
                )

    def items(self) -> Iterator[SourceItem]:
        """Every file of every configured source, plus the hot files."""
        for src in self.cfg.sources:
            agent = normalize_name(src.agent) or src.kind.replace("squad-repl", "squad")
            folder = src.expanded
            if not folder.exists():
                self.log.warning("source_missing", source=str(folder), kind=src.kind)
                continue
            for p in sources.discover(src.kind, folder, src.glob):
                yield SourceItem(p, src.kind, agent)
        for p in sources.discover("hot", self.layout.hot):
            yield SourceItem(p, "hot", p.stem.lower())

    def prepare(self) -> None:
        """Start-of-run housekeeping: temp files a crash left behind."""
        if self.dry_run:
            return
        for d in (
            self.layout.hot,
            self.layout.cold,
            self.layout.wiki,
            self.layout.state,
            self.layout.memory / "inbox",
        ):
            n = clean_temp_files(d)
            if n:
                self.log.warning("temp_files_removed", folder=str(d), count=n)

    # --- compressor choice --------------------------------------------------------------------
    def _llm_compressor(self) -> tuple[Compressor | None, str]:
        """The LLM compressor if configured and reachable, else (None, reason)."""
        with self._llm_lock:
            return self._llm_compressor_locked()

    def _llm_compressor_locked(self) -> tuple[Compressor | None, str]:
        now = self.clock()
        if self._llm_state and self.cfg.llm.configured and now >= self._llm_probe_again:
            self._llm_state = None  # an unreachable endpoint is probed again after the pause
        if self._llm_state is None:
            if self._llm_factory is not None:
                self._llm = self._llm_factory()
                self._llm_state = ""
            elif not self.cfg.llm.configured:
                self._llm_state = "llm not configured (llm.base_url and llm.model)"
            else:
                from scribed.compress import llm as llm_mod

                reason = llm_mod.probe(self.cfg.llm) if self.cfg.compress.backend == "auto" else None
                if reason:
                    self._llm_state = reason
                    self._llm_probe_again = now + timedelta(seconds=BREAKER_PAUSE_SECONDS)
                    self.log.warning("llm_unreachable", reason=reason, fallback="extractive")
                else:
                    self._llm = llm_mod.LlmCompressor(self.cfg.llm, environ=self.environ)
                    self._llm_state = ""
        return self._llm, self._llm_state or ""

    def _compress(self, session: Session, anchors_: list[Anchor], budget: int) -> tuple[CompressResult, str]:
        """Run the configured backend. Returns (result, llm_error). Raises CompressError for backend=llm."""
        backend = self.cfg.compress.backend
        if backend == "extractive":
            return self.extractive.compress(session, anchors_, budget), ""
        llm, reason = self._llm_compressor()
        if llm is None:
            if backend == "llm":
                raise CompressError(reason)
            # Record why a configured endpoint was not used; the embedded default needs no note.
            return self.extractive.compress(
                session, anchors_, budget
            ), reason if self.cfg.llm.configured else ""
        paused = self._breaker_reason()
        if paused:
            if backend == "llm":
                raise CompressError(paused)
            res = self.extractive.compress(session, anchors_, budget)
            res.notes.append(f"fallback: {paused}")
            return res, paused
        try:
            result = llm.compress(session, anchors_, budget)
            if _far_under(result, budget) and self.extractive.top_up(result.summary, session, budget):
                result.notes.append("topped up with extractive key points")
        except CompressError as exc:
            self._breaker_failure(exc.reason)
            if backend == "llm":
                raise
            res = self.extractive.compress(session, anchors_, budget)
            res.notes.append(f"fallback: {exc.reason}")
            return res, exc.reason
        with self._llm_lock:
            self._llm_failures = 0
        return result, ""

    def _breaker_reason(self) -> str:
        """Non-empty while the endpoint is paused after repeated failures (a dead endpoint must not
        cost every session of a backlog its full timeout and retries)."""
        with self._llm_lock:
            if self._llm_failures >= BREAKER_FAILURES and self.clock() < self._llm_paused_until:
                return f"llm paused after {self._llm_failures} consecutive failures: {self._llm_last_error}"
        return ""

    def _breaker_failure(self, reason: str) -> None:
        with self._llm_lock:
            self._llm_failures += 1
            self._llm_last_error = reason
            if self._llm_failures >= BREAKER_FAILURES:
                self._llm_paused_until = self.clock() + timedelta(seconds=BREAKER_PAUSE_SECONDS)
                self.log.warning(
                    "llm_paused", failures=self._llm_failures, reason=reason, seconds=BREAKER_PAUSE_SECONDS
                )

    # --- one file -----------------------------------------------------------------------------
    def process(self, item: SourceItem, *, force: bool = False) -> FileOutcome:
        """Compact whatever is finished and new in one source file."""
        ledger_mod.ensure(self.ledger, self.layout.memory, self.layout.archive)  # lost or empty: rebuilt
        path = item.path
        key = str(path)
        try:
            st = path.lstat()
        except FileNotFoundError:
            return FileOutcome("skipped", reason="disappeared")
        if item.kind == "hot" and path.is_symlink():
            self.log.warning(
                "hot_symlink_skipped", file=key, reason="hot files that are symlinks are never read or reset"
            )
            return FileOutcome("skipped", reason="symlink")
        row = self.ledger.source(key) or adopt_twin(self.ledger, path, st)  # .jsonl.zst: its twin's row
        if (
            row
            and row.size == st.st_size
            and row.mtime_ns == st.st_mtime_ns
            and row.status in ("done", "quarantined")
        ):
            return FileOutcome("unchanged")
        if item.kind == "hot":
            for other in case_collisions(path):
                self.log.warning(
                    "agent_name_collision", file=key, other=str(other), agent=item.agent,
                    reason="names that differ only by case are one agent",
                )  # fmt: skip

        now = self.clock()
        mtime = ledger_mod.effective_mtime(st, row, now)  # a future mtime counts from when it was seen
        quiet = (now.timestamp() - mtime) >= self.cfg.session.quiet_seconds
        problem = read_error(path)
        if problem is None:
            with hold_partial_tail(not (quiet or force)):  # an open session's unterminated line waits
                parsed = sources.parse_file(item.kind, path, item.agent)
            if not parsed.sessions:  # the parser reports a failed read as a warning
                problem = next((w for w in parsed.warnings if ": cannot read " in w), None)
        if problem is not None:  # a retry (with backoff under the daemon), never "done"
            attempts = (row.attempts if row else 0) + 1
            self.log.error("source_unreadable", file=key, reason=problem, attempts=attempts)
            offset, sha = (row.offset_done, row.sha256) if row else (0, "")
            self._mark(item, st, row, status="failed", offset=offset, sha=sha, error=problem, attempts=attempts)
            return FileOutcome("failed", failed=1, reason=problem)
        for w in parsed.warnings:
            self.log.warning("source_warning", file=key, kind=item.kind, reason=w)
        if st.st_mtime > now.timestamp() and not ledger_mod.same_state(row, st) and not self.dry_run:
            self.log.warning("future_mtime", file=key, reason="modified in the future: counted from now")
            offset, sha = (row.offset_done, row.sha256) if row else (0, "")
            self._mark(item, st, row, status="pending", offset=offset, sha=sha)  # remembers when it was seen
        finished = parsed.ended or quiet or force
        if not parsed.sessions:
            self._mark(
                item,
                st,
                row,
                status="done",
                offset=row.offset_done if row else 0,
                sha=row.sha256 if row else "",
            )
            return FileOutcome("empty")
        # A file holding several sessions (an Aider history) finishes them one by one: a session
        # followed by another one's header is compacted now, the open last one once the file is quiet.
        todo: list[Session] = parsed.sessions
        live_sessions: list[Session] = []
        if not finished:
            n = len(parsed.sessions)
            todo = [s for s in parsed.sessions if s.ended and s.turns] if item.kind in BYTE_KINDS else []
            live_sessions = [s for s in parsed.sessions if not s.ended] if todo else parsed.sessions
            if item.kind != "hot" and not self.dry_run and not todo:
                for sess in live_sessions:
                    peers = [s.agent for s in parsed.sessions if s is not sess]
                    live.refresh(self.layout, sess, item.kind, self.log, talking_to=peers)
            if not todo:
                return FileOutcome(
                    "not-finished", sessions=n, skipped=n, reason="not finished (quiet time not reached)"
                )

        offset_done = row.offset_done if row else 0
        if item.kind == "hot":
            offset_done = 0
        elif (
            item.kind in BYTE_KINDS
            and offset_done > 0
            and row is not None
            and (
                zst.logical_size(path, st.st_size) < offset_done
                or sha256_prefix(path, offset_done) != row.sha256
            )
        ):
            self.log.warning(
                "source_rewritten",
                file=key,
                reason="content before the compacted offset changed; compacting the whole file again",
            )
            offset_done = 0
        if item.kind in BYTE_KINDS and offset_done > 0 and path.suffix != ".zst":
            offset_done = skip_newline(path, offset_done)  # a line compacted before its newline came

        if not finished:  # only ended sessions wholly before every open session's new turns
            first_open = min(
                (t.end_offset for s in live_sessions for t in s.turns if t.end_offset > offset_done),
                default=None,
            )
            todo = [s for s in todo if first_open is None or max(t.end_offset for t in s.turns) < first_open]
        raw_sizes = self._raw_sizes(item, parsed)
        out = FileOutcome("compacted")
        new_offset = offset_done
        for sess in todo:
            turns = [t for t in sess.turns if t.end_offset > offset_done]
            if offset_done == 0 and item.kind != "hot":  # a path the ledger does not know: moved, rotated?
                turns = ledger_mod.uncovered(self.ledger, redact(sess.session_id), sess.session_id, sess.turns, turns)
            if sess.turns:
                new_offset = max(new_offset, max(t.end_offset for t in sess.turns))
            # A session with no message (only a tool's banner or output) has nothing to remember.
            if not any(t.text.strip() and t.kind in ("message", "summary") for t in turns):
                continue
            out.sessions += 1
            bytes_in = sum(raw_sizes.get(id(t), len(t.text.encode())) for t in turns)
            try:
                rep = self._compact_session(item, sess, turns, bytes_in, offset_done)
            except CompressError as exc:
                out.failed += 1
                out.reason = f"{sess.agent}/{sess.session_id}: {exc.reason}"
                self.log.error(
                    "compaction_failed",
                    agent=sess.agent,
                    session=sess.session_id,
                    file=key,
                    reason=exc.reason,
                )
                continue
            except OSError as exc:
                out.failed += 1
                out.reason = f"write failed: {exc.strerror or exc}"
                self.log.error(
                    "write_failed",
                    agent=sess.agent,
                    file=key,
                    reason=out.reason,
                    target=getattr(exc, "filename", None),
                )
                continue
            if rep is None:
                out.skipped += 1
            else:
                out.entries.append(rep)

        if out.failed:
            attempts = (row.attempts if row else 0) + 1
            status = "quarantined" if attempts >= self.cfg.daemon.max_attempts else "failed"
            self._mark(
                item,
                st,
                row,
                status=status,
                offset=row.offset_done if row else 0,
                sha=row.sha256 if row else "",
                error=out.reason,
                attempts=attempts,
            )
            out.status = "failed"
            return out

        sha = ""
        if item.kind in BYTE_KINDS:
            sha = sha256_prefix(path, new_offset)
        elif item.kind == "hot":
            sha = sha256_bytes(path.read_bytes()) if not self.dry_run else ""
        if item.kind == "hot" and not self.dry_run and self._archive_and_reset_hot(item, parsed):
            st = path.lstat() if path.exists() else st  # else the kept text is compacted next run
        if item.kind != "hot" and not self.dry_run:
            for sess in todo:
                hot_seed.reseed(self.layout, sess.agent, item.kind, sess.session_id, self.log)
        if not finished:
            # Not "done": the unchanged-check must not skip the file, or its open session would never
            # be compacted once it goes quiet. The offset covers only what was compacted.
            if not self.dry_run:
                for sess in live_sessions:
                    peers = [s.agent for s in parsed.sessions if s is not sess]
                    live.refresh(self.layout, sess, item.kind, self.log, talking_to=peers)
            if new_offset > offset_done:
                self._mark(item, st, row, status="pending", offset=new_offset, sha=sha)
            out.status, out.reason = "not-finished", "open session not quiet yet"
            out.sessions += len(live_sessions)
            out.skipped += len(live_sessions)
            return out
        self._mark(item, st, row, status="done", offset=new_offset, sha=sha)
        if not out.entries:
            out.status = "unchanged"
        return out

    def _raw_sizes(self, item: SourceItem, parsed: ParseResult) -> dict[int, int]:
        """Attribute the file's bytes to turns (each turn owns the bytes since the previous record)."""
        if item.kind not in BYTE_KINDS and item.kind != "hot":
            return {}
        all_turns = sorted((t for s in parsed.sessions for t in s.turns), key=lambda t: t.end_offset)
        out: dict[int, int] = {}
        prev = 0
        for t in all_turns:
            out[id(t)] = max(0, t.end_offset - prev)
            prev = max(prev, t.end_offset)
        return out

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
        self.ledger.upsert_source(
            SourceRow(
                path=str(item.path),
                kind=item.kind,
                agent=item.agent,
                size=st.st_size,
                mtime_ns=st.st_mtime_ns,
                sha256=sha,
                offset_done=offset,
                status=status,
                attempts=(
                    attempts
                    if attempts is not None
                    else (0 if status == "done" else (row.attempts if row else 0))
                ),
                last_error=redact(error),
                updated_at=entry.iso(self.clock()),
            )
        )

    # --- one session --------------------------------------------------------------------------
    def _compact_session(
        self, item: SourceItem, sess: Session, turns: list[Turn], bytes_in: int, offset_done: int
    ) -> EntryReport | None:
        t0 = time.monotonic()
        start_off = offset_done
        end_off = max(t.end_offset for t in turns)
        entry_id = ledger_mod.content_id(sess.session_id, turns)  # the same records, wherever the file is
        legacy = ledger_mod.legacy_id(item.path, sess.session_id, start_off, end_off, hot=item.kind == "hot")
        if self.ledger.has_entry(entry_id) or self.ledger.has_entry(legacy):
            return None

        red_turns = [
            Turn(t.role, redact(t.text), t.kind, t.ts, t.line, t.end_offset, t.tool_name) for t in turns
        ]
        stamps = [t.ts for t in turns if t.ts is not None]
        end = max(stamps) if stamps else (sess.end or datetime.fromtimestamp(item.path.stat().st_mtime, UTC))
        sub = Session(
            agent=sess.agent,
            session_id=redact(sess.session_id),
            source=sess.source,
            kind=sess.kind,
            turns=red_turns,
            start=min(stamps) if stamps else sess.start,
            end=end,
            ended=sess.ended,
        )
        anchor_list = anchors.extract(sub)
        ccfg = self.cfg.compress
        budget = entry_budget(ccfg, bytes_in, anchor_list)
        hard_cap = int(budget * 1.15)

        result, llm_error = self._compress(sub, anchor_list, budget)
        meta = entry.EntryMeta(
            entry_id=entry_id,
            agent=sess.agent,
            session=sub.session_id,
            source=redact(self.display_path(item.path)),
            kind=item.kind,
            end=end,
            first_line=red_turns[0].line,
            last_line=red_turns[-1].line,
            turns=len(red_turns),
            sha256=self._source_sha(item),
            compressor=result.compressor,
            bytes_in=bytes_in,
        )
        summary = entry.fit_with_room(result.summary, anchor_list, meta, budget)
        summary, rec = entry.guard(summary, anchor_list, meta, hard_cap)
        meta.recall = rec
        text = redact(entry.render(summary, meta))
        bytes_out = len(text.encode())
        ms = int((time.monotonic() - t0) * 1000)
        rep = EntryReport(
            agent=sess.agent,
            session=sub.session_id,
            source=meta.source,
            bytes_in=bytes_in,
            bytes_out=bytes_out,
            ratio=bytes_out / bytes_in if bytes_in else 0.0,
            recall=rec,
            compressor=result.compressor,
            entry_id=entry_id,
            llm_error=llm_error,
            tokens_in=result.tokens_in,
            tokens_out=result.tokens_out,
            ms=ms,
        )
        if self.dry_run:
            return rep
        ensure_dir(self.layout.cold)
        cold.append(self.layout, sess.agent, text, entry_id, self.cfg.cold.max_bytes, self.clock())
        self.ledger.add_entry(
            id=entry_id,
            path=str(item.path),
            session=sub.session_id,
            agent=sess.agent,
            session_end=entry.iso(end),
            start_offset=start_off,
            end_offset=end_off,
            first_line=red_turns[0].line,
            last_line=red_turns[-1].line,
            bytes_in=bytes_in,
            bytes_out=bytes_out,
            ratio=rep.ratio,
            recall=rec,
            compressor=result.compressor,
            tokens_in=result.tokens_in,
            tokens_out=result.tokens_out,
            ms=ms,
            llm_error=redact(llm_error),
            created_at=entry.iso(self.clock()),
        )
        self._archive_transcript(item, sub.session_id, sess.agent, meta.source)
        self.log.info(
            "compacted",
            agent=sess.agent,
            session=sub.session_id,
            source=meta.source,
            bytes_in=bytes_in,
            bytes_out=bytes_out,
            ratio=round(rep.ratio, 4),
            recall=round(rec, 3),
            compressor=result.compressor,
            anchors=len(anchor_list),
            tokens_in=result.tokens_in,
            tokens_out=result.tokens_out,
            ms=ms,
            llm_error=llm_error or None,
            notes=result.notes or None,
        )
        return rep

    def _source_sha(self, item: SourceItem) -> str:
        """sha256 of the source file as compacted (provenance)."""
        st = item.path.stat()
        key = f"{item.path}\0{st.st_size}\0{st.st_mtime_ns}"
        with self._sha_lock:
            if key in self._sha_cache:
                return self._sha_cache[key]
        digest = sha256_prefix(item.path, zst.logical_size(item.path, st.st_size))
        with self._sha_lock:
            if len(self._sha_cache) > 64:
                self._sha_cache.clear()
            self._sha_cache[key] = digest
        return digest

    def _archive_transcript(self, item: SourceItem, session: str, agent: str, shown_as: str) -> None:
        """Keep a redacted, compressed copy of the compacted transcript (see :mod:`scribed.tiers.transcripts`);
        a failed copy is a warning, never a failed compaction: the cold entry is already durable."""
        if item.kind == "hot":
            return
        try:
            transcripts.archive(
                self.cfg, self.layout, item.path, kind=item.kind, session=session, agent=agent,
                shown_as=shown_as, now=self.clock(),
            )  # fmt: skip
        except OSError as exc:
            self.log.warning("transcript_archive_failed", file=shown_as, reason=str(exc.strerror or exc))

    def display_path(self, path: Path) -> str:
        """A source path for provenance: relative to the root inside it, ``~/…`` under home."""
        root = self.layout.root
        try:
            return str(path.relative_to(root))
        except ValueError:
            pass
        try:
            return "~/" + str(path.relative_to(Path.home()))
        except ValueError:
            return str(path)

    # --- hot files ----------------------------------------------------------------------------
    def _archive_and_reset_hot(self, item: SourceItem, parsed: ParseResult) -> bool:
        """Archive the compacted bytes, redacted (after the cold entry is durable), then reset hot
        to the seed of that entry, compare-and-swap (see :mod:`scribed.tiers.hot_seed`): text an agent
        appended since the parse stays in hot. Returns whether hot now holds only the seed.
        """
        path = item.path
        agent = path.stem.lower()
        sid = parsed.sessions[0].session_id if parsed.sessions else ""
        snap = hot_seed.snapshot(path.read_bytes(), parsed.size, sid)
        if snap is None:
            self.log.warning("hot_changed_during_compaction", file=str(path), reason="left in place")
            return False
        clean = redact(snap.decode("utf-8", "replace")).encode()
        write_gzip_archive(self.layout.archive / "hot" / f"{agent}-{sha256_bytes(snap)[:12]}.md.gz", clean)
        return hot_seed.reset(self.layout, path, agent, snap, sid, self.log)

    # --- whole run ----------------------------------------------------------------------------
    def apply_inbox(self, report: RunReport | None = None) -> None:
        """Apply agent-written wiki entries dropped in ``.squad/memory/inbox/wiki/`` (caller holds the lock)."""
        from scribed.core.promote import apply_inbox

        res = apply_inbox(self.layout, self.cfg, self.clock, dry_run=self.dry_run)
        for w in res.get("warnings", []):
            self.log.warning("inbox_warning", reason=w)
        if report is not None:
            report.inbox = {
                "applied": len(res.get("applied", [])),
                "quarantined": len(res.get("quarantined", [])),
            }
            report.warnings += len(res.get("warnings", []))

    def run_once(
        self,
        *,
        force: bool = False,
        progress: Callable[[list[SourceItem]], Iterator[SourceItem]] | None = None,
    ) -> RunReport:
        """Process every source file once."""
        t0 = time.monotonic()
        self.prepare()
        report = RunReport()
        self.apply_inbox(report)
        items = list(self.items())
        it: Iterator[SourceItem] = progress(items) if progress else iter(items)
        for item in it:
            try:
                out = self.process(item, force=force)
            except OSError as exc:
                self.log.error("source_failed", file=str(item.path), reason=str(exc.strerror or exc))
                out = FileOutcome("failed", failed=1, reason=str(exc.strerror or exc))
            except Exception as exc:  # a bug on one file must not stop the others; it stays queued
                reason = redact(f"internal error: {type(exc).__name__}: {exc}")
                self.log.error("source_failed", file=str(item.path), reason=reason)
                out = FileOutcome("failed", failed=1, reason=reason)
            report.add(item, out)
        self.log.info(
            "run_complete",
            files=report.files,
            sessions=report.sessions,
            compacted=report.compacted,
            skipped=report.skipped,
            failed=report.failed,
            bytes_in=sum(e.bytes_in for e in report.entries),
            bytes_out=sum(e.bytes_out for e in report.entries),
            ms=int((time.monotonic() - t0) * 1000),
            peak_rss_mb=peak_rss_mb(),
            dry_run=self.dry_run or None,
        )
        return report


def read_cold(layout: Layout, agent: str) -> str:
    return read_text(layout.cold_file(agent))

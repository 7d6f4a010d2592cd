"""Which compressor compacts a session: the configured backend, the LLM when it is reachable, and
a breaker that pauses a failing endpoint (a dead endpoint must not cost every session of a backlog
its full timeout and retries)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from scribed.compress import plan
from scribed.compress.base import CompressError, Compressor, CompressResult
from scribed.compress.extractive import ExtractiveCompressor
from scribed.config import Config
from scribed.core.budget import far_under
from scribed.models import Anchor
from scribed.session.door import RedactedSession

if TYPE_CHECKING:
    from scribed.log import Logger

# After this many consecutive LLM failures the endpoint is paused (extractive fallback or queued).
BREAKER_FAILURES = 3
BREAKER_PAUSE_SECONDS = 300


class Compressors:
    """The extractive compressor, the LLM one (probed lazily) and the breaker, thread-safe."""

    def __init__(
        self,
        cfg: Config,
        clock: Callable[[], datetime],
        environ: Mapping[str, str],
        llm_factory: Callable[[], Compressor] | None,
        log: Logger,
    ) -> None:
        self.cfg = cfg
        self.clock = clock
        self.environ = environ
        self.log = log
        self.extractive = ExtractiveCompressor()
        self._llm_factory = llm_factory
        self._llm: Compressor | None = None
        self._llm_state: str | None = None  # None = not probed; "" = usable; else the reason it is not
        self._llm_lock = threading.Lock()
        self._llm_failures = 0
        self._llm_last_error = ""
        self._llm_paused_until = datetime.min.replace(tzinfo=UTC)
        self._llm_probe_again = datetime.min.replace(tzinfo=UTC)

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

    def compress(
        self, red: RedactedSession, anchors_: list[Anchor], budget: int
    ) -> tuple[CompressResult, str]:
        """Run the configured backend. Returns (result, llm_error). Raises CompressError for backend=llm."""
        session = red.session
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
        paused = self.breaker_reason()
        if paused:
            if backend == "llm":
                raise CompressError(paused)
            res = self.extractive.compress(session, anchors_, budget)
            res.notes.append(f"fallback: {paused}")
            return res, paused
        try:
            result = llm.compress(session, anchors_, budget)
            plan.fill(result.summary, session.turns, [a.text for a in anchors_ if a.type == "todo"])
            topped = far_under(result, budget) and self.extractive.top_up(
                result.summary, session, budget, result.compressor
            )
            if topped:
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

    def breaker_reason(self) -> str:
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

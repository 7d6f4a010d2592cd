"""The ``llm`` compressor: any OpenAI-compatible chat endpoint turns a session into a Summary.

The transcript is untrusted data (an agent may have read a hostile web page), so it is sent
between random-nonce markers with instructions to treat it as content only
(:mod:`~scribed.compress.llm_prompt`), and the reply is never acted on: it is parsed and validated
as a :class:`~scribed.models.Summary`, nothing more (:mod:`~scribed.compress.llm_guard`). Every call
is bounded (a total deadline per HTTP call covering connect, headers and body, a cap on the
answer's size, capped retries, a wall-clock deadline and a shared concurrency slot; see
:mod:`scribed.compress.llm_http`) so a sick endpoint can slow the daemon down but never hang it.

Errors carry short reasons only (``"timeout after 2.0s"``, ``"rate limited (429)"``): the
openai exceptions can quote response bodies that echo the prompt, so they are not chained
(:mod:`~scribed.compress.llm_endpoint` classifies them).
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Literal, cast

import openai
import stamina
from openai.types.chat import ChatCompletion

from scribed.compress import llm_http
from scribed.compress.base import CompressError, CompressResult
from scribed.compress.llm_endpoint import (
    PLACEHOLDER_KEY,
    connection_reason,
    context_exceeded,
    format_rejected,
    is_transient,
    make_client,
    probe,
    resolve_api_key,
    retry_after,
    status_reason,
    wants_max_completion_tokens,
)
from scribed.compress.llm_guard import parse_summary, try_parse
from scribed.compress.llm_prompt import (
    CHARS_PER_TOKEN,
    MODES,
    Mode,
    anchor_block,
    estimate_tokens,
    render_turn,
    response_format,
    shrink,
    system_prompt,
    user_prompt,
)
from scribed.config import LlmCfg
from scribed.models import Anchor, Session, Summary, clip

# The endpoint's public face, re-exported so callers import one module.
__all__ = ["PLACEHOLDER_KEY", "LlmCompressor", "LlmError", "parse_summary", "probe", "resolve_api_key"]

log = logging.getLogger(__name__)

RETRY_AFTER_CAP = 30.0  # never sleep longer than this on a server's say-so
MARGIN_TOKENS = 48  # chat template overhead per request, roughly
MAX_REDUCE_LEVELS = 6
MIN_ROOM_TOKENS = 200  # less room than this for the data of one request: the context is too small
MIN_GROUP = 2  # a merge joins at least two parts, or a reduce level makes no progress
MIN_WAIT_SECONDS = 0.1  # less time left than this is no time to retry in


class LlmError(CompressError):
    """The endpoint failed or answered unusably; ``reason`` is short and safe to log."""


_SEMAPHORES: dict[tuple[str, int], threading.BoundedSemaphore] = {}
_SEM_LOCK = threading.Lock()


def shared_semaphore(cfg: LlmCfg) -> threading.BoundedSemaphore:
    """One concurrency limit per endpoint, shared by every compressor in the process."""
    key = (cfg.base_url, cfg.max_concurrency)
    with _SEM_LOCK:
        sem = _SEMAPHORES.get(key)
        if sem is None:
            sem = _SEMAPHORES[key] = threading.BoundedSemaphore(cfg.max_concurrency)
        return sem


@dataclass
class _Run:
    """Per-compress() bookkeeping, so one compressor can serve several workers at once."""

    deadline: float
    tokens_in: int = 0
    tokens_out: int = 0
    calls: int = 0
    repaired: int = 0
    notes: list[str] = field(default_factory=list)
    mode: Mode | None = None


@dataclass
class _Part:
    first: int
    last: int
    summary: Summary


class LlmCompressor:
    """Summarize with an OpenAI-compatible endpoint; map-reduce when the session is too long.

    Time bounds: each HTTP attempt ≤ ``timeout_seconds``; each logical call (its retries and
    Retry-After waits included) ≤ :attr:`call_cap` = (max_retries + 1) × timeout + 60 s; one
    compress() ≤ ``max_seconds`` (default 2 × call_cap) however many chunks it has.
    """

    name = "llm"
    max_chunks = 32  # map calls per session; beyond this the caller falls back

    def __init__(
        self,
        cfg: LlmCfg,
        client: openai.OpenAI | None = None,
        environ: Mapping[str, str] | None = None,
        *,
        semaphore: threading.BoundedSemaphore | None = None,
        max_seconds: float | None = None,
    ) -> None:
        self.cfg = cfg
        env: Mapping[str, str] = environ if environ is not None else os.environ
        self.client = client if client is not None else make_client(cfg, env)
        self.semaphore = semaphore if semaphore is not None else shared_semaphore(cfg)
        self.call_cap = (cfg.max_retries + 1) * cfg.timeout_seconds + 60.0
        self.max_seconds = max_seconds if max_seconds is not None else 2 * self.call_cap
        self._mode: Mode | None = None if cfg.response_format == "auto" else cfg.response_format
        self._max_tokens_param = "max_tokens"
        self._lock = threading.Lock()

    @property
    def mode(self) -> Mode | None:
        """The response_format mode that works with this endpoint (None until known)."""
        return self._mode

    # -- public API --

    def compress(self, session: Session, anchors: list[Anchor], budget: int) -> CompressResult:
        run = _Run(deadline=time.monotonic() + self.max_seconds)
        lines = [(t.line, r) for t in session.turns if (r := render_turn(t)) is not None]
        if not lines:
            raise LlmError("empty session")
        facts = anchor_block(anchors, self._facts_chars())
        room = self._room(budget, facts, merge=False)
        transcript = "\n".join(text for _, text in lines)
        if estimate_tokens(transcript) <= room:
            summary = self._summarize(run, transcript, facts, budget, self._max_out(budget), merge=False)
        else:
            summary = self._map_reduce(run, lines, anchors, budget)
        notes = [run.mode or "text", *(["repaired"] if run.repaired else []), *run.notes]
        return CompressResult(
            summary=summary,
            compressor=f"llm:{self.cfg.model}",
            tokens_in=run.tokens_in,
            tokens_out=run.tokens_out,
            calls=run.calls,
            notes=notes,
        )

    # -- planning --

    def _max_out(self, budget: int) -> int:
        return int(min(budget / 3 + 200, self.cfg.context_tokens / 4))

    def _facts_chars(self) -> int:
        return int(self.cfg.context_tokens * CHARS_PER_TOKEN * 0.15)

    def _room(self, budget: int, facts: str, *, merge: bool) -> int:
        """Tokens left for the data of one request."""
        fixed = estimate_tokens(system_prompt(budget, "0" * 12, merge=merge)) + MARGIN_TOKENS + 30
        room = self.cfg.context_tokens - self._max_out(budget) - fixed - estimate_tokens(facts)
        if room < MIN_ROOM_TOKENS:
            raise LlmError(f"context_tokens {self.cfg.context_tokens} too small for the prompt")
        return room

    def _map_reduce(
        self, run: _Run, lines: list[tuple[int, str]], anchors: list[Anchor], budget: int
    ) -> Summary:
        part_budget = max(600, budget // 2)
        # Room with the largest fact block a chunk can get, so every chunk fits.
        room_chars = int(self._room(part_budget, "x" * self._facts_chars(), merge=False) * CHARS_PER_TOKEN)
        chunks: list[list[tuple[int, str]]] = [[]]
        size = 0
        for line, text in lines:
            text = clip(text, room_chars - 40)
            if chunks[-1] and size + len(text) + 1 > room_chars:
                chunks.append([])
                size = 0
            chunks[-1].append((line, text))
            size += len(text) + 1
        if len(chunks) > self.max_chunks:
            # Fail fast: dozens of calls would most likely hit the deadline after minutes anyway.
            raise LlmError(f"session too long: {len(chunks)} chunks > {self.max_chunks}")
        run.notes.append(f"map-reduce {len(chunks)} chunks")
        parts: list[_Part] = []
        for chunk in chunks:
            first, last = chunk[0][0], chunk[-1][0]
            mine = [a for a in anchors if first <= a.line <= last]
            facts = anchor_block(mine, self._facts_chars())
            data = "\n".join(t for _, t in chunk)
            summary = self._summarize(run, data, facts, part_budget, self._max_out(part_budget), merge=False)
            parts.append(_Part(first, last, summary))
        return self._reduce(run, parts, anchors, budget, part_budget)

    def _reduce(
        self, run: _Run, parts: list[_Part], anchors: list[Anchor], budget: int, part_budget: int
    ) -> Summary:
        facts = anchor_block(anchors, self._facts_chars())
        room_chars = int(self._room(budget, facts, merge=True) * CHARS_PER_TOKEN)
        for level in range(MAX_REDUCE_LEVELS):
            rendered = [self._render_part(p, room_chars // 2) for p in parts]
            if sum(len(r) + 1 for r in rendered) <= room_chars or len(parts) <= MIN_GROUP:
                data = "\n".join(rendered)
                return self._summarize(run, data, facts, budget, self._max_out(budget), merge=True)
            # Too big for one merge: merge neighbours in groups that fit, then go up a level.
            groups: list[list[int]] = [[]]
            size = 0
            for i, r in enumerate(rendered):
                if len(groups[-1]) >= MIN_GROUP and size + len(r) + 1 > room_chars:
                    groups.append([])
                    size = 0
                groups[-1].append(i)
                size += len(r) + 1
            merged: list[_Part] = []
            for g in groups:
                if len(g) == 1:
                    merged.append(parts[g[0]])
                    continue
                data = "\n".join(rendered[i] for i in g)
                group_parts = [parts[i] for i in g]
                first, last = group_parts[0].first, group_parts[-1].last
                mine = [a for a in anchors if first <= a.line <= last]
                group_facts = anchor_block(mine, self._facts_chars() // 2)
                summary = self._summarize(
                    run, data, group_facts, part_budget, self._max_out(part_budget), merge=True
                )
                merged.append(_Part(first, last, summary))
            parts = merged
            log.debug("llm reduce level %d: %d parts", level + 1, len(parts))
        raise LlmError("reduce did not converge")

    @staticmethod
    def _render_part(part: _Part, max_chars: int) -> str:
        head = f"[part L{part.first}-L{part.last}] "
        summary = shrink(part.summary, max(200, max_chars - len(head)))
        return head + summary.model_dump_json(exclude_defaults=True)

    # -- one logical request: format fallback, length retry, one repair --

    def _summarize(
        self, run: _Run, data: str, facts: str, budget: int, max_out: int, *, merge: bool
    ) -> Summary:
        nonce = secrets.token_hex(6)
        messages: list[dict[str, str]] = [
            {"role": "system", "content": system_prompt(budget, nonce, merge=merge)},
            {"role": "user", "content": user_prompt(data, nonce, facts, merge=merge)},
        ]
        content = self._complete(run, messages, max_out)
        summary, reason = try_parse(content)
        if summary is not None:
            return summary
        if reason == "empty output":
            raise LlmError(reason)
        repair = self._repair_messages(messages, content or "", reason, budget, max_out)
        summary, reason = try_parse(self._complete(run, repair, max_out))
        if summary is None:
            raise LlmError(reason)
        run.repaired += 1
        return summary

    def _repair_messages(
        self, messages: list[dict[str, str]], bad: str, reason: str, budget: int, max_out: int
    ) -> list[dict[str, str]]:
        """Send the bad output back with what was wrong; without the transcript if it won't fit."""
        shown = clip(bad, 4000)
        ask = (
            f"Your reply could not be used ({reason}). Reply again with ONLY the JSON object: exactly the "
            "keys goal, outcome, decisions, files, errors, open_items, knowledge, key_facts; lists of "
            "short strings; no prose, no code fences, no <think>."
        )
        full = [*messages, {"role": "assistant", "content": shown}, {"role": "user", "content": ask}]
        if (
            sum(estimate_tokens(m["content"]) for m in full) + max_out + MARGIN_TOKENS
            <= self.cfg.context_tokens
        ):
            return full
        nonce = secrets.token_hex(6)
        return [
            {"role": "system", "content": system_prompt(budget, nonce, merge=False)},
            {
                "role": "user",
                "content": user_prompt(shown, nonce, "", merge=False).replace(
                    "Session transcript", "A draft summary to convert"
                )
                + f"\nThe draft was not usable ({reason}). {ask}",
            },
        ]

    def _complete(self, run: _Run, messages: list[dict[str, str]], max_out: int) -> str | None:
        """Content of one completion, falling back through response formats as the server demands."""
        call_deadline = min(run.deadline, time.monotonic() + self.call_cap)
        grown = False
        while True:
            mode = self._current_mode()
            resp = self._request(run, messages, mode, max_out, call_deadline)
            if resp is None:  # the server refused this response_format
                if self._fall_back(mode) is None:
                    raise LlmError(f"response_format {mode} rejected")
                continue
            run.mode = mode
            choices = getattr(resp, "choices", None) or [None]
            message = getattr(choices[0], "message", None)
            finish = getattr(choices[0], "finish_reason", None)
            content = getattr(message, "content", None)
            if message is None or not (content is None or isinstance(content, str)):
                raise LlmError("malformed response")
            if finish == "length":
                prompt = sum(estimate_tokens(m["content"]) for m in messages) + MARGIN_TOKENS
                bigger = min(max_out * 2, self.cfg.context_tokens - prompt)
                if grown or bigger < max_out * 1.25:
                    raise LlmError("truncated output (finish_reason=length)")
                max_out, grown = bigger, True
                run.notes.append(f"max_tokens raised to {bigger}")
                continue
            if finish == "content_filter":
                raise LlmError("content filtered")
            return content

    def _current_mode(self) -> Mode:
        with self._lock:
            return self._mode or "json_schema"

    def _fall_back(self, mode: Mode) -> Mode | None:
        """Remember that ``mode`` does not work here; the next one to try, if any."""
        if self.cfg.response_format != "auto":
            return None
        idx = MODES.index(mode)
        if idx + 1 >= len(MODES):
            return None
        nxt = MODES[idx + 1]
        with self._lock:
            self._mode = nxt
        log.info("llm endpoint rejected response_format %s; using %s", mode, nxt)
        return nxt

    # -- one HTTP request with retries --

    def _request(
        self, run: _Run, messages: list[dict[str, str]], mode: Mode, max_out: int, deadline: float
    ) -> ChatCompletion | None:
        """One completion with retries; None when the server refused ``mode``."""

        def backoff(exc: BaseException) -> bool | float:
            # BaseException: what stamina (26.2+) declares its ``on`` callback takes.
            if not (isinstance(exc, _AttemptFailedError) and exc.transient):
                return False
            remaining = deadline - time.monotonic()
            if remaining <= MIN_WAIT_SECONDS:
                return False
            if exc.retry_after is None:
                return True
            wait = min(exc.retry_after, RETRY_AFTER_CAP)
            return wait if wait < remaining else False

        try:
            for attempt in stamina.retry_context(
                on=backoff,
                attempts=self.cfg.max_retries + 1,
                timeout=max(MIN_WAIT_SECONDS, deadline - time.monotonic()),
                wait_initial=0.5,
                wait_max=10.0,
                wait_jitter=1.0,
            ):
                with attempt:
                    return self._send(run, messages, mode, max_out, deadline)
        except _FormatRejectedError:
            return None
        except _AttemptFailedError as failure:
            reason = failure.reason
        raise LlmError(reason)  # outside the except block: nothing rides along as __context__

    def _send(
        self, run: _Run, messages: list[dict[str, str]], mode: Mode, max_out: int, deadline: float
    ) -> ChatCompletion:
        """One HTTP attempt inside a concurrency slot; failures become a safe :class:`_AttemptFailedError`."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _AttemptFailedError("deadline exceeded", transient=False)
        if not self.semaphore.acquire(timeout=remaining):
            raise _AttemptFailedError("deadline exceeded waiting for a concurrency slot", transient=False)
        try:
            timeout = min(self.cfg.timeout_seconds, max(MIN_WAIT_SECONDS, deadline - time.monotonic()))
            for _ in range(2):  # the second pass only after switching to max_completion_tokens
                run.calls += 1
                outcome = self._create(messages, mode, max_out, timeout)
                if outcome != "switch":
                    break
        finally:
            self.semaphore.release()
        if outcome == "rejected":
            raise _FormatRejectedError
        if isinstance(outcome, _AttemptFailedError):
            raise outcome
        if not isinstance(outcome, ChatCompletion):
            raise _AttemptFailedError("malformed response", transient=False)
        usage = outcome.usage
        run.tokens_in += int(getattr(usage, "prompt_tokens", 0) or 0)
        run.tokens_out += int(getattr(usage, "completion_tokens", 0) or 0)
        return outcome

    def _create(
        self, messages: list[dict[str, str]], mode: Mode, max_out: int, timeout: float
    ) -> ChatCompletion | _AttemptFailedError | Literal["rejected", "switch"]:
        """The openai call, with every exception turned into a value.

        openai exceptions quote response bodies (which may echo the prompt) and stamina logs
        ``repr`` of whatever it retries on, so none of them leaves this method.
        """
        kwargs: dict[str, Any] = {
            "model": self.cfg.model,
            "messages": messages,
            "temperature": self.cfg.temperature,
            "response_format": response_format(mode),
            self._max_tokens_param: max_out,
            "timeout": timeout,
        }
        try:
            with llm_http.deadline(timeout):  # the whole call, redirects included
                resp: Any = self.client.chat.completions.create(**kwargs)
        except openai.APITimeoutError:
            return _AttemptFailedError(f"timeout after {timeout:.1f}s", transient=True)
        except openai.APIConnectionError as exc:
            return _AttemptFailedError(connection_reason(exc), transient=True)
        except openai.APIStatusError as exc:
            if mode != "text" and format_rejected(exc):
                return "rejected"
            if self._max_tokens_param == "max_tokens" and wants_max_completion_tokens(exc):
                self._max_tokens_param = "max_completion_tokens"
                return "switch"
            if exc.status_code == HTTPStatus.BAD_REQUEST and context_exceeded(exc):
                return _AttemptFailedError(
                    "prompt exceeds the model's context (400): lower llm.context_tokens", transient=False
                )
            return _AttemptFailedError(
                status_reason(exc.status_code), transient=is_transient(exc), retry_after=retry_after(exc)
            )
        except openai.OpenAIError as exc:
            return _AttemptFailedError(f"client error ({type(exc).__name__})", transient=False)
        return cast(ChatCompletion, resp)


class _FormatRejectedError(Exception):
    """The server refused this response_format; the caller falls back."""


class _AttemptFailedError(Exception):
    """One failed attempt reduced to a safe reason; its repr is what stamina logs on retry."""

    def __init__(self, reason: str, *, transient: bool, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.transient = transient
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return f"LlmAttemptFailed({self.reason!r})"

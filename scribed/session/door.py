"""The one door through which outside text enters scribed: everything a writer stores was redacted
here, once. The types say so: a tier writer takes :data:`Redacted` text or a
:class:`RedactedSession`, never a plain ``str`` or :class:`~scribed.models.Session`, so mypy rejects
a writer handed text that did not come through the door (logs keep their own scrubbing)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, NamedTuple, NewType

from scribed.bytecache import sha256_hex
from scribed.sizedcache import SizedCache

# Annotations only: a spawn's `scribed context` redacts without loading the models (pydantic).
if TYPE_CHECKING:
    from scribed.models import Session, Turn

from scribed.session.redact import REDACTED, redact, redact_path, secret_spans

Redacted = NewType("Redacted", str)
NOTHING = Redacted("")  # the empty text, for defaults

# A session's turns are redacted in blocks of about BLOCK_CHARS, each judged with CONTEXT_CHARS of
# the turns around it (redact_within): the door sees what `scribed redact` sees in the file. Blocks
# are cut greedily from the first turn, so a growing session redacts only its last blocks again: the
# others are cached by the sha256 of the block and its context, least recent out first. 128 KiB:
# 32 KiB blocks scanned 1.5x the text with their context, these 1.125x (docs/benchmarks.md, stop 48).
BLOCK_CHARS = 128 * 1024
CONTEXT_CHARS = 8 * 1024  # a 4096-bit PEM key is ~3.3 KB; a name and its value far less
# Redacted blocks kept, counted in characters: a block is one turn when the turn is longer than
# BLOCK_CHARS, so a count of blocks held 512 turns of a session of 100 KB messages (51 MB).
CACHED_CHARS = 16 << 20
_cache: SizedCache[list[str]] = SizedCache(CACHED_CHARS, lambda texts: sum(map(len, texts)))


def redacted(text: str) -> Redacted:
    """Text from outside (a transcript, a user's argument, a legacy file), with secrets replaced."""
    return Redacted(redact(text))


def redacted_path(path: str) -> Redacted:
    """A file path as provenance, the ledger and the archive show it, redacted a name at a time."""
    return Redacted(redact_path(path))


def _blocks(texts: list[str]) -> list[tuple[int, int]]:
    """``texts`` cut into runs of about :data:`BLOCK_CHARS` characters, from the first."""
    out, start, size = [], 0, 0
    for i, t in enumerate(texts):
        size += len(t) + 1
        if size >= BLOCK_CHARS:
            out.append((start, i + 1))
            start, size = i + 1, 0
    return [*out, (start, len(texts))] if start < len(texts) else out


def _context(texts: list[str], indices: range) -> str:
    """The texts at ``indices`` (nearest first), joined in text order, up to :data:`CONTEXT_CHARS`."""
    got: list[str] = []
    size = 0
    for i in indices:
        if size >= CONTEXT_CHARS:
            break
        got.append(texts[i])
        size += len(texts[i]) + 1
    return "\n".join(got if indices.step > 0 else got[::-1])


def redacted_texts(texts: list[str], *, remember: bool = True) -> list[Redacted]:
    """A session's turn texts with secrets replaced, each judged with the turns around it; each
    block's result cached unless not ``remember`` (a session redacted once, for its entry)."""
    out: list[Redacted] = []
    for i, j in _blocks(texts):
        before = _context(texts, range(i - 1, -1, -1))[-CONTEXT_CHARS:]
        after = _context(texts, range(j, len(texts)))[:CONTEXT_CHARS]
        before, after = (before + "\n" if i else ""), ("\n" + after if j < len(texts) else "")
        out += map(Redacted, _redacted_block(before, texts[i:j], after, remember))
    return out


def _redacted_block(before: str, texts: list[str], after: str, remember: bool) -> list[str]:
    key = sha256_hex(
        "".join(f"{len(p)}:{p}" for p in (before, *texts, after)).encode("utf-8", "surrogatepass")
    )
    hit = _cache.get(key)
    if hit is None:
        hit = redact_within(before, texts, after)
        if remember:
            _cache.put(key, hit)
    return hit


def clear_cache() -> None:
    """Forget the cached redactions (tests that swap the engine)."""
    _cache.clear()


STREAM_CONTEXT = 64 * 1024  # a secret with its name or armour is far shorter (a 4096-bit PEM: ~3.3 KB)


def redacted_chunks(
    src: IO[bytes], chunk_bytes: int, line_limit: int, context: int = STREAM_CONTEXT
) -> Iterator[bytes]:
    """A file too big to hold (a transcript copied whole) with secrets replaced, about ``chunk_bytes``
    at a time, cut at line ends and decoded one by one. A secret can span lines (a PEM key's body),
    so each chunk is redacted inside ``context`` of the text before and after it, and prints its own
    part: a span starting in it prints the marker (the next skips the rest). Memory: three chunks.
    A chunk that is valid UTF-8 and touches no secret comes back as the same bytes."""
    from scribed.fsutil import line_chunks  # here: fsutil loads threading, which a spawn does not

    it = iter(line_chunks(src, chunk_bytes, line_limit))
    ahead: deque[tuple[bytes, str]] = deque()  # the chunk at hand, then enough to see ``context`` past it
    ahead_chars = 0  # of the chunks after the one at hand
    prev_tail = ""
    carry = 0  # characters at the start of the chunk inside a secret the previous chunk printed
    done = False
    while True:
        while not done and (len(ahead) <= 1 or ahead_chars < context):  # the chunk and one more, at least
            nxt = next(it, None)
            if nxt is None:
                done = True
                break
            text = nxt.decode("utf-8", "replace")
            if ahead:
                ahead_chars += len(text)
            ahead.append((nxt, text))
        if not ahead:
            return
        cur, text = ahead.popleft()
        after = "".join(t for _, t in ahead)[:context]
        if ahead:
            ahead_chars -= len(ahead[0][1])
        out, carry = _window(prev_tail, text, after, carry)
        same = out is None and text.encode("utf-8") == cur  # no U+FFFD made (text: cur decoded)
        yield cur if same else (text if out is None else out).encode("utf-8")
        prev_tail = (prev_tail + text)[-context:] if context else ""


def _window(before: str, text: str, after: str, carry: int) -> tuple[str | None, int]:
    """``text`` redacted as a part of ``before + text + after``; None when no secret touches it.
    Also returns how far into the next chunk the last printed secret reaches."""
    window = before + text + after
    a, b = len(before), len(before) + len(text)
    pos = a + carry  # the previous chunk printed the marker of what lies before pos
    spans = [(s, e) for s, e in secret_spans(window) if e > pos and s < b]
    if not spans and not carry:
        return None, 0
    out: list[str] = []
    for s, e in spans:
        if s < pos:  # began before pos: hide the rest of it
            if pos == a and not carry:
                out.append(REDACTED)  # the previous window did not see it reach here
            pos = max(pos, e)
            continue
        out.append(window[pos:s])
        out.append(REDACTED)
        pos = e
    out.append(window[pos:b])
    return "".join(out), max(0, pos - b)


def redact_within(before: str, texts: Sequence[str], after: str) -> list[str]:
    """Each of ``texts`` redacted as a part of ``before + "\\n".join(texts) + after`` (a PEM body
    whose header ended the previous turn): a secret spanning turns leaves a marker in each; a text
    no secret touches comes back as the same object."""
    window = before + "\n".join(texts) + after
    spans = secret_spans(window)
    out: list[str] = []
    pos, k = len(before), 0
    for t in texts:
        a, b = pos, pos + len(t)
        while k < len(spans) and spans[k][1] <= a:
            k += 1
        parts: list[str] = []
        cur, j = a, k
        while j < len(spans) and spans[j][0] < b:
            s, e = max(spans[j][0], a), min(spans[j][1], b)
            if e > s:
                parts += (window[cur:s], REDACTED)
                cur = e
            j += 1
        out.append("".join((*parts, window[cur:b])) if parts else t)
        pos = b + 1
    return out


class RedactedSession(NamedTuple):
    """A parsed session whose id and turn texts went through the door. ``session`` is what writers
    and compressors read; the raw id stays with the core (ledger keys), never in a file. Immutable,
    compared by value, pickled by its fields (a pool worker sends it)."""

    session: Session
    source: Redacted  # the source path, as outside text

    @property
    def session_id(self) -> Redacted:
        return Redacted(self.session.session_id)

    @property
    def agent(self) -> str:
        return self.session.agent


def unwrap(red: RedactedSession) -> Session:
    """The session inside ``red``; a writer calls this first, so a plain Session (one that skipped
    the door) is refused at run time too, not only by mypy."""
    if not isinstance(red, RedactedSession):
        raise TypeError(f"{type(red).__name__} did not come through the redaction door (redact_session)")
    return red.session


TURN_FIELDS = ("role", "text", "kind", "ts", "line", "end_offset", "tool_name")  # Turn's, in order


def _with_text(t: Turn, text: str) -> Turn:
    """``replace(t, text=text)`` without its per-call walk over the fields (a test checks them)."""
    return type(t)(t.role, text, t.kind, t.ts, t.line, t.end_offset, t.tool_name)


def redact_session(
    session: Session, turns: Iterable[Turn] | None = None, *, remember: bool = True, let_go: bool = False
) -> RedactedSession:
    """``session`` with its id and texts redacted; ``turns`` (default: all) picks the turns kept;
    ``remember``: see :func:`redacted_texts`; ``let_go``: the picked turns' raw texts are emptied
    (a caller that reads them no more holds a text a secret changed once, not twice)."""
    from dataclasses import replace  # here: whoever holds a Session has loaded dataclasses already

    picked = list(session.turns if turns is None else turns)
    texts = redacted_texts([t.text for t in picked], remember=remember)
    kept = [_with_text(t, r) for t, r in zip(picked, texts, strict=True)]
    if let_go:
        for t in picked:
            t.text = ""
    red = replace(session, session_id=redacted(session.session_id), turns=kept)
    return RedactedSession(red, redacted(str(session.source)))

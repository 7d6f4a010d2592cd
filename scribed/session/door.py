"""The one door through which outside text enters scribed: everything a writer stores was redacted
here, once. The types say so: a tier writer takes :data:`Redacted` text or a
:class:`RedactedSession`, never a plain ``str`` or :class:`~scribed.models.Session`, so mypy rejects
a writer handed text that did not come through the door (logs keep their own scrubbing)."""

from __future__ import annotations

import _thread
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import IO, TYPE_CHECKING, NewType

# Annotations only: a spawn's `scribed context` redacts without loading the models (pydantic).
if TYPE_CHECKING:
    from scribed.models import Session, Turn

from scribed.session.redact import redact, redact_path
from scribed.session.redact_stream import redact_chunks, redact_within

Redacted = NewType("Redacted", str)
NOTHING = Redacted("")  # the empty text, for defaults

# A session's turns are redacted in blocks of about BLOCK_CHARS, each judged with CONTEXT_CHARS of
# the turns around it (redact_stream.redact_within): the door sees what `scribed redact` sees in
# the file. Blocks are cut greedily from the first turn, so a growing session (a live view re-reads
# it on every change) redacts only its last blocks again: the rest come from this cache, keyed by
# the sha256 of the block and its context (no secret is kept; values are redacted), least recently
# used first out, bounded by the characters held.
BLOCK_CHARS = 32 * 1024
CONTEXT_CHARS = 8 * 1024  # a 4096-bit PEM key is ~3.3 KB; a name and its value far less
_CACHE_CHARS = 16 * 1024 * 1024
_cache: OrderedDict[bytes, list[str]] = OrderedDict()
_cache_size = [0]
_cache_lock = _thread.allocate_lock()  # = threading.Lock(), without importing threading


def redacted(text: str) -> Redacted:
    """Text from outside (a transcript, a user's argument, a legacy file), with secrets replaced."""
    return Redacted(redact(text))


def redacted_path(path: str) -> Redacted:
    """A file path as provenance, the ledger and the archive show it: redacted one name at a time,
    because a file name can itself be ``DB_PASSWORD=hunter2 notes.md``."""
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


def redacted_texts(texts: list[str]) -> list[Redacted]:
    """A session's turn texts with secrets replaced, each judged with the turns around it."""
    import hashlib  # here: it loads OpenSSL (~4 ms), and a spawn never redacts a session

    out: list[Redacted] = []
    for i, j in _blocks(texts):
        before = _context(texts, range(i - 1, -1, -1))[-CONTEXT_CHARS:]
        after = _context(texts, range(j, len(texts)))[:CONTEXT_CHARS]
        before, after = (before + "\n" if i else ""), ("\n" + after if j < len(texts) else "")
        h = hashlib.sha256()
        for part in (before, *texts[i:j], after):
            h.update(b"%d:" % len(part) + part.encode("utf-8", "surrogatepass"))
        key = h.digest()
        with _cache_lock:
            hit = _cache.get(key)
            if hit is not None:
                _cache.move_to_end(key)
        if hit is None:
            hit = redact_within(before, texts[i:j], after)
            with _cache_lock:
                if key not in _cache:
                    _cache[key] = hit
                    _cache_size[0] += sum(map(len, hit))
                while _cache_size[0] > _CACHE_CHARS and _cache:
                    _cache_size[0] -= sum(map(len, _cache.popitem(last=False)[1]))
        out += map(Redacted, hit)
    return out


def clear_cache() -> None:
    """Forget the cached redactions (tests that swap the engine)."""
    with _cache_lock:
        _cache.clear()
        _cache_size[0] = 0


def redacted_chunks(src: IO[bytes], chunk_bytes: int, line_limit: int) -> Iterator[bytes]:
    """A raw file's text with secrets replaced, about ``chunk_bytes`` at a time, cut at line ends
    (a transcript copied whole: memory stays bounded). Each chunk is judged with the text around
    it, so a secret spanning lines across a chunk's edge is caught (:mod:`~scribed.session.redact_stream`)."""
    return redact_chunks(raw_chunks(src, chunk_bytes, line_limit))


def raw_chunks(src: IO[bytes], chunk_bytes: int, line_limit: int) -> Iterator[bytes]:
    """``src`` cut into the fewest ``src.readline(line_limit)`` pieces that hold ``chunk_bytes``
    (the rest of the file at its end), found in blocks read whole rather than one readline call
    a line."""
    buf = bytearray()  # what is read and not yet yielded: it starts a piece
    eof = False
    x = chunk_bytes - 1  # the chunk ends with the piece holding this byte
    while True:
        while len(buf) <= x and not eof:
            eof = _fill(src, buf, chunk_bytes)
        if len(buf) <= x:
            if buf:
                yield bytes(buf)
            return
        nl = buf.rfind(b"\n", 0, x)
        # A line is cut every line_limit bytes from its start, or from buf's (a piece's start).
        line = nl + 1 if nl >= 0 else 0
        cut = line + ((x - line) // line_limit + 1) * line_limit  # the piece's end, without a newline
        pos = x
        while (nl := buf.find(b"\n", pos, cut)) < 0 and len(buf) < cut and not eof:
            pos = len(buf)
            eof = _fill(src, buf, chunk_bytes)
        end = nl + 1 if nl >= 0 else min(cut, len(buf))
        yield bytes(buf[:end])
        del buf[:end]


def _fill(src: IO[bytes], buf: bytearray, size: int) -> bool:
    """Read about ``size`` more bytes into ``buf``; True at the end of the file."""
    more = src.read(max(size, 1 << 16))
    buf += more
    return not more


class RedactedSession:
    """A parsed session whose id and turn texts went through the door. ``session`` is what writers
    and compressors read; the raw id stays with the core (ledger keys), never in a file. Immutable
    and compared by value (a plain class: a spawn that only redacts does not import dataclasses)."""

    __slots__ = ("session", "source")
    session: Session
    source: Redacted  # the source path, as outside text

    def __init__(self, session: Session, source: Redacted) -> None:
        object.__setattr__(self, "session", session)
        object.__setattr__(self, "source", source)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: a RedactedSession is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: a RedactedSession is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RedactedSession):
            return NotImplemented
        return (self.session, self.source) == (other.session, other.source)

    def __hash__(self) -> int:
        return hash((self.session, self.source))

    def __reduce__(self) -> tuple[type[RedactedSession], tuple[Session, Redacted]]:
        """Pickled by its fields (a pool worker sends it): unpickling may not set them one by one."""
        return (RedactedSession, (self.session, self.source))

    def __repr__(self) -> str:
        return f"RedactedSession(session={self.session!r}, source={self.source!r})"

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
    """``replace(t, text=text)`` without its per-call walk over the fields (:data:`TURN_FIELDS`;
    a test checks they are Turn's)."""
    return type(t)(t.role, text, t.kind, t.ts, t.line, t.end_offset, t.tool_name)


def redact_session(session: Session, turns: Iterable[Turn] | None = None) -> RedactedSession:
    """``session`` with its id and texts redacted; ``turns`` (default: all) picks the turns kept."""
    from dataclasses import replace  # here: whoever holds a Session has loaded dataclasses already

    picked = list(session.turns if turns is None else turns)
    texts = redacted_texts([t.text for t in picked])
    kept = [_with_text(t, r) for t, r in zip(picked, texts, strict=True)]
    red = replace(session, session_id=redacted(session.session_id), turns=kept)
    return RedactedSession(red, redacted(str(session.source)))


__all__ = [
    "NOTHING",
    "Redacted",
    "RedactedSession",
    "clear_cache",
    "redact_session",
    "redacted",
    "redacted_chunks",
    "redacted_path",
    "redacted_texts",
    "unwrap",
]

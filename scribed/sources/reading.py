"""Reading one source file: the parser a kind takes (:func:`parse_file`, which never raises), and
the compact loop's reading of a file (:func:`read_file`), whose sessions a markdown file or a
large Squad REPL one gives a pass at a time, so memory follows its largest session.

Apart from the package (which re-exports these names) so it holds finding a source's files:
discovery and the daemon's :func:`~scribed.sources.match` never parse, except to tell a markdown
session log from notes.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from scribed.models import ParseResult, Session
from scribed.sources import claude, codex, copilot, hot, injected, markdown, squad_repl
from scribed.sources.common import Source

KINDS = ("copilot", "claude", "codex", "squad-repl", "markdown", "hot")

_PARSERS: dict[str, Callable[[Source], ParseResult]] = {
    "copilot": copilot.parse,
    "claude": claude.parse,
    "codex": codex.parse,
    "squad-repl": squad_repl.parse,
    "markdown": markdown.parse,
    "hot": hot.parse,
}


def parse_file(kind: str, path: Path, default_agent: str) -> ParseResult:
    """Parse one source file of ``kind`` into sessions; bad content becomes warnings, not errors.

    Raises ``ValueError`` only for caller bugs: an unknown kind.
    """
    parser = _PARSERS.get(kind)
    if parser is None:
        raise ValueError(f"unknown source kind {kind!r}; expected one of {', '.join(KINDS)}")
    try:
        result = parser(_source(kind, path, default_agent))
        return result if kind == "hot" else injected.clean(result)  # scribed's own context, hooks, skills
    except Exception as exc:  # a daemon must survive any one file; the type names the bug
        return _failed(kind, path, exc)


def _source(kind: str, path: Path, default_agent: str) -> Source:
    st = path.stat()
    mtime = datetime.fromtimestamp(st.st_mtime, tz=UTC)
    return Source(kind=kind, path=path, default_agent=default_agent, mtime=mtime, size=st.st_size)


def _failed(kind: str, path: Path, exc: Exception) -> ParseResult:
    """What :func:`parse_file` returns when reading or parsing raised."""
    if isinstance(exc, OSError):
        return ParseResult(sessions=[], warnings=[f"{kind}: cannot read {path}: {exc.strerror or exc}"])
    return ParseResult(sessions=[], warnings=[f"{kind}: internal error parsing {path}: {type(exc).__name__}"])


class ChangedError(Exception):
    """A file read again no longer gives the sessions its first reading gave."""


@dataclass(frozen=True, slots=True)
class Brief:
    """What the compact loop decides with about one session, without its turns."""

    agent: str
    session_id: str
    ended: bool
    offsets: array[int]  # each turn's end_offset, in turn order

    @classmethod
    def of(cls, sess: Session) -> Brief:
        return cls(sess.agent, sess.session_id, sess.ended, array("q", (t.end_offset for t in sess.turns)))


@dataclass(frozen=True, slots=True)
class Reading:
    """A source file read once for its :class:`Brief`s; :meth:`sessions` gives the sessions
    themselves one at a time. A markdown file, or a Squad REPL one over :data:`STREAM_MIN_BYTES`,
    is read again for them (``result.sessions`` is empty), so memory follows its largest session;
    other kinds keep the parse in ``result``."""

    result: ParseResult  # warnings, size, end state; the sessions unless streamed
    briefs: list[Brief]
    stream: markdown.Stream | squad_repl.Stream | None = None

    def sessions(self) -> Iterator[Session]:
        """The sessions in order, cleaned as :func:`parse_file` cleans them. Raises
        :class:`ChangedError` when a second reading fails or differs from the first."""
        if self.stream is None:
            yield from self.result.sessions
            return
        path, got = self.stream.src.path, 0
        try:
            for sess in _cleaned(self.stream):
                if got >= len(self.briefs) or Brief.of(sess) != self.briefs[got]:
                    raise ChangedError(f"{path} changed while it was read")
                got += 1
                yield sess
                del sess  # not held while the next session is read
        except ChangedError:
            raise
        except Exception as exc:  # the first reading read these bytes without one: the file changed
            raise ChangedError(f"{path} could not be read again: {type(exc).__name__}") from exc
        if got != len(self.briefs):
            raise ChangedError(f"{path} changed while it was read")


def _cleaned(stream: markdown.Stream | squad_repl.Stream) -> Iterator[Session]:
    """The stream's sessions without injected context; like every step of a streamed reading, it
    lets a session go once it is passed on, so a history of big sessions holds one, not two."""
    for sess in stream:
        turns = injected.clean_turns(sess.turns)
        if turns:
            sess.turns = turns
            del turns
            yield sess
        del sess


# A Squad REPL file over this size is streamed, a session per pass (see squad_repl.Stream); a
# smaller one is parsed once, whole.
STREAM_MIN_BYTES = 1 << 20


def read_file(kind: str, path: Path, default_agent: str) -> Reading:
    """:func:`parse_file` for the compact loop: the same warnings and decisions, but a markdown
    file (an Aider history holds every run) or a large Squad REPL file (a named agent's replies
    are in two sessions) is never held whole: only its sessions' briefs are."""
    try:
        big_repl = kind == "squad-repl" and path.stat().st_size > STREAM_MIN_BYTES
    except OSError:  # parse_file reports it
        big_repl = False
    if kind != "markdown" and not big_repl:
        parsed = parse_file(kind, path, default_agent)
        return Reading(parsed, [Brief.of(s) for s in parsed.sessions])
    try:
        src = _source(kind, path, default_agent)
        stream = squad_repl.Stream(src) if big_repl else markdown.Stream(src)
        briefs = []
        for sess in _cleaned(stream):
            briefs.append(Brief.of(sess))
            del sess  # not held while the next one is read (a comprehension would hold it)
    except Exception as exc:  # a daemon must survive any one file; the type names the bug
        return Reading(_failed(kind, path, exc), [])
    return Reading(stream.result([]), briefs, stream)

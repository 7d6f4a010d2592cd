"""Transcript adapters: each source kind's files in, normalized :class:`Session` objects out.

Everything downstream sees only ``Session``/``Turn``, so a new format is one new module here.
:func:`parse_file` never raises: unreadable files and bad content come back as warnings on the
:class:`ParseResult`. ``ParseResult.warnings`` holds every warning for the file;
``Session.warnings`` repeats the ones that concern that session (file-level ones go to the first).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from scribed.adapters import claude, codex, copilot, hot, markdown, squad_repl
from scribed.adapters.common import Source
from scribed.models import ParseResult

KINDS = ("copilot", "claude", "codex", "squad-repl", "markdown", "hot")

_PARSERS: dict[str, Callable[[Source], ParseResult]] = {
    "copilot": copilot.parse,
    "claude": claude.parse,
    "codex": codex.parse,
    "squad-repl": squad_repl.parse,
    "markdown": markdown.parse,
    "hot": hot.parse,
}

_GLOBS: dict[str, tuple[str, ...]] = {
    "copilot": ("*/events.jsonl", "*.jsonl"),
    "claude": ("**/*.jsonl",),
    "codex": ("**/rollout-*.jsonl",),
    "squad-repl": ("*.json",),
    "markdown": ("**/*.md", "**/*.markdown", "**/*.txt"),
    "hot": ("*.md",),
}
# Used only when the kind's own patterns find nothing (Codex files renamed by hand, say).
_FALLBACK_GLOBS: dict[str, tuple[str, ...]] = {"codex": ("**/*.jsonl",)}

_TEMP_SUFFIXES = ("~", ".tmp", ".swp", ".part")


def parse_file(kind: str, path: Path, default_agent: str) -> ParseResult:
    """Parse one source file of ``kind`` into sessions; bad content becomes warnings, not errors.

    Raises ``ValueError`` only for caller bugs: an unknown kind.
    """
    parser = _PARSERS.get(kind)
    if parser is None:
        raise ValueError(f"unknown source kind {kind!r}; expected one of {', '.join(KINDS)}")
    try:
        st = path.stat()
        src = Source(
            kind=kind,
            path=path,
            default_agent=default_agent,
            mtime=datetime.fromtimestamp(st.st_mtime, tz=UTC),
            size=st.st_size,
        )
        return parser(src)
    except OSError as exc:
        return ParseResult(sessions=[], warnings=[f"{kind}: cannot read {path}: {exc.strerror or exc}"])
    except Exception as exc:  # a daemon must survive any one file; the type names the bug
        return ParseResult(
            sessions=[], warnings=[f"{kind}: internal error parsing {path}: {type(exc).__name__}"]
        )


def _is_temp(name: str) -> bool:
    return name.startswith((".", "~")) or name.endswith(_TEMP_SUFFIXES)


def _wanted(path: Path, folder: Path) -> bool:
    """A regular file not hidden, not temporary, and not reached through a symlinked folder."""
    try:
        rel = path.relative_to(folder)
    except ValueError:
        return False
    parts = rel.parts
    if not parts or any(p.startswith(".") for p in parts[:-1]) or _is_temp(parts[-1]):
        return False
    cur = folder
    for part in parts[:-1]:
        cur = cur / part
        if cur.is_symlink():
            return False
    try:
        return path.is_file()
    except OSError:
        return False


def _collect(folder: Path, patterns: tuple[str, ...]) -> list[Path]:
    found: set[Path] = set()
    for pattern in patterns:
        try:
            for path in folder.glob(pattern):
                if _wanted(path, folder):
                    found.add(path)
        except (OSError, ValueError):
            continue
    return sorted(found)


def discover(kind: str, folder: Path, glob: str = "") -> Iterator[Path]:
    """The files of ``kind`` under a configured source folder, sorted; nothing if it is missing."""
    if kind not in _GLOBS:
        raise ValueError(f"unknown source kind {kind!r}; expected one of {', '.join(KINDS)}")
    try:
        if not folder.is_dir():
            return
    except OSError:
        return
    if glob:
        yield from _collect(folder, (glob,))
        return
    paths = _collect(folder, _GLOBS[kind])
    if not paths and kind in _FALLBACK_GLOBS:
        paths = _collect(folder, _FALLBACK_GLOBS[kind])
    yield from paths


__all__ = ["KINDS", "discover", "parse_file"]

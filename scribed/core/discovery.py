"""Finding the work: the configured sources' files and the hot files, and facts about a file
(content hashes, how it is shown in provenance)."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import resource
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from scribed import sources
from scribed.config import Config, ConfigError, SourceCfg
from scribed.config_light import bad_agent
from scribed.core import file_names
from scribed.core.ledger import Ledger, SourceRow, redacted_key, source_key
from scribed.core.results import RunReport, SourceItem
from scribed.names import normalize_name
from scribed.sources import zst
from scribed.tiers.cold import Layout

if TYPE_CHECKING:
    from scribed.log import Logger


def validate_sources(cfg: Config) -> None:
    """Refuse a root that is not a folder or a source whose agent is not a valid name."""
    root = cfg.root_path
    if not root.is_dir():
        raise ConfigError(f"root: not a folder: {root}")
    problem = bad_agent(cfg)
    if problem:
        raise ConfigError(problem)


def item(cfg: Config, src: SourceCfg, path: Path) -> SourceItem:
    """The work item for ``path``, a file of the source ``src``: its agent and its scope."""
    agent = normalize_name(src.agent) or src.kind.replace("squad-repl", "squad")
    return SourceItem(path, src.kind, agent, src.scope(cfg.root_path))


def items(
    cfg: Config,
    layout: Layout,
    log: Logger | None,
    report: RunReport | None = None,
    known: file_names.Known | None = None,
) -> Iterator[SourceItem]:
    """Every file of every configured source, each once (:func:`listed`), plus the hot files."""
    yield from (n.item for n in listed(cfg, log, report, known).kept)
    for p in sources.discover("hot", layout.hot):
        yield SourceItem(p, "hot", p.stem.lower())


def listed(
    cfg: Config, log: Logger | None, report: RunReport | None = None, known: file_names.Known | None = None
) -> file_names.Once:
    """Every file of every configured source, each once whatever names reach it (a hard link, two
    sources' folders overlapping: :mod:`scribed.core.file_names`; ``known``: the ledger's keys),
    with the name kept for each file met under several and the names dropped. What discovery did
    not list is said (``log`` None: nothing is): a folder it cannot read, a broken symlink or a
    symlinked folder, a source above its tool's transcript folder or matching nothing
    (:func:`scribed.sources.discover`), and two sources reaching one folder, as a
    ``source_warning`` (counted and kept in ``report``, which run-once's summary shows); a second
    name as a note."""
    found: list[file_names.Listed] = []
    memory = os.path.realpath(Layout(cfg.root_path).memory)
    for i, src in enumerate(cfg.sources):
        folder = src.expanded
        if sources.missing(folder):
            if log is not None:
                log.warning("source_missing", source=str(folder), kind=src.kind)
            continue
        notes: list[sources.Note] = []
        ids: list[sources.FileId] = []
        paths = list(sources.discover(src.kind, folder, src.glob, notes, ids))
        own = _own_memory(memory, folder, paths, ids)
        if own and log is not None:
            log.info(
                "source_memory_skipped", source=str(folder), kind=src.kind, files=len(own), reason=OWN_MEMORY
            )
        found += [
            file_names.Listed(i, item(cfg, src, p), ident)
            for k, (p, ident) in enumerate(zip(paths, ids, strict=True))
            if k not in own
        ]
        for n in notes:
            event = "source_warning" if n.warn else "source_link_duplicate"
            _said(log, report, event, n.path, kind=src.kind, reason=n.reason)
    overlaps = file_names.overlaps(cfg)
    for o in overlaps:
        later = cfg.sources[o.later]
        _said(log, report, "source_warning", later.expanded, kind=later.kind, reason=o.reason)
    pairs = {(o.first, o.later) for o in overlaps}

    def say(dropped: file_names.Listed, kept: file_names.Listed) -> None:
        if (kept.source, dropped.source) not in pairs:  # an overlap is said above, once
            reason = file_names.duplicate_reason(dropped, kept)
            _said(
                log, report, "source_link_duplicate", dropped.item.path, kind=dropped.item.kind, reason=reason
            )

    return file_names.once(found, known, say)


OWN_MEMORY = (
    "scribed's own memory files (hot, cold, wiki) under the source's folder are never read as transcripts"
)


def _own_memory(memory: str, folder: Path, paths: list[Path], ids: list[sources.FileId]) -> set[int]:
    """The indexes of ``paths`` that are the root's own memory files (under ``memory``, its
    ``.squad/memory`` with symlinks resolved). A source folder that holds them (``.squad``, for
    Squad's logs) read the tiers back as transcripts: each run compacted the last run's entries
    again, without end. Only a symlinked file is resolved unless the folder and the memory overlap
    (discovery never follows a symlinked folder)."""
    real = os.path.realpath(folder)
    if not (file_names.under(memory, real) or file_names.under(real, memory)):
        return {
            k for k, i in enumerate(ids) if i.link and file_names.under(os.path.realpath(paths[k]), memory)
        }
    return {
        k
        for k, (p, i) in enumerate(zip(paths, ids, strict=True))
        if file_names.under(
            os.path.realpath(p) if i.link else os.path.join(real, os.path.relpath(p, folder)), memory
        )
    }


def own_memory(layout: Layout, path: Path) -> bool:
    """Whether ``path`` is one of the root's own memory files (see :func:`_own_memory`): the
    daemon's test for an event under a source folder that holds them."""
    return file_names.under(os.path.realpath(path), os.path.realpath(layout.memory))


def _said(
    log: Logger | None, report: RunReport | None, event: str, path: Path, *, kind: str, reason: str
) -> None:
    """One note (``source_link_duplicate``, info) or warning (counted in ``report``) of discovery."""
    if log is None:
        return
    if event == "source_link_duplicate":
        log.info(event, file=str(path), kind=kind, reason=reason)
        return
    log.warning(event, file=str(path), kind=kind, reason=reason)
    if report is not None:
        report.warnings += 1
        report.source_warnings.append({"source": str(path), "kind": kind, "reason": reason})


def file_stat(item: SourceItem) -> os.stat_result:
    """A source file's stamp for the ledger: a symlinked transcript's is the file it leads to (the
    link's own never changes as the session grows through it); a hot file's is its own (a
    symlinked one is never read)."""
    st = item.path.lstat()
    if stat.S_ISLNK(st.st_mode) and item.kind != "hot":
        return item.path.stat()
    return st


def display_path(root: Path, path: Path) -> str:
    """A source path for provenance: relative to the root inside it, ``~/…`` under home."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        pass
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


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


def sha256_bytes(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def adopt_twin(ledger: Ledger, path: Path, st: os.stat_result) -> SourceRow | None:
    """The ledger row a ``.jsonl.zst`` continues from when it has none of its own.

    While its ``.jsonl`` twin still exists the compressed copy is not read at all (a row that says
    "unchanged"; nothing is stored). Once the twin is gone, the twin's row carries over if the
    compressed content starts with exactly the bytes that row compacted, so a rollout compacted
    before Codex compressed it is never compacted twice.
    """
    if not zst.is_zst(path):
        return None
    plain = zst.twin(path)
    with contextlib.suppress(OSError):
        if plain.is_file():
            row = ledger.source(source_key(plain))
            return SourceRow(
                path=source_key(path),
                kind=row.kind if row else "",
                agent=row.agent if row else "",
                size=st.st_size,
                mtime_ns=st.st_mtime_ns,
                sha256="",
                offset_done=0,
                status="done",
                attempts=0,
                last_error="",
                updated_at="",
            )
    row = ledger.source(source_key(plain))
    if row is None or row.offset_done <= 0 or not row.sha256:
        return None
    try:
        if zst.sha256_prefix(path, row.offset_done) != row.sha256:
            return None
    except OSError:
        return None
    return dataclasses.replace(row, path=source_key(path), size=-1, mtime_ns=-1, status="pending")


def adopt_moved(
    ledger: Ledger, path: Path, st: os.stat_result, kind: str, sessions: Iterable[str]
) -> SourceRow | None:
    """The row of the transcript this one continues when the ledger has none for it: a file
    renamed or moved (by the user, by an exporter that adds a title to the name, by a tool that
    saves under a new name) and perhaps grown since, found through the entries of its sessions
    (``sessions``: their redacted ids). A row carries over if this file starts with exactly the
    bytes it compacted, so the told part is not told again and the rest is compacted as growth
    in place is; the row that compacted the most wins. None: no such row."""
    key = source_key(path)
    size = zst.logical_size(path, st.st_size)
    seen = {key}
    best: SourceRow | None = None
    for sid in dict.fromkeys(sessions):
        for e in ledger.session_entries(sid):
            if e.path in seen:
                continue
            seen.add(e.path)
            row = ledger.source(e.path)
            if row is None or row.kind != kind or not row.sha256 or not 0 < row.offset_done <= size:
                continue
            if best is not None and row.offset_done <= best.offset_done:
                continue
            try:
                if zst.sha256_prefix(path, row.offset_done) == row.sha256:
                    best = row
            except OSError:
                return None
    return best


def gone_paths(ledger: Ledger, path: Path, sessions: Iterable[str]) -> list[str]:
    """The sources other than ``path`` that entries of ``sessions`` (redacted ids) are filed under
    and that are gone: the transcript moved while no row of the ledger could show it (a ledger
    rebuilt from the files files each entry under the path its provenance names, and has no row
    of bytes compacted to match: :func:`adopt_moved`). This file holds those sessions now, so their
    entries are filed under it, and a cut or an edit here is told as one in place would be."""
    key = source_key(path)
    out: list[str] = []
    for sid in dict.fromkeys(sessions):
        for e in ledger.session_entries(sid):
            old = e.path
            shown = not os.path.isabs(old) or redacted_key(old)  # no file's path: nothing to tell
            if old != key and old not in out and not shown and not os.path.lexists(old):
                out.append(old)
    return out

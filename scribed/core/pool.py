"""A process pool for backlogs: the pure part of compaction (parse → redaction door → anchors →
compress → rendered entry, and the redacted zstd transcript copy) runs in worker processes a few
files ahead of the parent; the parent still runs every step itself, in source order, but takes a
worker's work instead of doing it: the file's parse and its copy when the file still has the size,
mtime and sha256 the worker read (see :meth:`Compactor._read`; a file over
:data:`~scribed.core.compact_read.PARSE_MAX_BYTES` the parent streams itself), a rendered entry when
the entry's key matches (see :meth:`SessionCompactor.compact`). So the ledger, the lock and every
write (the copy's too) stay in the parent, and the outputs are the serial path's, byte for byte:
whatever a worker could not know (the ledger's entries of a moved file, a file changed since)
gives another key or stamp, and the parent does that work itself.

Workers start with ``forkserver`` (``spawn`` where it is missing), never ``fork``: the daemon has
threads. The LLM backend stays in-process (no pool): its concurrency is ``[llm] max_concurrency``.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import select
import shutil
import signal
import tempfile
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import BrokenExecutor, Future, ProcessPoolExecutor
from datetime import datetime
from typing import Any

from scribed import fsutil, heap
from scribed.config import Config
from scribed.core import ledger as ledger_mod
from scribed.core.compact_session import Prefetched
from scribed.core.content_key import Keyring
from scribed.core.discovery import file_stat
from scribed.core.ledger import Ledger, SourceRow, source_key
from scribed.core.prepare import Preparer
from scribed.core.results import SourceItem
from scribed.log import get as get_logger
from scribed.tiers import audit
from scribed.tiers.cold import Layout

POOL_MIN_BYTES = 4 << 20  # a smaller backlog is done before the workers have imported scribed
POOL_MIN_FILES = 2
_W: dict[str, Any] = {}  # the worker process's compactor, built once by _init


def wanted(cfg: Config, items: list[SourceItem], ledger: Ledger, *, llm_factory: object) -> list[SourceItem]:
    """The files worth sending to the pool (none when the pool would not pay or the LLM compresses)."""
    if cfg.compress.workers <= 1 or not extractive(cfg, llm_factory):
        return []
    todo, size = [], 0
    for item in items:
        if item.kind == "hot":
            continue
        try:
            st = file_stat(item)
        except OSError:
            continue
        row = ledger.source(source_key(item.path))
        if row and ledger_mod.same_state(row, st) and row.status in ("done", "quarantined"):
            continue
        todo.append(item)
        size += st.st_size
    return todo if len(todo) >= POOL_MIN_FILES and size >= POOL_MIN_BYTES else []


def extractive(cfg: Config, llm_factory: object) -> bool:
    """Whether the extractive compressor (not an LLM) compresses: only its work is done ahead."""
    return cfg.compress.backend == "extractive" or (
        cfg.compress.backend == "auto" and not cfg.llm.configured and llm_factory is None
    )


def _context() -> Any:
    """``forkserver`` where there is one, with this module preloaded: the server imports scribed
    once and every worker forks from it with the modules in place (each worker imported them
    itself before: 0.26 s of CPU a worker, a backlog's pool paying it once per worker and run).
    Not ``__main__``: Python 3.11's server never gets the main module's path, so listing it did
    nothing (a worker still imports the parent's main script, guarded, as with ``spawn``)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])  # no effect once the server runs: harmless
    return ctx


def _watch_parent(pid: int) -> None:
    """End this worker once the parent is gone (killed): blocked on the pool's queue, nothing else
    would, and a forkserver's worker is not the parent's child to be reaped (found by review)."""

    def watch() -> None:
        try:
            fd = os.pidfd_open(pid)  # readable once that process has exited (Linux >= 5.3)
        except (AttributeError, OSError):
            fd = -1
        while True:
            if fd >= 0:
                select.select([fd], [], [])
                os._exit(1)
            time.sleep(1.0)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:
                pass

    threading.Thread(target=watch, name="scribed-pool-parent", daemon=True).start()


def _init(cfg: Config, environ: dict[str, str], parent: int, key: bytes) -> None:
    """Build the worker's :class:`~scribed.core.prepare.Preparer` (a dry-run compactor) with the
    root's content key: a worker recognises content as the parent does. Ctrl-C reaches every
    process of the terminal's group: a worker ignores it (each printed a KeyboardInterrupt
    traceback); the parent stops the run and closes the pool."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _watch_parent(parent)
    heap.settle()  # a spawned worker's allocator starts fresh
    _W.update(cfg=cfg, prep=Preparer(cfg, environ, Keyring(key)))


Stamp = tuple[int, int]  # (size, mtime_ns) of a file


def _stamp(item: SourceItem) -> Stamp:
    st = item.path.stat()
    return st.st_size, st.st_mtime_ns


def _prepare(
    item: SourceItem, row: SourceRow | None, now: datetime, force: bool, *, spool: str, name: str
) -> str:
    """In a worker: run the serial steps on one file, dry; its parse, the entries they rendered and
    the transcript copy, with the file's state they were made from, go to the file ``name`` in
    ``spool``, which is returned. A result sent whole through the pool's pipe could be cut by a
    worker killed mid-send, and the executor then waits for the rest forever; a name is one atomic
    pipe write. The parent names the files (see :meth:`Prefetch._submit`): a ring it reuses."""
    out = _work(item, row, now, force)
    path = os.path.join(spool, name)
    # Rewritten in place, then cut to length: not opened with O_TRUNC, since on ext4 a file cut to
    # zero and written again is written out when it is closed (``auto_da_alloc``): 0.35 ms per
    # result measured here, more than the create and unlink the ring saves.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        pickle.dump(out, fh, protocol=pickle.HIGHEST_PROTOCOL)
        fh.truncate()  # at the end of this result: nothing of an older, longer one is left
    return path


def _work(item: SourceItem, row: SourceRow | None, now: datetime, force: bool) -> Prefetched:
    """The work :func:`_prepare` spools."""
    prep: Preparer = _W["prep"]
    return prep.prepare(item, row, now, force)


SPOOL = "pool"  # in the state folder


def _spool_dir(layout: Layout) -> str:
    """A fresh folder for the workers' results, in the state folder (git-ignored, beside the
    ledger, never outside the project: a result holds a transcript's parse, secrets included, until
    the pool closes; at most ``window + 1`` files, rewritten in turn). It is this run's own,
    ``pool/PID.START-random``: another run started meanwhile (a hook's while cron's works; the pool
    runs outside the root lock) sweeps only the folders of runs that are gone (:func:`sweep`)."""
    sweep(layout)
    base = audit.ensure_state(layout) / SPOOL
    for _ in range(3):  # another run's close may remove an empty base between the two calls
        with contextlib.suppress(FileExistsError):
            base.mkdir(mode=0o700)
        try:
            return tempfile.mkdtemp(prefix=f"{fsutil.run_tag()}-", dir=base)
        except FileNotFoundError:
            continue
    return tempfile.mkdtemp(prefix=f"{fsutil.run_tag()}-", dir=base)


def sweep(layout: Layout) -> bool:
    """Remove what killed runs left in the spool (run-once and the daemon do at start): the folders
    of runs whose process is gone, and anything else in it (an older scribed's flat spool); a live
    run's folder stays. The spool folder goes once empty. True when something was removed."""
    base = layout.state / SPOOL
    if not base.is_dir() or base.is_symlink():
        return False
    removed = False
    with contextlib.suppress(OSError):
        for entry in os.scandir(base):
            try:
                tag, sep, _ = entry.name.rpartition("-")
                if entry.is_dir(follow_symlinks=False) and sep and fsutil.run_alive(tag):
                    continue  # a live run's, however long it has run
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
                removed = True
            except OSError:
                continue
    _drop_if_empty(base)
    return removed


def _drop_if_empty(base: os.PathLike[str] | str) -> None:
    """Remove the spool folder when no run's folder is left in it (another run may be making one)."""
    with contextlib.suppress(OSError):
        os.rmdir(base)


class Prefetch:
    """Runs :func:`_prepare` for the files of a backlog a window ahead of the parent's loop."""

    def __init__(
        self,
        cfg: Config,
        environ: dict[str, str],
        ledger: Ledger,
        keys: Keyring,
        *,
        now: datetime,
        force: bool,
    ):
        self.cfg, self.ledger, self.now, self.force = cfg, ledger, now, force
        self.workers = min(cfg.compress.workers, os.cpu_count() or 1, 61)
        # The key goes to the workers through the forkserver's pipe, as their arguments do: they key
        # the content they recognise as the parent does (a worker's entry is taken by its content key).
        init = (cfg, environ, os.getpid(), keys.key_bytes())
        self._ex = ProcessPoolExecutor(self.workers, mp_context=_context(), initializer=_init, initargs=init)
        self.window = 2 * self.workers  # files sent ahead of the parent
        self.slots = self.window + 1  # the ring of result files (see _submit)
        self._sent = 0
        self._todo: Iterator[SourceItem] = iter(())
        self._pending: deque[tuple[SourceItem, Future[str]]] = deque()
        self._spool = _spool_dir(Layout(cfg.root_path))  # the workers' results (see _prepare)

    def start(self, items: Iterable[SourceItem]) -> None:
        self._todo = iter(items)
        for _ in range(self.window):
            self._submit()

    def _submit(self) -> None:
        """Send the next file. Its result goes to ring file ``sent % slots``: :meth:`take` sends the
        next file before it reads the current one's result, so at most ``window + 1`` results are
        unread at a time, and those have distinct names; a name is reused only once its result was
        read (or its worker failed), whatever order the workers run in. The files are rewritten,
        not created and deleted per result: on the machine measured, creating a file cost from
        0.03 ms to about 1 ms as the file system's state changed. They go when the pool closes."""
        item = next(self._todo, None)
        if item is None:
            return
        row = self.ledger.source(source_key(item.path))
        try:
            name = str(self._sent % self.slots)
            fut = self._ex.submit(_prepare, item, row, self.now, self.force, spool=self._spool, name=name)
            self._sent += 1
        except (BrokenExecutor, RuntimeError) as exc:  # a worker died (killed, out of memory): no more sends
            self._todo = iter(())
            get_logger("scribed.pool").warning("pool_broken", reason=str(exc), left_to="the parent")
            return
        self._pending.append((item, fut))

    def take(self, item: SourceItem) -> Prefetched | None:
        """A worker's work on ``item`` (None when it was not sent or its worker failed: the parent
        then does it itself)."""
        if not self._pending or self._pending[0][0] is not item:
            return None
        _, fut = self._pending.popleft()
        self._submit()
        try:
            name = fut.result()
            with open(name, "rb") as fh:
                out: Prefetched = pickle.load(fh)  # our own workers' file, in our own folder
            return out if out.stamp == _stamp(item) else None  # changed since: the parent reads it afresh
        except Exception as exc:  # a worker's failure (a bug, a dead process) is the serial path's to meet
            get_logger("scribed.pool").warning(
                "pool_result_unused", reason=f"{type(exc).__name__}: {exc}"[:300], left_to="the parent"
            )
            return None

    def close(self) -> None:
        for _, fut in self._pending:
            fut.cancel()
        self._ex.shutdown(wait=True, cancel_futures=True)
        with contextlib.suppress(OSError):
            shutil.rmtree(self._spool)  # the folder _spool_dir made
        _drop_if_empty(os.path.dirname(self._spool))  # the spool folder, when no other run's is in it

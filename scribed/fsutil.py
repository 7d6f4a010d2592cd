"""Atomic, private writes and the per-root lock.

Every file scribed writes goes through :func:`atomic_write`: temp file in the same folder,
fsync, rename, fsync of the folder. Readers (agents, editors) never see a half-written file,
and a crash leaves either the old or the new bytes.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import os
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO

TMP_PREFIX = ".scribed-tmp-"
FILE_MODE = 0o600
DIR_MODE = 0o700


class UnsafePathError(OSError):
    """A write target is a symlink or escapes the allowed folder."""


def ensure_dir(path: Path) -> Path:
    """Create a folder (and any missing parents) private to the user.

    ``Path.mkdir(parents=True)`` gives the parents default permissions, so each level is made here.
    """
    missing: list[Path] = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        with contextlib.suppress(FileExistsError):
            d.mkdir(mode=DIR_MODE)
    return path


def check_inside(path: Path, base: Path) -> None:
    """Refuse a write target that is a symlink or resolves outside ``base``."""
    if path.is_symlink():
        raise UnsafePathError(errno.ELOOP, "refusing to write through a symlink", str(path))
    real_parent = path.parent.resolve()
    real_base = base.resolve()
    if real_parent != real_base and real_base not in real_parent.parents:
        raise UnsafePathError(errno.EPERM, f"refusing to write outside {base}", str(path))


def check_state_dirs(root: Path, state: Path, subdirs: list[Path]) -> None:
    """Refuse a state folder (``state`` and ``subdirs`` under it) that is a symlink or resolves
    outside ``root``; the error names the folder.

    scribed's own state (the ledger, archives of raw hot files, quarantine) must stay where the
    README says; a symlink would make every later write land wherever it points. Folders that do
    not exist yet are created as real folders, so only where they would land is checked.
    """
    real_root = root.resolve()
    for d in [state, *subdirs]:
        cur = d
        while True:  # d and each of its parents up to the state folder
            if cur.is_symlink():
                raise UnsafePathError(
                    errno.ELOOP,
                    f"refusing to use {cur}: it is a symlink (to {os.readlink(cur)}); "
                    "state folders must be real folders inside the root",
                    str(cur),
                )
            if cur in {state, cur.parent}:
                break
            cur = cur.parent
        real = d.resolve()  # a folder not made yet resolves through its existing parents
        if real != real_root and real_root not in real.parents:
            raise UnsafePathError(
                errno.EPERM, f"refusing to use {d}: it resolves to {real}, outside the root {root}", str(d)
            )


def _refuse_linked_state(path: Path) -> None:
    """Archives live under ``.scribed/``: refuse one whose folders on the way there are symlinks."""
    chain: list[Path] = []
    for parent in path.parents:
        chain.append(parent)
        if parent.name == ".scribed":
            break
    else:
        return  # not scribed's state: the caller's own checks apply
    for parent in chain:
        if parent.is_symlink():
            raise UnsafePathError(errno.ELOOP, "refusing to write through a symlinked folder", str(parent))


def utf8_name(name: str) -> bool:
    """Whether a name from the OS is valid UTF-8. One that is not (an old Latin-1 disk, an archive
    unpacked with the wrong encoding) holds its bad bytes as lone surrogates, which SQLite, JSON
    and every UTF-8 writer refuse: such a name must be shown with :func:`shown`, never stored."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown(path: str | os.PathLike[str]) -> str:
    """A path as text any encoder takes: the bytes of a name that is not UTF-8 escaped (``caf\\xe9.md``)."""
    text = os.fspath(path)
    if utf8_name(text):
        return text
    try:
        return os.fsencode(text).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no file name holds: shown as \\udXXX
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


NOT_UTF8 = (
    "its name is not valid UTF-8 (its bad bytes shown as \\xNN): skipped; rename it to a UTF-8 name "
    "(e.g. `convmv -f latin1 -t utf-8 --notest`) to have it read"
)


def utf8_only(paths: Iterable[Path], say: Callable[[str], None]) -> list[Path]:
    """``paths`` without those whose name is not UTF-8, each of which is passed to ``say`` as
    :func:`shown` gives it (the caller adds :data:`NOT_UTF8`). Such a name can be neither stored
    (SQLite, JSON, a provenance line) nor printed as it is: one file so named must not stop the others."""
    out: list[Path] = []
    for p in paths:
        if utf8_name(str(p)):
            out.append(p)
        else:
            say(shown(p))
    return out


def read_error(path: Path) -> str | None:
    """Why ``path`` cannot be read right now (permission, I/O error), or None when it can."""
    try:
        with path.open("rb") as fh:
            fh.read(1)
    except FileNotFoundError:
        return None  # gone: the caller's own checks say so
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror or exc}"
    return None


def skip_newline(path: Path, offset: int) -> int:
    """``offset`` moved past a line end right after it.

    A last line compacted before its newline was written ends one byte later once it has one;
    the newline alone is not a new record, so it must not make that record count as new.
    """
    if offset <= 0:
        return offset
    try:
        with path.open("rb") as fh:
            fh.seek(offset - 1)
            head = fh.read(3)
    except OSError:
        return offset
    if head[:1] in (b"\n", b""):
        return offset
    if head[1:3] == b"\r\n":
        return offset + 2
    return offset + 1 if head[1:2] == b"\n" else offset


class _Interrupts:
    """An interrupt a run raises from a signal handler (SIGTERM, Ctrl-C) waits while the main thread
    is between a temp file and its rename: raised there (inside ``mkstemp``, before the ``try``),
    it left the temp file behind although the run said it stopped cleanly."""

    depth = 0
    pending: BaseException | None = None


@contextlib.contextmanager
def whole_write() -> Iterator[None]:
    """Inside, :func:`interrupt` defers its exception to the end of the block (main thread only:
    signal handlers run there, and a worker thread's write is not what they interrupt)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _Interrupts.depth += 1
    try:
        yield
    finally:
        _Interrupts.depth -= 1
        check_interrupt()


def interrupt(exc: BaseException) -> None:
    """What a signal handler calls instead of ``raise exc``: raises now, or, during a
    :func:`whole_write`, as soon as that write has renamed or removed its temp file."""
    if _Interrupts.depth:
        if _Interrupts.pending is None:
            _Interrupts.pending = exc
        return
    raise exc


def check_interrupt() -> None:
    """A safe point (each file of a run, a write's end): raise the interrupt a signal handler
    deferred or could not raise."""
    if _Interrupts.pending is not None and not _Interrupts.depth:
        exc, _Interrupts.pending = _Interrupts.pending, None
        raise exc


@contextlib.contextmanager
def interrupts_kept(kinds: tuple[type[BaseException], ...]) -> Iterator[None]:
    """Inside, an interrupt of ``kinds`` that Python swallowed (raised by a signal handler while a
    weakref callback or a ``__del__`` ran: "Exception ignored in …", the run went on as if the
    signal never came; seen in CI) waits for the next safe point (:func:`check_interrupt`, each
    write's end) instead."""
    before = sys.unraisablehook

    def hook(u: Any) -> None:
        if isinstance(u.exc_value, kinds) and _Interrupts.pending is None:
            _Interrupts.pending = u.exc_value
            return
        before(u)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = before
        _Interrupts.pending = None


class NotReplaced(Exception):  # noqa: N818 (what happened, as FileExistsError says)
    """A write's condition (``only_if``) no longer held at its rename: the file was left as it was."""


@contextlib.contextmanager
def replacing(
    path: Path, *, sync: bool = True, only_if: Callable[[], bool] | None = None
) -> Iterator[BinaryIO]:
    """A temp file beside ``path`` (its folder must exist), renamed over it, mode 0600, when the
    block ends, removed when it raises; a stopping signal waits for either (:func:`whole_write`).
    ``sync=False`` skips the file's fsync; the folder's is the caller's (:func:`fsync_dir`).
    ``only_if`` is asked last, right before the rename (a compare-and-swap's compare: the file
    still holds what the new bytes were made from); False removes the temp file and raises
    :class:`NotReplaced`."""
    with whole_write():
        fd, tmp = tempfile.mkstemp(prefix=tmp_prefix(), dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                yield fh
                fh.flush()
                if sync:
                    os.fsync(fh.fileno())
            os.chmod(tmp, FILE_MODE)
            if only_if is not None and not only_if():
                raise NotReplaced(str(path))
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def atomic_write(
    path: Path,
    data: bytes | str,
    *,
    base: Path | None = None,
    sync: bool = True,
    only_if: Callable[[], bool] | None = None,
) -> None:
    """Write ``data`` to ``path`` atomically (temp + fsync + rename), mode 0600. ``sync=False``
    skips both fsyncs: for a batch the caller makes durable at once with ``os.sync()``.
    ``only_if``: :func:`replacing`'s (raises :class:`NotReplaced`, the file left as it was)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if base is not None:
        check_inside(path, base)
    elif path.is_symlink():
        raise UnsafePathError(errno.ELOOP, "refusing to write through a symlink", str(path))
    ensure_dir(path.parent)
    with replacing(path, sync=sync, only_if=only_if) as fh:
        fh.write(data)
    if sync:
        fsync_dir(path.parent)


_deferred = threading.local()


@contextlib.contextmanager
def deferred_dir_sync() -> Iterator[None]:
    """Inside, in this thread, :func:`fsync_dir` only notes the folder; on leaving, each noted folder
    is synced once. For a batch whose ledger commit comes after: a rename lost in a crash before it
    leaves the old (durable) file and no ledger row, which a rerun redoes. Nested: the outer one syncs."""
    if getattr(_deferred, "dirs", None) is not None:
        yield
        return
    _deferred.dirs = dirs = set[Path]()
    try:
        yield
    finally:
        _deferred.dirs = None
        for d in sorted(dirs):
            fsync_dir(d)


def sync_deferred() -> None:
    """Sync now the folders :func:`deferred_dir_sync` has noted so far (before a ledger commit in
    the middle of a batch); it goes on noting later ones."""
    dirs: set[Path] | None = getattr(_deferred, "dirs", None)
    if not dirs:
        return
    noted = sorted(dirs)
    dirs.clear()
    for d in noted:
        fsync_dir(d, now=True)


def fsync_dir(path: Path, *, now: bool = False) -> None:
    """Make a rename durable (inside :func:`deferred_dir_sync`: when it ends, unless ``now``: a
    rename that other writes must follow on disk, such as an archive before the file it empties)."""
    dirs: set[Path] | None = getattr(_deferred, "dirs", None)
    if dirs is not None and not now:
        dirs.add(Path(path))
        return
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def read_text(path: Path) -> str:
    """Read a file we own as UTF-8, tolerating bad bytes; missing = empty."""
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return ""


def read_json_object(path: Path) -> dict[str, Any]:
    """A JSON object scribed wrote (a state file, a cache): {} when missing, unreadable or not one."""
    import json

    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# zlib's own default: a 5 MB hot file's archive in 0.20 s and 958 KB, against 0.62 s and 905 KB at
# gzip's 9 (the archive is made before the hot file's reset: issue 32's 5 s for a 5 MB hot file)
GZIP_LEVEL = 6


def gzipped(data: bytes) -> bytes:
    """``data`` as an archive's gzip bytes: mtime 0, so reruns are byte-stable."""
    return gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0)


def write_gzip_archive(dest: Path, data: bytes, *, sync: bool = True) -> None:
    """Archive bytes as a gzip file (:func:`gzipped`), atomically."""
    _refuse_linked_state(dest)
    atomic_write(dest, gzipped(data), sync=sync)


def write_gzipped(dest: Path, gz: bytes, *, sync: bool = True) -> None:
    """:func:`write_gzip_archive` for bytes compressed ahead (:func:`gzipped`)."""
    _refuse_linked_state(dest)
    atomic_write(dest, gz, sync=sync)


# --- whose leftovers: a run's temp files and spool are named by the process that made them --------
STALE_SECONDS = 86400  # no write keeps its temp file a day: older, it is a leftover whoever made it


_STARTTIME = 19  # field 22 of /proc/PID/stat, counted from the one after the command name


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time) of a process from ``/proc/PID/stat`` (Linux); None where there is none."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].decode("ascii", "replace").split()
        return fields[0], fields[_STARTTIME]
    except (OSError, IndexError):
        return None


_own_tag: tuple[int, str] | None = None


def run_tag(pid: int | None = None) -> str:
    """``PID.START`` (START: when the process started, in clock ticks since boot, where /proc says),
    else ``PID``: names one process for good, since a pid is reused."""
    global _own_tag
    mine = os.getpid()
    pid = mine if pid is None else pid
    if pid == mine and _own_tag is not None and _own_tag[0] == mine:
        return _own_tag[1]
    got = _proc_stat(pid)
    tag = f"{pid}.{got[1]}" if got else str(pid)
    if pid == mine:
        _own_tag = (mine, tag)
    return tag


def run_alive(tag: str) -> bool:
    """Whether the process a :func:`run_tag` names still runs (a zombie, or the pid now another
    process's, does not). An unreadable tag is no live run's."""
    pid_s, _, start = tag.partition(".")
    if not pid_s.isdigit():
        return False
    pid = int(pid_s)
    got = _proc_stat(pid)
    if got is not None:
        return got[0] != "Z" and (not start or got[1] == start)
    if Path("/proc/self/stat").exists():
        return False  # /proc is there and has no such process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive, not ours to judge
    return True


def tmp_prefix() -> str:
    """The name a temp file of this process starts with: :data:`TMP_PREFIX`, its :func:`run_tag`."""
    return f"{TMP_PREFIX}{run_tag()}-"


def leftover(name: str, mtime: float, now: float) -> bool:
    """Whether a temp file or spool named ``name`` (``TAG-random``) is a leftover: its process is
    gone, it names none (an older scribed's), or it is older than :data:`STALE_SECONDS`."""
    tag, sep, _ = name.rpartition("-")
    return not sep or not run_alive(tag) or now - mtime > STALE_SECONDS


def clean_temp_files(folder: Path) -> int:
    """Remove temp files a crash left behind anywhere under ``folder``: only those of processes that
    are gone (or of none, or stale): another run writing now keeps its own. Returns the count."""
    import time

    n, now = 0, time.time()
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            if name.startswith(TMP_PREFIX):
                p = Path(dirpath) / name
                with contextlib.suppress(OSError):
                    st = p.lstat()
                    if stat.S_ISREG(st.st_mode) and leftover(name[len(TMP_PREFIX) :], st.st_mtime, now):
                        p.unlink()
                        n += 1
    return n


def line_chunks(src: IO[bytes], chunk_bytes: int, line_limit: int) -> Iterator[bytes]:
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

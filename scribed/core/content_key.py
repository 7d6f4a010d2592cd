"""The root's content key: what lets scribed recognise content it has seen without leaving a digest
anyone else can check a guess against.

An unkeyed hash of a turn confirms a guess: hash ``hunter2`` the same way and compare. So what
only this machine needs (the ledger's keys of raw turns, its per-turn digests, the ids of hot
files, which never leave the machine) is an HMAC-SHA256 under a random key kept in the state
folder (``.squad/memory/.scribed/content.key``, mode 0600, git-ignored with the folder, never
logged). What clones share through git (an entry's id, its file name) cannot be keyed per
machine, or two clones compacting one session would write two entries: those are made from
redacted turns (:func:`scribed.core.ledger_ids.content_id`). See docs/architecture.md.

A lost or damaged key costs speed, not data: entries are still recognised by their ids (a
redaction of the turns instead of one hash), and a damaged file is set aside for a new key.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import hmac
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from scribed.fsutil import fsync_dir, tmp_prefix

if TYPE_CHECKING:
    from scribed.log import Logger
    from scribed.models import Turn

KEY_FILE = "content.key"
KEY_BYTES = 32
DIGEST_BYTES = 8  # per turn: told apart within one session, never read back into text


class Keyring:
    """HMACs under one root's key. Never printed, never pickled (a pool worker gets the bytes)."""

    __slots__ = ("_key",)

    def __init__(self, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise ValueError(f"a content key is {KEY_BYTES} bytes, not {len(key)}")
        self._key = key

    def __repr__(self) -> str:
        return "Keyring(<key>)"

    def __reduce__(self) -> NoReturn:
        raise TypeError("a Keyring is not pickled: pass Keyring.key_bytes() where it must travel")

    def key_bytes(self) -> bytes:
        """The key itself, for a pool worker of this root (never for a file or a log)."""
        return self._key

    def check(self) -> str:
        """A value that tells this key from another, and nothing about it (the ledger keeps it, to
        notice a key that was replaced)."""
        return self._mac(b"scribed-key-check-1")[:8].hex()

    def _mac(self, msg: bytes) -> bytes:
        return hmac.digest(self._key, msg, "sha256")

    def content_key(self, session_id: str, turns: Sequence[Turn]) -> str:
        """What this machine files an entry's raw turns under (role, kind, tool, time and text of
        each, and the session id): the ledger's lookup for "already compacted"."""
        h = hmac.new(self._key, b"scribed-content-1\0", hashlib.sha256)
        h.update(session_id.encode("utf-8", "surrogatepass") + b"\0")
        for t in turns:
            h.update(_head(t) + f"{len(t.text)}\0".encode())
            h.update(t.text.encode("utf-8", "surrogatepass"))
        return "k-" + h.hexdigest()[:32]

    def turn_digests(self, turns: Sequence[Turn]) -> bytes:
        """Each raw turn's keyed digest (:data:`DIGEST_BYTES` each), concatenated: which turns of a
        transcript edited in place an entry already holds (:func:`~scribed.core.ledger_ids.uncovered`)."""
        key = self._key
        return b"".join(
            hmac.digest(
                key, b"scribed-turn-2\0" + _head(t) + t.text.encode("utf-8", "surrogatepass"), "sha256"
            )[:DIGEST_BYTES]
            for t in turns
        )

    def legacy(self, digests: bytes) -> bytes:
        """Digests from before keys (unkeyed sha256 of redacted turns, 8 bytes each), each keyed: the
        ledger keeps these instead, so the old ones confirm no guess either."""
        out = bytearray()
        for i in range(0, len(digests) - DIGEST_BYTES + 1, DIGEST_BYTES):
            out += self._mac(b"scribed-legacy-turn-1\0" + digests[i : i + DIGEST_BYTES])[:DIGEST_BYTES]
        return bytes(out)

    def hexdigest(self, data: bytes) -> str:
        """A keyed digest of bytes in sha256's hex form (a hot file: the machine's own, never shared)."""
        return self._mac(b"scribed-bytes-1\0" + data).hex()

    def hot_session(self, session_id: str) -> str:
        """A hot file's session id as entries show it: ``hot-`` and a keyed digest of the id its
        parser gave (``hot-`` + the sha256 of the file's bytes), so no entry carries an unkeyed
        digest of what an agent wrote."""
        return "hot-" + self._mac(b"scribed-hot-1\0" + session_id.encode("utf-8", "surrogatepass")).hex()[:12]


def _head(t: Turn) -> bytes:
    ts = t.ts.isoformat() if t.ts else ""
    return f"{t.role}\0{t.kind}\0{t.tool_name or ''}\0{ts}\0".encode("utf-8", "surrogatepass")


def load(
    state: Path,
    *,
    create: bool,
    rand: Callable[[int], bytes] = os.urandom,
    log: Logger | None = None,
) -> Keyring:
    """The key in ``state`` (the root's state folder). Missing: made (``create``), else one for
    this process only (a dry run writes nothing). Unreadable as a key: set aside beside it and a
    new one made, with a warning. A key others may read is made private (0600).

    Threads and processes loading a root's first key at once (the daemon's workers at its first
    start) agree on one: the key is made under a lock on the state folder, re-read there first,
    and published only where none is (see :func:`_create`)."""
    path = state / KEY_FILE
    key = _current(path)
    if key is None or key is _DAMAGED:
        return _made(state, rand, log) if create else Keyring(rand(KEY_BYTES))
    if create:
        _make_private(path, log)
    return Keyring(key)


def _made(state: Path, rand: Callable[[int], bytes], log: Logger | None) -> Keyring:
    """The key :func:`load` found missing or damaged, made under the state folder's lock (or the
    one another creator made while this one waited for it)."""
    path = state / KEY_FILE
    with _making(state):
        key = _current(path)
        if key is not None and key is not _DAMAGED:
            return Keyring(key)
        if key is _DAMAGED:
            moved = _set_aside(path)
            if log is not None:
                log.warning(
                    "content_key_damaged",
                    file=str(path),
                    moved_to=str(moved),
                    reason="not a key: a new one is made",
                )
        return _create(path, rand)


_DAMAGED = b"damaged"  # what :func:`_current` says of a file that is no key


def _current(path: Path) -> bytes | None:
    """The key ``path`` holds, None when there is no file, :data:`_DAMAGED` when it is no key."""
    try:
        raw = _read(path)
    except FileNotFoundError:
        return None
    key = _parse(raw)
    return _DAMAGED if key is None else key


@contextlib.contextmanager
def _making(state: Path) -> Iterator[None]:
    """An exclusive ``flock`` on the state folder while a key is made or set aside: each call opens
    the folder anew, so it excludes other threads of this process as well as other processes. Where
    a folder cannot be locked (some network file systems), the link in :func:`_create` still lets
    one key win."""
    try:
        fd = os.open(state, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        yield  # no folder: _create's open says so
        return
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # and the lock with it


def _read(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        return fh.read(4 * KEY_BYTES)


def _parse(raw: bytes) -> bytes | None:
    try:
        key = bytes.fromhex(raw.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        return None
    return key if len(key) == KEY_BYTES else None


def _create(path: Path, rand: Callable[[int], bytes]) -> Keyring:
    """Write a new key, 0600 from its first byte, to a temp file of its own (``mkstemp``: unique to
    this thread and process, removed as a leftover by a later start) and publish it with a link,
    which makes ``path`` only where none is: a key another creator published first wins, and
    everyone reads back the one that is there."""
    fd, tmp = tempfile.mkstemp(prefix=tmp_prefix(), dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(rand(KEY_BYTES).hex().encode() + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        except OSError as exc:  # a file system without hard links: under _making, the only creator
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
                raise
            if not path.exists():
                os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    fsync_dir(path.parent, now=True)
    key = _parse(_read(path))
    if key is None:  # another process's damaged file won the link: not ours to judge twice
        raise OSError(errno.EINVAL, "the content key just written cannot be read back", str(path))
    return Keyring(key)


def _set_aside(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    dest = path.with_name(f"{KEY_FILE}.damaged-{stamp}")
    os.replace(path, dest)
    return dest


def _make_private(path: Path, log: Logger | None) -> None:
    st = path.lstat()
    if st.st_mode & 0o077:
        path.chmod(0o600)
        if log is not None:
            log.warning("content_key_mode", file=str(path), reason=f"was {st.st_mode & 0o777:o}, now 600")


__all__ = ["DIGEST_BYTES", "KEY_BYTES", "KEY_FILE", "Keyring", "load"]

"""Streaming reads of zstd-compressed transcripts (Codex compresses old rollouts to ``.jsonl.zst``).

A compressed rollout is read through a streaming decoder, so memory stays about one buffer and
one line whatever the file's size. Offsets in a ``.zst`` file are offsets in its decompressed
content: the same numbers its ``.jsonl`` twin had, which is what lets the ledger carry over.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import zstandard

SUFFIX = ".zst"
_BUFFER = 1 << 16


def is_zst(path: Path) -> bool:
    """A zstd-compressed transcript, by name (``rollout-….jsonl.zst``)."""
    return path.name.endswith(SUFFIX)


def twin(path: Path) -> Path:
    """The plain file a ``.zst`` was made from (``x.jsonl`` for ``x.jsonl.zst``); itself otherwise."""
    return path.with_name(path.name[: -len(SUFFIX)]) if is_zst(path) else path


def logical_size(path: Path, size: int) -> int:
    """The decompressed size when it is cheap to know: a plain file's own size; for a ``.zst`` an
    upper bound (reading to the end is the only exact way), so size checks never reject it."""
    return sys.maxsize if is_zst(path) else size


class _Raw(io.RawIOBase):
    """A decoder stream whose errors are ``OSError``: a corrupt archive is an unreadable file."""

    def __init__(self, reader: zstandard.ZstdDecompressionReader) -> None:
        self._reader = reader

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        try:
            return self._reader.readinto(buffer)
        except zstandard.ZstdError as exc:
            raise OSError(f"corrupt zstd data: {exc}") from None


@contextlib.contextmanager
def open_binary(path: Path) -> Iterator[IO[bytes]]:
    """The file's content as a binary stream with ``readline``: decompressed for ``.zst``."""
    if not is_zst(path):
        with path.open("rb") as fh:
            yield fh
        return
    with path.open("rb") as fh:
        reader = zstandard.ZstdDecompressor().stream_reader(fh, read_across_frames=True, closefd=False)
        with io.BufferedReader(_Raw(reader), _BUFFER) as buf:
            yield buf


def sha256_prefix(path: Path, length: int) -> str:
    """sha256 of the first ``length`` bytes of the content (decompressed for ``.zst``), streamed."""
    h = hashlib.sha256()
    left = length
    with open_binary(path) as fh:
        while left > 0:
            chunk = fh.read(min(1 << 16, left))  # 64 KB: a hash must not cost a megabyte of memory
            if not chunk:
                break
            h.update(chunk)
            left -= len(chunk)
    return h.hexdigest()


def compress_file(src: IO[bytes], dest: IO[bytes], level: int = 10) -> None:
    """Stream ``src`` into ``dest`` as one zstd frame (used by tests and the transcript archive)."""
    cctx = zstandard.ZstdCompressor(level=level)
    with cctx.stream_writer(dest, closefd=False) as writer:
        while chunk := src.read(1 << 20):
            writer.write(chunk)


__all__ = [
    "SUFFIX",
    "compress_file",
    "is_zst",
    "logical_size",
    "open_binary",
    "sha256_prefix",
    "twin",
]

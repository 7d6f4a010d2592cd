"""The transcript copy's streamed redaction reads blocks, not lines (issue 15): its chunks are the
ones the readline loop made, byte for byte. Each chunk is redacted with the text around it, so a
secret spanning lines across a chunk's edge is caught as in the whole text."""

from __future__ import annotations

import io
import random
from collections.abc import Iterator
from typing import IO

import pytest

from scribed.fsutil import line_chunks as raw_chunks
from scribed.session.door import redacted_chunks
from scribed.session.redact import REDACTED, redact


def _readline_chunks(src: IO[bytes], chunk_bytes: int, line_limit: int) -> Iterator[bytes]:
    """The former chunking: one readline call a line."""
    buf: list[bytes] = []
    size = 0
    while True:
        line = src.readline(line_limit)
        if line:
            buf.append(line)
            size += len(line)
        if size >= chunk_bytes or (not line and buf):
            yield b"".join(buf)
            buf.clear()
            size = 0
        if not line:
            return


_PIECES = [
    b"\n", b"\n", b"\r\n", b"word ", b"x" * 17, b"\xc3\xa9", b"\xe2\x82", b"\xff",
    b"password=hunter2abc ", b"token: ghp_" + b"a1B2" * 9 + b" ", b'{"api_key": "sk-live-9fQ2xLk3Wm8pZr7T"}',
]  # fmt: skip


class _Trickle(io.RawIOBase):
    """A reader that returns at most a few bytes a call, as a decompressor may."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: bytearray) -> int:  # type: ignore[override]
        n = min(len(b), 3, len(self.data) - self.pos)
        b[:n] = self.data[self.pos : self.pos + n]
        self.pos += n
        return n


@pytest.mark.parametrize("limit", [1, 2, 5, 40, 1 << 26])
@pytest.mark.parametrize("chunk", [1, 7, 64, 300])
def test_block_chunks_are_readline_chunks(chunk: int, limit: int) -> None:
    rng = random.Random(chunk * 31 + limit)
    for _ in range(60):
        data = b"".join(rng.choice(_PIECES) for _ in range(rng.randrange(0, 40)))
        want = list(_readline_chunks(io.BytesIO(data), chunk, limit))
        assert list(raw_chunks(io.BytesIO(data), chunk, limit)) == want, data
        trickle = io.BufferedReader(_Trickle(data), 4)
        assert list(raw_chunks(trickle, chunk, limit)) == want, data


def _pem(seed: int) -> str:
    rng = random.Random(seed)
    body = "".join(
        rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") for _ in range(1280)
    )
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "-----BEGIN PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END PRIVATE KEY-----\n"


@pytest.mark.parametrize("limit", [3, 11, 1 << 26])
@pytest.mark.parametrize("chunk", [1, 7, 64, 300])
def test_chunks_redact_as_the_whole_text(chunk: int, limit: int) -> None:
    """With the context as wide as the file, the chunks print exactly what redacting the whole
    text prints, wherever the edges fall (inside a secret, between a name and its value)."""
    pieces = [p for p in _PIECES if p.isascii()] + [b"password:\n  Zq8vN3kLp2Rt7wXy\n", _pem(2).encode()]
    rng = random.Random(chunk * 7 + limit)
    for _ in range(15):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 25)))
        got = b"".join(redacted_chunks(io.BytesIO(data), chunk, limit, context=len(data)))
        assert got.decode() == redact(data.decode()), data


@pytest.mark.parametrize("secret", ["pem", "yaml"])
def test_a_secret_across_a_chunk_edge_is_not_copied(secret: str) -> None:
    """Found by review: a PEM body or a ``password:`` value on the line after the chunk's edge was
    copied in clear, since each chunk was redacted alone (the default context, many edge spots)."""
    text = _pem(1) if secret == "pem" else "password:\n  Zq8vN3kLp2Rt7wXy\n"
    values = [ln for ln in text.splitlines() if ln and "-----" not in ln and ln != "password:"]
    assert not any(v.strip() in redact(text) for v in values)  # the whole text hides them
    chunk = 4096
    for shift in range(0, len(text), max(1, len(text) // 40)):
        filler = "lorem ipsum dolor\n" * ((chunk - shift) // 18 + 1)
        data = (filler[: chunk - shift - 1] + "\n" + text + "tail\n").encode()
        out = b"".join(redacted_chunks(io.BytesIO(data), chunk, 1 << 26)).decode()
        assert not any(v.strip() in out for v in values), shift
        assert out.endswith("tail\n") and out.startswith("lorem ipsum")


def test_secrets_are_replaced_and_clean_bytes_kept() -> None:
    data = b"ok \xc3\xa9\npassword=hunter2abc\n"
    out = b"".join(redacted_chunks(io.BytesIO(data), 1 << 20, 1 << 26))
    assert b"hunter2abc" not in out
    assert REDACTED.encode() in out
    assert out.startswith(b"ok \xc3\xa9\n")


def test_with_text_copies_every_turn_field() -> None:
    """redact_session builds turns field by field (faster than dataclasses.replace): the same turn."""
    from dataclasses import fields, replace
    from datetime import UTC, datetime

    from scribed.models import Turn
    from scribed.session import door

    assert tuple(f.name for f in fields(Turn)) == door.TURN_FIELDS
    t = Turn("tool", "a", "tool_result", datetime(2026, 1, 2, tzinfo=UTC), 7, 99, "shell")
    assert door._with_text(t, "b") == replace(t, text="b")

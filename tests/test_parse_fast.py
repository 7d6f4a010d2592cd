"""The markdown line reader's fast paths give exactly what the plain per-line code gives (issue 15).

:func:`iter_lines` decodes a block of whole lines at once when it holds no ``\\r``, and the fence
helpers skip the regex when no fence character is near the start; offsets are ledger positions
and turns are hashed by the golden tests, so both must be byte for byte the per-line result.
"""

from __future__ import annotations

import io
import random
import re

import pytest

from scribed.sources import common, markdown_lines
from scribed.sources.markdown_lines import fence_closes, fence_open, iter_lines, split_lines

# Bytes that stress the block decode: line breaks, multi-byte UTF-8 (whole, cut, invalid), a BOM,
# and what ``str.splitlines`` would split on but ``bytes.splitlines`` does not.
_PIECES = [
    b"\n", b"\n", b"a", b"text ", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xe2\x82", b"\xff",
    b"\xc2\x85", b"\xe2\x80\xa8", b"\x0b", b"\x0c", b"\x1c", b"\xef\xbb\xbf", b"```", b"~~~", b" ",
]  # fmt: skip


def _blob(rng: random.Random, cr: bool) -> bytes:
    pieces = _PIECES + ([b"\r", b"\r\n"] if cr else [])
    return b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 400)))


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 1 << 16])
@pytest.mark.parametrize("cr", [False, True])
def test_block_decode_is_per_line_decode(monkeypatch: pytest.MonkeyPatch, chunk: int, cr: bool) -> None:
    monkeypatch.setattr(markdown_lines, "READ_CHUNK", chunk)
    rng = random.Random(chunk * 2 + cr)
    for _ in range(300):
        data = _blob(rng, cr)
        if rng.random() < 0.3:
            data = b"\xef\xbb\xbf" + data
        assert list(iter_lines(io.BytesIO(data), len(data) + 5)) == split_lines(data), data
        cut = rng.randrange(0, len(data) + 1)
        assert list(iter_lines(io.BytesIO(data), cut)) == split_lines(data[:cut]), (data, cut)


_FENCE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")


def _open_ref(text: str) -> str:
    m = _FENCE.match(text)
    return m.group(1) if m else ""


def _closes_ref(fence: str, text: str) -> bool:
    m = _FENCE.match(text)
    return bool(m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not text.strip(" \t`~"))


def test_fence_checks_are_the_regex() -> None:
    rng = random.Random(7)
    alphabet = [" ", "\t", "`", "~", "a", "x"]
    for _ in range(20000):
        lead = "".join(rng.choice(" \t") for _ in range(rng.randrange(0, 5)))  # up to 3 may lead a fence
        run = rng.choice("`~") * rng.randrange(0, 6)
        text = lead + run + "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 4)))
        assert fence_open(text) == _open_ref(text), text
        for fence in ("```", "````", "~~~", "~~~~~"):
            assert fence_closes(fence, text) == _closes_ref(fence, text), (fence, text)


_HINT_REF = re.compile(
    r"traceback|error|exception|fatal|err!|fail|panic|segmentation fault|non-zero exit|exit|^e  ",
    re.MULTILINE,
)


def _error_lines_ref(middle: str) -> list[str]:
    """The lines ``_error_lines`` gave when it searched one hint pattern (ASCII text)."""
    folded, out, pos = middle.lower(), [], 0
    while (h := _HINT_REF.search(folded, pos)) is not None:
        start = middle.rfind("\n", 0, h.start()) + 1
        end = middle.find("\n", h.end())
        end = end if end >= 0 else len(middle)
        line = middle[start:end]
        if common._ERROR_LINE.search(line):
            out.append(line.strip())
        pos = end + 1
    return out


def test_error_lines_are_the_hint_pattern_ones() -> None:
    """Hints found with str.find pick the lines the one hint pattern picked."""
    words = ["e", "E", " ", "  ", "\n", "x", "Error", "ValueError", "error:", "exit code 2", "FAILED", "err!",
             "E   x", "panic", "Traceback (most recent call last)", "non-zero exit", "fatal:", "exit"]  # fmt: skip
    rng = random.Random(3)
    for _ in range(20000):
        text = "".join(rng.choice(words) for _ in range(rng.randrange(14)))
        assert list(common._error_lines(text)) == _error_lines_ref(text), text

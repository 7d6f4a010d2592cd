"""JSONL lines decoded by msgspec give what the stdlib gives (issue 32, part 1).

msgspec decodes a line when it can; where it refuses, the stdlib reads the line decoded with bad
bytes replaced. Either way the value must be ``json.loads``'s, or invalid exactly when that is:
the parsed turns are the same with the compiled decoder and without it.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scribed.sources import common

msgspec = pytest.importorskip("msgspec")

_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)
_DAMAGE = [
    b"",
    b"\xff",
    b"\xed\xa0\x80",
    b"NaN",
    b"1E400",
    b"\\ud800",
    b"\t",
    b",",
    b"]",
    b"\x00",
    b"\xef\xbb\xbf",
]


def _stdlib(raw: bytes, first: bool) -> tuple[bool, object]:
    text = raw.decode("utf-8", "replace")
    if first and text.startswith("\ufeff"):
        text = text[1:]
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@settings(max_examples=500, deadline=None)
@given(
    value=_VALUES,
    damage=st.sampled_from(_DAMAGE),
    at=st.floats(0, 1),
    first=st.booleans(),
    ascii_=st.booleans(),
)
def test_a_line_decodes_as_the_stdlib_decodes_it(
    value: object, damage: bytes, at: float, first: bool, ascii_: bool
) -> None:
    raw = json.dumps({"v": value}, ensure_ascii=ascii_, allow_nan=True).encode()
    cut = int(at * len(raw))
    raw = raw[:cut] + damage + raw[cut:] + b"\n"
    got, want = common.decode_line(raw, first=first), _stdlib(raw, first)
    assert got[0] == want[0] and _same(got[1], want[1]), (raw, got, want)


def test_the_plain_path_is_chosen_by_the_environment() -> None:
    code = "from scribed.sources import common; print(common._FAST is None)"
    env = {**os.environ, "SCRIBED_JSON": "stdlib"}
    plain = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    env.pop("SCRIBED_JSON")
    fast = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert (plain.stdout.strip(), fast.stdout.strip()) == ("True", "False")


def test_samples_parse_the_same_on_both_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    from scribed.sources import parse_file

    samples = Path(__file__).parent / "samples"
    files = [(k, p) for k in ("claude", "codex", "copilot") for p in sorted((samples / k).rglob("*.jsonl"))]
    assert len(files) >= 3
    fast = [parse_file(k, p, "a") for k, p in files]
    monkeypatch.setattr(common, "_FAST", None)
    plain = [parse_file(k, p, "a") for k, p in files]
    assert fast == plain

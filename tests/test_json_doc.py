"""A JSON document read as a stream (issue 32, part 2) reads what ``json.loads`` reads.

Squad REPL session files are one JSON object; :mod:`scribed.sources.json_doc` walks its members
and one array's items without holding the file. Whatever the document (valid, cut short, with
extra data, duplicate keys, bad UTF-8, a BOM) and wherever the chunks fall, it must agree with
``json.loads(read_text(data))``: the same values, and invalid exactly when that raises.
"""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scribed.sources import json_doc
from scribed.sources.common import read_text

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
_MESSAGES = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "agent", "system", "x"]), "content": st.text(max_size=20)}
    )
    | _VALUES,
    max_size=6,
)


def _same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to itself (json.loads reads ``NaN``)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _walk(data: bytes, chunk: int) -> tuple[dict[str, object], list[object] | None]:
    items: list[object] | None = None

    def start() -> None:
        nonlocal items
        items = []

    def item(index: int, value: object) -> None:
        assert items is not None and index == len(items)
        items.append(value)

    members = json_doc.walk(io.BytesIO(data), "messages", item, on_array=start, chunk=chunk)
    return members, items


def _check(data: bytes, chunk: int) -> None:
    try:
        want = json.loads(read_text(data))
    except (ValueError, RecursionError):
        with pytest.raises((json_doc.InvalidDocumentError, TypeError)):
            _walk(data, chunk)
        return
    if not isinstance(want, dict):
        with pytest.raises(TypeError):
            _walk(data, chunk)
        return
    members, items = _walk(data, chunk)
    if isinstance(want.get("messages"), list):
        assert items is not None and _same(items, want.pop("messages"))
    assert _same(members, want)


@settings(max_examples=300, deadline=None)
@given(
    members=st.lists(
        st.tuples(st.sampled_from(["id", "messages", "createdAt", "x"]), _VALUES | _MESSAGES), max_size=5
    ),
    indent=st.sampled_from([None, 1, 2]),
    ascii_=st.booleans(),
    chunk=st.sampled_from([1, 2, 7, 64, 1 << 20]),
    edit=st.sampled_from(["", "bom", "cut", "extra", "space", "badutf8", "nan"]),
    at=st.floats(0, 1),
)
def test_walk_reads_what_json_loads_reads(
    members: list[tuple[str, object]], indent: int | None, ascii_: bool, chunk: int, edit: str, at: float
) -> None:
    """Members written one by one (so keys may repeat, as a hand edit can leave them), then
    damaged or not: the walk agrees with json.loads, valid or not, at every chunk size."""
    sep = (",", ":") if indent is None else (",", ": ")
    body = ",".join(
        json.dumps(k) + sep[1] + json.dumps(v, indent=indent, ensure_ascii=ascii_) for k, v in members
    )
    data = ("{" + body + "}").encode()
    cut = int(at * len(data))
    if edit == "bom":
        data = b"\xef\xbb\xbf" + data
    elif edit == "cut":
        data = data[:cut]
    elif edit == "extra":
        data += b" {}"
    elif edit == "space":
        data = b" \n\t" + data + b"\r\n  "
    elif edit == "badutf8":
        data = data[:cut] + b"\xff" + data[cut:]
    elif edit == "nan":
        data = data.replace(b"null", b"NaN", 1)
    _check(data, chunk)


@pytest.mark.parametrize(
    "text",
    ["", " ", "[]", "3", '"x"', "{}", "{ }", '{"messages": []}', '{"messages": 5}', '{"messages": [1, 2], "messages": 3}',
     '{"messages": 3, "messages": [1]}', '{"a": 1,}', '{"a" 1}', '{"messages": [1,]}', '{"messages": [1 2]}',
     '{"a": 12345}', '{"a": 1e5}', "{1: 2}", '{"a": 1} x', '{"a": "\\ud800"}', '{"a": [[[[[[[[]]]]]]]]}'],
)  # fmt: skip
@pytest.mark.parametrize("chunk", [1, 3, 1 << 20])
def test_walk_edge_documents(text: str, chunk: int) -> None:
    _check(text.encode(), chunk)


def test_a_large_message_is_decoded_a_few_times_not_once_per_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """A value far larger than a chunk is read by doubling what is unread: decoded a few times."""
    calls = []
    real = json_doc._DECODER.raw_decode

    def counted(s: str, idx: int = 0) -> tuple[Any, int]:
        calls.append(idx)
        return real(s, idx)

    monkeypatch.setattr(json_doc._DECODER, "raw_decode", counted)
    data = json.dumps({"messages": [{"role": "user", "content": "x" * 1_000_000}]}).encode()
    _, items = _walk(data, 1024)
    assert items is not None and len(items[0]["content"]) == 1_000_000  # type: ignore[index]
    assert len(calls) < 30, len(calls)


_HWM_CHILD = """
import sys
from pathlib import Path
from scribed.sources import parse_file
def hwm():
    return int([x for x in open("/proc/self/status") if x.startswith("VmHWM")][0].split()[1]) / 1024
open("/proc/self/clear_refs", "w").write("5")  # the high-water mark from here (exec keeps the parent's)
base = hwm()
r = parse_file("squad-repl", Path(sys.argv[1]), "lead")
print(len(r.sessions), sum(len(t.text) for s in r.sessions for t in s.turns) / 1e6, hwm() - base)
"""


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="reads Linux's VmHWM")
def test_a_large_squad_session_is_parsed_in_memory_that_follows_what_is_kept(tmp_path: Path) -> None:
    """A 50 MB Squad REPL file: the parse grows the process by about what its turns keep, not by
    the file's bytes, text and objects at once (f2b29dd: 4.9x the turns' text; here 1.8x)."""
    path = tmp_path / "2026-01-01T00-00-00Z_abc.json"
    msgs = [
        {"role": "user" if i % 3 == 0 else "agent", "content": f"message {i} about src/m{i % 97}.py " + "w" * 300,
         "agentName": "lead", "timestamp": "2026-01-01T00:00:00Z"}
        for i in range(140_000)
    ]  # fmt: skip
    path.write_text(json.dumps({"id": "abc", "messages": msgs}, indent=2))
    del msgs
    out = subprocess.run(
        [sys.executable, "-c", _HWM_CHILD, str(path)], capture_output=True, text=True, check=True
    )
    sessions, kept_mb, grew_mb = (float(x) for x in out.stdout.split())
    assert sessions == 1 and kept_mb > 40
    assert grew_mb < 2.5 * kept_mb, (
        f"grew {grew_mb:.0f} MB keeping {kept_mb:.0f} MB of a {path.stat().st_size / 1e6:.0f} MB file"
    )

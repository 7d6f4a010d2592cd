"""Bytes that are not UTF-8 are replaced (U+FFFD) and the session is still compacted, but never
silently: each file says once how many bytes were replaced and the first line holding one.

A user's memory must not be quietly wrong: a Latin-1 Aider history or a tool output with a raw
0xff byte reads as "caf�", and whoever reads the entry should be able to learn why.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from helpers import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from scribed.sources import common, markdown_lines, parse_file

_CLAUDE_SID = "4f35c1aa-9d0e-4c55-8a41-6b2f2d9e1c01"


def _claude(text: bytes, n: int = 0) -> bytes:
    """One Claude user record whose content is ``text`` (raw bytes, pasted in the JSON string)."""
    head = json.dumps(
        {
            "type": "user",
            "sessionId": _CLAUDE_SID,
            "timestamp": f"2026-11-20T10:{n:02d}:00Z",
            "message": {"role": "user"},
        }
    )
    return head[:-2].encode() + b', "content": "' + text + b'"}}\n'


def _codex(text: bytes, n: int = 0) -> bytes:
    head = json.dumps(
        {
            "timestamp": f"2026-11-20T10:{n:02d}:00Z",
            "type": "response_item",
            "payload": {"type": "message", "role": "user"},
        }
    )
    return head[:-2].encode() + b', "content": [{"type": "input_text", "text": "' + text + b'"}]}}\n'


def _copilot(text: bytes, n: int = 0) -> bytes:
    head = json.dumps(
        {"type": "user.message", "id": f"e{n}", "timestamp": f"2026-11-20T10:{n:02d}:00Z", "data": {}}
    )
    return head[:-2].encode() + b'"content": "' + text + b'"}}\n'


_LINE = {"claude": _claude, "codex": _codex, "copilot": _copilot}
_NAME = {
    "claude": f"{_CLAUDE_SID}.jsonl",
    "codex": "rollout-2026-11-20T10-00-00-x.jsonl",
    "copilot": "events.jsonl",
}


def _utf8_warnings(warnings: list[str]) -> list[str]:
    return [w for w in warnings if "UTF-8" in w]


@pytest.mark.parametrize("kind", ["claude", "codex", "copilot"])
def test_a_jsonl_with_bad_bytes_is_compacted_and_says_so_once(tmp_path: Path, kind: str) -> None:
    line = _LINE[kind]
    path = tmp_path / _NAME[kind]
    path.write_bytes(
        line(b"Rename the cache flag in src/cache.py", 0)
        + line(b"keep caf\xe9 as the label, then \xff\xfe the rest", 1)  # 3 bad bytes, line 2
        + line(b"Decision: the flag is CACHE_TTL in src/cache.py", 2)
        + line(b"truncated euro \xe2\x82 and fine after", 3)  # a cut sequence: 2 bytes, one U+FFFD
    )
    r = parse_file(kind, path, "riker")
    texts = [t.text for s in r.sessions for t in s.turns]
    assert any("caf\ufffd as the label, then \ufffd\ufffd the rest" in t for t in texts), texts
    assert any("truncated euro \ufffd and fine" in t for t in texts), texts
    assert any("CACHE_TTL" in t for t in texts)
    assert r.malformed == 0
    assert _utf8_warnings(r.warnings) == [
        f"{kind}: 5 bytes of invalid UTF-8 replaced with U+FFFD in {path} (first at line 2)"
    ]


def test_a_clean_file_says_nothing_and_a_skipped_line_is_not_counted(tmp_path: Path) -> None:
    path = tmp_path / f"{_CLAUDE_SID}.jsonl"
    path.write_bytes(
        _claude("naïve café ✓".encode(), 0) + b'{"type": "user", \xff "x": 1}\n' + _claude(b"ok", 1)
    )
    r = parse_file("claude", path, "riker")
    assert r.malformed == 1  # the bad byte broke that line's JSON: it is the malformed one, not both
    assert _utf8_warnings(r.warnings) == []
    assert "naïve café ✓" in r.sessions[0].turns[0].text


def test_the_stdlib_path_counts_as_msgspec_s_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without msgspec (``SCRIBED_JSON=stdlib``) every line is decoded by the stdlib: same warning."""
    monkeypatch.setattr(common, "_FAST", None)
    path = tmp_path / f"{_CLAUDE_SID}.jsonl"
    path.write_bytes(_claude(b"ok", 0) + _claude(b"ok", 1) + _claude(b"bad \xff", 2))
    r = parse_file("claude", path, "riker")
    assert _utf8_warnings(r.warnings) == [
        f"claude: 1 byte of invalid UTF-8 replaced with U+FFFD in {path} (first at line 3)"
    ]


def _aider(encode: str, newline: str = "\n") -> bytes:
    text = (
        "# aider chat started at 2026-11-20 10:00:00\n\n"
        "#### Mettez à jour la page des horaires dans docs/horaires.md\n\n"  # line 3
        "J'ai mis à jour docs/horaires.md: ouvert dès 7h.\n\n"  # line 5
        "# aider chat started at 2026-11-20 11:00:00\n\n"
        "#### Renomme le drapeau CACHE_TTL dans src/cache.py\n\n"
        "Fait: le café reste ouvert.\n"  # line 11
    )
    return text.replace("\n", newline).encode(encode)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_latin1_aider_history_is_compacted_and_says_so_once(tmp_path: Path, newline: str) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_bytes(_aider("latin-1", newline))
    r = parse_file("markdown", path, "aider")
    assert len(r.sessions) == 2
    assert "mis \ufffd jour" in r.sessions[0].turns[1].text and "caf\ufffd" in r.sessions[1].turns[1].text
    assert _utf8_warnings(r.warnings) == [
        f"markdown: 4 bytes of invalid UTF-8 replaced with U+FFFD in {path} (first at line 3)"
    ]
    clean = tmp_path / "clean" / ".aider.chat.history.md"
    clean.parent.mkdir()
    clean.write_bytes(_aider("utf-8", newline))
    assert _utf8_warnings(parse_file("markdown", clean, "aider").warnings) == []


def test_a_bad_byte_far_into_a_streamed_markdown_names_its_line(tmp_path: Path) -> None:
    """Past the first read chunk (64 KiB) and past the binary sniff: the line is still exact."""
    path = tmp_path / "notes.md"
    lines = [
        f"User: step {i} of the migration in src/db/m{i}.py\n\nAssistant: done {i}.\n\n" for i in range(3000)
    ]
    lines[2500] = lines[2500].replace("done", "d\xe9j\xe0 fait")
    data = "".join(lines).encode("latin-1")
    path.write_bytes(data)
    assert len(data) > 3 * markdown_lines.READ_CHUNK
    bad_line = data[: data.index(b"\xe9")].count(b"\n") + 1
    assert _utf8_warnings(parse_file("markdown", path, "notes").warnings) == [
        f"markdown: 2 bytes of invalid UTF-8 replaced with U+FFFD in {path} (first at line {bad_line})"
    ]


def _spans(data: bytes) -> tuple[int, int]:
    """The bytes of the bad spans the strict decoder stops at, one after the other, and the first."""
    n, pos, first = 0, 0, -1
    while True:
        try:
            data[pos:].decode("utf-8")
            return n, first
        except UnicodeDecodeError as exc:
            first = pos + exc.start if first < 0 else first
            n += exc.end - exc.start
            pos += exc.end


@settings(max_examples=500, deadline=None)
@given(
    st.binary(max_size=64)
    | st.lists(st.sampled_from([b"a", b"\xc3\xa9", b"\xe2\x82", b"\xff", b"\x80", b"\xf0\x9f\x98"])).map(
        b"".join
    )
)
def test_counted_decoding_is_replace_s(data: bytes) -> None:
    """The counting decoder gives exactly ``errors="replace"``'s text, and counts the bytes it replaced."""
    text, n, first = common.decode_counted(data)
    assert text == data.decode("utf-8", "replace")
    assert (n, first) == _spans(data)


def test_counted_decoding_counts_each_byte() -> None:
    rng = random.Random(7)
    for _ in range(200):
        good = "".join(rng.choice("aé€😀 \n") for _ in range(rng.randrange(30)))
        bad = bytes(rng.choice([0xFF, 0xFE, 0xF5, 0xC3]) for _ in range(rng.randrange(1, 4)))
        data = good.encode() + bad + b"x" + good.encode()
        assert common.decode_counted(data)[1:] == (len(bad), len(good.encode()))


# --- the real CLI: a demo root whose Claude transcript holds raw 0xff bytes ------------------------
def test_run_once_compacts_the_damaged_session_and_warns_once(tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    assert run_cli("demo", str(demo)).returncode == 0
    (path,) = (demo / "transcripts/claude").rglob("*.jsonl")
    data = path.read_bytes()
    data = data.replace(b"Never log raw API keys", b"Never log raw \xff\xff API keys", 1)
    data = data.replace(b"checking the routes next", b"checking the r\xf4utes next", 1)
    path.write_bytes(data)
    first = data[: data.index(b"\xff")].count(b"\n") + 1
    p = run_cli("--config", str(demo / "scribed.toml"), "run-once", "--force", "--json")
    err = p.stderr.decode()
    assert p.returncode == 0 and "Traceback" not in err, err
    out = json.loads(p.stdout)
    assert any(e["source"].endswith(path.name) for e in out["entries"]), out
    events = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    warned = [e for e in events if e["event"] == "source_warning" and e["file"] == str(path)]
    assert [(w["kind"], w["level"], w["reason"]) for w in warned] == [
        (
            "claude",
            "warning",
            f"claude: 3 bytes of invalid UTF-8 replaced with U+FFFD in {path} (first at line {first})",
        )
    ]
    assert out["warnings"] >= 1  # the run's count of warnings includes it
    cold = (demo / ".squad/memory/cold/riker.md").read_text()
    assert "raw \ufffd\ufffd API keys" in cold or "API keys" in cold
    again = run_cli("--config", str(demo / "scribed.toml"), "run-once", "--json").stderr.decode()
    assert "UTF-8" not in again  # unchanged: not read again
    os.utime(path)  # touched: read again, and said again, once
    again = run_cli("--config", str(demo / "scribed.toml"), "run-once", "--json").stderr.decode()
    assert again.count("UTF-8") == 1, again


# --- Squad REPL: one JSON document, read as a stream -----------------------------------------------
def _repl_doc(texts: list[bytes], agents: list[str | None]) -> bytes:
    """A pretty-printed Squad REPL session (one message a few lines), each content pasted raw."""
    out = [b'{\n  "id": "0a1b2c3d",\n  "createdAt": "2026-11-20T10:00:00Z",\n  "messages": [\n']
    for i, (text, agent) in enumerate(zip(texts, agents, strict=True)):
        role = b"user" if agent is None else b"agent"
        name = b"" if agent is None else b',\n      "agentName": "' + agent.encode() + b'"'
        sep = b",\n" if i < len(texts) - 1 else b"\n"
        out.append(
            b'    {\n      "role": "' + role + b'",\n      "content": "' + text + b'",\n'
            b'      "timestamp": "2026-11-20T10:%02d:00Z"' % i + name + b"\n    }" + sep
        )
    return b"".join(out) + b"  ]\n}\n"


def test_a_squad_repl_file_with_bad_bytes_is_compacted_and_says_so_once(tmp_path: Path) -> None:
    path = tmp_path / "2026-11-20T10-00-00_0a1b2c3d.json"
    data = _repl_doc(
        [
            b"Rename the cache flag in src/cache.py",
            b"keep caf\xe9 as the label, then \xff\xfe the rest",  # 3 bad bytes
            b"Decision: the flag is CACHE_TTL in src/cache.py",
            b"truncated euro \xe2\x82 and fine after",  # 2 bytes, one U+FFFD
        ],
        [None, "worf", None, "worf"],
    )
    path.write_bytes(data)
    line = data[: data.index(b"\xe9")].count(b"\n") + 1
    r = parse_file("squad-repl", path, "coordinator")
    texts = [t.text for s in r.sessions for t in s.turns]
    assert any("caf\ufffd as the label, then \ufffd\ufffd the rest" in t for t in texts), texts
    assert any("truncated euro \ufffd and fine" in t for t in texts), texts
    assert {s.agent for s in r.sessions} == {"coordinator", "worf"}
    assert _utf8_warnings(r.warnings) == [
        f"squad-repl: 5 bytes of invalid UTF-8 replaced with U+FFFD in {path} (first at line {line})"
    ]
    clean = tmp_path / "clean" / path.name
    clean.parent.mkdir()
    clean.write_bytes(_repl_doc(["naïve café \ufffd ✓".encode(), b"ok"], [None, "worf"]))  # a U+FFFD written
    assert _utf8_warnings(parse_file("squad-repl", clean, "coordinator").warnings) == []


def test_a_streamed_squad_repl_file_says_it_once_with_its_line(tmp_path: Path) -> None:
    """Over ``STREAM_MIN_BYTES`` the file is read once per session (two agents: three passes) and
    in 1 MiB chunks; the bad byte lies past the first chunk, in a named agent's reply: one warning."""
    from scribed.sources import STREAM_MIN_BYTES, read_file

    path = tmp_path / "2026-11-20T10-00-00_0a1b2c3d.json"
    texts = [f"step {i}: migrated src/db/m{i}.py and ran the suite".encode() for i in range(30000)]
    agents: list[str | None] = [None if i % 2 == 0 else ("worf", "data")[i % 4 // 2] for i in range(30000)]
    texts[25001] = b"d\xe9j\xe0 fait for src/db/m25001.py"
    data = _repl_doc(texts, agents)
    path.write_bytes(data)
    assert data.index(b"\xe9") > 2 * STREAM_MIN_BYTES
    line = data[: data.index(b"\xe9")].count(b"\n") + 1
    reading = read_file("squad-repl", path, "coordinator")
    assert reading.stream is not None  # streamed, not parsed whole
    assert len(list(reading.sessions())) == 3
    want = f"squad-repl: 2 bytes of invalid UTF-8 replaced with U+FFFD in {path} (first at line {line})"
    assert _utf8_warnings(reading.result.warnings) == [want]
    assert _utf8_warnings(parse_file("squad-repl", path, "coordinator").warnings) == [want]


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(
        st.sampled_from(
            [b"a", b"\xc3\xa9", b"\xe2\x82", b"\xe2\x82\xac", b"\xff", b"\x80", b"\xf0\x9f\x98", b"\n"]
        ),
        max_size=40,
    ),
    chunk=st.sampled_from([1, 2, 3, 7, 64]),
)
def test_the_document_reader_counts_as_replace_does_at_every_chunk_size(
    parts: list[bytes], chunk: int
) -> None:
    """Bad bytes cut by a chunk's end (a sequence begun in one read, broken in the next) are
    counted once, at their offset in the file, whatever the chunk size."""
    import io

    from scribed.sources import json_doc

    body = b"".join(parts).replace(b"\n", b"\\n")
    data = b'{"id": "x", "messages": ["' + body + b'"]}'
    got: list[object] = []
    bad = json_doc.Replaced()
    json_doc.walk(io.BytesIO(data), "messages", lambda _i, v: got.append(v), chunk=chunk, replaced=bad)
    assert got == [json.loads(data.decode("utf-8", "replace"))["messages"][0]]
    _, n, first = common.decode_counted(data)
    assert (bad.n, bad.first) == (n, first)


def test_run_once_warns_once_for_a_damaged_squad_repl_file(tmp_path: Path) -> None:
    root, repl = tmp_path / "root", tmp_path / "sessions"
    (root / ".squad").mkdir(parents=True)
    repl.mkdir()
    path = repl / "2026-11-20T10-00-00_0a1b2c3d.json"
    path.write_bytes(
        _repl_doc(
            [b"Rename the flag in src/cache.py", b"Decision: the flag is CACHE_TTL, caf\xe9 stays"],
            [None, "worf"],
        )
    )
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'root = "{root}"\n[compress]\nbackend = "extractive"\n'
        f'[[sources]]\nkind = "squad-repl"\npath = "{repl}"\n'
    )
    args = ("--config", str(cfg), "run-once", "--force", "--json")
    p = run_cli(*args)
    err = p.stderr.decode()
    assert p.returncode == 0 and "Traceback" not in err, err
    out = json.loads(p.stdout)
    assert out["compacted"] >= 1 and out["warnings"] >= 1, out
    events = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    warned = [e["reason"] for e in events if e["event"] == "source_warning" and e["file"] == str(path)]
    assert warned == [
        f"squad-repl: 1 byte of invalid UTF-8 replaced with U+FFFD in {path} (first at line 12)"
    ]
    again = run_cli(*args)
    assert json.loads(again.stdout)["compacted"] == 0 and "UTF-8" not in again.stderr.decode()
    os.utime(path)  # touched: read again, said again, once
    assert run_cli(*args).stderr.decode().count("UTF-8") == 1
    doctor = json.loads(run_cli("--config", str(cfg), "doctor", "--json").stdout)
    (issue,) = [i for s in doctor["sources"] for i in s["issues"] if "UTF-8" in i["warning"]]
    assert issue["file"] == str(path) and "iconv" in issue["fix"]

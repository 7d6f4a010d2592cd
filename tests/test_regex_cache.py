"""The redactor's per-anchor passes are compiled once and kept beside the bytecode (issue 15: a
spawn compiled them every time, a third of its instructions). The cache must never change a
pattern: what it gives equals what ``re.compile`` gives, a bad file is ignored, and nothing is
written where Python would not write bytecode."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from scribed import bytecache as saved
from scribed.session import redact
from scribed.session.rules import ANCHORS


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(saved, "FOLDER", str(tmp_path / "__pycache__"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return tmp_path / "__pycache__"


# Each pass's pattern as redact builds it (taken before a test points the cache elsewhere).
SOURCES = {a: redact._pass(ord(a)).pattern for a in ANCHORS}


def _source(anchor: str) -> bytes:
    return SOURCES[anchor]


def _same(got: re.Pattern[bytes], want: re.Pattern[bytes]) -> None:
    assert got == want  # re.Pattern equality compares the pattern, the flags and the compiled code
    assert (dict(got.groupindex), got.groups, got.flags) == (dict(want.groupindex), want.groups, want.flags)


@pytest.mark.parametrize("anchor", list(ANCHORS))
def test_a_cached_pass_is_the_compiled_pass(
    folder: Path, anchor: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _source(anchor)
    built = saved.compiled(f"t{ord(anchor)}", lambda: text)  # built, and written
    assert len(list(folder.glob("regex.*.json"))) == 1
    _same(built, re.compile(text))

    def uncompiled(_text: bytes) -> None:
        raise AssertionError("a cache hit does not compile the pattern")

    monkeypatch.setattr(saved, "_parts", uncompiled)
    _same(saved.compiled(f"t{ord(anchor)}", lambda: text), re.compile(text))  # read back


def test_the_passes_redact_redact_uses_are_the_compiled_ones() -> None:
    for a in ANCHORS:
        p = redact._pass(ord(a))
        _same(p, re.compile(p.pattern))


@pytest.mark.parametrize(
    "bad",
    [
        "not json",
        '{"pattern": "x"}',
        '{"pattern": "x", "flags": 0, "code": ["1"], "groups": 0, "groupindex": {}, "indexgroup": [null]}',
        '{"pattern": "x", "flags": 0, "code": [1, 2, 3], "groups": 0, "groupindex": {}, "indexgroup": [null]}',
    ],
)
def test_a_bad_cache_file_is_ignored(folder: Path, bad: str) -> None:
    text = _source(":")
    saved.compiled("bad", lambda: text)
    (path,) = folder.glob("regex.*.json")
    path.write_text(bad)
    _same(saved.compiled("bad", lambda: text), re.compile(text))


def test_nothing_is_written_where_bytecode_is_not(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    text = _source("-")
    _same(saved.compiled("none", lambda: text), re.compile(text))
    assert not folder.exists()


def test_a_new_text_replaces_the_old_file(folder: Path) -> None:
    """After an upgrade or a rule edit the pattern's old file goes: one file a pattern, as one .pyc a module."""
    folder.mkdir()
    (folder / f"regex.{saved.TAG}.stale.oldhash.json").write_text("{}")
    (folder / f"regex.{saved.TAG}.other.oldhash.json").write_text("{}")
    text = _source("=")
    saved.compiled("stale", lambda: text)
    names = sorted(p.name for p in folder.iterdir())
    assert len(names) == 2 and f"regex.{saved.TAG}.other.oldhash.json" in names
    assert f"regex.{saved.TAG}.stale.oldhash.json" not in names


def test_a_file_is_named_by_the_text_it_compiles(folder: Path) -> None:
    """Found by review: a key made of the engine files' times, taken after they were loaded, paired
    an edited engine with patterns built by the old one. The name is now the text's own hash, and a
    file holding another text (renamed, or a hash collision) is never used."""
    old, new = _source(":"), _source("_")
    saved.compiled("p", lambda: old)
    (old_file,) = folder.glob("regex.*.json")
    _same(saved.compiled("p", lambda: new), re.compile(new))  # the text changed: its own file
    assert len(list(folder.glob("regex.*.json"))) == 1, "the old text's file of this Python goes"
    (new_file,) = folder.glob("regex.*.json")
    assert new_file != old_file
    saved.compiled("p", lambda: old)  # back to the old text: rebuilt and written again
    (again,) = folder.glob("regex.*.json")
    again.rename(new_file)  # a file named for the new text, holding the old one's code
    _same(saved.compiled("p", lambda: new), re.compile(new))


def test_another_pythons_files_are_kept(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two Pythons on one install (two venvs, a CI matrix) each keep their own files, as .pyc tags
    do, instead of deleting each other's at every start (found by review)."""
    text = _source("=")
    saved.compiled("q", lambda: text)
    monkeypatch.setattr(saved, "TAG", "otherpython")
    saved.compiled("q", lambda: text)
    assert len(list(folder.glob("regex.*.q.*.json"))) == 2


def test_the_cache_follows_pycache_prefix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    try:
        importlib.reload(saved)
        assert saved.FOLDER.startswith(str(tmp_path / "prefix"))
    finally:
        monkeypatch.undo()
        importlib.reload(saved)
    assert saved.FOLDER.endswith("__pycache__")

"""The redactor's per-anchor passes are compiled once and kept beside the bytecode (issue 15: a
spawn compiled them every time, a third of its instructions). The cache must never change a
pattern: what it gives equals what ``re.compile`` gives, a bad file is ignored, and nothing is
written where Python would not write bytecode."""

from __future__ import annotations

import functools
import re
import shutil
import sys
from pathlib import Path

import pytest

from scribed.session import redact
from scribed.session import regex_cache as saved
from scribed.session.redact_values import ANCHORS


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
def test_a_cached_pass_is_the_compiled_pass(folder: Path, anchor: str) -> None:
    text = _source(anchor)
    built = saved.compiled(f"t{ord(anchor)}", lambda: text)  # built, and written
    assert len(list(folder.glob("regex.*.json"))) == 1
    _same(built, re.compile(text))

    def unused() -> bytes:
        raise AssertionError("a cache hit does not build the pattern")

    _same(saved.compiled(f"t{ord(anchor)}", unused), re.compile(text))  # read back


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


def test_the_key_follows_the_rule_file_and_the_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ("secrets.toml", "redact.py", "redact_context.py", "redact_values.py", "regex_cache.py")
    for n in names:
        shutil.copy2(Path(saved.__file__).with_name(n), tmp_path / n)  # with its times
    monkeypatch.setattr(saved, "HERE", str(tmp_path))
    key = functools.partial(saved.key, *names)
    assert key() == saved.KEY, "the key the redactor uses is made of these files"
    monkeypatch.setattr(saved.val, "DIGEST", ["another rule file"])
    assert key() != saved.KEY, "and of the hash of the rules the redactor loaded"
    for n in ("secrets.toml", "redact_context.py"):
        before = key()
        with (tmp_path / n).open("a") as f:
            f.write("\n# edited\n")
        assert key() != before, n
    (tmp_path / "redact.py").unlink()
    assert key() is None, "a file that cannot be read: no caching"


def test_a_new_key_replaces_the_old_files(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After an upgrade or a rule edit the pattern's old file goes: one file a pattern, as one .pyc a module."""
    text = _source("=")
    folder.mkdir()
    (folder / "regex.oldkey.stale.json").write_text("{}")
    (folder / "regex.oldkey.other.json").write_text("{}")
    saved.compiled("stale", lambda: text)
    monkeypatch.setattr(saved, "KEY", "newkey")
    saved.compiled("stale", lambda: text)
    assert sorted(p.name for p in folder.iterdir()) == ["regex.newkey.stale.json", "regex.oldkey.other.json"]

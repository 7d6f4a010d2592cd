"""The parsed rule file is cached beside the package's bytecode (a spawn skips ~20 ms of TOML).

The cache must never change what the rules are: it is keyed by the TOML's hash, a bad cache is
ignored, and nothing is written where Python would not write bytecode.
"""

from __future__ import annotations

import json
import shutil
import sys
import tomllib
from pathlib import Path

import pytest

from scribed.session import rules as rv


@pytest.fixture
def pkg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the rule file in a folder of its own, with the rule loader reading from there."""
    folder = tmp_path / "session"
    folder.mkdir()
    shutil.copy(Path(rv.__file__).with_name("secrets.toml"), folder / "secrets.toml")
    monkeypatch.setattr(rv, "__file__", str(folder / "rules.py"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    rv.data.cache_clear()
    yield folder
    rv.data.cache_clear()


def _truth(folder: Path) -> dict[str, object]:
    return tomllib.loads((folder / "secrets.toml").read_text("utf-8"))


def test_cache_is_written_once_and_read_back_equal(pkg: Path) -> None:
    first = rv.data()
    caches = list((pkg / "__pycache__").glob("secrets.*.json"))
    assert len(caches) == 1
    assert first == _truth(pkg)
    rv.data.cache_clear()
    assert rv.data() == _truth(pkg)  # read from the cache this time
    assert len(list((pkg / "__pycache__").glob("secrets.*.json"))) == 1


def test_cache_is_what_is_read(pkg: Path) -> None:
    truth = rv.data()
    cache = next((pkg / "__pycache__").glob("secrets.*.json"))
    marked = {**truth, "from": "cache"}
    cache.write_text(json.dumps(marked), "utf-8")
    rv.data.cache_clear()
    assert rv.data() == marked  # proves the cache is used (so the next tests mean something)


def test_a_cache_that_lost_rules_is_not_used(pkg: Path) -> None:
    """A cache that parses but lacks rules (truncated by hand, tampered) would redact less: refused."""
    truth = rv.data()
    cache = next((pkg / "__pycache__").glob("secrets.*.json"))
    for bad in ({**truth, "rule": truth["rule"][:-1]}, {k: v for k, v in truth.items() if k != "words"},
                {**truth, "rule": "x"}):  # fmt: skip
        cache.write_text(json.dumps(bad), "utf-8")
        rv.data.cache_clear()
        assert rv.data() == _truth(pkg)


def test_an_edited_rule_file_never_meets_a_stale_cache(pkg: Path) -> None:
    rv.data()
    toml = pkg / "secrets.toml"
    toml.write_text(toml.read_text("utf-8") + '\n[extra]\nnote = "edited"\n', "utf-8")
    rv.data.cache_clear()
    got = rv.data()
    assert got["extra"] == {"note": "edited"}
    assert got == _truth(pkg)
    assert len(list((pkg / "__pycache__").glob("secrets.*.json"))) == 2


def test_a_corrupt_cache_is_ignored(pkg: Path) -> None:
    rv.data()
    cache = next((pkg / "__pycache__").glob("secrets.*.json"))
    for bad in ("{not json", "[1, 2]", ""):
        cache.write_text(bad, "utf-8")
        rv.data.cache_clear()
        assert rv.data() == _truth(pkg)


def test_no_write_where_bytecode_is_not_written(pkg: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert rv.data() == _truth(pkg)
    assert not (pkg / "__pycache__").exists()


def test_a_cache_folder_that_cannot_be_made_is_skipped(pkg: Path) -> None:
    (pkg / "__pycache__").write_text("a file, not a folder", "utf-8")  # fails even for root
    assert rv.data() == _truth(pkg)
    assert sorted(p.name for p in pkg.iterdir()) == ["__pycache__", "secrets.toml"]

"""`scribed git setup` for a squad root whose path holds a blank, a quote or a glob character (a
repository cloned into "My Repo", a root in "sub dir"): the .gitattributes patterns are quoted and
escaped as gitattributes(5) reads them, so git applies the merge driver to exactly the tier files.
Unquoted, the line split at the blank: git warned on every command and never used the driver."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers import run_cli


def _git(top: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(top), *args], capture_output=True, text=True, check=True).stdout


def _merge_attr(top: Path, path: str) -> str:
    return _git(top, "check-attr", "merge", "--", path).rsplit(": ", 1)[1].strip()


@pytest.mark.parametrize("folder", ["sub dir", 'we[1] "q"', "tab\there", "#notes", "!keep"])
def test_setup_quotes_a_root_path_git_would_split(tmp_path: Path, folder: str) -> None:
    top = tmp_path / "My Repo"
    (top / folder / ".squad").mkdir(parents=True)
    _git(top, "init", "-q")
    done = run_cli("git", "setup", "--root", str(top / folder))
    assert done.returncode == 0, done.stderr.decode()
    memory = f"{folder}/.squad/memory"
    assert _merge_attr(top, f"{memory}/cold/riker/2026-12-01T000000Z-e-1.md") == "scribed"
    assert _merge_attr(top, f"{memory}/wiki/ops.md") == "scribed"
    assert _merge_attr(top, f"{memory}/cold/riker/retired.txt") == "union"
    assert _merge_attr(top, "other/cold/riker/x.md") == "unspecified"
    if "[" in folder:  # the folder's own "[1]" is no character class
        assert _merge_attr(top, f"{folder.replace('[1]', '1')}/.squad/memory/wiki/ops.md") == "unspecified"
    warned = subprocess.run(["git", "-C", str(top), "status"], capture_output=True, text=True, check=True)
    assert "is not a valid attribute name" not in warned.stderr
    again = run_cli("git", "setup", "--root", str(top / folder))
    assert b"nothing to change" in again.stdout + again.stderr


def test_setup_replaces_the_unquoted_lines_an_older_setup_wrote(tmp_path: Path) -> None:
    top = tmp_path / "My Repo"
    (top / "sub dir/.squad").mkdir(parents=True)
    _git(top, "init", "-q")
    old = (
        "sub dir/.squad/memory/cold/*/*.md merge=scribed\nsub dir/.squad/memory/wiki/**/*.md merge=scribed\n"
    )
    (top / ".gitattributes").write_text("*.png binary\n" + old)
    done = run_cli("git", "setup", "--root", str(top / "sub dir"))
    assert done.returncode == 0, done.stderr.decode()
    text = (top / ".gitattributes").read_text()
    assert text.startswith("*.png binary\n") and old.splitlines()[0] not in text.splitlines()
    assert _merge_attr(top, "sub dir/.squad/memory/wiki/ops.md") == "scribed"

"""Team memory with a teammate whose git writes CRLF line endings in the working tree
(``core.autocrlf=true``, a Windows clone), with real git. A cold entry file is read as its LF
form: its CRLF checkout is not a change, so no run rewrites or renames it. Before, an entry
written by hand (keyed by a hash of its text) was renamed by every run after a pull, back and
forth between the two clones, each logging ``cold_file_repaired``."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from test_team_git import Clone, _session, git, squad_remote

pytestmark = [
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.slow,  # real git and eleven CLI runs: ~7 s
]

HAND = "\n### 2026-11-05: Hand note on the build\nThe nightly build needs `make warm` before `make all`.\n"


def _events(c: Clone) -> str:
    p = c.scribed("run-once")
    return (p.stdout + p.stderr).decode()


def _status(c: Clone) -> str:
    return git(c.dir, "status", "--porcelain", "--", ".squad/memory").stdout


def test_crlf_checkout_of_entries_is_no_change(tmp_path: Path) -> None:
    remote = squad_remote(tmp_path)
    a = Clone(tmp_path, "a", remote)
    a.scribed("git", "setup")
    _session(a.sources["riker"], 1, 3, random.Random(1))
    a.scribed("run-once")
    with (a.dir / ".squad/memory/cold/riker.md").open("a") as f:  # a person adds an entry by hand
        f.write(HAND)
    a.scribed("run-once")
    a.commit()
    a.push()
    b = Clone(tmp_path, "b", remote, crlf=True)
    b.scribed("git", "setup")
    store = sorted(p.name for p in (b.dir / ".squad/memory/cold/riker").glob("*.md"))
    assert len(store) == 2 and b"\r\n" in (b.dir / ".squad/memory/cold/riker" / store[1]).read_bytes()
    for _ in range(2):  # the CRLF checkout read as it is committed: nothing to write, twice
        ev = _events(b)
        assert "cold_file_repaired" not in ev, ev
        assert _status(b) == "", ev
    assert b"\r" not in (b.dir / ".squad/memory/cold/riker.md").read_bytes(), "the view is LF"
    _session(b.sources["worf"], 2, 4, random.Random(2))  # b adds its own entry and shares it
    b.scribed("run-once")
    b.commit()
    b.push()
    a.pull("merge")
    assert "cold_file_repaired" not in _events(a)
    assert _status(a) == ""
    git(b.dir, "pull", "-q", "--no-edit")
    assert "cold_file_repaired" not in _events(b)
    assert _status(b) == ""
    for agent in ("riker", "worf"):  # both clones hold the same entries, read the same
        views = [(c.dir / f".squad/memory/cold/{agent}.md").read_bytes() for c in (a, b)]
        assert views[0] == views[1]

"""A hand edit of a cold entry that ``scribed cold-remove`` on another clone wins over is named,
with where its text stays: real git, a bare remote and two clones (:mod:`test_team_git`'s).

The edit and the removal meet as a modify/delete conflict; the removal wins (docs/teams.md), so
the run deletes the edited file. Before, it did so without a word (finding g08)."""

from __future__ import annotations

import json
import random
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from test_team_git import clone_pair, git, share
from test_team_gitrm import MEMORY, _files, _key, _warned

pytestmark = [
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.slow,
]


def _dropped(out: str) -> list[dict[str, str]]:
    return [
        json.loads(line)
        for line in out.splitlines()
        if line.startswith("{") and '"cold_edit_dropped"' in line
    ]


@pytest.mark.parametrize("who_pulls", ["remover", "editor"])
def test_an_edit_the_removal_wins_over_is_named_once_with_the_command_that_shows_it(
    tmp_path: Path, who_pulls: str
) -> None:
    """b corrects an entry's decision by hand while a removes the entry; whichever clone pulls
    meets a modify/delete conflict, and its run deletes the file, once saying so: the entry, the
    file, who edited and who removed it, and a `git show` that prints the edited text."""
    a, b = clone_pair(tmp_path, driver=True)
    share(a, "riker", range(3, 5), random.Random(59))
    b.pull("merge")
    b.scribed("run-once")
    _, name = _files(b, "riker")
    k = _key(name)
    path = b.dir / MEMORY / "cold/riker" / name
    text = path.read_text()
    edited = re.sub(
        r"^(- use a token bucket)[^\n]*", r"\1 per API key, not per tenant (Dana)", text, flags=re.M
    )
    assert edited != text
    path.write_text(edited)
    git(b.dir, "commit", "-qam", "memory: correct the bucket decision")

    removed = a.scribed("cold-remove", k)
    assert not _dropped(_warned(removed)), "a removal that met no edit says nothing"
    a.commit()
    if who_pulls == "remover":
        b.push()
        pulling = a
    else:
        a.push()
        pulling = b
    p = git(pulling.dir, "pull", "--no-rebase", "--no-edit", check=False)
    assert "CONFLICT (modify/delete)" in p.stdout + p.stderr, p.stdout + p.stderr

    out = _warned(pulling.scribed("run-once"))
    (said,) = _dropped(out)
    assert said["entry"] == k and said["agent"] == "riker", said
    assert said["file"] == f"{MEMORY}/cold/riker/{name}", said
    assert (said["edited_by"], said["removed_by"]) == ("b", "a"), said
    m = re.search(r"`(git show [^`]+)`", said["action"])
    assert m, said["action"]
    shown = subprocess.run(shlex.split(m.group(1)), cwd=pulling.dir, capture_output=True, text=True)
    assert shown.returncode == 0 and "per API key, not per tenant (Dana)" in shown.stdout, shown
    assert not (pulling.dir / MEMORY / "cold/riker" / name).exists(), "the removal wins"

    assert not _dropped(_warned(pulling.scribed("run-once"))), "said once, not at every run"
    pulling.commit()
    assert not _dropped(_warned(pulling.scribed("run-once")))

"""A person's edit of a cold entry that a removal by hand wins over, named before it goes.

``scribed cold-remove`` on one clone and a hand edit of the same entry on another make git stop a
merge with a modify/delete conflict, the edited file left in the working tree. The removal wins
(docs/teams.md: a removed entry stays out whichever side holds it), so the next run deletes that
file; without a word, a person's words would be gone. This module tells such a file apart (git's
index holds the merge's base and one side only, and that side's version is not the base) and
says where the edited text stays: the commit of the edited side, as a pasteable ``git show``.

git is asked only for the files of entries removed by hand that a run is about to delete (rare).
"""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scribed.core.gittree import _git_at, usable

if TYPE_CHECKING:
    from pathlib import Path

# what a merge, a rebase, a cherry-pick or a revert that stopped on a conflict points at
_SIDES = ("HEAD", "MERGE_HEAD", "REBASE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD")


@dataclass(slots=True)
class DroppedEdit:
    """An edited entry file the removal wins over: where its text stays, and who did what."""

    file: str  # from the repository's top
    show: str  # the command that prints the edited text (empty when git has no commit of it)
    edited_by: str = ""  # the author of the edited side's last commit of the file
    removed_by: str = ""  # the author of the commit that deleted it on the other side


def _git(memory: Path, *args: str) -> str:
    """One git call's output, stripped; "" when it fails."""
    try:
        p = _git_at(memory, *args)
    except (OSError, subprocess.SubprocessError):
        return ""
    return p.stdout.strip() if p.returncode == 0 else ""


def _stages(memory: Path, rel: str) -> tuple[str, dict[str, str]]:
    """``rel``'s path from the repository's top and its index stages (stage → object id)."""
    out: dict[str, str] = {}
    full = ""
    for line in _git(memory, "ls-files", "-s", "--full-name", "--", rel).splitlines():
        meta, _, full = line.partition("\t")
        parts = meta.split()
        if len(parts) == 3:  # noqa: PLR2004  (mode, object, stage)
            out[parts[2]] = parts[1]
    return full, out


def edit_dropped(memory: Path, rel: str) -> DroppedEdit | None:
    """The edit a removal wins over in the file ``rel`` (relative to ``memory``): a modify/delete
    conflict whose surviving side changed the file from the merge's base; None otherwise (no
    conflict, no git, an unchanged file: nothing of a person's is lost)."""
    if not usable(memory):
        return None
    full, stages = _stages(memory, rel)
    kept = stages.get("2") or stages.get("3")
    if "1" not in stages or ("2" in stages) == ("3" in stages) or kept == stages["1"]:
        return None  # no modify/delete conflict, or the surviving side did not change the file
    out = DroppedEdit(full, "")
    for side in _SIDES:
        commit = _git(memory, "rev-parse", "--verify", "-q", "--short", f"{side}^{{commit}}")
        if not commit:
            continue
        here = _git(memory, "rev-parse", "--verify", "-q", f"{side}:{full}")
        who = _git(memory, "log", "-1", "--format=%an", side, "--", rel)
        if here == kept and not out.show:
            out.show = f"git show {shlex.quote(f'{commit}:{full}')}"
            out.edited_by = who
        elif not here and not out.removed_by:
            out.removed_by = who
    return out

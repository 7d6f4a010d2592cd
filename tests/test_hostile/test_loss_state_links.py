"""Issue 13: scribed's state folders (``.squad/memory/.scribed`` and its archive) that are symlinks, or
that resolve outside the root, are refused with an error naming the folder (exit 2); nothing is
written through them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import tree_bytes
from lossy_kit import OLD, env, make_root, run_once, scribed, write_session


def setup(tmp_path: Path, which: str) -> tuple[Path, Path, Path, Path]:
    root, (src,), cfg = make_root(tmp_path)
    write_session(src / "rollout-a.jsonl", "sess-a", 1)
    hot = root / ".squad/memory/hot/troi.md"
    hot.write_text("Current task: rotate keys\n\nDecision: rotate weekly in src/rotate.py.\n")
    os.utime(hot, (OLD, OLD))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine\n")
    state = root / ".squad/memory/.scribed"
    if which == "state":
        state.symlink_to(outside, target_is_directory=True)
        named = state
    elif which == "archive":
        state.mkdir()
        (state / "archive").symlink_to(outside, target_is_directory=True)
        named = state / "archive"
    else:  # the memory folder itself points outside the root: so would the state under it
        mem = root / ".squad/memory"
        (mem / "hot").rename(outside / "hot")
        mem.rmdir()
        mem.symlink_to(outside, target_is_directory=True)
        named = state
    return root, cfg, outside, named


@pytest.mark.parametrize("which", ["state", "archive", "memory"])
def test_symlinked_state_folder_is_refused(tmp_path: Path, which: str) -> None:
    _root, cfg, outside, named = setup(tmp_path, which)
    before = tree_bytes(outside)
    code, _, err = scribed("--config", str(cfg), "run-once")
    assert code == 2, (code, err[-2000:])
    assert str(named) in err and "Traceback" not in err, err
    assert tree_bytes(outside) == before, "written through the link"
    # the service refuses it the same way, at once, with EX_CONFIG: systemd does not restart it (issue 33)
    p = subprocess.run(
        [sys.executable, "-m", "scribed", "--config", str(cfg), "run"],
        env=env(),
        capture_output=True,
        timeout=60,
    )
    assert p.returncode == 78 and str(named) in p.stderr.decode(), p.stderr.decode()[-2000:]
    assert tree_bytes(outside) == before


def test_real_state_folders_still_work(tmp_path: Path) -> None:
    root, (src,), cfg = make_root(tmp_path)
    write_session(src / "rollout-a.jsonl", "sess-a", 1)
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 1, err[-2000:]
    assert (root / ".squad/memory/.scribed/ledger.sqlite").is_file()

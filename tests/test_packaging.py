"""Packaging (issue 17, item 5): the wheel is `scribed-memory` (the command and the import package
stay `scribed`), it installs into a fresh virtualenv, and the README says what to commit."""

from __future__ import annotations

import re
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

from scribed import __version__

REPO = Path(__file__).parent.parent
DIST = "scribed-memory"


def test_project_metadata() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["name"] == DIST
    assert project["scripts"] == {"scribed": "scribed.__main__:main"}
    assert project["requires-python"] == ">=3.11" and project["license"] == "MIT"
    assert {"Homepage", "Source", "Issues", "Changelog"} <= set(project["urls"])
    assert "Programming Language :: Python :: 3.11" in project["classifiers"]
    assert "MIT License" in (REPO / "LICENSE").read_text()
    changelog = (REPO / "CHANGELOG.md").read_text()
    assert f"## [{__version__}]" in changelog or "## [Unreleased]" in changelog


def test_readme_says_how_to_install_and_what_to_commit() -> None:
    readme = (REPO / "README.md").read_text()
    assert f"pip install {DIST}" in readme and "Python 3.11" in readme
    block = re.search(r"```gitignore\n(.*?)```", readme, re.S)
    assert block, "a .gitignore block"
    ignored = block.group(1)
    assert ".squad/memory/.scribed/" in ignored
    for tier in ("cold", "wiki"):  # shared through git; hot is this machine's live state (issue 29)
        assert f".squad/memory/{tier}/\n" not in ignored and f"`.squad/memory/{tier}/`" in readme
    assert ".squad/memory/hot/" in ignored and ".squad/memory/cold/*.md" in ignored


@pytest.mark.slow
def test_wheel_installs_into_a_fresh_venv(tmp_path: Path) -> None:
    """`pip wheel` of this tree, installed with --no-deps into a new venv that borrows this one's
    dependencies (a .pth line, so this venv's own editable `scribed` is not seen)."""
    wheels = tmp_path / "wheels"
    p = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    (wheel,) = wheels.glob("*.whl")
    assert wheel.name.startswith("scribed_memory-")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert re.search(r"^Name: scribed-memory$", meta, re.M) and "Requires-Python: >=3.11" in meta
    assert "License-Expression: MIT" in meta and any(n.endswith("licenses/LICENSE") for n in names)
    assert "Project-URL: Source" in meta and "Classifier: Programming Language :: Python :: 3.11" in meta
    assert "scribed = scribed.__main__:main" in entry_points
    assert "scribed/cli/main.py" in names and not [n for n in names if n.startswith("tests/")]
    with zipfile.ZipFile(wheel) as z:  # `scribed setup --systemd` installs it (issue 33)
        unit = z.read("scribed/_deploy/scribed-user.service").decode()
    assert unit == (REPO / "deploy/scribed-user.service").read_text()

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(py),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "borrowed-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path)}
    p = subprocess.run([str(venv / "bin" / "scribed"), "--version"], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and p.stdout.strip() == f"scribed, version {__version__}", p.stderr
    probe = (
        "import importlib.metadata as m, scribed; print(m.version('scribed-memory')); print(scribed.__file__)"
    )
    p = subprocess.run([str(py), "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path)
    version, where = p.stdout.split()
    assert version == __version__ and where.startswith(str(venv)), p.stdout + p.stderr
    probe = (
        "import sys; from scribed.core.setup_unit import _unit_template; sys.stdout.write(_unit_template())"
    )
    p = subprocess.run([str(py), "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert p.stdout == (REPO / "deploy/scribed-user.service").read_text(), p.stderr  # from the wheel

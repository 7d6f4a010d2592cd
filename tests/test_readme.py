"""The README is a start, not a manual (issue 33): at most 20 KB, the install command and a
runnable demo in its first 40 lines, and every block marked ``<!-- runnable -->`` run here, in
order, in a temp folder (``pip`` is the test environment's: the install itself is CI's, with the
same command). The reference lives in docs/, and every page the README links exists."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_BYTES = 20 * 1024
_BLOCK = re.compile(r"^<!-- runnable(?P<tag>: [a-z]+)? -->\n```sh\n(?P<body>.*?)^```$", re.M | re.S)


def blocks(tag: str = "") -> list[str]:
    return [
        m.group("body")
        for m in _BLOCK.finditer(README.read_text())
        if (m.group("tag") or "").removeprefix(": ") == tag
    ]


def test_the_readme_is_a_start() -> None:
    text = README.read_text()
    assert len(text.encode()) <= MAX_BYTES, len(text.encode())
    head = "\n".join(text.splitlines()[:40])
    assert "pip install" in head and "scribed demo" in head and "<!-- runnable -->" in head


def test_every_page_the_readme_links_exists() -> None:
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README.read_text())
    assert any(link.startswith("docs/") for link in links)
    missing = [link for link in links if not link.startswith("http") and not (ROOT / link).exists()]
    assert missing == []


def test_the_runnable_blocks_run(tmp_path: Path) -> None:
    """The blocks a newcomer copies, run as written (the demo's /tmp folder moved into this test's)."""
    repo, home = tmp_path / "repo", tmp_path / "home"
    repo.mkdir()
    home.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    script = "\n".join(blocks()).replace("/tmp/scribed-demo", str(tmp_path / "scribed-demo"))
    assert "scribed demo" in script and "scribed setup" in script
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    env.update(HOME=str(home), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    shim = 'pip() { echo "pip $*: done by the test environment"; }\n'
    p = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", shim + script],
        cwd=repo, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "5 compacted" in p.stdout, p.stdout[-2000:]
    assert "<!-- scribed:context -->" in p.stdout and "### Cold" in p.stdout
    assert not (repo / "scribed.toml").exists(), "setup --dry-run wrote its config"


def test_the_test_command_is_what_ci_runs() -> None:
    """The README's test block and CI's steps are the same commands."""
    [tests] = blocks("tests")
    ci = (ROOT / ".ci/run").read_text()
    install, _, run = tests.strip().partition(" && ")
    assert install.replace("pip install", "python -m pip install -q --disable-pip-version-check") in ci
    assert run in ci

"""Every command scribed prints for a person to run pastes into a shell as it reads, whatever the
paths in it hold: `scribed setup` in a repository under "My Repo" printed
``next: scribed --config /…/My Repo/scribed.toml run-once``, which the shell split in two (t48 s07).
Each printed line is run here with bash, as pasted."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_cli

from scribed.core.team_doctor import damaged_fix

ODD = "My Repo's (copy)"  # a space, a quote and parentheses: each means something to sh


def _bash(line: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """``line`` as a user pastes it into bash, ``scribed`` being this scribed."""
    prelude = f'scribed() {{ {shlex.quote(sys.executable)} -m scribed "$@"; }}\n'
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    env.update(
        HOME=str(home),
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid",
    )
    return subprocess.run(
        ["bash", "-c", prelude + line], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def _next_lines(out: str) -> list[str]:
    """The commands under ``next:``, their comments kept (a shell drops them)."""
    block = out.split("\nnext: ", 1)[1]
    return [block.split("\n", 1)[0], *(ln.strip() for ln in block.split("\n")[1:] if ln.startswith("  "))]


def test_setup_prints_next_commands_that_paste(tmp_path: Path) -> None:
    home, repo = tmp_path / "home", tmp_path / ODD
    (home / ".codex").mkdir(parents=True)
    repo.mkdir()
    p = run_cli("setup", "--no-mcp", "--root", str(repo), "--home", str(home), cwd=repo)
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr.decode()
    first, second = _next_lines(out)
    config = str(repo / "scribed.toml")
    assert shlex.split(first, comments=True) == ["scribed", "--config", config, "run-once"], first
    assert shlex.split(second, comments=True) == ["scribed", "--config", config, "run"], second
    ran = _bash(first, tmp_path, home)
    assert ran.returncode == 0, (first, ran.stderr[-2000:])


def test_demo_prints_a_next_command_that_pastes(tmp_path: Path) -> None:
    folder = tmp_path / ODD / "demo"
    p = run_cli("demo", str(folder))
    assert p.returncode == 0, p.stderr.decode()
    line = p.stdout.decode().split("next: ", 1)[1].strip()
    assert shlex.split(line) == ["scribed", "--config", str(folder / "scribed.toml"), "run-once"], line
    ran = _bash(line, tmp_path, tmp_path)
    assert ran.returncode == 0, (line, ran.stderr[-2000:])
    assert list((folder / ".squad/memory/cold").glob("*.md")), "the demo's sessions were compacted"


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_setup_prints_a_commit_command_that_pastes(tmp_path: Path) -> None:
    """A squad root in a sub-folder of its repository: the commit line names its .gitignore."""
    top = tmp_path / "repo"
    root = top / ODD
    (root / ".squad").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    p = run_cli("git", "setup", "--root", str(root))
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr.decode()
    m = re.search(r"to commit them, in (?P<top>.+):\n  (?P<cmd>.+)\n", out)
    assert m and Path(m["top"]) == top, out
    ran = _bash(m["cmd"], top, tmp_path)
    assert ran.returncode == 0, (m["cmd"], ran.stderr[-2000:])
    committed = subprocess.run(
        ["git", "-C", str(top), "ls-files"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert f"{ODD}/.squad/memory/.gitignore" in committed, committed


def test_a_damaged_files_fix_names_it_as_one_argument() -> None:
    path = f"{ODD}/.squad/memory/cold/data/2026-05-01-ab12.md"
    commands = re.findall(r"`([^`]+)`", damaged_fix(path))
    logs = [shlex.split(c) for c in commands if c.startswith("git log")]
    assert logs == [["git", "log", "-p", "--", path]], commands


def test_a_hint_carries_the_config_and_root_the_user_gave(tmp_path: Path) -> None:
    """A user on a config of their own pasted `scribed check-config` from a hint and checked the
    default root instead (stop 49): each printed command now carries --config and --root, quoted."""
    here = tmp_path / ODD
    root, src = here / "root", here / "sessions"
    (root / ".squad").mkdir(parents=True)
    src.mkdir()
    cfg = here / "my scribed.toml"
    cfg.write_text(f'[[sources]]\nkind = "claude"\npath = "{src}"\nagent = "riker"\n')
    p = run_cli("--config", str(cfg), "run-once", "--root", str(root), cwd=tmp_path)
    err = p.stderr.decode()
    assert p.returncode == 0, err
    line = re.search(r"\(see `([^`]+)`\)", err)
    assert line is not None, err
    words = ["scribed", "--config", str(cfg), "check-config", "--root", str(root)]
    assert shlex.split(line.group(1)) == words, line.group(1)
    ran = _bash(line.group(1), tmp_path, tmp_path)
    assert ran.returncode == 0 and str(root) in ran.stdout + ran.stderr, (line.group(1), ran.stderr[-2000:])


def test_the_run_summary_hints_carry_the_given_options() -> None:
    from scribed import hint
    from scribed.core.results import RunReport

    hint.given(config=f"/{ODD}/scribed.toml", root=f"/{ODD}")
    try:
        lines = RunReport(failed=1, failures=[{"source": "s.jsonl", "reason": "x"}] * 11).why_not(0)
    finally:
        hint.given()
    said = [c for ln in lines for c in re.findall(r"`([^`]+)`", ln)]
    cfg, root = ["--config", f"/{ODD}/scribed.toml"], ["--root", f"/{ODD}"]
    assert [shlex.split(c) for c in said] == [
        ["scribed", *cfg, "status", *root],
        ["scribed", *cfg, "run-once", "--json", *root],
    ], said

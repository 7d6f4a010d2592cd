"""`scribed mcp` without --root and --config serves the repository it is started in.

Copilot CLI (``~/.copilot/mcp-config.json``) and Codex (``~/.codex/config.toml``) keep one MCP
registration per user, and start the server in the folder the agent runs in; ``scribed setup``
registers ``scribed mcp`` with no root there, so one registration serves every repository: the
root is the nearest folder at or above the working directory that holds ``.squad/``, never past
the repository's top."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from scribed.cli.mcp_server import squad_root


def _repo(base: Path, agent: str, *, config: bool) -> Path:
    """A git repository with a squad root whose one hot file is ``agent``'s."""
    (base / ".git").mkdir(parents=True)
    hot = base / ".squad/memory/hot"
    hot.mkdir(parents=True)
    (hot / f"{agent}.md").write_text(f"# Hot memory: {agent}\n\nCurrent task: {agent}'s work\n")
    if config:
        (base / "scribed.toml").write_text('root = "."\n[log]\nlevel = "warning"\n')
    return base


def _resources(cwd: Path, home: Path) -> list[str]:
    """The resource URIs a ``scribed mcp`` started in ``cwd`` (no --root, no --config) lists."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    p = subprocess.Popen(
        [sys.executable, "-m", "scribed", "mcp"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env,
    )  # fmt: skip
    try:
        init = {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        }  # fmt: skip
        _ask(p, init)
        _put(p, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        listed = _ask(p, {"jsonrpc": "2.0", "id": 2, "method": "resources/list"})
        return sorted(r["uri"] for r in listed["result"]["resources"])
    finally:
        p.kill()
        p.communicate(timeout=30)


def _put(p: subprocess.Popen[bytes], msg: dict[str, Any]) -> None:
    assert p.stdin is not None
    p.stdin.write(json.dumps(msg).encode() + b"\n")
    p.stdin.flush()


def _ask(p: subprocess.Popen[bytes], msg: dict[str, Any]) -> dict[str, Any]:
    _put(p, msg)
    assert p.stdout is not None
    ready, _, _ = select.select([p.stdout], [], [], 90)
    assert ready, "no answer in 90 s"
    line = p.stdout.readline()
    assert line, f"the server ended (exit {p.poll()}): {p.stderr.read() if p.stderr else b''!r}"
    answer: dict[str, Any] = json.loads(line)
    return answer


def test_one_registration_serves_each_repository_it_is_started_in(tmp_path: Path) -> None:
    a = _repo(tmp_path / "a", "data", config=True)
    b = _repo(tmp_path / "b", "geordi", config=False)  # no config of its own: defaults, this root
    (a / "src/deep").mkdir(parents=True)
    assert _resources(a / "src/deep", tmp_path / "home") == ["scribed://memory/hot/data"]
    assert _resources(b, tmp_path / "home") == ["scribed://memory/hot/geordi"]


def test_squad_root_stops_at_the_repository_top(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / ".squad").mkdir(parents=True)
    inner = outer / "vendor" / "lib"
    (inner / ".git").mkdir(parents=True)  # a repository inside, without memory of its own
    (inner / "src").mkdir()
    assert squad_root(outer / "vendor") == outer
    assert squad_root(inner / "src") is None, "another repository's memory is not this one's"
    (inner / ".squad").mkdir()
    assert squad_root(inner / "src") == inner

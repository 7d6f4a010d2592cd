"""run-once and the daemon pick exactly the same sources (issue 14): one tree holding every kind of
source and the near-miss names beside them, walked by run-once's discovery and offered file by
file to the daemon's event filter."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scribed import config
from scribed.core.scribe import Scribe
from scribed.daemon.service import Daemon

SOURCES = """
[[sources]]
kind = "codex"
path = "codex"
[[sources]]
kind = "claude"
path = "claude"
[[sources]]
kind = "copilot"
path = "copilot/session-state"
[[sources]]
kind = "markdown"
path = "aider"
glob = ".aider.chat.history.md"
agent = "aider"
"""

FILES = [
    # codex: rollouts, a compressed rollout, and what sits beside them
    "codex/2026/11/20/rollout-2026-11-20T10-00-00-abc.jsonl",
    "codex/2026/11/20/rollout-2026-11-20T11-00-00-def.jsonl.zst",
    "codex/2026/11/20/notes.jsonl",
    "codex/2026/11/20/.rollout-hidden.jsonl",
    "codex/2026/11/20/rollout-x.jsonl.tmp",
    "codex/2026/11/20/rollout-x.jsonl~",
    "codex/2026/11/20/.rollout-x.jsonl.swp",
    "codex/2026/11/20/rollout-x.jsonl.part",
    "codex/.hidden/rollout-2026-11-20T12-00-00-ghi.jsonl",
    # claude: a session, a sub-agent, and editors' leftovers
    "claude/proj/0b7e6f3a-1111-4222-8333-944445555666.jsonl",
    "claude/proj/0b7e6f3a-1111-4222-8333-944445555666/subagents/agent-a1b2.jsonl",
    "claude/proj/.#0b7e6f3a.jsonl",
    "claude/proj/notes.md",
    # copilot: session-state folders
    "copilot/session-state/5f1d/events.jsonl",
    "copilot/session-state/5f1d/workspace.yaml",
    "copilot/session-state/5f1d/events.jsonl.bak",
    # aider: the history, its input history, a look-alike
    "aider/.aider.chat.history.md",
    "aider/.aider.input.history",
    "aider/chat.history.md",
    # hot files
    ".squad/memory/hot/picard.md",
    ".squad/memory/hot/.picard.md.swp",
    ".squad/memory/hot/picard.md~",
    # scribed's own state is never a source
    ".squad/memory/.scribed/transcripts/codex-1.jsonl",
]


def test_run_once_and_daemon_take_the_same_files(tmp_path: Path) -> None:
    for rel in FILES:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n" if rel.endswith(".jsonl") else "# x\n")
    cfg_file = tmp_path / "scribed.toml"
    cfg_file.write_text(f'root = "{tmp_path}"\n' + SOURCES.replace('path = "', f'path = "{tmp_path}/'))
    cfg = config.load(str(cfg_file))

    scribe = Scribe(cfg)
    try:
        by_run_once = {str(item.path.relative_to(tmp_path)) for item in scribe.items()}
    finally:
        scribe.close()
    clock: Any = lambda: datetime(2026, 11, 20, tzinfo=UTC)  # noqa: E731
    daemon = Daemon(cfg, clock=clock, scheduler_factory=_NoScheduler, notify=lambda _msg: False)
    try:
        by_daemon = {rel for rel in FILES if daemon.dispatch.is_source(str(tmp_path / rel))}
    finally:
        daemon.scribe.close()
    assert by_run_once == by_daemon
    # and it is the right set, so an agreement on nothing (or on everything) cannot pass
    assert by_run_once == {
        ".squad/memory/hot/picard.md",
        "aider/.aider.chat.history.md",
        "claude/proj/0b7e6f3a-1111-4222-8333-944445555666.jsonl",
        "claude/proj/0b7e6f3a-1111-4222-8333-944445555666/subagents/agent-a1b2.jsonl",
        "codex/2026/11/20/rollout-2026-11-20T10-00-00-abc.jsonl",
        "codex/2026/11/20/rollout-2026-11-20T11-00-00-def.jsonl.zst",
        "copilot/session-state/5f1d/events.jsonl",
    }


class _NoScheduler:
    def add_job(self, *_a: Any, **_kw: Any) -> None: ...
    def start(self) -> None: ...
    def shutdown(self, wait: bool = True) -> None: ...

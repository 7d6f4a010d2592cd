"""What a team sync did, said: each agent's or page's event names it and what it lists, once per
agent or page, with the reason (and the command, where a person has one to run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_hot_reseed import Log

from scribed.core import team_said
from scribed.core.cold_sync import SyncResult
from scribed.core.wikisync import WikiSync
from scribed.tiers.cold import Layout


def _said(res: SyncResult, tmp_path: Path) -> list[tuple[str, str, dict[str, Any]]]:
    log = Log()
    team_said.synced(log, Layout(tmp_path), res)  # type: ignore[arg-type]
    return log.calls


def test_each_agent_gets_its_own_event_naming_its_entries(tmp_path: Path) -> None:
    res = SyncResult(
        told_twice={"riker": ["e-1", "e-2"], "troi": ["e-3"]},
        git_removed={"data": ["e-4"], "worf": ["e-5", "e-6"]},
    )
    calls = _said(res, tmp_path)
    told = [(lv, kw["agent"], kw["retired"]) for lv, e, kw in calls if e == "cold_entries_told_twice"]
    assert told == [("info", "riker", ["e-1", "e-2"]), ("info", "troi", ["e-3"])]
    gone = [(lv, kw) for lv, e, kw in calls if e == "cold_entry_left_by_git"]
    assert gone == [
        ("info", {"agent": "data", "entries": ["e-4"], "reason": "git removed its file"}),
        ("info", {"agent": "worf", "entries": ["e-5", "e-6"], "reason": "git removed its file"}),
    ]
    assert all("retired.txt" in kw["reason"] for _, e, kw in calls if e == "cold_entries_told_twice")


def test_each_page_gets_its_own_event_naming_its_blocks_and_the_command(tmp_path: Path) -> None:
    wiki = WikiSync(
        restored={"auth.md": ["### Tokens expire"]},
        placed={"build.md": ["### Use uv"], "deploy.md": ["### Blue/green", "### Canary first"]},
    )
    calls = _said(SyncResult(wiki=wiki), tmp_path)
    placed = [(lv, kw["page"], kw["blocks"]) for lv, e, kw in calls if e == "wiki_block_placed"]
    assert placed == [
        ("warning", "build.md", ["### Use uv"]),
        ("warning", "deploy.md", ["### Blue/green", "### Canary first"]),
    ]
    assert all("wiki-deprecate" in kw["action"] for _, e, kw in calls if e == "wiki_block_placed")
    (restored,) = [kw for _, e, kw in calls if e == "wiki_block_restored"]
    assert restored["blocks"] == ["### Tokens expire"]
    assert "scribed wiki-deprecate auth 'Tokens expire'" in restored["action"]

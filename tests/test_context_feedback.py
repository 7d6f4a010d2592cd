"""Issue 16 acceptance: scribed's own spawn context, fed back in as a transcript, adds nothing.

The block `scribed context` prints is pasted into a prompt (a user message) or read back by an
agent that runs the command (a tool result), in a Claude Code, Copilot CLI or markdown transcript.
run-once must write none of it into cold or the wiki. The control case turns the spawn-block
stripping off and shows the same transcripts do leak, so the check can fail.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scribed import config
from scribed.compress.entry import split_entries
from scribed.core.scribe import Scribe
from scribed.recall import context
from scribed.sources import injected
from scribed.tiers.cold import Layout

TS = "2026-06-02T10:{:02d}:00.000Z"
SEED_SID = "0b1e6a4c-8d2f-4c3e-9b7a-1f2e3d4c5b6a"
CL_PASTE, CL_TOOL = "1c2d3e4f-0000-4000-8000-00000000c1a1", "1c2d3e4f-0000-4000-8000-00000000c1a2"
CP_PASTE, CP_TOOL = "2d3e4f50-0000-4000-8000-00000000c0a1", "2d3e4f50-0000-4000-8000-00000000c0a2"


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def claude(sid: str, i: int, role: str, content: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": content}
    if role == "assistant":
        message |= {"id": f"m{i}", "type": "message", "model": "claude-sonnet-4-5"}
    return {
        "type": role, "sessionId": sid, "uuid": f"{sid[:4]}-{i}", "parentUuid": f"{sid[:4]}-{i - 1}",
        "timestamp": TS.format(i), "cwd": "/home/dev/ledger", "message": message,
    }  # fmt: skip


def copilot(i: int, etype: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": etype, "id": f"e{i}", "parentId": f"e{i - 1}", "timestamp": TS.format(i), "data": data}


def seeded_root(tmp_path: Path) -> Path:
    """A root where picard already has a cold entry and the team a wiki page."""
    root = tmp_path / "repo"
    for d in ("hot", "cold", "wiki"):
        (root / ".squad/memory" / d).mkdir(parents=True)
    (root / ".squad/memory/hot/picard.md").write_text(
        "# Hot memory: picard\n\nCurrent task: reconcile the ledger export with the bank statement\n"
    )
    (root / ".squad/memory/wiki/decisions.md").write_text(
        "# Wiki: decisions\n\n### 2026-06-01: Ledger amounts are integer cents\n"
        "Amounts cross module boundaries as integer cents, never as floats.\n"
    )
    seed = tmp_path / "seed" / "-home-dev-ledger"
    write_jsonl(seed / f"{SEED_SID}.jsonl", [
        claude(SEED_SID, 1, "user", "The export drops refunds dated on the last day of the month; fix ledger/export.py."),
        claude(SEED_SID, 2, "assistant", [{"type": "text", "text": "The month filter in ledger/export.py used < end_of_month; it now uses <= so last-day refunds are exported."}]),
    ])  # fmt: skip
    run(root, [{"kind": "claude", "path": str(seed), "agent": "picard"}])
    assert "refunds dated on the last day" in (root / ".squad/memory/cold/picard.md").read_text()
    return root


def run(root: Path, sources: list[dict[str, str]]) -> int:
    scribe = Scribe(config.from_dict({"root": str(root), "sources": sources}))
    try:
        return len(scribe.run_once(force=True).entries)
    finally:
        scribe.close()


def feed_back(tmp_path: Path, block: str) -> list[dict[str, str]]:
    """Five transcripts quoting the block: pasted as the prompt (Claude, Copilot, markdown; nothing
    else in them) and read back as a tool's output (Claude, Copilot; after a real request)."""
    cl_dir, cp_dir, md_dir = tmp_path / "claude" / "-home-dev-ledger", tmp_path / "copilot", tmp_path / "md"
    write_jsonl(cl_dir / f"{CL_PASTE}.jsonl", [claude(CL_PASTE, 1, "user", block)])
    call = {
        "type": "tool_use",
        "id": "toolu_ctx",
        "name": "Bash",
        "input": {"command": "scribed context picard"},
    }
    write_jsonl(cl_dir / f"{CL_TOOL}.jsonl", [
        claude(CL_TOOL, 1, "user", "Load your memory, then add a test for refunds on the 31st."),
        claude(CL_TOOL, 2, "assistant", [call]),
        claude(CL_TOOL, 3, "user", [{"type": "tool_result", "tool_use_id": "toolu_ctx", "content": block}]),
        claude(CL_TOOL, 4, "assistant", [{"type": "text", "text": "Added tests/test_export.py::test_refund_on_31st."}]),
    ])  # fmt: skip
    write_jsonl(cp_dir / CP_PASTE / "events.jsonl", [
        copilot(1, "session.start", {"sessionId": CP_PASTE, "context": {"cwd": "/home/dev/ledger"}}),
        copilot(2, "user.message", {"content": block}),
    ])  # fmt: skip
    write_jsonl(cp_dir / CP_TOOL / "events.jsonl", [
        copilot(1, "session.start", {"sessionId": CP_TOOL, "context": {"cwd": "/home/dev/ledger"}}),
        copilot(2, "user.message", {"content": "Read your memory and list what is left on the export."}),
        copilot(3, "assistant.message", {"messageId": "a1", "content": "", "toolRequests": [{"toolCallId": "c1", "name": "bash", "arguments": {}}]}),
        copilot(4, "tool.execution_start", {"toolCallId": "c1", "toolName": "bash", "arguments": {"command": "scribed context picard"}}),
        copilot(5, "tool.execution_complete", {"toolCallId": "c1", "success": True, "result": {"content": block}}),
        copilot(6, "assistant.message", {"messageId": "a2", "content": "Left: the CSV header order for the bank."}),
    ])  # fmt: skip
    md_dir.mkdir()
    (md_dir / "spawn-prompt.md").write_text(block)
    return [
        {"kind": "claude", "path": str(cl_dir), "agent": "picard"},
        {"kind": "copilot", "path": str(cp_dir), "agent": "picard", "workspace": "*"},
        {"kind": "markdown", "path": str(md_dir), "agent": "picard"},
    ]


def block_lines(block: str) -> list[str]:
    """The block's own content lines (not its titles or markers), long enough to be telling."""
    return [
        s for line in block.splitlines()
        if len(s := line.strip().lstrip("-* ").strip()) >= 24 and not s.startswith(("#", "<!--"))
    ]  # fmt: skip


def new_cold(root: Path, before: str) -> list[str]:
    old = {e.heading for e in split_entries(before)[1]}
    now = (root / ".squad/memory/cold/picard.md").read_text()
    return [e.text for e in split_entries(now)[1] if e.heading not in old]


@pytest.mark.parametrize("stripping", [True, False])
def test_context_fed_back_adds_nothing_to_cold_or_wiki(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stripping: bool
) -> None:
    root = seeded_root(tmp_path)
    block = context.build(Layout(root), "picard", situation="post-incident", wiki_topics=["decisions"]).text
    assert (
        block.startswith(injected.MARK_OPEN)
        and "refunds dated on the last day" in block
        and "integer cents" in block
    )
    lines = block_lines(block)
    assert len(lines) >= 3, lines
    cold_before = (root / ".squad/memory/cold/picard.md").read_text()
    wiki_before = sorted((p.name, p.read_bytes()) for p in (root / ".squad/memory/wiki").iterdir())
    if not stripping:  # the control: the same transcripts with the spawn-block stripping off
        monkeypatch.setattr(injected._Spawn, "strip", lambda self, text: text)

    made = run(root, feed_back(tmp_path, block))
    entries = new_cold(root, cold_before)
    leaked = [ln for ln in lines if any(ln in e for e in entries)]
    assert sorted((p.name, p.read_bytes()) for p in (root / ".squad/memory/wiki").iterdir()) == wiki_before
    if stripping:
        # only the two tool sessions had words of their own; the three pasted prompts made nothing
        assert made == len(entries) == 2, entries
        assert leaked == [], leaked
        assert any("refunds on the 31st" in e for e in entries)
        assert any("CSV header order" in e for e in entries)
    else:
        assert made == 5 and leaked, "without stripping the block must reach cold"

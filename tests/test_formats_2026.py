"""Transcript formats as the tools write them in 2026, next to the older shapes they still write.

Fixtures are real-shaped, built from the tools' published schemas and sources (Copilot CLI's
session-events schema, Claude Code's on-disk layout, Codex's ``SessionSource``), with made-up
content. Each test names the behaviour; the feedback-loop tests feed scribed's own context back.
"""

from __future__ import annotations

import json
import os
import shutil
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from scribed import config
from scribed.cli.main import main
from scribed.compress.entry import split_entries
from scribed.core.scribe import Scribe
from scribed.models import ParseResult, Session
from scribed.recall import context
from scribed.sources import discover, drift, injected, parse_file, zst
from scribed.sources.common import iter_jsonl
from scribed.tiers.cold import Layout

TS = "2026-05-12T09:{:02d}:{:02d}.000Z"


def ts(i: int) -> str:
    return TS.format(i // 60, i % 60)


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def by_id(result: ParseResult) -> dict[str, Session]:
    return {s.session_id: s for s in result.sessions}


def texts(sess: Session) -> list[str]:
    return [t.text for t in sess.turns]


def make_root(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for d in ("hot", "cold", "wiki"):
        (root / ".squad/memory" / d).mkdir(parents=True)
    return root


def run(root: Path, sources: list[dict[str, str]]) -> list[dict[str, Any]]:
    # these fixtures' sessions record another folder than the root, or none: every one is taken
    sources = [{**s, "workspace": "*"} if s["kind"] in ("codex", "copilot") else s for s in sources]
    scribe = Scribe(config.from_dict({"root": str(root), "sources": sources}))
    try:
        return [e.public() for e in scribe.run_once(force=True).entries]
    finally:
        scribe.close()


def cold(root: Path, agent: str) -> str:
    p = root / ".squad/memory/cold" / f"{agent}.md"
    return p.read_text() if p.exists() else ""


def all_cold(root: Path) -> str:
    return "".join(p.read_text() for p in sorted((root / ".squad/memory/cold").glob("*.md")))


# --------------------------------------------------------------------------- Copilot CLI

CP_SID = "5c1e0a77-2f4b-4d1e-9a0c-3b7d8e6f1a20"


def cp(i: int, etype: str, data: dict[str, Any], **envelope: Any) -> dict[str, Any]:
    return {
        "type": etype,
        "id": f"ev-{i}",
        "timestamp": ts(i),
        "parentId": f"ev-{i - 1}",
        "data": data,
        **envelope,
    }


def copilot_session(subagent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A main session that hands a review to the sub-agent 'troi'; ``subagent`` is its events."""
    ctx = {"cwd": "/home/dev/shop", "gitRoot": "/home/dev/shop", "branch": "fix/cart-rounding"}
    return [
        cp(
            1,
            "session.start",
            {"sessionId": CP_SID, "version": 1, "copilotVersion": "1.0.12", "context": ctx},
        ),
        cp(2, "session.skills_loaded", {"skills": [{"name": "money-review"}]}),
        cp(
            3,
            "user.message",
            {
                "content": "The cart total rounds 0.005 down. Fix the rounding in shop/cart.py and have troi "
                "review the money helpers.",
                "transformedContent": "<current_datetime>2026-05-12</current_datetime> The cart total …",
                "attachments": [],
                "interactionId": "int-1",
            },
        ),
        cp(4, "assistant.turn_start", {"turnId": "0", "interactionId": "int-1"}),
        cp(
            5,
            "assistant.message",
            {
                "messageId": "m-1",
                "content": "I'll patch shop/cart.py and ask troi to review shop/money.py.",
                "toolRequests": [{"toolCallId": "toolu_rev1", "name": "task", "arguments": {}}],
            },
        ),
        cp(
            6,
            "tool.execution_start",
            {"toolCallId": "toolu_rev1", "toolName": "task", "arguments": {"agent_type": "troi"}},
        ),
        *subagent,
        cp(
            30,
            "tool.execution_complete",
            {"toolCallId": "toolu_rev1", "success": True, "result": {"content": "troi reviewed money.py"}},
        ),
        cp(31, "session.future_thing", {"x": 1}),
        cp(
            32,
            "assistant.message",
            {"messageId": "m-2", "content": "to_cents() now uses Decimal; tests pass."},
        ),
        cp(33, "assistant.turn_end", {"turnId": "0"}),
        cp(34, "session.shutdown", {"shutdownType": "routine", "totalPremiumRequests": 2}),
    ]


def troi_events(**link: Any) -> list[dict[str, Any]]:
    """The sub-agent's own events; ``link`` attaches them (envelope agentId, or the old data field)."""
    env = {k: v for k, v in link.items() if k == "agentId"}
    old = {k: v for k, v in link.items() if k == "parentToolCallId"}
    return [
        cp(10, "assistant.turn_start", {"turnId": "0", **old}, **env),
        cp(
            11,
            "user.message",
            {"content": "Review shop/money.py for float arithmetic.", "source": "agent-main", **old},
            **env,
        ),
        cp(
            12,
            "tool.execution_start",
            {"toolCallId": "call_v1", "toolName": "view", "arguments": {"path": "shop/money.py"}, **old},
            **env,
        ),
        cp(
            13,
            "tool.execution_complete",
            {"toolCallId": "call_v1", "success": True, "result": {"content": "return int(x * 100)"}, **old},
            **env,
        ),
        cp(
            14,
            "assistant.message",
            {
                "messageId": "s-1",
                "content": "to_cents() truncates with int(x * 100); use Decimal with ROUND_HALF_UP.",
                **old,
            },
            **env,
        ),
    ]


def test_copilot_subagent_named_only_in_envelope_gets_its_own_entry(tmp_path: Path) -> None:
    # Current shape: no subagent.started at all; the sub-agent's events carry its id in the envelope
    # and subagent.completed names it.
    done = cp(
        20,
        "subagent.completed",
        {"toolCallId": "toolu_rev1", "agentName": "troi", "agentDisplayName": "Troi", "totalToolCalls": 1},
        agentId="sa-91c2",
    )
    src = tmp_path / "session-state" / CP_SID / "events.jsonl"
    write_jsonl(src, copilot_session([*troi_events(agentId="sa-91c2"), done]))
    drift.take()
    r = parse_file("copilot", src, "picard")
    sessions = by_id(r)
    assert set(sessions) == {CP_SID, f"{CP_SID}/troi"}
    troi, main_sess = sessions[f"{CP_SID}/troi"], sessions[CP_SID]
    assert any("ROUND_HALF_UP" in t for t in texts(troi)) and troi.agent == "troi"
    assert not any("int(x * 100)" in t for t in texts(main_sess))
    assert not [w for w in r.warnings if "unknown sub-agent" in w], r.warnings
    assert drift.take() == {"copilot": {"unknown type session.future_thing": 1}}

    root = make_root(tmp_path)
    entries = run(root, [{"kind": "copilot", "path": str(src.parent.parent), "agent": "picard"}])
    assert sorted(e["agent"] for e in entries) == ["picard", "troi"]
    assert "ROUND_HALF_UP" in cold(root, "troi") and "ROUND_HALF_UP" not in cold(root, "picard")


def test_copilot_started_event_in_the_current_shape(tmp_path: Path) -> None:
    # subagent.started carries the id in the envelope and only toolCallId in its data.
    started = cp(
        9,
        "subagent.started",
        {
            "toolCallId": "toolu_rev1",
            "agentName": "troi",
            "agentDisplayName": "Troi",
            "agentDescription": "x",
        },
        agentId="sa-91c2",
    )
    src = write_jsonl(
        tmp_path / CP_SID / "events.jsonl", copilot_session([started, *troi_events(agentId="sa-91c2")])
    )
    sessions = by_id(parse_file("copilot", src, "picard"))
    assert len(sessions[f"{CP_SID}/troi"].turns) == 4


def test_copilot_old_shape_parent_tool_call_id(tmp_path: Path) -> None:
    # Older versions: no envelope id; data.parentToolCallId equals the started event's toolCallId.
    started = cp(
        9, "subagent.started", {"toolCallId": "toolu_rev1", "agentName": "troi", "agentDisplayName": "Troi"}
    )
    events = copilot_session([started, *troi_events(parentToolCallId="toolu_rev1")])
    src = write_jsonl(tmp_path / CP_SID / "events.jsonl", events)
    sessions = by_id(parse_file("copilot", src, "picard"))
    assert any("ROUND_HALF_UP" in t for t in texts(sessions[f"{CP_SID}/troi"]))
    assert not any("ROUND_HALF_UP" in t for t in texts(sessions[CP_SID]))


def test_copilot_context_cleared_and_injected_user_messages(tmp_path: Path) -> None:
    events = [
        cp(1, "session.start", {"sessionId": "s9", "context": {"cwd": "/r"}}),
        cp(2, "user.message", {"content": "Rename the billing module to payments."}),
        cp(3, "assistant.message", {"messageId": "a", "content": "Renamed billing/ to payments/."}),
        cp(4, "session.context_cleared", {"messagesCleared": 2}),
        cp(
            5,
            "user.message",
            {"content": "SKILLBODY-1 how to review money code", "source": "skill-money-review"},
        ),
        cp(6, "user.message", {"content": "continue", "isAutopilotContinuation": True}),
        cp(7, "user.message", {"content": "Now add a changelog entry for the rename."}),
    ]
    r = parse_file("copilot", write_jsonl(tmp_path / "s9" / "events.jsonl", events), "picard")
    sessions = by_id(r)
    assert texts(sessions["s9"]) == [
        "Rename the billing module to payments.",
        "Renamed billing/ to payments/.",
    ]
    assert sessions["s9"].ended and not sessions["s9.part2"].ended  # the cleared conversation is over
    assert texts(sessions["s9.part2"]) == ["Now add a changelog entry for the rename."]


# --------------------------------------------------------------------------- Claude Code

CL_SID = "9a6f2c10-4b7e-4d3a-8f21-6c5b0e9d7a13"
AGENT_ID = "a3f9c21"
SUB_FINAL = "to_cents() truncates with int(x * 100); use Decimal quantize with ROUND_HALF_UP (SUBFINAL-9)."
INJECTED = (
    "HOOKCTX-1",
    "SKILLBODY-7",
    "REMINDER-3",
    "MEMORYCTX-5",
    "Total cost",
    "COMPACTRUN-8",
    "No response",
)


def cl(i: int, rtype: str, **fields: Any) -> dict[str, Any]:
    base = {
        "parentUuid": f"u{i - 1}",
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/shop",
        "sessionId": CL_SID,
        "version": "2.1.120",
        "gitBranch": "fix/cart-rounding",
        "type": rtype,
        "uuid": f"u{i}",
        "timestamp": ts(i),
    }
    return {**base, **fields}


def asst(
    i: int, msg_id: str, *blocks: dict[str, Any], model: str = "claude-opus-4-5", **fields: Any
) -> dict[str, Any]:
    message = {"id": msg_id, "type": "message", "role": "assistant", "model": model, "content": list(blocks)}
    return cl(i, "assistant", message=message, requestId=f"req_{msg_id}", **fields)


def user(i: int, content: Any, **fields: Any) -> dict[str, Any]:
    return cl(i, "user", message={"role": "user", "content": content}, **fields)


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def claude_project(tmp_path: Path) -> Path:
    """A project folder: the main session, its sub-agent folder and an internal compaction run."""
    proj = tmp_path / "projects" / "-home-dev-shop"
    main_records: list[Any] = [
        {"type": "queue-operation", "operation": "dequeue", "timestamp": ts(0), "sessionId": CL_SID},
        user(1, "Fix the cart rounding bug in shop/cart.py: totals must round half up.", origin={"kind": "human"}),
        cl(2, "attachment", attachment={"type": "hook_additional_context", "content": ["HOOKCTX-1 no deploys"]}),
        user(3, "Base directory for this skill: /home/dev/.claude/skills/money\n\nSKILLBODY-7 rules", isMeta=True),
        asst(4, "msg_01", {"type": "thinking", "thinking": "", "signature": "c2ln"}),
        asst(5, "msg_01", text("I'll read shop/cart.py first.")),
        asst(6, "msg_01", {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": "shop/cart.py"}}),
        user(
            7,
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01",
                    "content": "def total(items):\n    return round(sum(items), 2)\n"
                    "<system-reminder>REMINDER-3 consider whether the file is malicious</system-reminder>",
                }
            ],
            toolUseResult={"type": "text", "file": {"filePath": "shop/cart.py"}},
        ),
        asst(8, "msg_02", text("round() uses banker's rounding; delegating the money helpers to troi.")),
        asst(
            9,
            "msg_02",
            {
                "type": "tool_use",
                "id": "toolu_02",
                "name": "Task",
                "input": {
                    "description": "Review money helpers",
                    "prompt": "Review shop/money.py for float arithmetic and report the fix.",
                    "subagent_type": "troi",
                },
            },
        ),
        cl(10, "progress", data={"type": "agent_progress", "message": {"content": [text(SUB_FINAL)]}}),
        user(
            11,
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_02",
                    "content": [text(SUB_FINAL), text(f"agentId: {AGENT_ID} (for resuming this agent)")],
                }
            ],
            toolUseResult={"status": "completed", "agentId": AGENT_ID, "totalDurationMs": 9000},
        ),
        user(12, [text("<system-reminder>MEMORYCTX-5 project memory</system-reminder>"), text("Keep to_cents() API.")]),
        user(13, "<local-command-stdout>Total cost: $0.12</local-command-stdout>"),
        user(14, "<command-name>/review</command-name>\n<command-message>review</command-message>\n<command-args>shop/money.py</command-args>"),
        cl(15, "system", subtype="compact_boundary", content="Conversation compacted", compactMetadata={"trigger": "auto", "preTokens": 160000}),
        user(16, "This session is being continued from a previous conversation. Summary: cart rounding fix in progress.", isCompactSummary=True, isVisibleInTranscriptOnly=True),
        asst(17, "msg_03", text("Done: shop/cart.py rounds half up through to_cents(); tests/test_cart.py passes.")),
        asst(18, "msg_04", text("No response requested."), model="<synthetic>"),
        {"type": "ai-title", "aiTitle": "Fix cart rounding", "sessionId": CL_SID},
        {"type": "last-prompt", "lastPrompt": "Keep to_cents() API.", "leafUuid": "u17", "sessionId": CL_SID},
        {"type": "future-record", "sessionId": CL_SID},
    ]  # fmt: skip
    write_jsonl(proj / f"{CL_SID}.jsonl", main_records)
    sub = proj / CL_SID / "subagents"
    side = {"isSidechain": True, "agentId": AGENT_ID}
    write_jsonl(
        sub / f"agent-{AGENT_ID}.jsonl",
        [
            user(1, "Review shop/money.py for float arithmetic and report the fix.", **side),
            asst(2, "msg_s1", text("Reading the money helpers."), **side),
            asst(3, "msg_s1", {"type": "tool_use", "id": "toolu_s1", "name": "Grep", "input": {"pattern": "int\\("}}, **side),
            user(4, [{"type": "tool_result", "tool_use_id": "toolu_s1", "content": "shop/money.py:3: return int(x * 100)"}], **side),
            asst(5, "msg_s2", text(SUB_FINAL), **side),
        ],
    )  # fmt: skip
    (sub / f"agent-{AGENT_ID}.meta.json").write_text(
        json.dumps({"agentType": "troi", "description": "Review"})
    )
    write_jsonl(
        sub / "agent-acompact-77b1.jsonl", [user(1, "COMPACTRUN-8 summarize the conversation", **side)]
    )
    return proj


def test_claude_split_records_subagent_folder_and_compact_boundary(tmp_path: Path) -> None:
    proj = claude_project(tmp_path)
    drift.take()
    main_sess = by_id(parse_file("claude", proj / f"{CL_SID}.jsonl", "riker"))[CL_SID]
    said = texts(main_sess)
    assert len(said) == len(set(said)), "no turn is kept twice"
    assert said[0].startswith("Fix the cart rounding bug")
    assert "/review shop/money.py" in said and "Keep to_cents() API." in said
    calls = [t.text for t in main_sess.turns if t.kind == "tool_call"]
    assert calls == ['Read {"file_path":"shop/cart.py"}', "Task troi: Review money helpers"]
    assert [t.kind for t in main_sess.turns].count("summary") == 1
    assert not any(s in t for t in said for s in (*INJECTED, "SUBFINAL-9"))
    assert drift.take() == {"claude": {"unknown type future-record": 1}}
    assert (
        parse_file("claude", proj / CL_SID / "subagents" / "agent-acompact-77b1.jsonl", "riker").sessions
        == []
    )

    root = make_root(tmp_path)
    entries = run(root, [{"kind": "claude", "path": str(proj), "agent": "riker"}])
    assert sorted(e["agent"] for e in entries) == ["riker", "troi"]  # one main entry, one sub-agent entry
    for agent in ("riker", "troi"):
        assert len(split_entries(cold(root, agent))[1]) == 1
    everything = all_cold(root)
    assert not [s for s in INJECTED if s in everything]
    assert "int(x * 100)" in cold(root, "troi") and "int(x * 100)" not in cold(root, "riker")


def test_claude_older_cumulative_records_and_top_level_agent_file(tmp_path: Path) -> None:
    # Older versions repeated the message's blocks so far in each record, and wrote sub-agents beside it.
    once = "Checked the totals; the rounding happens in shop/cart.py."
    call = {"type": "tool_use", "id": "toolu_9", "name": "Bash", "input": {"command": "pytest -q"}}
    path = write_jsonl(
        tmp_path / "p" / f"{CL_SID}.jsonl",
        [
            user(1, "Why is the total off by a cent?"),
            asst(2, "msg_1", text(once)),
            asst(3, "msg_1", text(once), call),
        ],
    )
    s = parse_file("claude", path, "riker").sessions[0]
    assert [t.text for t in s.turns].count(once) == 1 and [t.kind for t in s.turns] == [
        "message",
        "message",
        "tool_call",
    ]
    agent = write_jsonl(
        tmp_path / "p" / "agent-b1.jsonl", [user(1, "List readers of API_HOST", isSidechain=True)]
    )
    (tmp_path / "p" / "agent-b1.meta.json").write_text(json.dumps({"agentType": "general-purpose"}))
    only = parse_file("claude", agent, "riker").sessions[0]
    assert only.session_id == "agent-b1" and only.agent == "riker"  # a built-in helper stays with its agent


# --------------------------------------------------------------------------- Codex CLI

CX_ID = "019a8e21-7c3d-7b41-9e0a-5f2d6c8b1e47"


def cx(i: int, rtype: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": ts(i), "type": rtype, "payload": payload}


def msg(role: str, body: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": body}]}


def rollout(source: Any = "cli", sid: str = CX_ID, extra: int = 0) -> list[dict[str, Any]]:
    meta = {"id": sid, "timestamp": ts(0), "cwd": "/home/dev/shop", "originator": "codex_cli_rs"}
    ask = "Make checkout totals use Decimal and round half up; add a test for 0.005."
    records = [
        cx(0, "session_meta", {**meta, "cli_version": "0.130.0", "source": source, "git": {"branch": "main"}}),
        cx(1, "response_item", msg("developer", "<permissions instructions>sandboxed</permissions instructions>")),
        cx(2, "response_item", msg("user", "# AGENTS.md instructions for /home/dev/shop\n\n<INSTRUCTIONS>\nAGENTSMD-4\n</INSTRUCTIONS>")),
        cx(3, "response_item", msg("user", "<environment_context>\n  <cwd>/home/dev/shop</cwd>\n</environment_context>")),
        cx(4, "response_item", msg("user", "<skill>\n<name>money</name>\nSKILLX-2 use Decimal\n</skill>")),
        cx(5, "response_item", msg("user", ask)),
        cx(6, "event_msg", {"type": "user_message", "message": ask, "images": []}),
        cx(7, "turn_context", {"cwd": "/home/dev/shop", "model": "gpt-5.2-codex"}),
        cx(8, "response_item", {"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": "pytest -q tests/test_checkout.py"}), "call_id": "call_1"}),
        cx(9, "response_item", {"type": "function_call_output", "call_id": "call_1", "output": "FAILED tests/test_checkout.py::test_half - assert Decimal('0.00') == Decimal('0.01')"}),
        cx(10, "response_item", msg("assistant", "Switched checkout.total() to Decimal.quantize(ROUND_HALF_UP); the test passes.")),
        cx(11, "event_msg", {"type": "token_count", "info": None}),
        cx(12, "response_item", {"type": "future_item", "x": 1}),
    ]  # fmt: skip
    records.extend(
        cx(20 + k, "response_item", msg("user", f"Follow-up {k}: also log the rounding mode."))
        for k in range(extra)
    )
    return records


def zstd(src: Path, dest: Path) -> Path:
    """Compress like Codex does: the same bytes, the mtime kept."""
    with src.open("rb") as fin, dest.open("wb") as fout:
        zst.compress_file(fin, fout)
    st = src.stat()
    os.utime(dest, ns=(st.st_atime_ns, st.st_mtime_ns))
    return dest


def rollout_path(folder: Path, suffix: str = ".jsonl") -> Path:
    return folder / "2026" / "05" / "12" / f"rollout-2026-05-12T09-00-00-{CX_ID}{suffix}"


def entry_bodies(root: Path, agent: str) -> list[str]:
    """Cold entries without their provenance line (it names the file and its hash)."""
    _, entries = split_entries(cold(root, agent))
    return [
        "\n".join(ln for ln in e.text.splitlines() if not ln.startswith("- provenance:")) for e in entries
    ]


def test_codex_zst_rollout_is_compacted_once_like_its_jsonl_twin(tmp_path: Path) -> None:
    plain = write_jsonl(rollout_path(tmp_path / "a" / "sessions"), rollout())
    packed = rollout_path(tmp_path / "b" / "sessions", ".jsonl.zst")
    packed.parent.mkdir(parents=True)
    zstd(plain, packed)
    assert list(discover("codex", tmp_path / "b" / "sessions")) == [packed]
    mixed = tmp_path / "c"  # a plain rollout beside it: the kind's own patterns must list the .zst
    newer = write_jsonl(
        mixed / "2026" / "05" / "13" / "rollout-2026-05-13T08-00-00-x.jsonl", rollout(sid="x")
    )
    (mixed / "2026" / "05" / "12").mkdir(parents=True)
    old = zstd(plain, mixed / "2026" / "05" / "12" / packed.name)
    assert list(discover("codex", mixed)) == [old, newer]

    s = parse_file("codex", packed, "worf").sessions[0]
    assert s.session_id == CX_ID and s.turns[0].text.startswith("Make checkout totals use Decimal")
    assert not any(
        x in t.text for t in s.turns for x in ("AGENTSMD-4", "SKILLX-2", "<environment_context>", "sandboxed")
    )

    root_a, root_b = make_root(tmp_path / "ra"), make_root(tmp_path / "rb")
    ea = run(root_a, [{"kind": "codex", "path": str(tmp_path / "a" / "sessions"), "agent": "worf"}])
    eb = run(root_b, [{"kind": "codex", "path": str(tmp_path / "b" / "sessions"), "agent": "worf"}])
    assert len(ea) == len(eb) == 1 and ea[0]["bytes_in"] == eb[0]["bytes_in"]
    assert entry_bodies(root_a, "worf") == entry_bodies(root_b, "worf")
    assert run(root_b, [{"kind": "codex", "path": str(tmp_path / "b" / "sessions"), "agent": "worf"}]) == []


def test_codex_compressing_a_compacted_rollout_adds_nothing(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    plain = write_jsonl(rollout_path(sessions), rollout())
    root = make_root(tmp_path)
    src = [{"kind": "codex", "path": str(sessions), "agent": "worf"}]
    assert len(run(root, src)) == 1
    before = cold(root, "worf")
    packed = zstd(plain, plain.with_name(plain.name + ".zst"))
    assert run(root, src) == [], "both copies present: the compressed one waits"
    plain.unlink()
    assert run(root, src) == [], "the compressed copy continues the plain one's ledger row"
    assert cold(root, "worf") == before and packed.exists()


def test_codex_zst_of_a_grown_rollout_adds_only_the_new_part(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    plain = write_jsonl(rollout_path(sessions), rollout())
    root = make_root(tmp_path)
    src = [{"kind": "codex", "path": str(sessions), "agent": "worf"}]
    assert len(run(root, src)) == 1
    write_jsonl(plain, rollout(extra=2))  # resumed, then compressed by the tool
    zstd(plain, plain.with_name(plain.name + ".zst"))
    plain.unlink()
    new = run(root, src)
    assert len(new) == 1 and len(split_entries(cold(root, "worf"))[1]) == 2
    assert (
        "Follow-up 0" in entry_bodies(root, "worf")[1]
        and "Make checkout totals" not in entry_bodies(root, "worf")[1]
    )


@pytest.mark.parametrize(
    "source",
    [
        {"internal": "memory_consolidation"},
        {"internal": "guardian"},
        {"subagent": "memory_consolidation"},
        {"subagent": "review"},
        {"subagent": "compact"},
    ],
)
def test_codex_rollouts_the_tool_starts_for_itself_are_skipped(tmp_path: Path, source: Any) -> None:
    path = write_jsonl(rollout_path(tmp_path / "sessions"), rollout(source))
    drift.take()
    r = parse_file("codex", path, "worf")
    assert r.sessions == [] and r.warnings == []
    assert list(drift.take()["codex"]) == [
        f"skipped {next(iter(source))} {next(iter(source.values()))} rollout"
    ]
    root = make_root(tmp_path)
    assert run(root, [{"kind": "codex", "path": str(tmp_path / "sessions"), "agent": "worf"}]) == []


def test_codex_spawned_subagent_rollout(tmp_path: Path) -> None:
    parent = "019a8e21-0000-7000-8000-000000000001"
    spawn = {
        "thread_spawn": {
            "parent_thread_id": parent,
            "depth": 1,
            "agent_nickname": "Hooke",
            "agent_role": "reviewer",
        }
    }
    s = parse_file("codex", write_jsonl(tmp_path / "r.jsonl", rollout({"subagent": spawn})), "worf").sessions[
        0
    ]
    assert s.session_id == f"{parent}/{CX_ID}" and s.agent == "reviewer"
    spawn["thread_spawn"]["agent_role"] = "default"
    s = parse_file("codex", write_jsonl(tmp_path / "d.jsonl", rollout({"subagent": spawn})), "worf").sessions[
        0
    ]
    assert s.agent == "worf"


def test_codex_zst_streams_in_bounded_memory(tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    line = json.dumps(cx(1, "response_item", msg("user", "x" * 2000))) + "\n"
    with big.open("w") as fh:
        for _ in range(6000):  # about 12 MB decompressed
            fh.write(line)
    packed = zstd(big, tmp_path / "big.jsonl.zst")
    tracemalloc.start()
    try:
        n = sum(1 for _ in iter_jsonl(packed))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert n == 6000 and peak < 2_000_000, peak


def test_codex_corrupt_zst_is_a_warning(tmp_path: Path) -> None:
    bad = rollout_path(tmp_path, ".jsonl.zst")
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"\x28\xb5\x2f\xfd" + b"not zstd at all" * 10)
    r = parse_file("codex", bad, "worf")
    assert r.sessions == [] and any("cannot read" in w and "zstd" in w for w in r.warnings), r.warnings


# --------------------------------------------------------------------------- feedback loop


def compacted_root(tmp_path: Path) -> tuple[Path, Path]:
    """A root whose picard has a cold entry and a wiki page, and an empty markdown source."""
    root = make_root(tmp_path)
    proj = claude_project(tmp_path)
    shutil.rmtree(proj / CL_SID)
    run(root, [{"kind": "claude", "path": str(proj), "agent": "picard"}])
    (root / ".squad/memory/wiki/decisions.md").write_text(
        "# Wiki: decisions\n\n> Team decisions\n\n### 2026-05-01: Money is Decimal\nNever use float for money.\n"
    )
    run(root, [{"kind": "claude", "path": str(proj), "agent": "picard"}])  # indexes the page written by hand
    md = tmp_path / "spawns"
    md.mkdir()
    return root, md


def memory_tree(root: Path) -> dict[str, bytes]:
    mem = root / ".squad/memory"
    return {
        str(p.relative_to(mem)): p.read_bytes()
        for d in ("cold", "wiki")
        for p in sorted((mem / d).rglob("*.md"))
    }


@pytest.mark.parametrize("form", ["printed", "older", "wrapped"])
def test_scribed_context_fed_back_adds_nothing(tmp_path: Path, form: str) -> None:
    """As printed today (markers), as printed before the markers existed (heading only), and
    wrapped once more by a template that marks what it pastes (nested markers)."""
    root, md = compacted_root(tmp_path)
    block = context.build(Layout(root), "picard", situation="post-incident", wiki_topics=["decisions"]).text
    assert "Never use float for money" in block and "- provenance: id=" in block  # a cold entry
    assert block.startswith(injected.MARK_OPEN + "\n## Memory Context\n")
    if form == "older":
        block = block.removeprefix(injected.MARK_OPEN + "\n").removesuffix(injected.MARK_CLOSE + "\n")
    elif form == "wrapped":
        block = injected.mark(block)
    (md / "spawn.md").write_text(block)
    spawn_prompt = [user(1, block), asst(2, "m1", text("No response requested."), model="<synthetic>")]
    write_jsonl(md.parent / "claude-spawn" / f"{CL_SID}.jsonl", spawn_prompt)
    before = memory_tree(root)
    sources = [
        {"kind": "markdown", "path": str(md), "agent": "picard"},
        {"kind": "claude", "path": str(md.parent / "claude-spawn"), "agent": "picard"},
    ]
    assert run(root, sources) == []
    assert memory_tree(root) == before


def test_spawn_prompt_keeps_the_task_after_the_context(tmp_path: Path) -> None:
    root, _ = compacted_root(tmp_path)
    block = context.build(Layout(root), "picard", situation="post-incident", wiki_topics=["decisions"]).text
    prompt = f"You are picard, the lead.\n\n{block}\n## Your task\nAdd a regression test for 0.005 in tests/test_cart.py."
    path = write_jsonl(tmp_path / "s" / f"{CL_SID}.jsonl", [user(1, prompt)])
    said = texts(parse_file("claude", path, "picard").sessions[0])
    assert said == [
        "You are picard, the lead.\n\n## Your task\nAdd a regression test for 0.005 in tests/test_cart.py."
    ]


# --------------------------------------------------------------------------- scribed doctor


def test_doctor_counts_unknown_types_per_source(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    src = tmp_path / "session-state" / CP_SID / "events.jsonl"
    write_jsonl(src, copilot_session(troi_events(agentId="sa-1")))
    codex_dir = tmp_path / "codex"
    write_jsonl(rollout_path(codex_dir), rollout())
    write_jsonl(
        codex_dir / "rollout-2026-05-12T10-00-00-memory.jsonl", rollout({"internal": "memory_consolidation"})
    )
    cfg = tmp_path / "scribed.toml"
    cfg.write_text(
        f'root = "{root}"\n[[sources]]\nkind = "copilot"\npath = "{src.parent.parent}"\nworkspace = "*"\n'
        f'[[sources]]\nkind = "codex"\npath = "{codex_dir}"\nworkspace = "*"\n'
    )  # every session: doctor reads what compaction reads, and these ran elsewhere
    res = CliRunner().invoke(main, ["--config", str(cfg), "doctor"], env={"SCRIBED_CONFIG": ""})
    assert res.exit_code == 0, res.output
    assert "unknown type session.future_thing ×1" in res.output
    assert "unknown type response_item.future_item ×1" in res.output
    assert "skipped internal memory_consolidation rollout ×1" in res.output
    res = CliRunner().invoke(main, ["--config", str(cfg), "doctor", "--json"], env={"SCRIBED_CONFIG": ""})
    data = json.loads(res.output)
    assert data["sources"][0]["drift"] == {"unknown type session.future_thing": 1}

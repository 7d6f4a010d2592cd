"""Hostile input beside good sessions: warnings naming the file, no traceback, nothing written outside
``{root}/.squad/memory/``, the good sessions still compacted."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_json, tree_bytes

GOOD_CODEX = [
    {
        "timestamp": "2026-11-20T10:00:00.000Z",
        "type": "session_meta",
        "payload": {"id": "good-1", "cwd": "/r"},
    },
    {
        "timestamp": "2026-11-20T10:00:05.000Z",
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "Please fix the cache invalidation bug from #4242."}],
        },
    },
]


def good_codex(path: Path, sid: str, decision: str) -> None:
    recs = [dict(r) for r in GOOD_CODEX]
    recs[0] = {**recs[0], "payload": {"id": sid, "cwd": "/r"}}
    filler = "\n".join(f"line {i}: nothing to see here, just a long tool dump" for i in range(300))
    recs.append(
        {
            "timestamp": "2026-11-20T10:01:00.000Z",
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "c1", "output": filler},
        }
    )
    recs.append(
        {
            "timestamp": "2026-11-20T10:02:00.000Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": f"Decision: {decision} in src/cache/invalidate.py."}
                ],
            },
        }
    )
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    os.utime(path, (1_700_000_000, 1_700_000_000))


def make_root(tmp_path: Path) -> tuple[Path, Path, Path]:
    root = tmp_path / "root"
    (root / ".squad/memory/hot").mkdir(parents=True)
    src = tmp_path / "codex"
    src.mkdir()
    cop = tmp_path / "copilot"
    cop.mkdir()
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'root = "{root}"\n[compress]\nbackend = "extractive"\n'
        f'[[sources]]\nkind = "codex"\npath = "{src}"\nagent = "worf"\nworkspace = "*"\n'
        f'[[sources]]\nkind = "copilot"\npath = "{cop}"\nagent = "picard"\nworkspace = "*"\n'
        f'[[sources]]\nkind = "markdown"\npath = "{tmp_path / "md"}"\nagent = "geordi"\n'
    )
    (tmp_path / "md").mkdir()
    return root, src, cfg


def old(p: Path) -> None:
    os.utime(p, (1_700_000_000, 1_700_000_000))


def test_hostile_files_beside_two_good_sessions(tmp_path: Path) -> None:
    root, src, cfg = make_root(tmp_path)
    good_codex(src / "rollout-a.jsonl", "good-a", "use write-through invalidation")
    good_codex(src / "rollout-b.jsonl", "good-b", "drop the TTL sweeper thread")
    rng = random.Random(5)
    hostile = {
        "binary.jsonl": bytes(rng.randrange(256) for _ in range(20_000)),
        "empty.jsonl": b"",
        "nesting.jsonl": b"[" * 100_000 + b"\n",
        "types.jsonl": b"\n".join(
            json.dumps(x).encode()
            for x in [
                {"timestamp": {"x": 1}, "type": "session_meta", "payload": [1, 2]},
                {
                    "timestamp": 5,
                    "type": "response_item",
                    "payload": {"type": "message", "role": 7, "content": "x"},
                },
                {"timestamp": None, "type": None, "payload": None},
                [1, 2, 3],
                "str",
                42,
                None,
                {
                    "type": "response_item",
                    "payload": {"type": "function_call", "arguments": 9, "name": ["x"]},
                },
            ]
        ),
        "badutf8.jsonl": b'{"timestamp":"2026-11-20T10:00:00Z","type":"response_item","payload":{"type":"message",'
        b'"role":"user","content":[{"type":"input_text","text":"caf\xe9 \xff\xfe broken"}]}}\n',
    }
    for name, data in hostile.items():
        (src / f"rollout-{name}").write_bytes(data)
        old(src / f"rollout-{name}")
    (tmp_path / "md/latin1.md").write_bytes(
        "User: Überprüfe die Datei ärger.py bitte\n".encode("latin-1") * 50
    )
    (tmp_path / "md/random.md").write_bytes(bytes(rng.randrange(256) for _ in range(5000)))
    for p in (tmp_path / "md").iterdir():
        old(p)
    # Copilot sub-agents with path-traversal and NUL names
    sess = tmp_path / "copilot/s1"
    sess.mkdir()
    ev = [
        {
            "type": "session.start",
            "id": "1",
            "timestamp": "2026-11-20T10:00:00Z",
            "data": {"sessionId": "s1"},
        },
        {
            "type": "user.message",
            "id": "2",
            "timestamp": "2026-11-20T10:00:01Z",
            "data": {"content": "review #77"},
        },
        {
            "type": "subagent.started",
            "id": "3",
            "timestamp": "2026-11-20T10:00:02Z",
            "data": {"agentName": "../../../tmp/x", "agentId": "a1", "toolCallId": "t1"},
        },
        {
            "type": "assistant.message",
            "id": "4",
            "timestamp": "2026-11-20T10:00:03Z",
            "agentId": "a1",
            "data": {"content": "Decision: escape the traversal in src/paths.py."},
        },
        {
            "type": "subagent.started",
            "id": "5",
            "timestamp": "2026-11-20T10:00:04Z",
            "data": {"agentName": "evil\u0000name", "agentId": "a2", "toolCallId": "t2"},
        },
        {
            "type": "assistant.message",
            "id": "6",
            "timestamp": "2026-11-20T10:00:05Z",
            "agentId": "a2",
            "data": {"content": "nul agent speaking"},
        },
        {"type": "session.shutdown", "id": "7", "timestamp": "2026-11-20T10:00:06Z", "data": {}},
    ]
    (sess / "events.jsonl").write_text("\n".join(json.dumps(e) for e in ev) + "\n")
    # a hot file that is a symlink to a file outside the root: never followed for writing, never reset
    target = tmp_path / "outside-target.md"
    target.write_text("Current task: secret plans\n\nDecision: never touch me\n")
    target_before = target.read_bytes()
    (root / ".squad/memory/hot/worf.md").symlink_to(target)

    outside_before = tree_bytes(tmp_path, skip=("root",))
    code, out, err = run_json("--config", str(cfg), "run-once")
    assert code == 0, err
    assert "Traceback" not in err
    sessions = {e["session"] for e in out["entries"]}
    assert {"good-a", "good-b"} <= sessions
    # a warning names each bad file with a reason
    for name in ("binary.jsonl", "nesting.jsonl", "types.jsonl", "random.md"):
        assert name in err, f"no warning naming {name}"
    assert "../../../tmp/x" in err and "hot_symlink_skipped" in err
    # the traversal sub-agent's events stayed under the main agent
    assert not Path("/tmp/x.md").exists()
    assert "escape the traversal" in (root / ".squad/memory/cold/picard.md").read_text()
    # nothing written outside .squad/memory/
    assert tree_bytes(tmp_path, skip=("root",)) == outside_before
    assert target.read_bytes() == target_before
    for p in root.rglob("*"):
        if p.is_file():
            assert p.is_relative_to(root / ".squad/memory"), p
    # a rerun is quiet and adds nothing
    code, out2, err2 = run_json("--config", str(cfg), "run-once")
    assert code == 0 and out2["compacted"] == 0, err2


@pytest.mark.slow
def test_30mb_transcript_memory_bounded(tmp_path: Path) -> None:
    _root, src, cfg = make_root(tmp_path)
    big = src / "rollout-big.jsonl"
    chunk = "x" * 2000
    with big.open("w") as fh:
        fh.write(
            json.dumps(
                {"timestamp": "2026-11-20T10:00:00Z", "type": "session_meta", "payload": {"id": "big"}}
            )
            + "\n"
        )
        i = 0
        while fh.tell() < 30 * 1024 * 1024:
            i += 1
            fh.write(
                json.dumps(
                    {
                        "timestamp": "2026-11-20T10:00:01Z",
                        "type": "response_item",
                        "payload": {
                            "type": "function_call_output",
                            "call_id": f"c{i}",
                            "output": f"{i} {chunk}",
                        },
                    }
                )
                + "\n"
            )
            if i % 500 == 0:
                fh.write(
                    json.dumps(
                        {
                            "timestamp": "2026-11-20T10:00:02Z",
                            "type": "response_item",
                            "payload": {
                                "type": "message",
                                "role": "assistant",
                                "content": [
                                    {"type": "output_text", "text": f"Checkpoint {i}: see src/mod_{i}.py"}
                                ],
                            },
                        }
                    )
                    + "\n"
                )
    old(big)
    code = (
        "import sys\n"
        "from scribed.cli.main import main\n"
        "from scribed.core.discovery import peak_rss_mb\n"
        "try:\n    main()\nexcept SystemExit as e:\n    rc = e.code\n"
        "print('RSS', int(peak_rss_mb() * 1024), file=sys.stderr)\nsys.exit(rc)\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code, "--config", str(cfg), "run-once", "--json"],
        capture_output=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    rss_kb = int(p.stderr.decode().rsplit("RSS", 1)[1].split()[0])
    print(f"30 MB transcript: peak RSS {rss_kb / 1024:.0f} MB")
    assert rss_kb < 300 * 1024, f"peak RSS {rss_kb / 1024:.0f} MB"
    out = json.loads(p.stdout)
    assert out["compacted"] == 1 and out["entries"][0]["bytes_in"] > 30_000_000


def test_backlog_of_300_sessions_over_30_agents(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / ".squad").mkdir(parents=True)
    src = tmp_path / "md"
    src.mkdir()
    for i in range(300):
        agent = f"agent{i % 30:02d}"
        p = src / f"{agent}-s{i:03d}.md"
        noise = "\n".join(f"Tool: PASSED tests/test_{i}_{j}.py::test_case" for j in range(60))
        p.write_text(
            f"---\nagent: {agent}\ndate: 2026-11-{1 + i % 28:02d}\n---\n"
            f"User: implement feature {i} (#{i + 100})\n\n{noise}\n\n"
            f"Assistant: Decision: put feature {i} behind flag_{i} in src/features/f{i}.py\n"
        )
        old(p)
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'root = "{root}"\n[compress]\nbackend = "extractive"\n'
        f'[[sources]]\nkind = "markdown"\npath = "{src}"\nagent = "x"\n'
    )
    code, out, err = run_json("--config", str(cfg), "run-once")
    assert code == 0, err[-2000:]
    assert out["compacted"] == 300 and out["failed"] == 0
    assert len(list((root / ".squad/memory/cold").glob("*.md"))) == 30
    summary = [json.loads(line) for line in err.splitlines() if '"run_complete"' in line]
    assert summary and summary[0]["compacted"] == 300
    print("300 sessions:", summary[0])
    assert summary[0]["peak_rss_mb"] < 300, summary[0]
    for i in (0, 150, 299):
        text = (root / f".squad/memory/cold/agent{i % 30:02d}.md").read_text()
        assert f"flag_{i}" in text, f"session {i}'s decision is lost from agent{i % 30:02d}'s cold file"


def test_a_bug_on_one_file_does_not_stop_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from scribed import config
    from scribed.compress import anchors
    from scribed.core.scribe import Scribe

    _root, src, cfg_path = make_root(tmp_path)
    good_codex(src / "rollout-a.jsonl", "good-a", "use write-through invalidation")
    good_codex(src / "rollout-b.jsonl", "good-b", "drop the TTL sweeper thread")
    real = anchors.extract

    def flaky(session, turns=None):  # type: ignore[no-untyped-def]
        if session.session_id == "good-a":
            raise KeyError("boom")
        return real(session, turns)

    monkeypatch.setattr(anchors, "extract", flaky)
    s = Scribe(config.load(str(cfg_path)))
    report = s.run_once()
    s.close()
    # the file the bug hit failed as a whole: counted apart from sessions (issue 33: "1 session,
    # 1 compacted, 1 failed" did not add up)
    assert (report.sessions, report.compacted, report.failed, report.files_failed) == (1, 1, 0, 1)
    assert "internal error: KeyError" in report.failures[0]["reason"]
    monkeypatch.setattr(anchors, "extract", real)
    s = Scribe(config.load(str(cfg_path)))
    report = s.run_once()
    s.close()
    assert report.compacted == 1 and report.failed == 0, "the failed file stayed queued"

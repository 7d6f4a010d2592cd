"""`scribed doctor` lists each warning with its file and what to do (issue 33, part 3), and a line
over the line limit is named with the limit and the key that raises it, not as "malformed" (part 5).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from scribed import config as config_mod
from scribed.cli.main import main
from scribed.core import doctor
from scribed.core.scribe import Scribe
from scribed.sources import parse_file
from scribed.sources.common import line_limit

SAMPLES = Path(__file__).parent / "samples"
SID = "4f35c1aa-0000-4c55-8a41-6b2f2d9e1c01"


def _claude_line(uuid: str, role: str, text: str, minute: int) -> str:
    return json.dumps(
        {
            "type": role,
            "uuid": uuid,
            "parentUuid": None,
            "sessionId": SID,
            "timestamp": f"2026-11-20T10:{minute:02d}:00.000Z",
            "cwd": "/repo",
            "message": {"role": role, "content": text},
        }
    )


def _claude_file(path: Path, *, middle: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        _claude_line("u1", "user", "Make the retry budget configurable in src/http/retry.py", 0),
        *([middle] if middle else []),
        _claude_line(
            "a1", "assistant", "Decision: read the budget from RETRY_BUDGET in src/http/retry.py.", 1
        ),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _big_record(n: int) -> str:
    """A valid Claude record of about ``n`` bytes (a long tool output, as a real session has)."""
    return _claude_line("t1", "user", "x" * n, 0)


# --- part 5: the line limit is named -------------------------------------------------------------
def test_a_line_over_the_limit_names_the_limit_and_the_key_not_malformed(tmp_path: Path) -> None:
    path = _claude_file(tmp_path / "c.jsonl", middle=_big_record(100_000))
    with line_limit(64 << 10):
        warnings = parse_file("claude", path, "riker").warnings
    assert warnings == [
        f"claude: 1 line over the 64 KiB line limit skipped in {path} (first at line 2); "
        "raise [session] max_line_bytes in the config to read it"
    ]
    assert not [w for w in warnings if "malformed" in w]
    with line_limit(1 << 20):  # the key raised: the record is read
        assert parse_file("claude", path, "riker").warnings == []
    broken = _claude_file(tmp_path / "m.jsonl", middle='{"type": "user", "message": ')
    assert parse_file("claude", broken, "riker").warnings == [
        f"claude: 1 malformed line skipped in {broken} (first at line 2)"
    ]


def test_the_config_key_sets_the_limit_for_a_run(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".squad").mkdir(parents=True)
    path = _claude_file(tmp_path / "claude/-repo" / f"{SID}.jsonl", middle=_big_record(100_000))
    cfg_path = tmp_path / "scribed.toml"
    base = f'root = "{root}"\n[[sources]]\nkind = "claude"\npath = "{tmp_path / "claude"}"\nagent = "riker"\n'
    cfg_path.write_text(f'root = "{root}"\n[session]\nmax_line_bytes = 65536\n' + base.split("\n", 1)[1])
    cfg = config_mod.load(str(cfg_path))
    cfg.compress.workers = 1
    s = Scribe(cfg)
    rep = s.run(force=True)
    s.close()
    assert rep.compacted == 1
    p = CliRunner().invoke(main, ["--config", str(cfg_path), "doctor"])
    assert f"warning: claude: 1 line over the 64 KiB line limit skipped in {path}" in p.stdout, p.stdout
    assert "→ raise [session] max_line_bytes in the config" in p.stdout
    cfg_path.write_text(base)  # the default, 64 MiB, reads it
    p = CliRunner().invoke(main, ["--config", str(cfg_path), "doctor"])
    assert "line limit" not in p.stdout and "no warnings" in p.stdout, p.stdout


@pytest.mark.parametrize(
    ("value", "ok"), [(65535, False), (65536, True), (1 << 30, True), ((1 << 30) + 1, False)]
)
def test_the_key_is_bounded(tmp_path: Path, value: int, ok: bool) -> None:
    p = tmp_path / "c.toml"
    p.write_text(f"[session]\nmax_line_bytes = {value}\n")
    if ok:
        assert config_mod.load(str(p)).session.max_line_bytes == value
    else:
        with pytest.raises(config_mod.ConfigError, match=r"'session.max_line_bytes'"):
            config_mod.load(str(p))


# --- part 3: doctor lists each warning with its file and what to do ---------------------------------
def _hostile_sources(tmp_path: Path) -> str:
    """Sources whose files meet every warning template the adapters write."""
    claude = tmp_path / "claude"
    _claude_file(claude / "-repo/malformed.jsonl", middle="{not json")
    _claude_file(claude / "-repo/long.jsonl", middle=_big_record(70_000))
    latin1 = _claude_file(claude / "-repo/latin1.jsonl")
    latin1.write_bytes(latin1.read_bytes().replace(b"configurable", b"configur\xe9ble"))
    (claude / "-repo/empty.jsonl").write_text(json.dumps({"type": "file-history-snapshot"}) + "\n")
    copilot = tmp_path / "copilot/s1"
    copilot.mkdir(parents=True)
    events = [
        {
            "type": "session.start",
            "id": "e1",
            "timestamp": "2026-11-20T10:00:00Z",
            "data": {"sessionId": "s1"},
        },
        {
            "type": "user.message",
            "id": "e2",
            "timestamp": "2026-11-20T10:00:01Z",
            "data": {"content": "Fix #590"},
        },
        {
            "type": "subagent.started",
            "id": "e3",
            "timestamp": "2026-11-20T10:00:02Z",
            "agentId": "sa-1",
            "data": {"agentName": "../../etc"},
        },
        {
            "type": "assistant.message",
            "id": "e4",
            "timestamp": "2026-11-20T10:00:03Z",
            "agentId": "sa-1",
            "data": {"content": "Decision: keep the default host in src/config.py."},
        },
        {
            "type": "assistant.message",
            "id": "e5",
            "timestamp": "2026-11-20T10:00:04Z",
            "agentId": "sa-9",
            "data": {"content": "Decision: log the empty table in src/config.py."},
        },
    ]
    (copilot / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    md = tmp_path / "notes"
    md.mkdir()
    (md / "blob.md").write_bytes(b"\x00\x01binary" * 50)
    shutil.copy(SAMPLES / "markdown/plain-notes.txt", md / "undated.md")
    (md / ".aider.chat.history.md").write_text(
        "# aider chat started at 2024-13-45 10:00:00\n\n#### Fix the retry budget in src/http/retry.py\n\nDone.\n"
    )
    repl = tmp_path / "repl"
    repl.mkdir()
    (repl / "list.json").write_text("[1, 2]")
    (repl / "bad-agent.json").write_text(
        json.dumps(
            {
                "id": "r1",
                "createdAt": "2026-11-20T10:00:00Z",
                "lastActiveAt": "2026-11-20T10:05:00Z",
                "messages": [
                    {"role": "user", "content": "Plan the release", "timestamp": "2026-11-20T10:00:00Z"},
                    {
                        "role": "agent",
                        "agentName": "Not A Name!",
                        "content": "Decision: tag v1.4.0 from main.",
                        "timestamp": "2026-11-20T10:01:00Z",
                    },
                ],
            }
        )
    )
    return (
        "[session]\nmax_line_bytes = 65536\n"
        f'[[sources]]\nkind = "claude"\npath = "{claude}"\n'
        f'[[sources]]\nkind = "copilot"\npath = "{tmp_path / "copilot"}"\nworkspace = "*"\n'
        f'[[sources]]\nkind = "markdown"\npath = "{md}"\n'
        f'[[sources]]\nkind = "squad-repl"\npath = "{repl}"\n'
    )


def test_doctor_lists_each_warning_with_its_file_and_what_to_do(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".squad").mkdir(parents=True)
    cfg = tmp_path / "scribed.toml"
    cfg.write_text(f'root = "{root}"\n' + _hostile_sources(tmp_path))
    data = json.loads(CliRunner().invoke(main, ["--config", str(cfg), "doctor", "--json"]).stdout)
    issues = [i for s in data["sources"] for i in s["issues"]]
    assert sum(s["warnings"] for s in data["sources"]) == len(issues) >= 10, issues
    seen = {i["warning"].split(" in ")[0].split(": ", 1)[1][:24] for i in issues}
    for words in (
        "malformed",
        "line limit",
        "no usable turns",
        "unknown sub-agent id",
        "invalid sub-agent name",
        "binary content",
        "no date",
        "session time",
        "not a Squad REPL session",
        "invalid agent name",
        "invalid UTF-8",
    ):
        assert any(words in i["warning"] for i in issues), (words, seen)
    for i in issues:
        assert Path(i["file"]).is_file()
        assert i["fix"], f"no remedy for: {i['warning']}"
    out = CliRunner().invoke(main, ["--config", str(cfg), "doctor"]).stdout
    for i in issues:  # each one with its file (the warning names it, or the line adds it)
        shown = i["warning"] if i["file"] in i["warning"] else f"{i['warning']} (in {i['file']})"
        assert f"  warning: {shown}\n    → {i['fix']}\n" in out, shown
    assert out.rstrip().endswith(f"{len(issues)} warnings, each listed above with what to do")


def test_every_remedy_is_reachable() -> None:
    """Each remedy's words are met by a warning some adapter, or doctor itself, writes (none is dead text)."""
    adapters = (Path(doctor.__file__).parent.parent / "sources").glob("*.py")
    own = Path(doctor.__file__).read_text().split("\ndef fix(", 1)[1]  # its code, not the remedies' table
    written = "\n".join([*(p.read_text() for p in adapters), own])
    for words, _ in doctor._FIXES:
        assert words in written, words


def test_team_lines_come_first_and_count(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    hot = root / ".squad/memory/hot"
    hot.mkdir(parents=True)
    (hot / "picard.md").write_text(
        "<<<<<<< HEAD\nCurrent task: a\n=======\nCurrent task: b\n>>>>>>> theirs\n"
    )
    cfg = tmp_path / "scribed.toml"
    cfg.write_text(f'root = "{root}"\n' + _hostile_sources(tmp_path))
    lines = CliRunner().invoke(main, ["--config", str(cfg), "doctor"]).stdout.splitlines()
    assert lines[0].startswith("tier file with conflict markers: ") and "picard.md" in lines[0]
    assert lines[1].startswith("source claude ")
    n = sum(ln.startswith("  warning: ") for ln in lines) + 1
    assert lines[-1] == f"{n} warnings, each listed above with what to do"

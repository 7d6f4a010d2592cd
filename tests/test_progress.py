"""Progress and quiet (issue 17, item 6): a bar on a TTY only, one console line per unit of work,
and the report's savings as a terminal bar chart."""

from __future__ import annotations

import fcntl
import io
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

from helpers import run_cli

from scribed import log as log_mod
from scribed.recall import report

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SESSIONS = 24


def backlog(tmp_path: Path, n: int = SESSIONS) -> Path:
    """``n`` finished markdown sessions for one agent, and a config reading them."""
    root = tmp_path / "squad"
    (root / ".squad").mkdir(parents=True)
    src = tmp_path / "md"
    src.mkdir()
    for i in range(n):
        (src / f"2026-10-{1 + i:02d}-s{i:02d}.md").write_text(
            f"---\ndate: 2026-10-{1 + i:02d}T10:00:00Z\nagent: geordi\n---\n\n"
            f"User: please fix issue #{1000 + i} in src/mod_{i}.py\n\n"
            f"Assistant: Decision: cache results of mod_{i} in src/cache_{i}.py. Done.\n"
        )
        os.utime(src / f"2026-10-{1 + i:02d}-s{i:02d}.md", (1_700_000_000, 1_700_000_000))
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'root = "{root}"\n[compress]\nbackend = "extractive"\n'
        f'[[sources]]\nkind = "markdown"\npath = "{src}"\nagent = "geordi"\n'
    )
    return cfg


def run_on_tty(*args: str, stdout_too: bool = False) -> tuple[int, str, str]:
    """Run scribed with stderr (and stdout if asked) on a pseudo-terminal of 80 columns.

    Returns (exit code, stdout when it is a pipe, what the terminal showed)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRIBED_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "scribed", *args],
        stdout=slave if stdout_too else subprocess.PIPE,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain)
    reader.start()
    out, _ = proc.communicate(timeout=240)
    out = out or b""
    reader.join(30)
    os.close(master)
    return proc.returncode, out.decode(), ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))


def test_backlog_shows_a_bar_and_one_console_line_per_session(tmp_path: Path) -> None:
    cfg = backlog(tmp_path)
    code, out, term = run_on_tty("--config", str(cfg), "run-once")
    assert code == 0, term
    assert f"{SESSIONS} sessions: {SESSIONS} compacted" in out
    assert re.search(r"compacting \d+/\d+ files: +\d+%\|", term), term[-2000:]
    assert f"/{SESSIONS} files" in term  # the bar counts the backlog (its last redraw may be cleared)
    lines = [ln for ln in re.split(r"[\r\n]", term) if re.search(r"\[(info|warning|error) *\]", ln)]
    compacted = [ln for ln in lines if " compacted " in ln]
    assert len(compacted) == SESSIONS, lines
    assert not [ln for ln in lines if "hot_seeded" in ln], "detail events stay off the console"
    assert all("=None" not in ln for ln in lines), "keys without a value are left out"


def test_no_bar_without_a_tty_and_json_keeps_every_event(tmp_path: Path) -> None:
    cfg = backlog(tmp_path)
    p = run_cli("--config", str(cfg), "run-once")
    assert p.returncode == 0
    err = p.stderr.decode()
    assert "compacting" not in err and "%|" not in err and "\r" not in err
    events = [json.loads(ln)["event"] for ln in err.splitlines() if ln.startswith("{")]
    assert events.count("compacted") == SESSIONS and "hot_seeded" in events, "JSON lines keep detail events"


def test_import_shows_a_bar_on_a_tty(tmp_path: Path) -> None:
    root = tmp_path / "squad"
    agent = root / ".squad/agents/geordi"
    agent.mkdir(parents=True)
    (agent / "history.md").write_text(
        "# geordi\n\n## Learnings\n"
        + "".join(
            f"\n### 2026-09-{1 + i:02d}: warp core note {i}\nTuned injector {i} in src/warp_{i}.py.\n"
            for i in range(SESSIONS)
        )
    )
    code, out, term = run_on_tty("import", "--all", "--root", str(root), "--as-of", "2026-10-01")
    assert code == 0, term
    assert re.search(r"importing \d+/\d+ entries: +\d+%\|.*B/s\]", term), term[-2000:]  # bytes too
    code, out, term = run_on_tty("import", "--all", "--root", str(root), "--as-of", "2026-10-01", "--dry-run")
    assert "importing" in term and "already imported" in out


def test_progress_helper() -> None:
    buf = io.StringIO()
    assert list(log_mod.progress(list(range(30)), "x", enabled=False, stream=buf)) == list(range(30))
    assert buf.getvalue() == ""
    assert list(log_mod.progress(list(range(5)), "x", enabled=True, stream=buf)) == list(range(5))
    assert buf.getvalue() == "", "a few items get no bar"
    assert list(log_mod.progress(list(range(30)), "work", enabled=True, stream=buf)) == list(range(30))
    assert "work:" in buf.getvalue() and "/30 [" in buf.getvalue()


def test_report_chart() -> None:
    data = {
        "agents": [
            {"agent": "picard", "savings_pct": 50.0, "baseline_bytes": 40960, "spawn_bytes": 20480},
            {"agent": "worf", "savings_pct": None, "baseline_bytes": 4096, "spawn_bytes": 100},
            {"agent": "data", "savings_pct": 100.0, "baseline_bytes": 4096, "spawn_bytes": 0},
        ],
        "average": {"savings_pct": 75.0},
    }
    lines = report.chart(data, width=40).splitlines()
    bars = {ln.split()[0]: ln.split("│")[1] for ln in lines if "│" in ln}
    assert bars["picard"].count("█") == 20 and len(bars["picard"]) == 40
    assert bars["data"].count("█") == 40 and bars["worf"].strip() == ""
    assert bars["average"].count("█") == 30
    assert "50.0%" in lines[1] and "40.0 KB → 20.0 KB" in lines[1] and "n/a: empty spawn" in lines[2]
    assert report.chart({"agents": [], "average": {"savings_pct": None}}) == ""


def test_report_command_draws_the_chart(tmp_path: Path) -> None:
    root = tmp_path / "squad"
    (root / ".squad/agents/picard").mkdir(parents=True)
    (root / ".squad/agents/picard/charter.md").write_text("# Picard\n\nLead.\n")
    (root / ".squad/agents/picard/history.md").write_text(
        "# History\n\n" + "A long legacy history line.\n" * 400
    )
    (root / ".squad/memory/hot").mkdir(parents=True)
    (root / ".squad/memory/hot/picard.md").write_text("Current task: fix the flaky login test (#590)\n")
    p = run_cli("report", "--root", str(root), "--chart")
    assert p.returncode == 0, p.stderr.decode()
    text = p.stdout.decode()
    assert text.startswith("| Agent |") and "Savings per spawn" in text
    assert re.search(r"picard +│█+[ ▏▎▍▌▋▊▉]* *│ +\d+\.\d%", text), text
    plain = run_cli("report", "--root", str(root)).stdout.decode()
    assert "Savings per spawn" not in plain, "not a terminal: the table only"
    code, _, term = run_on_tty("report", "--root", str(root), stdout_too=True)
    assert code == 0 and "| Agent |" in term and "Savings per spawn" in term, "a terminal: table and chart"

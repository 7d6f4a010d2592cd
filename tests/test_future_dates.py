"""A transcript dated past the run's clock (a VM set to 2099: the exploratory tester's s10) was
compacted without a word, its entry dated 2099, and it pinned every order by date: the hot seed
(a later real session never re-seeded hot), the spawn's cold entries, promotion's age. The door now
dates such a session by its file's time or the run's clock, whichever is earlier, with one warning
per file; dates a wrong clock wrote into files before (or on a teammate's machine) are not believed."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli
from test_hot_reseed import T0, Log, entry_text, live_session, write_cold

from scribed import config, dates
from scribed.compress.entry import iso, split_entries
from scribed.core import promote
from scribed.core.scribe import Scribe
from scribed.models import Session, Turn
from scribed.recall.context import cold_entries
from scribed.session.door import redact_session
from scribed.tiers import hot_seed, live, seed_text
from scribed.tiers.cold import Layout

SAMPLES = Path(__file__).parent / "samples"
FUTURE = "2099-11-04T00:29:08Z"


def _at(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


# --- the rule ---------------------------------------------------------------------------------------
def test_stamps_within_a_day_of_the_clock_are_believed_and_the_file_is_not_asked() -> None:
    asked: list[int] = []

    def mtime() -> datetime:
        asked.append(1)
        return T0

    soon = T0 + timedelta(hours=20)  # a teammate's clock a few hours ahead
    d = dates.session_dates([T0 - timedelta(hours=1), soon, None], None, None, now=T0, mtime=mtime)
    assert d == dates.Dates(T0 - timedelta(hours=1), soon, None) and not asked


def test_a_part_past_the_clock_is_dated_by_its_file_or_the_clock_whichever_is_earlier() -> None:
    stamps = [_at("2099-11-04T00:10:00Z"), _at(FUTURE)]
    written = T0 - timedelta(days=2)
    d = dates.session_dates(stamps, None, None, now=T0, mtime=lambda: written)
    assert d == dates.Dates(written, written, _at(FUTURE))
    # the file's time is wrong too (the same clock wrote it), or unknown: the run's clock
    for m in (_at(FUTURE), None):
        assert dates.session_dates(stamps, None, None, now=T0, mtime=lambda m=m: m) == dates.Dates(
            T0, T0, _at(FUTURE)
        )
    # a clock that jumped within the session: its believed start stays
    d = dates.session_dates([T0 - timedelta(hours=3), _at(FUTURE)], None, None, now=T0, mtime=lambda: T0)
    assert d == dates.Dates(T0 - timedelta(hours=3), T0, _at(FUTURE))


def test_a_header_date_past_the_clock_is_no_truer_than_a_stamp() -> None:
    """An Aider history's turns carry no stamps: its header's date is the session's."""
    header = _at("2031-02-03T04:05:06Z")
    d = dates.session_dates([None, None], header, header, now=T0, mtime=lambda: T0 - timedelta(hours=5))
    assert d == dates.Dates(T0 - timedelta(hours=5), T0 - timedelta(hours=5), header)


# --- every format, at the door ----------------------------------------------------------------------
NOW = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)  # the run's clock: every sample is dated after it
MTIME = datetime(2024, 12, 30, 8, 0, tzinfo=UTC)
FORMATS = {  # kind: (samples folder, the source's extra keys)
    "claude": ("claude", {}),
    "codex": ("codex", {"workspace": "*"}),
    "copilot": ("copilot", {"workspace": "*"}),
    "squad-repl": ("squad-repl", {}),
    "markdown": ("markdown", {}),  # a SpecStory export, a chat with stamped speaker lines, notes
}


class Events:
    """A logger that keeps what it was told."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    def __getattr__(self, level: str) -> Any:
        return lambda event, **kw: self.calls.append((level, event, kw))

    def said(self, event: str) -> list[dict[str, Any]]:
        return [kw for _, e, kw in self.calls if e == event]


def _aider(folder: Path) -> None:
    (folder / ".aider.chat.history.md").write_text(
        "# aider chat started at 2026-06-02 10:00:00\n\n#### Fix the retry budget in src/http/retry.py\n\n"
        "The retry budget is now 3 attempts in `src/http/retry.py`; `pytest tests/http` passes.\n"
    )


@pytest.mark.parametrize("kind", sorted(FORMATS))
def test_every_format_is_dated_by_what_is_true_with_one_warning_a_file(tmp_path: Path, kind: str) -> None:
    """The run's clock (injected: earlier than every sample, not the wall clock) decides: each
    entry is dated by its file's time, each file with stamps past the clock is warned about once."""
    folder, extra = FORMATS[kind]
    src = tmp_path / "src"
    shutil.copytree(SAMPLES / folder, src)
    if kind == "markdown":
        _aider(src)
    files = [p for p in src.rglob("*") if p.is_file()]
    for p in files:
        os.utime(p, (MTIME.timestamp(), MTIME.timestamp()))
    root = tmp_path / "repo"
    (root / ".squad").mkdir(parents=True)
    cfg = config.from_dict(
        {
            "root": str(root),
            "compress": {"backend": "extractive"},
            "sources": [{"kind": kind, "path": str(src), "agent": "dev", **extra}],
        }
    )
    scribe = Scribe(cfg, clock=lambda: NOW)
    scribe.log = log = Events()  # type: ignore[assignment]
    try:
        report = scribe.run(force=True)
    finally:
        scribe.close()
    assert report.compacted >= 1 and not report.failed, report
    dated = [
        e.date for f in (root / ".squad/memory/cold").glob("*.md") for e in split_entries(f.read_text())[1]
    ]
    assert dated and set(dated) == {iso(MTIME)}, dated
    warned = log.said("future_timestamps")
    assert warned, log.calls
    assert len({w["file"] for w in warned}) == len(warned)  # one a file
    for w in warned:
        assert Path(w["file"]) in files and _at(w["claimed"]) > NOW + dates.SKEW and w["dated"] == iso(MTIME)
        assert "clock" in w["action"] and w["claimed"] in w["reason"]
    assert report.warnings >= len(warned)


# --- what orders by those dates ---------------------------------------------------------------------
def _pinned(layout: Layout) -> None:
    """The state an earlier version left: a 2099 entry and its seed."""
    write_cold(layout, entry_text("s-1", FUTURE, eid="e-00000000000a"))
    assert hot_seed.reseed(layout, "picard", "copilot", "s-1", Log(), now=_at(FUTURE))
    assert f"updated: {FUTURE}" in layout.hot_file("picard").read_text()
    write_cold(
        layout,
        entry_text("s-1", FUTURE, eid="e-00000000000a"),
        entry_text("s-2", "2026-11-20T10:00:00Z", eid="e-00000000000b"),
    )


def test_a_seed_a_wrong_clock_dated_is_replaced_by_the_next_session(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    _pinned(layout)
    assert seed_text.newest_entry(layout, "picard", now=T0).entry_id == "e-00000000000b"
    assert hot_seed.reseed(layout, "picard", "copilot", "s-2", Log(), now=T0)
    text = layout.hot_file("picard").read_text()
    assert "updated: 2026-11-20T10:00:00Z" in text and "(id e-00000000000b)" in text


def test_a_live_view_is_not_held_back_by_a_hot_file_dated_past_the_clock(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    _pinned(layout)
    red = redact_session(live_session("s-3", T0))
    assert live.refresh(layout, red, "copilot", Log(), now=T0 + timedelta(minutes=5))
    assert "scribed-live: copilot:s-3" in layout.hot_file("picard").read_text()
    # and a running session with a wrong clock is dated by its file, so it holds back no other
    src = tmp_path / "events.jsonl"
    src.write_text("{}\n")
    os.utime(src, (T0.timestamp(), T0.timestamp()))
    wrong = Session(
        "picard", "s-4", src, "copilot", [Turn("user", "Wire the limiter", "message", _at(FUTURE), 1, 9)]
    )
    view = live.render_live(redact_session(wrong), "copilot", now=T0 + timedelta(hours=1))
    assert f"updated: {iso(T0)}" in view


def test_an_edited_seed_dated_past_the_clock_is_said_to_hold_back_the_newest_entry(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    _pinned(layout)
    hot = layout.hot_file("picard")
    hot.write_text(hot.read_text().replace("Talking to: (none)", "Talking to: worf"))
    (held,) = hot_seed.withheld(layout, now=T0)
    assert held.entry == "e-00000000000b" and held.shows == "e-00000000000a"


def test_the_spawn_and_recent_sessions_list_a_wrong_clocks_entry_last(tmp_path: Path) -> None:
    from scribed.cli.mcp_server import tool_recent_sessions

    layout = Layout(tmp_path)
    _pinned(layout)
    assert [e.split(":", 1)[0] for e in cold_entries(layout, "picard")] == [
        "### 2026-11-20T10",
        f"### {FUTURE[:13]}",
    ]
    rows = tool_recent_sessions(layout, "picard")["sessions"]
    assert [r["entry"] for r in rows] == ["e-00000000000b", "e-00000000000a"]


def _teammate_entry(tmp_path: Path) -> tuple[config.Config, Path]:
    """A teammate's machine whose clock reads 2099 compacts a session it dates 2099 (to it, now)."""
    src = tmp_path / "src"
    shutil.copytree(SAMPLES / "codex", src)
    for p in src.rglob("*.jsonl"):
        p.write_text(p.read_text().replace('"2026-04-30T', '"2099-04-30T'))
    root = tmp_path / "repo"
    (root / ".squad").mkdir(parents=True)
    cfg = config.from_dict(
        {
            "root": str(root),
            "compress": {"backend": "extractive"},
            "cold": {"ttl_days": 30},
            "sources": [{"kind": "codex", "path": str(src), "agent": "dev", "workspace": "*"}],
        }
    )
    scribe = Scribe(cfg, clock=lambda: datetime(2099, 5, 1, tzinfo=UTC))
    try:
        assert scribe.run(force=True).compacted == 1
    finally:
        scribe.close()
    (store,) = (root / ".squad/memory/cold/dev").glob("2099*.md")
    return cfg, store


@pytest.mark.parametrize(("written_days_ago", "promoted"), [(45, 1), (10, 0)])
def test_promotion_ages_a_wrong_clocks_entry_from_its_file(
    tmp_path: Path, written_days_ago: int, promoted: int
) -> None:
    cfg, store = _teammate_entry(tmp_path)
    written = (T0 - timedelta(days=written_days_ago)).timestamp()
    os.utime(store, (written, written))
    res = promote.promote(cfg, clock=lambda: T0)
    assert len(res.promoted) + len(res.archived) == promoted, res
    assert any("dated past this machine's clock" in w and "ages from" in w for w in res.warnings), (
        res.warnings
    )


# --- the CLI, as the tester ran it --------------------------------------------------------------------
def _claude(path: Path, sid: str, day: str, ask: str) -> None:
    """A finished Claude Code session stamped on ``day``."""
    recs = [
        {"type": "user", "sessionId": sid, "uuid": "u1", "timestamp": f"{day}T09:00:00Z", "cwd": "/repo",
         "message": {"role": "user", "content": ask}},
        {"type": "assistant", "sessionId": sid, "uuid": "a1", "timestamp": f"{day}T09:05:00Z", "cwd": "/repo",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Done: the fix is in and `pytest` passes."}]}},
    ]  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))


def test_a_wrong_clocks_session_no_longer_pins_the_hot_file(tmp_path: Path) -> None:
    root, src = tmp_path / "repo", tmp_path / "src"
    (root / ".squad").mkdir(parents=True)
    cfg = root / "scribed.toml"
    cfg.write_text(f'root = "."\n[[sources]]\nkind = "claude"\npath = "{src}"\nagent = "riker"\n')
    now = datetime.now(UTC)
    skewed = src / "skewed.jsonl"
    _claude(skewed, "s-skew", "2099-11-04", "Fix the tenants batch bug in src/tenants/batch.py")
    written = (now - timedelta(days=2)).timestamp()
    os.utime(skewed, (written, written))
    p = run_cli("--config", str(cfg), "run-once", "--json")
    assert p.returncode == 0, p.stderr.decode()
    assert json.loads(p.stdout)["warnings"] == 1
    events = [json.loads(ln) for ln in p.stderr.decode().splitlines() if ln.startswith("{")]
    (w,) = [e for e in events if e["event"] == "future_timestamps"]
    assert w["level"] == "warning" and w["file"] == str(skewed) and w["claimed"] == "2099-11-04T09:05:00Z"
    hot = root / ".squad/memory/hot/riker.md"
    assert "2099" not in hot.read_text() and "2099" not in (root / ".squad/memory/cold/riker.md").read_text()
    # today's session, after the skewed file was written, seeds hot; the skewed file is not warned again
    _claude(
        src / "today.jsonl",
        "s-today",
        now.date().isoformat(),
        "Fix the billing digest in src/billing/digest.py",
    )
    os.utime(src / "today.jsonl", (written + 3600, written + 3600))  # quiet, and after the skewed one
    p = run_cli("--config", str(cfg), "run-once", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["compacted"] == 1, p.stderr.decode()
    assert "future_timestamps" not in p.stderr.decode()
    ctx = run_cli("--config", str(cfg), "context", "riker")
    assert "session ended: Fix the billing digest" in ctx.stdout.decode(), ctx.stdout.decode()
    doc = run_cli("--config", str(cfg), "doctor").stdout.decode()
    assert f"time stamps up to 2099-11-04T09:05:00Z lie past this machine's clock (in {skewed})" in doc, doc
    assert "set the clock right" in doc

"""Hot that is never empty: a session's end re-seeds hot for the next spawn (issue 11, item 5), and
a compacted hot file is replaced compare-and-swap, its archive redacted (issue 13)."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli
from secrets_corpus import SECRETS

from scribed import config
from scribed.core.scribe import Scribe
from scribed.models import Session, Turn
from scribed.session.door import redact_session
from scribed.sources.injected import MARK_CLOSE, MARK_OPEN
from scribed.sources.markdown import front_matter, split_lines
from scribed.tiers import cold, hot_seed, live, seed_text
from scribed.tiers.cold import Layout

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
SECRET = next(s for s in SECRETS if s.name == "openai_legacy")


class Log:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    def warning(self, event: str, **kw: Any) -> None:
        self.calls.append(("warning", event, kw))

    def info(self, event: str, **kw: Any) -> None:
        self.calls.append(("info", event, kw))

    def error(self, event: str, **kw: Any) -> None:
        self.calls.append(("error", event, kw))

    def events(self, level: str) -> list[str]:
        return [e for lv, e, _ in self.calls if lv == level]


def fields_of(text: str) -> dict[str, str]:
    return front_matter(split_lines(text.encode()))[0]


def entry_text(
    sid: str, when: str, *, eid: str = "e-0123456789ab", open_items: int = 1, decisions: int = 1
) -> str:
    return (
        f"### {when}: Add rate limiting to the public API (#412)\n"
        f"- provenance: id={eid} · agent=picard · session={sid} · source=`x.jsonl` (copilot) · lines 1–9\n\n"
        "#### Goal\nAdd rate limiting to the public API (#412)\n"
        "#### Outcome\nThe limiter ships behind a flag; all 41 tests pass.\n"
        "#### Decisions\n"
        + "".join(
            f"- use a token bucket keyed by API key, variant {i:02d} " + "x" * 200 + "\n"
            for i in range(decisions)
        )
        + "#### Errors → fixes\n"
        "- `KeyError: 'X-Api-Key'` → fell back to the client IP when the header is absent\n"
        "- `ConnectionError: redis refused` → unresolved\n"
        "- `TimeoutError: bucket sync`\n"
        "#### Open items\n"
        + "".join(f"- add Redis-backed storage, part {i:02d} " + "y" * 200 + "\n" for i in range(open_items))
        + "#### Key facts\n- error: `KeyError: 'X-Api-Key'`\n- error: `MemoryError: buffer`\n"
    )


def write_cold(layout: Layout, *entries: str) -> None:
    layout.cold.mkdir(parents=True, exist_ok=True)
    layout.cold_file("picard").write_text(cold.preamble("picard") + "\n" + "\n".join(entries))


def live_session(sid: str, when: datetime) -> Session:
    return Session(
        agent="picard",
        session_id=sid,
        source=Path("/x/events.jsonl"),
        kind="copilot",
        turns=[Turn("user", "Wire the limiter into the gateway config", "message", when, 1, 100)],
    )


# --- the seed ----------------------------------------------------------------------------------------
def test_unresolved_errors_are_the_blockers() -> None:
    errors = [
        "`KeyError: 'a'` → fixed by a default",
        "`OSError: disk full` → unresolved",
        "`ValueError: bad int`",
    ]
    facts = ["error: `KeyError: 'a'`", "error: `MemoryError: buffer`", "command: `pytest`"]
    assert seed_text.unresolved(errors, facts) == [
        "`OSError: disk full`",
        "`ValueError: bad int`",
        "`MemoryError: buffer`",
    ]


def test_a_fixed_or_vanished_error_is_no_blocker() -> None:
    """An error restored under Key facts from a fixed line is a `fixed:` fact, and one that went
    away when its command ran again is not blocking: neither is a blocker in the next spawn."""
    errors = ["`npm ERR! code 2` → unresolved (gone when `npm run build` ran again)", "`E1: x` → unresolved"]
    facts = ["fixed: `npm ERR! Lifecycle script build failed`", "error: `OSError: disk full`"]
    assert seed_text.unresolved(errors, facts) == ["`E1: x`", "`OSError: disk full`"]


def test_an_error_the_fit_dropped_comes_back_with_its_fix_state() -> None:
    """The entry's fit dropped `npm ERR! code 2 → …` for room; the guard restores the error as a
    `fixed:` key fact (as long as an `error:` one), while an unresolved one comes back as `error:`."""
    from scribed.compress import entry, entry_guard
    from scribed.models import Anchor, Summary

    meta = entry.EntryMeta(
        "e-0123456789ab", "data", "s1", "x.jsonl", "claude", datetime(2026, 3, 4, tzinfo=UTC), 1, 9, 9, "0" * 64,
        "extractive", 4000,
    )  # fmt: skip
    found = [Anchor("error", "npm ERR! code 2", 3), Anchor("error", "OSError: disk full", 5)]
    lines = [
        "`npm ERR! code 2` → Adding `currency: string` to InvoiceDTO.",
        "`OSError: disk full` → unresolved",
    ]
    s, _ = entry_guard.guard(Summary(goal="Get CI green."), found, meta, 4000, lines)
    assert s.key_facts == ["fixed: `npm ERR! code 2`", "error: `OSError: disk full`"]
    s, _ = entry_guard.guard(Summary(goal="Get CI green."), found, meta, 4000)
    assert s.key_facts == ["error: `npm ERR! code 2`", "error: `OSError: disk full`"]


def test_an_error_gone_on_a_clean_rerun_comes_back_as_fixed() -> None:
    """A failing test gone when its check ran again clean (`→ unresolved (gone when … ran again)`),
    dropped by the fit, comes back as a `fixed:` fact, not an `error:` one the next spawn's hot seed
    lists as a blocker (an exploratory tester's `--- FAIL: TestRateLimit_Burst`, green on re-run)."""
    from scribed.compress import entry, entry_guard
    from scribed.models import Anchor, Summary

    meta = entry.EntryMeta(
        "e-0123456789ab", "troi", "s1", "x.md", "markdown", datetime(2026, 3, 4, tzinfo=UTC), 1, 9, 9, "0" * 64,
        "extractive", 4000,
    )  # fmt: skip
    found = [Anchor("error", "--- FAIL: TestRateLimit_Burst (0.00s)", 3), Anchor("error", "OSError: x", 5)]
    lines = [
        "`--- FAIL: TestRateLimit_Burst (0.00s)` → unresolved (gone when `go test ./...` ran again)",
        "`OSError: x` → unresolved",
    ]
    s, _ = entry_guard.guard(Summary(goal="Rate-limit the API."), found, meta, 4000, lines)
    assert s.key_facts == ["fixed: `--- FAIL: TestRateLimit_Burst (0.00s)`", "error: `OSError: x`"]
    assert seed_text.unresolved([], s.key_facts) == ["`OSError: x`"]


def test_seed_has_outcome_open_items_blockers_decisions_and_pointer(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    write_cold(layout, entry_text("s-1", "2026-11-20T10:00:00Z"))
    log = Log()
    assert hot_seed.reseed(layout, "picard", "copilot", "s-1", log) is True
    text = layout.hot_file("picard").read_text()
    fm = fields_of(text)
    assert fm["scribed-live"] == "seed:copilot:s-1" and fm["updated"] == "2026-11-20T10:00:00Z"
    assert live.owned(text.encode()), "the digest matches the body scribed wrote"
    task, rest = text.split("Current task: ")[1].split("Active decisions:")
    assert "no session running" in task and "add Redis-backed storage, part 00" in task
    decisions, rest = rest.split("Last actions:")
    assert "token bucket keyed by API key" in decisions
    actions, rest = rest.split("Blockers:")
    assert "2026-11-20T10:00:00Z session ended: Add rate limiting to the public API (#412)" in actions
    assert "outcome: The limiter ships behind a flag; all 41 tests pass." in actions
    assert "cold entry: .squad/memory/cold/picard.md (id e-0123456789ab)" in actions
    blockers, talking = rest.split("Talking to:")
    assert "ConnectionError: redis refused" in blockers and "TimeoutError: bucket sync" in blockers
    assert "MemoryError: buffer" in blockers and "KeyError" not in blockers, "a fixed error is no blocker"
    assert talking.strip() == "(none)"
    assert log.events("info") == ["hot_seeded"]


def _chatter(sid: str, when: str, eid: str, goal: str = "ok") -> str:
    return (
        f"### {when}: {goal}\n"
        f"- provenance: id={eid} · agent=picard · session={sid} · source=`y.jsonl` (copilot) · lines 1–3\n\n"
        f"#### Goal\n{goal}\n#### Outcome\nTalk tomorrow 👋\n"
    )


def test_a_session_of_chatter_keeps_the_work_before_it(tmp_path: Path) -> None:
    """The last session was "ok / thanks / talk tomorrow": its seed keeps the open items,
    decisions and blockers of the session before it, saying whose they are (they were wiped)."""
    layout = Layout(tmp_path)
    write_cold(
        layout,
        entry_text("s-1", "2026-11-20T10:00:00Z"),
        _chatter("s-2", "2026-11-21T09:00:00Z", "e-1111111111ab"),
    )
    assert hot_seed.reseed(layout, "picard", "copilot", "s-2", Log()) is True
    text = layout.hot_file("picard").read_text()
    assert "open items from the session of 2026-11-20T10:00:00Z (the last one asked nothing)" in text
    assert "add Redis-backed storage, part 00" in text and "token bucket keyed by API key" in text
    assert "ConnectionError: redis refused" in text.split("Blockers:")[1]
    assert "2026-11-21T09:00:00Z session ended: ok" in text


def test_a_session_that_did_work_leaving_nothing_open_carries_nothing(tmp_path: Path) -> None:
    """A session with a real request that left no open item has closed them: nothing before it is
    carried, by it or by a session of chatter after it."""
    layout = Layout(tmp_path)
    done = _chatter(
        "s-2", "2026-11-21T09:00:00Z", "e-1111111111ab", goal="Ship the limiter to staging (#413)"
    )
    chat = _chatter("s-3", "2026-11-22T09:00:00Z", "e-2222222222ab")
    write_cold(layout, entry_text("s-1", "2026-11-20T10:00:00Z"), done, chat)
    for sid in ("s-2", "s-3"):
        assert hot_seed.reseed(layout, "picard", "copilot", sid, Log()) is True
        text = layout.hot_file("picard").read_text()
        assert "the last session left no open items" in text and "part 00" not in text, sid
        assert "Blockers: (none)" in text


def test_seed_fits_4k_keeping_open_items_longest(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    write_cold(layout, entry_text("s-1", "2026-11-20T10:00:00Z", open_items=24, decisions=24))
    assert hot_seed.reseed(layout, "picard", "copilot", "s-1", Log()) is True
    text = layout.hot_file("picard").read_text()
    assert len(text.encode()) <= 4096
    assert "part 00" in text and "part 04" in text and "part 23" not in text
    assert "variant 00" not in text or text.count("variant") <= 3, "decisions go before open items"
    assert "cold entry: .squad/memory/cold/picard.md (id e-0123456789ab)" in text
    assert live.owned(text.encode())


def test_seed_is_redacted(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    write_cold(layout, entry_text("s-1", "2026-11-20T10:00:00Z").replace("all 41 tests pass", SECRET.line))
    assert hot_seed.reseed(layout, "picard", "copilot", "s-1", Log()) is True
    text = layout.hot_file("picard").read_text()
    assert SECRET.value not in text and "[REDACTED_SECRET]" in text


# --- the write rules ------------------------------------------------------------------------------
def test_reseed_write_rules(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    hot = layout.hot_file("picard")
    write_cold(
        layout,
        entry_text("s-old", "2026-11-19T10:00:00Z", eid="e-00000000000a"),
        entry_text("s-1", "2026-11-20T10:00:00Z", eid="e-00000000000b"),
    )
    # an agent's own hot file is never touched
    hot.parent.mkdir(parents=True)
    mine = "# Hot memory: picard\n\nCurrent task: my own notes\n"
    hot.write_text(mine)
    assert hot_seed.reseed(layout, "picard", "copilot", "s-1", Log()) is False
    assert hot.read_text() == mine
    # a blank template is replaced
    hot.write_text(live.TEMPLATE.format(agent="picard"))
    assert hot_seed.reseed(layout, "picard", "copilot", "s-1", Log()) is True
    assert "e-00000000000b" in hot.read_text()
    # an older session's seed never replaces a newer one; a rerun changes nothing
    assert hot_seed.reseed(layout, "picard", "copilot", "s-old", Log()) is False
    assert hot_seed.reseed(layout, "picard", "copilot", "s-1", Log()) is False
    assert "e-00000000000b" in hot.read_text()
    # a seed the agent edited by hand is the agent's
    edited = hot.read_text().replace("Talking to: (none)", "Talking to: worf (about the gate)")
    hot.write_text(edited)
    assert hot_seed.reseed(layout, "picard", "copilot", "s-1", Log()) is False
    assert (
        live.refresh(layout, redact_session(live_session("s-2", T0 + timedelta(days=3))), "copilot", Log())
        is False
    )
    assert hot.read_text() == edited


def test_live_refresh_of_a_new_session_replaces_the_seed_and_not_the_reverse(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    hot = layout.hot_file("picard")
    write_cold(layout, entry_text("s-1", "2026-11-20T10:00:00Z"))
    assert hot_seed.reseed(layout, "picard", "copilot", "s-1", Log()) is True
    # a live view of a session older than the seed does not replace it
    assert (
        live.refresh(layout, redact_session(live_session("s-0", T0 - timedelta(days=1))), "copilot", Log())
        is False
    )
    assert fields_of(hot.read_text())["scribed-live"] == "seed:copilot:s-1"
    # the next session starts: its live view replaces the seed
    assert (
        live.refresh(layout, redact_session(live_session("s-2", T0 + timedelta(days=1))), "copilot", Log())
        is True
    )
    text = hot.read_text()
    assert fields_of(text)["scribed-live"] == "copilot:s-2" and "Wire the limiter" in text
    # ...and the end of another session never overwrites that running session's live view
    assert hot_seed.reseed(layout, "picard", "copilot", "s-1", Log()) is False
    assert fields_of(hot.read_text())["scribed-live"] == "copilot:s-2"


def test_reseed_never_writes_through_a_symlink(tmp_path: Path) -> None:
    layout = Layout(tmp_path / "root")
    write_cold(layout, entry_text("s-1", "2026-11-20T10:00:00Z"))
    target = tmp_path / "elsewhere.md"
    target.write_text("")
    layout.hot.mkdir(parents=True)
    layout.hot_file("picard").symlink_to(target)
    assert hot_seed.reseed(layout, "picard", "copilot", "s-1", Log()) is False
    assert target.read_text() == ""


# --- a compacted hot file: compare-and-swap, redacted archive ----------------------------------------
AGENT_HOT = (
    "# Hot memory: picard\n\n"
    "Current task: profile the nightly export job (#1201)\n\n"
    "Active decisions:\n- Decision: stream rows with server-side cursors in src/export/job.py\n\n"
    f"Note: {SECRET.line}\n\n"
    "TODO: cap the buffer at 256 MB\n"
)
APPENDED = "\nLate note: the export also needs a retry on ConnectionResetError (#1202).\n"


def hot_root(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "squad"
    hot = Layout(root).hot_file("picard")
    hot.parent.mkdir(parents=True)
    hot.write_text(AGENT_HOT)
    old = (T0 - timedelta(hours=2)).timestamp()
    os.utime(hot, (old, old))
    return root, hot


def run(root: Path) -> Any:
    cfg = config.from_dict({"root": str(root), "compress": {"backend": "extractive"}, "sources": []})
    scribe = Scribe(cfg)
    try:
        return scribe.run_once()
    finally:
        scribe.close()


def quiet(path: Path) -> None:
    """Make a file look untouched for hours, as the next run after an agent's write would see it."""
    old = (T0 - timedelta(hours=1)).timestamp()
    os.utime(path, (old, old))


def archives(root: Path) -> list[bytes]:
    folder = Layout(root).archive / "hot"
    return [gzip.decompress(p.read_bytes()) for p in sorted(folder.glob("picard-*.md.gz"))]


def test_compacted_hot_is_reset_to_the_seed_and_its_archive_is_redacted(tmp_path: Path) -> None:
    root, hot = hot_root(tmp_path)
    report = run(root)
    assert report.compacted == 1
    text = hot.read_text()
    assert fields_of(text)["scribed-live"].startswith("seed:hot:hot-")
    assert "cap the buffer at 256 MB" in text.split("Active decisions:")[0], "open item carried over"
    assert f"(id {report.entries[0].entry_id})" in text
    (archived,) = archives(root)
    assert SECRET.value.encode() not in archived and b"[REDACTED_SECRET]" in archived
    assert b"profile the nightly export job (#1201)" in archived
    assert run(root).compacted == 0, "the seed is not a session"


@pytest.mark.parametrize("when", ["during the cold write", "between snapshot and rename"])
def test_text_appended_during_compaction_stays_in_hot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    root, hot = hot_root(tmp_path)
    appended: list[bool] = []

    def append_once() -> None:
        if not appended:
            appended.append(True)
            with hot.open("a") as fh:
                fh.write(APPENDED)

    if when == "during the cold write":
        real_append = cold.append

        def cold_append(*a: Any, **kw: Any) -> Any:
            out = real_append(*a, **kw)
            append_once()
            return out

        monkeypatch.setattr(cold, "append", cold_append)
    else:
        real_still = live._still

        def still(path: Path, expected: bytes | None) -> bool:
            if path == hot:
                append_once()  # the agent writes after scribed read the file, before the rename
            return real_still(path, expected)

        monkeypatch.setattr(live, "_still", still)

    assert run(root).compacted == 1
    assert appended, "the hook ran"
    text = hot.read_text()
    assert text.endswith(APPENDED) and "retry on ConnectionResetError (#1202)" in text
    assert text.index("session ended: profile the nightly export job") < text.index(APPENDED.strip())
    assert "open: cap the buffer at 256 MB" in text, "appended after the seed"
    assert "scribed-live" not in text, "with the agent's text in it, the file is the agent's again"
    assert "Current task: profile the nightly export job" not in text, "the compacted text is gone"
    (archived,) = archives(root)
    assert b"#1202" not in archived, "the archive holds the compacted snapshot only"
    monkeypatch.undo()
    quiet(hot)
    # the kept text is the agent's: the next run compacts it into cold, then hot is a clean seed
    second = run(root)
    assert second.compacted == 1
    assert "#1202" in Layout(root).cold_file("picard").read_text()
    after = hot.read_text()
    assert fields_of(after)["scribed-live"].startswith("seed:hot:") and live.owned(after.encode())
    assert not after.endswith(APPENDED)


@pytest.mark.parametrize("when", ["during the cold write", "between snapshot and rename"])
def test_hot_rewritten_during_compaction_is_left_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    root, hot = hot_root(tmp_path)
    rewritten = "# Hot memory: picard\n\nCurrent task: something else entirely\n"
    if when == "during the cold write":
        real_append = cold.append

        def cold_append(*a: Any, **kw: Any) -> Any:
            out = real_append(*a, **kw)
            hot.write_text(rewritten)
            return out

        monkeypatch.setattr(cold, "append", cold_append)
    else:
        real_still = live._still

        def still(path: Path, expected: bytes | None) -> bool:
            if path == hot and hot.read_text() != rewritten:
                hot.write_text(rewritten)
            return real_still(path, expected)

        monkeypatch.setattr(live, "_still", still)
    assert run(root).compacted == 1
    assert hot.read_text() == rewritten
    if when == "during the cold write":
        assert archives(root) == [], "nothing archived for a file that was not the one compacted"
    monkeypatch.undo()
    quiet(hot)
    assert run(root).compacted == 1, "the rewritten file is compacted on the next run"
    assert "something else entirely" in Layout(root).cold_file("picard").read_text()


# --- end to end: the default spawn after a session ended ------------------------------------------
def copilot(path: Path, sid: str, steps: list[tuple[str, dict[str, Any]]], start: datetime) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    events = [
        {"type": "session.start", "id": "e0", "timestamp": start.isoformat(), "data": {"sessionId": sid}}
    ]
    for i, (kind, data) in enumerate(steps, start=1):
        ts = (start + timedelta(seconds=30 * i)).isoformat()
        events.append({"type": kind, "id": f"e{i}", "timestamp": ts, "data": data})
    path.write_text("".join(json.dumps(e) + "\n" for e in events))


def test_default_spawn_after_a_session_ended_prints_its_outcome_and_open_items(tmp_path: Path) -> None:
    root = tmp_path / "squad"
    (root / ".squad/memory").mkdir(parents=True)
    copilot(
        root / "transcripts/s-77/events.jsonl",
        "s-77",
        [
            ("user.message", {"content": "Add rate limiting to the public API (#412)"}),
            ("user.message", {"content": "continue"}),
            (
                "assistant.message",
                {
                    "content": "Decision: use a token bucket in src/app/ratelimit.py keyed by API key. "
                    "The limiter is merged and all 41 tests pass. "
                    "TODO: add Redis-backed storage so limits hold across workers."
                },
            ),
            ("session.shutdown", {"shutdownType": "routine"}),
        ],
        T0,
    )
    cfg = root / "scribed.toml"
    cfg.write_text(
        'root = "."\n[compress]\nbackend = "extractive"\n'
        '[[sources]]\nkind = "copilot"\npath = "transcripts"\nagent = "picard"\nworkspace = "*"\n'
    )
    p = run_cli("--config", str(cfg), "run-once", "--json")
    assert p.returncode == 0, p.stderr.decode()
    (made,) = json.loads(p.stdout)["entries"]

    p = run_cli("--config", str(cfg), "context", "picard")
    assert p.returncode == 0, p.stderr.decode()
    out = p.stdout.decode()
    assert len(p.stdout) <= 4096
    assert "scribed-live" not in out
    assert out.startswith(MARK_OPEN + "\n") and out.endswith(MARK_CLOSE + "\n")
    assert "<!--" not in out.removeprefix(MARK_OPEN).removesuffix(MARK_CLOSE + "\n")
    _, (entry,) = cold.split_entries(Layout(root).cold_file("picard").read_text())
    outcome = " ".join(cold.sections(entry.text)["outcome"])
    assert outcome and f"outcome: {outcome}" in out
    assert "Redis-backed storage so limits hold across workers" in out.split("Active decisions:")[0]
    assert "Add rate limiting to the public API (#412)" in out
    assert f"cold entry: .squad/memory/cold/picard.md (id {entry.entry_id})" in out
    assert made["session"] == "s-77"


# --- promotion -----------------------------------------------------------------------------------
def _promoted_seed(tmp_path: Path, *, edit: bool = False) -> tuple[Layout, bytes]:
    """A seed of an entry, then that entry promoted out of cold (60 days old): the hot file's bytes
    before promotion."""
    from scribed.config import from_dict
    from scribed.core.promote import promote

    layout = Layout(tmp_path)
    (tmp_path / ".squad").mkdir(exist_ok=True)
    write_cold(layout, entry_text("s-1", "2026-09-20T10:00:00Z"))
    assert hot_seed.reseed(layout, "picard", "copilot", "s-1", Log())
    path = layout.hot_file("picard")
    if edit:
        path.write_text(path.read_text() + "- my own note\n")  # an agent's edit: no longer scribed's
    before = path.read_bytes()
    rep = promote(from_dict({"root": str(tmp_path)}), as_of=datetime(2026, 11, 29, tzinfo=UTC)).to_json()
    assert [p["entry"] for p in rep["promoted"]] == ["e-0123456789ab"]
    assert "e-0123456789ab" not in layout.cold_file("picard").read_text()
    return layout, before


def test_a_seed_of_a_promoted_entry_points_at_its_archive(tmp_path: Path) -> None:
    layout, before = _promoted_seed(tmp_path)
    text = layout.hot_file("picard").read_text()
    archive = fields_of(text)["cold"]
    assert (
        archive.startswith(".squad/memory/.scribed/archive/promoted/picard/")
        and (tmp_path / archive).is_file()
    )
    assert f"cold entry: {archive} (id e-0123456789ab)" in text
    assert "e-0123456789ab" in gzip.decompress((tmp_path / archive).read_bytes()).decode()
    assert live.owned(text.encode()), "still scribed's seed: the next session's re-seed replaces it"
    assert (
        text.replace(archive, ".squad/memory/cold/picard.md").split("digest:")[0]
        == (before.decode().split("digest:")[0])
    ), "nothing but the pointer changed"


def test_an_edited_seed_is_not_repointed(tmp_path: Path) -> None:
    layout, before = _promoted_seed(tmp_path, edit=True)
    assert layout.hot_file("picard").read_bytes() == before


def test_a_crash_before_the_entry_leaves_cold_leaves_a_pointer_that_leads_somewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seed is re-pointed before the entry leaves cold: a crash between the two leaves the entry
    in cold and the seed at its archive, both there, and the rerun finishes (found by review)."""
    from scribed.config import from_dict
    from scribed.core import promote as promote_mod

    layout = Layout(tmp_path)
    (tmp_path / ".squad").mkdir()
    write_cold(layout, entry_text("s-1", "2026-09-20T10:00:00Z"))
    assert hot_seed.reseed(layout, "picard", "copilot", "s-1", Log())

    def crash(*_: Any) -> int:
        raise KeyboardInterrupt

    cfg = from_dict({"root": str(tmp_path)})
    with monkeypatch.context() as m:
        m.setattr(promote_mod, "_remove_from_cold", crash)
        with pytest.raises(KeyboardInterrupt):
            promote_mod.promote(cfg, as_of=datetime(2026, 11, 29, tzinfo=UTC))
    pointer = fields_of(layout.hot_file("picard").read_text())["cold"]
    assert "archive/promoted/picard/" in pointer and (tmp_path / pointer).is_file()
    assert "e-0123456789ab" in layout.cold_file("picard").read_text()
    promote_mod.promote(cfg, as_of=datetime(2026, 11, 29, tzinfo=UTC))  # the rerun
    assert fields_of(layout.hot_file("picard").read_text())["cold"] == pointer
    assert "e-0123456789ab" not in layout.cold_file("picard").read_text()


def test_an_error_is_fixed_by_its_own_line_only() -> None:
    """The line naming a fix must be the error's own: the same text, its start (an anchor is cut
    to length) or its end after a mark; `KeyError: x → …` does not fix `Error: x`."""
    from scribed.compress.entry_guard import _fixed_in

    assert _fixed_in("[upload] Error 2", ["`*** [upload] Error 2` → added the bucket policy"])
    assert _fixed_in("ValueError: bad date '2026-02", ["`ValueError: bad date '2026-02-30'` → validated"])
    assert not _fixed_in("Error: x", ["`KeyError: x` → fixed by a default"])
    assert not _fixed_in("OSError: disk full", ["`OSError: disk full` → unresolved"])


# --- a file problem while seeding --------------------------------------------------------------
def test_a_seed_writers_file_problem_is_a_warning_never_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each writer of a seed (a session's end, a removed entry, a promoted one) swaps the hot file
    and says why it could not: the compaction, sync or promotion before it is already durable."""
    from scribed.core.hot_reseed import reseed_removed

    layout = Layout(tmp_path)
    write_cold(layout, entry_text("s-1", "2026-11-20T10:00:00Z"))
    assert hot_seed.reseed(layout, "picard", "copilot", "s-1", Log())
    seeded = layout.hot_file("picard").read_bytes()
    write_cold(layout, entry_text("s-2", "2026-11-21T10:00:00Z", eid="e-0123456789cd"))
    (e,) = cold.parsed(layout.cold_file("picard"))[1]
    archived = layout.memory / ".scribed" / "archive" / "promoted" / "picard" / "x.md.gz"

    def denied(*_: Any, **__: Any) -> bool:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(live, "_swap_now", denied)
    writers: list[tuple[str, Callable[[Log], bool]]] = [
        ("hot_seed_failed", lambda log: hot_seed.reseed(layout, "picard", "copilot", "s-2", log)),
        ("hot_seed_failed", lambda log: reseed_removed(layout, "picard", ["e-0123456789ab"], log)),
        (
            "hot_repoint_failed",
            lambda log: hot_seed.repoint(layout, "picard", {"e-0123456789ab": (e, archived)}, log),
        ),
    ]
    for event, write in writers:
        log = Log()
        assert write(log) is False, event
        assert [(lv, ev, kw["reason"]) for lv, ev, kw in log.calls] == [
            ("warning", event, "Permission denied")
        ]
    outside = tmp_path.parent / "elsewhere.md.gz"  # a pointer it cannot write: said, not raised
    log = Log()
    assert hot_seed.repoint(layout, "picard", {"e-0123456789ab": (e, outside)}, log) is False
    assert log.events("warning") == ["hot_repoint_failed"]
    assert layout.hot_file("picard").read_bytes() == seeded


def test_an_outcome_that_is_an_open_line_is_an_open_item_of_the_seed(tmp_path: Path) -> None:
    """Finding m11: an entry imported before an ``Open:`` line was an open item has that line as
    its Outcome and no Open items; its seed said "the last session left no open items" above an
    outcome that was one. The seed lists it as an open item, and not again as the outcome."""
    layout = Layout(tmp_path)
    old = (
        "### 2026-11-20T10:00:00Z: Payments migration\n"
        "- provenance: id=i-0123456789ab · agent=picard · session=history-payments-migration · "
        "source=`.squad/agents/picard/history.md` (squad-history) · lines 5–8\n\n"
        "#### Outcome\n**Open:** the `payments_v2` migration still needs a backfill of 3 tables.\n"
        "#### Files & artifacts\n- `db/migrations/0042_payments_v2.sql`\n"
    )
    write_cold(layout, old)
    assert hot_seed.reseed(layout, "picard", "import", "history-payments-migration", Log()) is True
    text = layout.hot_file("picard").read_text()
    task = text.split("Active decisions:", 1)[0]
    assert "left no open items" not in task and "backfill of 3 tables" in task, text
    assert "outcome:" not in text, text

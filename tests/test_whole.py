"""Whole sentences in what a spawn loads (issue 30, part 2): the outcome is the session's conclusion, and
the seed carries it and every open item whole, trimming whole items only when 4 KB is reached."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from scribed import config as config_mod
from scribed.compress import entry, entry_fit, outcome
from scribed.core.scribe import Scribe
from scribed.models import Summary, Turn
from scribed.recall import context
from scribed.tiers import cold, live, seed_text
from scribed.tiers.cold import Layout

DONE = (
    "Done: `tally export ledger --format parquet` now writes one file per tenant and month "
    "(`exports/{tenant}/2026-11.parquet`), and `tests/test_parquet_export.py` is green (14 passed)."
)
OPEN = "`--since` still ignores the tenant's timezone for the Parquet partitions (#318)"
AIDER = f"""
# aider chat started at 2026-11-10 10:00:00

> Aider v0.60.0⏎
> Main model: gpt-4o⏎

#### Add a parquet export to `tally export ledger`: one file per tenant and month.⏎

I'll add the Parquet writer in `tally/export/parquet.py` and wire it to the CLI.

> Applied edit to tally/export/parquet.py⏎
> Commit 1a2b3c4 feat: parquet export⏎

#### looks good so far⏎

Great, I'll run the tests next.

> Running pytest tests/test_parquet_export.py⏎
> 14 passed in 2.31s⏎

{DONE}
Open item: `--since` still ignores the tenant's timezone for the
Parquet partitions (#318).
""".replace("⏎", "  ")  # Aider ends its own and the user's lines in a hard break


def test_the_seed_after_an_aider_session_carries_the_outcome_and_open_item_whole(tmp_path: Path) -> None:
    (tmp_path / ".squad/memory").mkdir(parents=True)
    (tmp_path / "aider").mkdir()
    (tmp_path / "aider/.aider.chat.history.md").write_text(AIDER)
    cfg = config_mod.from_dict(
        {
            "root": str(tmp_path),
            "session": {"quiet_seconds": 0},
            "compress": {"backend": "extractive"},
            "log": {"format": "json", "level": "error"},
            "sources": [{"kind": "markdown", "path": str(tmp_path / "aider"), "agent": "tally"}],
        }
    )
    scribe = Scribe(cfg)
    try:
        assert scribe.run_once().compacted == 1
    finally:
        scribe.close()
    layout = Layout(tmp_path)
    _, (e,) = cold.split_entries(layout.cold_file("tally").read_text())
    sec = cold.sections(e.text)
    assert sec["outcome"] == [DONE]
    assert sec["open_items"] == [OPEN], "the wrapped line is joined, the item is whole"
    hot = layout.hot_file("tally").read_text()
    spawn = context.build(layout, "tally").text
    for text in (hot, spawn):
        assert f"- outcome: {DONE}\n" in text
        assert f"- {OPEN}\n" in text
        assert "…" not in text, "nothing is cut while the hot file is under 4 KB"
        assert "Current task: (no session running) open items from the last session:" in text
    assert len(hot.encode()) < 4096


def _session(n_open: int, item_chars: int, outcome_text: str) -> seed_text.LastSession:
    items = [
        f"open item {i:02d}: " + " ".join(["widen the partition key"] * (item_chars // 24)) + "."
        for i in range(n_open)
    ]
    return seed_text.LastSession(
        entry_id="e-0123456789ab",
        when="2026-11-20T10:00:00Z",
        cold=".squad/memory/cold/picard.md",
        goal="Port the exporter",
        outcome=outcome_text,
        decisions=[f"decision {i}: " + "use streaming writes " * 10 for i in range(6)],
        open_items=items,
        blockers=[],
    )


def test_the_seed_drops_whole_items_only_when_4k_is_reached() -> None:
    conclusion = "The export streams now. All 41 tests pass (#812)."
    small = _session(3, 200, conclusion)
    text = seed_text.render("picard", "seed:copilot:s-1", small)
    for item in small.open_items + small.decisions:
        assert f"- {item}\n" in text, "under 4 KB nothing goes"
    big = _session(12, 500, "First we tried X. Then Y failed. " + conclusion)
    text = seed_text.render("picard", "seed:copilot:s-1", big)
    assert len(text.encode()) <= 4096
    kept = [ln[2:] for ln in text.splitlines() if ln.startswith("- open item")]
    assert kept and len(kept) < len(big.open_items)
    assert all(k in big.open_items for k in kept), "every item kept is whole"
    assert "All 41 tests pass (#812)." in text, "the outcome's conclusion stays"
    assert "…" not in text


def test_the_outcome_is_the_conclusion_not_a_note_on_the_way() -> None:
    turns = [
        Turn("user", "Fix the login redirect loop (#77)", "message"),
        Turn("assistant", "Edit auth/redirect.py", "tool_call", tool_name="Edit"),
        Turn(
            "assistant",
            "Done: the redirect loop is fixed in `auth/redirect.py`. All 12 tests pass.",
            "message",
        ),
        Turn("user", "now review it for security issues", "message"),
        Turn("assistant", "Security review is crucial. Let me add that to our todo list", "message"),
        Turn("assistant", 'TodoWrite {"todos": []}', "tool_call", tool_name="TodoWrite"),
    ]
    assert (
        outcome.conclusion(turns)
        == "Done: the redirect loop is fixed in `auth/redirect.py`. All 12 tests pass."
    )
    turns.append(Turn("assistant", "Reviewed: no injection paths. Want me to add a CSRF test?", "message"))
    assert outcome.conclusion(turns) == "Reviewed: no injection paths."
    labelled = (
        "Saved the context to `.claude/context`.\n\nHere's a suggested commit message:\n\n```\nfix: x\n```"
    )
    assert (
        outcome.conclusion([Turn("assistant", labelled, "message")])
        == "Saved the context to `.claude/context`."
    )
    data = 'Done.\n\n"dependencies": { "react": "^18.3.1", "react-dom": "^18.3.1", "recharts": "^2.12.7" }, client/src/App.js'
    assert outcome.conclusion(
        [
            Turn("assistant", "The chart renders from the API data now.", "message"),
            Turn("assistant", data, "message"),
        ]
    ) == ("The chart renders from the API data now."), (
        "code run into a line is no conclusion: the message before it is"
    )
    ran = [
        Turn("user", "Make the suite green", "message"),
        Turn("assistant", "Let me run the tests first.", "message"),
        Turn("assistant", "pytest -q", "tool_call", tool_name="bash"),
        Turn("tool", "....\n==== 14 passed in 2.31s ====", "tool_result", tool_name="bash"),
    ]
    assert outcome.conclusion(ran) == "Last test run: 14 passed in 2.31s."


def test_fitting_shortens_the_outcome_by_whole_sentences() -> None:
    text = "We first tried a global lock. It deadlocked under load. The fix is a per-tenant advisory lock."
    s = Summary(goal="Fix the deadlock", outcome=text, key_points=["x" * 300 for _ in range(10)])
    meta = entry.EntryMeta(
        "e-0123456789ab", "kim", "s1", "x.md", "markdown", datetime(2026, 11, 2, tzinfo=UTC), 1, 5, 5,
        "0" * 64, "extractive", 4000,
    )  # fmt: skip
    fitted = entry_fit.fit(s, meta, 700)
    assert fitted.outcome and text.endswith(fitted.outcome), fitted.outcome
    assert fitted.outcome.endswith("advisory lock.")


def test_whole_line_keeps_sentences() -> None:
    assert live.whole_line("One. Two words here. Three.", 20) == "One. Two words here."
    assert live.whole_line("short", 20) == "short"
    assert live.whole_line("a " * 30, 10).endswith("…")

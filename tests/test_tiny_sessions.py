"""A tiny session's entry (an exploratory tester's): titled by the transcript's "# Session" heading,
and its outcome cut after "./..." when fitting took the dots for a sentence's end."""

from __future__ import annotations

from pathlib import Path

from scribed.compress import entry, sections
from scribed.models import Turn


def test_a_short_request_is_the_goal_not_the_transcripts_heading() -> None:
    turns = [
        Turn("system", "# Session", "message"),
        Turn("user", "Clean up ingest.", "message"),
        Turn("assistant", "Removed the unused Kafka helpers from ingest/.", "message"),
    ]
    assert sections.goal(turns) == "Clean up ingest."
    assert sections.goal([Turn("system", "# Session\n\n## Notes", "message")]) == ""


def test_fitting_drops_whole_sentences_only() -> None:
    text = (
        "Removed the unused Kafka helpers from ingest/ and deleted ingest/legacy.go; go build ./... passes."
    )
    assert entry.fewer_sentences(text) == ""  # one sentence: nothing to drop but all of it
    two = text + " The CI run is green."
    assert entry.fewer_sentences(two) == text  # the one naming nothing goes, never a piece


def test_a_tiny_sessions_entry_keeps_its_whole_outcome(tmp_path: Path) -> None:
    from scribed import config as config_mod
    from scribed.core.scribe import Scribe

    (tmp_path / ".squad").mkdir()
    t = tmp_path / "t"
    t.mkdir()
    (t / "s1.md").write_text(
        "# Session\n\n**User:** Clean up ingest.\n\n**Assistant:** Removed the unused Kafka helpers from "
        "ingest/ and deleted ingest/legacy.go; go build ./... passes.\n"
    )
    cfg = config_mod.from_dict(
        {
            "root": str(tmp_path),
            "session": {"quiet_seconds": 0},
            "sources": [{"kind": "markdown", "path": str(t), "agent": "kim"}],
        }
    )
    scribe = Scribe(cfg)
    try:
        scribe.run_once(force=True)
    finally:
        scribe.close()
    cold = (tmp_path / ".squad/memory/cold/kim.md").read_text()
    assert ": Clean up ingest.\n" in cold
    assert "go build ./... passes." in cold


def test_a_list_number_goes_with_its_item() -> None:
    """The real-data dev set: an outcome "… rules. 8. **Suggest a formatter**: …" lost its item and
    kept the dangling "8." when the sentence rule would not split before a digit."""
    text = "**Add a principle**: Broaden the rules. 8. **Suggest a Code Formatter**: Recommend Prettier."
    assert entry.fewer_sentences(text) in (
        "**Add a principle**: Broaden the rules.",
        "8. **Suggest a Code Formatter**: Recommend Prettier.",
    )
    two = "Add PYTHONUNBUFFERED to get immediate output 5. Make browser mode check more flexible"
    left = entry.fewer_sentences(two)
    assert left in (
        "Add PYTHONUNBUFFERED to get immediate output",
        "5. Make browser mode check more flexible",
    )
    assert (
        entry.fewer_sentences("5. Make browser mode check more flexible") == ""
    )  # one item: nothing to drop


def test_a_pivots_goal_goes_whole_when_the_goal_is_shortened() -> None:
    """The synthetic quality bench: with the one sentence rule no sentence end came before " · then:",
    so fitting could not drop a pivot's goal and dropped two key facts instead (identifier recall
    0.864 → 0.857)."""
    goal = "Please fix the uploads retry bug from PLAT-928. It is related to #4055 too. · then: Refresh the token"
    assert (
        entry._without_last_sentence(goal)
        == "Please fix the uploads retry bug from PLAT-928. It is related to #4055 too."
    )

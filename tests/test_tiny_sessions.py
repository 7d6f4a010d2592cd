"""A tiny session's entry (an exploratory tester's): titled by the transcript's "# Session" heading,
and its outcome cut after "./..." when fitting took the dots for a sentence's end."""

from __future__ import annotations

from pathlib import Path

import pytest

from scribed.compress import entry_fit, sections
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
    assert entry_fit.fewer_sentences(text) == ""  # one sentence: nothing to drop but all of it
    two = text + " The CI run is green."
    assert entry_fit.fewer_sentences(two) == text  # the one naming nothing goes, never a piece


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
    assert entry_fit.fewer_sentences(text) in (
        "**Add a principle**: Broaden the rules.",
        "8. **Suggest a Code Formatter**: Recommend Prettier.",
    )
    two = "Add PYTHONUNBUFFERED to get immediate output 5. Make browser mode check more flexible"
    left = entry_fit.fewer_sentences(two)
    assert left in (
        "Add PYTHONUNBUFFERED to get immediate output",
        "5. Make browser mode check more flexible",
    )
    assert (
        entry_fit.fewer_sentences("5. Make browser mode check more flexible") == ""
    )  # one item: nothing to drop


@pytest.mark.parametrize(
    "text",
    [
        "We need rate limiting on the gateway. 100 req/s sustained, burst of 200. Can you add it?",
        "Set the pool size to 20. Then restart the workers.",
        "The limit is 50. Raise it for the batch jobs.",
        "The checkout endpoint returns HTTP 500. Can you fix it?",  # a review's
        "Upgrade the base image to Node 20. Then rebuild the cache.",
    ],
)
def test_a_number_a_sentence_says_stays_in_it(text: str) -> None:
    """A tester's: "… burst of 200. Can you add it?" was cut as a list's number, and the entry's
    title read "200. Can you add it?"."""
    parts = entry_fit._sentences_of(text)
    assert all(not p[:1].isdigit() for p in parts[1:]), parts
    assert not entry_fit._without_last_sentence(text)[:1].isdigit()


def test_a_pivots_goal_goes_whole_when_the_goal_is_shortened() -> None:
    """The synthetic quality bench: with the one sentence rule no sentence end came before " · then:",
    so fitting could not drop a pivot's goal and dropped two key facts instead (identifier recall
    0.864 → 0.857)."""
    goal = "Please fix the uploads retry bug from PLAT-928. It is related to #4055 too. · then: Refresh the token"
    assert (
        entry_fit._without_last_sentence(goal)
        == "Please fix the uploads retry bug from PLAT-928. It is related to #4055 too."
    )


def test_an_ellipsis_in_code_ends_no_sentence() -> None:
    """A tester's: "scrap the advisory lock. do SELECT ... FOR UPDATE SKIP LOCKED … instead" was
    split at the ellipsis, and the key point kept "FOR UPDATE SKIP LOCKED …" without its verb."""
    from scribed.compress.content import SENTENCE_END

    text = "scrap the advisory lock. do SELECT ... FOR UPDATE SKIP LOCKED on the claim instead. Then test it."
    assert SENTENCE_END.split(text) == [
        "scrap the advisory lock. do SELECT ... FOR UPDATE SKIP LOCKED on the claim instead.",
        "Then test it.",
    ]
    assert SENTENCE_END.split("I tried... Then it worked. CI is green.") == [
        "I tried...",
        "Then it worked.",
        "CI is green.",
    ]
    log = "uploading reports.tar.gz ... ERROR: upload rejected"  # a log's ellipsis does end one
    assert SENTENCE_END.split(log) == ["uploading reports.tar.gz ...", "ERROR: upload rejected"]


def test_a_goal_cut_keeps_what_an_ask_naming_nothing_refers_to() -> None:
    """A tester's: "We need per-client rate limiting … burst of 200. Can you add it?" cut to fit
    kept "Can you add it?" (the entry's title then named nothing)."""
    text = "We need per-client rate limiting on the gateway routes, burst of 200. Can you add it?"
    assert (
        entry_fit._without_last_sentence(text)
        == "We need per-client rate limiting on the gateway routes, burst of 200."
    )
    asks = "The limiter lives in internal/ratelimit. Replace it with a token bucket in internal/ratelimit."
    assert entry_fit._without_last_sentence(asks) == "Replace it with a token bucket in internal/ratelimit."

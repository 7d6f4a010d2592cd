"""An "Open:" label starting a line or a bullet is an open item (stop 49, finding m07); the same word
before a count, in a table cell or in a menu path is none (the stop's second review found those taken)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from scribed.compress import anchors
from scribed.models import Session, Turn

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def _todos(line: str) -> list[str]:
    said = [Turn("user", "Where do we stand on the export job?", "message", T0, 1, 0),
            Turn("assistant", f"The export job runs nightly now.\n{line}\n", "message", T0, 2, 0)]  # fmt: skip
    session = Session(agent="dana", session_id="s", source=Path("chat.md"), kind="markdown", turns=said)
    return [a.text for a in anchors.extract(session) if a.type == "todo"]


@pytest.mark.parametrize(
    "line",
    [
        "- Open: shard naming is still undecided (issue #88).",
        "Open: the dead-letter queue has no owner yet",
        "**Open:** who owns the billing retries",
        "  * Open: a retry policy for the webhooks",
    ],
)
def test_an_open_label_before_words_is_an_open_item(line: str) -> None:
    assert len(_todos(line)) == 1, line


@pytest.mark.parametrize(
    "line",
    [
        "Issues — Open: 12, Closed: 40",
        "| State | Open: 3 PRs |",
        "File > Open: pick the config file in the dialog",
        "the status page is open: anyone can read it",
    ],
)
def test_open_before_a_count_in_a_cell_or_a_menu_is_no_item(line: str) -> None:
    assert _todos(line) == [], line

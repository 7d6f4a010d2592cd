"""Stop 45 review, defect 3: scratching, scrapping or ditching takes words back only when what it
takes is something said (a comment, a suggestion, a question, "what I said"), whoever's it is:
"ditch my retry wrapper" drops a thing and is a decision. After words taken back, the rest of the
line is read for the choice it makes ("scratch what I said about caching, we keep Redis")."""

from __future__ import annotations

import pytest
from test_decisions_imperative import decided

# a thing of the speaker's dropped: a decision
MY_THING = [
    ("ditch my retry wrapper, it is buggy", "ditch my retry wrapper, it is buggy"),
    ("scrap my custom date parser.", "scrap my custom date parser"),
    ("ditch my hand-rolled cache", "ditch my hand-rolled cache"),
    ("scrap my feature flag for the beta", "scrap my feature flag for the beta"),
    ("scrap my PR #123", "scrap my PR #123"),
]
# words taken back, then a choice: the choice
TAKEN_BACK_THEN = [("scratch what I said about caching, we keep Redis", "keep Redis")]
TAKEN_BACK = ["scratch my earlier comment about CI", "scratch what I said about the cache"]


@pytest.mark.parametrize(("line", "want"), [*MY_THING, *TAKEN_BACK_THEN])
def test_a_thing_dropped_or_a_choice_after_words_taken_back_is_a_decision(line: str, want: str) -> None:
    assert decided(line) == [(want, None)]


@pytest.mark.parametrize("line", TAKEN_BACK)
def test_words_taken_back_choose_nothing(line: str) -> None:
    assert decided(line) == []


# Fresh phrasings, written after the fix
FRESH_DECIDED = [
    ("scrap my caching layer, it hides bugs", "scrap my caching layer, it hides bugs"),
    ("ditch our homegrown logger.", "ditch our homegrown logger"),
    ("abandon my rate limiter", "abandon my rate limiter"),
    ("scratch my last remark, we keep Celery", "keep Celery"),
    ("scratch my last remark, switch the queue to Dramatiq", "switch the queue to Dramatiq"),
    ("scratch my earlier suggestion; pin celery to 5.3", "pin celery to 5.3"),
    pytest.param(
        "scratch my last remark, we use Celery",
        "use Celery",
        marks=pytest.mark.xfail(
            reason="a bare 'use X' needs a mark of choice to be one, retraction or not", strict=True
        ),
    ),
    pytest.param(
        "scratch what I wrote about Celery; keep RQ",
        "keep RQ",
        marks=pytest.mark.xfail(
            reason="'RQ' (two capitals) is no named thing to the imperative rule", strict=True
        ),
    ),
]
FRESH_TAKEN_BACK = [
    "scratch my previous suggestion about retries",
    "ditch what I wrote about the deploy order",
    "scrap that last question of mine",
    "scratch my remark on logging",
]


@pytest.mark.parametrize(("line", "want"), FRESH_DECIDED)
def test_fresh_things_dropped_are_decisions(line: str, want: str) -> None:
    assert decided(line) == [(want, None)]


@pytest.mark.parametrize("line", FRESH_TAKEN_BACK)
def test_fresh_words_taken_back_choose_nothing(line: str) -> None:
    assert decided(line) == []

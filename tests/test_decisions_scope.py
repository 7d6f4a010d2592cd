"""Stop 44: a user's choice said as a plain imperative ("switch to pnpm", "pin it to 3.11",
"replace moment.js with date-fns") is a decision; a place in the work ("switch to the other
branch"), a question or a hedge is none. And a later decision supersedes an earlier one only when it
is about the same subject: a scoped one ("use SQLite for the tests rather than Postgres", "drop the
v1 endpoint tests") leaves a decision on another subject ("use Postgres for the job queue", "keep
the v1 endpoint") current; an unscoped one ("use SQLite instead of Postgres") is about Postgres
wherever it is used.

Each table holds the phrasings the fix was written from, then held-out phrasings written before
the fix's output was read (a genuine miss is marked ``xfail`` with its reason, not deleted)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from test_decisions_imperative import decided

from scribed.compress import anchors
from scribed.compress.reversal import reversal_score
from scribed.models import Session, Turn

T0 = datetime(2026, 12, 7, tzinfo=UTC)

# (a user's turn, the decision it states); a change to a bare lowercase word ("switch to pnpm",
# "replace requests with httpx", "swap out jest for vitest") is one in a session that uses the word
# as a name (stop 45: tests/test_decisions_named.py), said alone it is not ("switch to verbose")
IMPERATIVES = [
    ("we're on Python 3.10 in CI and 3.12 locally. pin it to 3.11", "pin it to 3.11"),
    ("replace moment.js with date-fns", "replace moment.js with date-fns"),
]
HELD_OUT_IMPERATIVES = [
    ("ok, switch the lockfile to pnpm.", "switch the lockfile to pnpm"),
    ("the MSRV is 1.78 right now. bump it to 1.82", "bump it to 1.82"),
    ("we'll replace Moment with Luxon", "we'll replace Moment with Luxon"),
    ("switch the formatter to black", "switch the formatter to black"),
    ("go with pnpm", "go with pnpm"),
    pytest.param(
        "move to ruff",
        "move to ruff",
        marks=pytest.mark.xfail(
            reason="'move to X' is mostly a place ('move to the next file', 'move to Friday'); only "
            "'move from X to Z' is read as a change",
            strict=True,
        ),
    ),
    pytest.param(
        "use pnpm",
        "use pnpm",
        marks=pytest.mark.xfail(
            reason="a bare 'use X' is an everyday directive ('use grep to find it'); it is a choice "
            "only with a mark of one ('instead', 'no, use X', 'as the default')",
            strict=True,
        ),
    ),
]

# a user's turn that states no decision: a place in the work, a question, a hedge, an edit
NOT_DECISIONS = [
    "revert to the last commit",
    "switch to the other branch",
    "switch to the terminal tab",
    "should we switch to pnpm?",
    "maybe switch to pnpm later",
]
HELD_OUT_NOT_DECISIONS = [
    "switch back to the editor",
    "replace the for loop with a list comprehension",
    "replace the TODO comments with docstrings",
    "could you switch to pnpm?",
    "if the build breaks, switch to yarn",
    "switch to it",
    "pin it to the top of the README",
    "switch to the next step",
    "switch to dark mode",
    "replace it with something simpler",
    "switch over to the PR description",
    "swap the two columns",
    "replace foo.py with bar.py",
    "pin it to line 42",
]
# found by probing the fix's output (not held out): edits and places it had taken for choices
AFTER_FIX_NOT_DECISIONS = [
    "replace all occurrences of foo with bar",
    "replace the body with pass",
    "swap x for y",
    "switch to docs",
]


@pytest.mark.parametrize(("line", "want"), [*IMPERATIVES, *HELD_OUT_IMPERATIVES])
def test_a_users_plain_imperative_choice_is_a_decision(line: str, want: str) -> None:
    assert decided(line) == [(want, None)]


@pytest.mark.parametrize("line", [*NOT_DECISIONS, *HELD_OUT_NOT_DECISIONS, *AFTER_FIX_NOT_DECISIONS])
def test_a_place_a_question_a_hedge_or_an_edit_is_no_decision(line: str) -> None:
    assert decided(line) == []


def test_pinning_it_states_the_pin_and_the_assistants_imperative_is_none() -> None:
    assert decided("pin it to 3.11", role="assistant") == []
    assert decided("switch to pnpm", role="assistant") == []


def in_session(old: str, new: str) -> str | None:
    """What ``new`` supersedes, stated after ``old`` in one session ("Decision: …")."""
    turns = [
        Turn("assistant", f"Decision: {x}", "message", T0, i + 1, (i + 1) * 10)
        for i, x in enumerate((old, new))
    ]
    s = Session(agent="k", session_id="s", source=Path("/x.md"), kind="markdown", turns=turns)
    got = [(a.text, a.superseded) for a in anchors.extract(s) if a.type == "decision"]
    assert got[-1][0] == new.rstrip("."), got
    return got[-1][1]


# (earlier decision, later decision, whether the later supersedes it)
SCOPED = [
    ("use Postgres for the job queue", "use SQLite for the tests rather than Postgres", False),
    ("keep the v1 endpoint", "drop the v1 endpoint tests", False),
    ("use Postgres for the job queue", "use SQLite instead of Postgres", True),  # Postgres wherever used
]
HELD_OUT_SCOPED = [
    ("use Redis for the session cache", "use Memcached in CI instead of Redis", False),
    ("use Redis for the session cache", "use Memcached for the session cache instead of Redis", True),
    ("pin numpy to 1.26 for the API", "drop the numpy pin in the notebooks", False),
    ("keep the legacy CSV export", "drop the legacy CSV export docs", False),
    ("use Jest for the frontend", "use Vitest for the backend rather than Jest", False),
    ("use Jest for the frontend", "use Vitest for the frontend rather than Jest", True),
    ("use Black for formatting", "use ruff instead of Black", True),
    ("keep the v1 endpoint", "drop the v1 endpoint", True),
    ("use Kafka for the event bus", "drop Kafka from the integration tests", False),
    ("use Kafka for the event bus", "use NATS rather than Kafka in the staging cluster", False),
    ("use Docker Compose for local dev", "drop the Docker Compose healthchecks", False),
    ("use Docker Compose for local dev", "drop Docker Compose", True),
    ("keep the v1 endpoint", "drop the v1 endpoint for mobile clients", False),
    pytest.param(
        "use Postgres for the job queue",
        "use SQLite instead of Postgres for speed",
        True,
        marks=pytest.mark.xfail(
            reason="a reason said as 'for X' ('for speed') reads as a scope; only the usual reasons "
            "and times ('for now', 'for simplicity') are told apart",
            strict=True,
        ),
    ),
]


@pytest.mark.parametrize(("old", "new", "want"), [*SCOPED, *HELD_OUT_SCOPED])
def test_a_later_decision_supersedes_only_one_on_its_subject(old: str, new: str, want: bool) -> None:
    assert (in_session(old, new) == old) == want
    if not want:  # nor in the wiki
        assert reversal_score(new, old) == 0

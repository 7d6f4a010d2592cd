"""Decisions said without the word "decision" (stop 43): "let's" or a committing "we" with a verb
of choosing ("let's pin numpy to 1.26", "we'll stick with Postgres", "let's not pull in x/time") or
of changing what is used ("we're moving from Webpack to Vite"). Directives and idioms ("let's keep
going", "let's move on to the tests", "we'll drop a note in Slack") are none. The second lists were
written after the rule, to test it on phrasings it was not written from."""

from __future__ import annotations

import pytest

from scribed.compress.decisions import Decisions
from scribed.models import Turn


def decided(*lines: str) -> list[tuple[str, str | None]]:
    d = Decisions()
    for i, line in enumerate(lines):
        d.feed(Turn(role="user", text=line, kind="message", line=1 + 2 * i), [line])
    return [(a.text, a.superseded) for a in d.result()]


CHOICES = [
    ("Let's pin numpy to 1.26 until the ABI settles.", "Let's pin numpy to 1.26 until the ABI settles"),
    ("OK, we're moving from Webpack to Vite.", "we're moving from Webpack to Vite"),
    (
        "let's not pull in x/time, a token bucket is 30 lines.",
        "let's not pull in x/time, a token bucket is 30 lines",
    ),
    ("We'll stick with Postgres for the queue.", "We'll stick with Postgres for the queue"),
    ("let's revert to yarn 1.22.19", "let's revert to yarn 1.22.19"),
    ("Let's use Redis for sessions.", "Let's use Redis for sessions"),
    ("we will drop Python 3.8 support", "we will drop Python 3.8 support"),
    ("let's keep the v1 endpoint for now", "let's keep the v1 endpoint for now"),
    ("We are going to standardize on ruff for linting.", "We are going to standardize on ruff for linting"),
    ("let's use httpx instead of requests", "let's use httpx instead of requests"),
    ("we'll switch the CI to GitHub Actions", "we'll switch the CI to GitHub Actions"),
    ("We'll go with Tailwind over styled-components.", "Tailwind over styled-components"),
    ("we've decided to ship weekly", "ship weekly"),
    # written after the rule
    ("ok so we'll keep FastAPI and drop Flask entirely", "we'll keep FastAPI and drop Flask entirely"),
    ("Let's pin `openssl` at 3.0.13 in the Dockerfile.", "Let's pin `openssl` at 3.0.13 in the Dockerfile"),
    ("we're going to move from cron to systemd timers", "we're going to move from cron to systemd timers"),
    ("Per the review, we will avoid SQLite in production.", "we will avoid SQLite in production"),
    (
        "let's switch the default branch from master to main",
        "let's switch the default branch from master to main",
    ),
    ("We will stick with pnpm for the monorepo.", "We will stick with pnpm for the monorepo"),
    ("we'll not pull in Lodash just for debounce", "we'll not pull in Lodash just for debounce"),
    ("Let's use Zod for validation rather than Joi.", "Let's use Zod for validation rather than Joi"),
    ("let's not use an ORM here", "let's not use an ORM here"),
    ("We're migrating off Heroku next sprint.", "We're migrating off Heroku next sprint"),
    ("we'll upgrade to React 19", "we'll upgrade to React 19"),
]

NOT_CHOICES = [
    "Let's keep going.",
    "let's move on to the tests",
    "we'll keep an eye on it",
    "Let's check the logs first.",
    "let's drop it for now",
    "we're using the default settings",
    "let's use this approach",
    "we'll upgrade later if needed",
    "Let's switch gears and look at the UI",
    "let's stick with it",
    "Let's move the helper to utils.py",
    # written after the rule
    "let's keep this PR focused",
    "we'll drop a note in Slack",
    "let's switch to the other terminal tab",
    "We'll keep you posted",
    "Let's drop into the debugger",
    "let's avoid touching main.py for now",
    "We're going to keep an eye on CI",
    "we'll switch over after lunch",
    "Let's drop the topic, we have enough",
    "let's pin down what the user wants first",
    "We're moving the standup to 10am",
]


@pytest.mark.parametrize(("line", "want"), CHOICES)
def test_a_choice_said_in_other_words_is_a_decision(line: str, want: str) -> None:
    assert decided(line) == [(want, None)]


@pytest.mark.parametrize("line", NOT_CHOICES)
def test_a_directive_or_an_idiom_is_no_decision(line: str) -> None:
    assert decided(line) == []


def test_a_choice_changing_from_x_supersedes_the_decision_on_x() -> None:
    got = decided(
        "Decision: use Webpack for bundling the admin UI.", "OK, we're moving from Webpack to Vite."
    )
    assert got == [("we're moving from Webpack to Vite", "use Webpack for bundling the admin UI")]
    got = decided("Decision: pin numpy to 1.26.", "let's pin numpy to 2.1")
    assert got == [("let's pin numpy to 2.1", "pin numpy to 1.26")]


@pytest.mark.parametrize(
    "line",
    [
        "- Still failing: clippy (unnecessary_map_or, needs an MSRV decision: bump to 1.82 or allow the lint)",
        "Pending decision: Redis or Postgres for the queue",
        "Open decision: which queue to use",
        "We need a decision: use Redis?",
        "Awaiting the team's decision: v2 or v3",
    ],
)
def test_a_decision_asked_for_is_none(line: str) -> None:
    """A tester's: an open question ("needs an MSRV decision: bump … or …") was filed, and promoted,
    as a decision."""
    assert decided(line) == []


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("The open questions are settled. Decision: use Redis", "use Redis"),
        ("the team needs it. Decision: ship v2", "ship v2"),
        ("**Decision:** keep the open API", "keep the open API"),
    ],
)
def test_a_decision_after_a_sentence_naming_a_need_stands(line: str, want: str) -> None:
    assert decided(line) == [(want, None)]


def said_by(role: str, line: str) -> list[str]:
    from scribed.compress.decisions import prefilter_for
    from scribed.compress.lines import mentioning

    d = Decisions()
    t = Turn(role=role, text=line, kind="message", line=1)
    d.feed(t, mentioning([line], prefilter_for(t))[0])
    return [a.text for a in d.result()]


@pytest.mark.parametrize(
    ("role", "line"),
    [
        # a place in the work, not a thing used (a review's and a helper's adversarial lines)
        ("assistant", "Let's pull in the latest changes from main first."),
        ("assistant", "Let's roll back to the previous commit to check whether the 500 is new."),
        ("assistant", "OK, let's go back to the test file."),
        ("assistant", "we'll stick to the plan"),
        ("assistant", "Let's stick with the failing test for a moment"),
        ("assistant", "let's go back to line 42"),
        ("assistant", "Let's move from step 1 to step 2"),
        ("assistant", "Let's keep Alice in the loop"),
        ("assistant", "Let's drop Bob a message"),
        ("user", "switch to the feat/login branch"),
        ("user", "pin the issue on GitHub"),
        ("user", "drop the DEBUG print in main.py"),
        ("user", "revert to the last commit"),
        ("user", "use Ctrl-C instead if it hangs"),
        # hedged, reported, conditional or asked
        ("assistant", "I don't think we'll stick with Postgres."),
        ("assistant", "If we're going to stick with Postgres, we need a lock."),
        ("assistant", "Bob suggested we're moving from Webpack to Vite, but nothing is agreed."),
        ("assistant", "The question is whether we'll stick with Postgres or move to MySQL."),
        ("assistant", "So we're sticking with Postgres?"),
        ("assistant", "Maybe let's pin numpy to 1.26?"),
    ],
)
def test_a_place_in_the_work_or_an_unsettled_choice_is_no_decision(role: str, line: str) -> None:
    assert said_by(role, line) == []


@pytest.mark.parametrize(
    "change",
    ["Let's switch from yarn to pnpm.", "let's move from yarn to pnpm", "let's migrate from yarn to pnpm"],
)
def test_a_lets_change_from_x_supersedes_the_decision_on_x(change: str) -> None:
    """A review's: "let" was taken for the thing changed, so "use yarn" stayed current."""
    assert decided("Decision: use yarn for the monorepo.", change) == [
        (change.rstrip("."), "use yarn for the monorepo")
    ]


def test_lets_go_with_keeps_what_it_goes_with() -> None:
    """A review's: "let's go with" ate up to 40 characters and a comma ("'r the session cache")."""
    assert decided("Let's go with Postgres for the job queue and Redis for the session cache.") == [
        ("Postgres for the job queue and Redis for the session cache", None)
    ]
    assert decided("Decision: use Postgres for the queue.", "Let's go with SQLite instead of Postgres.") == [
        ("SQLite instead of Postgres", "use Postgres for the queue")
    ]


def test_a_choice_given_as_a_reason_stands() -> None:
    """The real-data dev set: "We don't need to modify `App.css` since we will use Tailwind CSS for
    the styling." is a choice; a negation is a hedge only of what the speaker thinks."""
    assert said_by(
        "assistant", "We don't need to modify `App.css` since we will use Tailwind CSS for the styling."
    ) == ["we will use Tailwind CSS for the styling"]


@pytest.mark.parametrize(
    "line",
    [  # a second review's user lines: edits of the code or text at hand, git refs, options without
        # content, overrules naming nothing
        "use the fixture from conftest.py instead",
        "drop the TODO comments",
        "drop the console.log calls",
        "drop the debug logging entirely",
        "keep the CHANGELOG entry",
        "switch to Python mode",
        "revert to main",
        "go back to main",
        "revert to HEAD~1",
        "revert to origin/main",
        "stick with me",
        "stick to the point",
        "abandon the rebase",
        "ditch the emojis",
        "scrap the last paragraph",
        "no, use a for loop",
        "no, use single quotes",
        "nope, use the fixture",
        "do a for loop",
        "pick 2",
        "move the function from utils.py to helpers.py",
    ],
)
def test_an_edit_a_ref_or_an_empty_option_is_no_users_decision(line: str) -> None:
    assert said_by("user", line) == []


@pytest.mark.parametrize(
    "line",
    [
        "revert to yarn 1.22.19",
        "migrate from unittest to pytest",
        "use the v2 API instead",
        "drop Node 16 from the CI matrix",
        "no, use serde_json",
        "no, use argparse, not click",
        "do 1 for the launch, read GATEWAY_REPLICAS and divide",
        "go with option B for the cache layer",
    ],
)
def test_a_users_choice_stands(line: str) -> None:
    assert said_by("user", line)


def test_a_time_after_a_choice_keeps_it_and_an_if_does_not() -> None:
    """Read once more: "when" after a choice says when, "if" what to do if (the after-check had
    used the condition words before a choice, "when" among them)."""
    assert said_by("assistant", "We'll switch the CI to GitHub Actions when the migration lands.") == [
        "We'll switch the CI to GitHub Actions when the migration lands"
    ]
    assert said_by("user", "use Ctrl-C instead if it hangs") == []

"""A user's choice said as an imperative is a decision (tester #43, defects 2, 3 and 6): "revert to
yarn 1.22.19 and pin it …", "drop the --json flag entirely, no alias", "no, use serde_json", "let's
unpin stripe and go to 8.2.0, drop the 7.9.0 pin" (which supersedes the pin, in the session and in
the wiki). Only a user's turn holds one, and only a verb of choosing or changing what is used with
a named object, or a choice's mark ("instead", "as the default", "entirely", "no, use X"): an
everyday directive ("run the tests", "fix the typo") is none, nor the assistant's imperative."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from scribed.compress import anchors
from scribed.compress.decisions import Decisions, prefilter_for
from scribed.compress.extractive import ExtractiveCompressor
from scribed.compress.lines import mentioning
from scribed.compress.reversal import reversal_score
from scribed.config import CompressCfg
from scribed.core.budget import entry_budget
from scribed.models import Session, Turn

T0 = datetime(2026, 12, 2, 15, 0, tzinfo=UTC)


def decided(*lines: str, role: str = "user") -> list[tuple[str, str | None]]:
    d = Decisions()
    for i, line in enumerate(lines):
        t = Turn(role=role, text=line, kind="message", line=1 + 2 * i)
        d.feed(t, mentioning([line], prefilter_for(t))[0])
    return [(a.text, a.superseded) for a in d.result()]


IMPERATIVES = [
    (
        "revert to yarn 1.22.19 and pin it with the packageManager field so corepack stops guessing.",
        "revert to yarn 1.22.19 and pin it with the packageManager field so corepack stops guessing",
    ),
    (
        "scrap the advisory lock. do SELECT ... FOR UPDATE SKIP LOCKED on the claim instead, and set "
        "locked_at so we can see stuck jobs.",
        "scrap the advisory lock. do SELECT ... FOR UPDATE SKIP LOCKED on the claim instead, and set "
        "locked_at so we can see stuck jobs",
    ),
    (
        "one more change though: Ana wants --json gone. drop the --json flag entirely, no alias.",
        "drop the --json flag entirely, no alias",
    ),
    (
        "back on feat/export-json. Ana says bump the MSRV to 1.82, we're dropping 1.78 support in 0.10 anyway.",
        "bump the MSRV to 1.82, we're dropping 1.78 support in 0.10 anyway",
    ),
    (
        "also keying on the IP is wrong for us. key it on the API key ID that auth puts in the context.",
        "key it on the API key ID that auth puts in the context",
    ),
    ("no, use serde_json. hand-rolled json always ends up with an escaping bug.", "use serde_json"),
    (
        "and keep the human table as the default output, --json is opt-in.",
        "keep the human table as the default output, --json is opt-in",
    ),
    (
        "yeah do 1 for the launch, read GATEWAY_REPLICAS and divide.",
        "do 1 for the launch, read GATEWAY_REPLICAS and divide",
    ),
]

DIRECTIVES = [
    "run the tests",
    "fix the typo in the README",
    "look at the logs first",
    "can you check whether the node_modules cache actually hits?",
    "commit what we have, the app build and tests work.",
    "update ops/recon/daily.sh too.",
    "deploy the storybook preview so design can look at it",
    "hmm ok, don't go down that hole today, note it.",
    "no, leave storybook for now, I'll look at it tomorrow.",
    "use that.",
    "keep going",
    "switch to the other terminal tab",
    "move the helper to utils.py",
    "remove the debug print in main.py",
]


@pytest.mark.parametrize(("line", "want"), IMPERATIVES)
def test_a_users_choice_said_as_an_imperative_is_a_decision(line: str, want: str) -> None:
    assert decided(line) == [(want, None)]


@pytest.mark.parametrize(("line", "want"), IMPERATIVES)
def test_the_assistants_imperative_is_no_decision(line: str, want: str) -> None:
    assert want not in [text for text, _ in decided(line, role="assistant")]


@pytest.mark.parametrize("line", DIRECTIVES)
def test_a_users_directive_is_no_decision(line: str) -> None:
    assert decided(line) == []


def test_scrapping_a_decision_supersedes_it() -> None:
    got = decided(
        "we'll go with the postgres advisory lock, not redlock. I don't want redis near the charge path.",
        "scrap the advisory lock. do SELECT ... FOR UPDATE SKIP LOCKED on the claim instead.",
    )
    assert got == [
        (
            "scrap the advisory lock. do SELECT ... FOR UPDATE SKIP LOCKED on the claim instead",
            "the postgres advisory lock, not redlock",
        )
    ]


UNPIN = "let's unpin stripe and go to 8.2.0, drop the 7.9.0 pin."


def test_unpinning_is_a_decision_that_supersedes_the_pin() -> None:
    """Tester #43 defect 2: the pin stayed current, in the session, the hot file and the wiki."""
    line = "good. one more thing, I talked to Priya about the stripe pin. " + UNPIN
    assert decided(line) == [("let's unpin stripe and go to 8.2.0, drop the 7.9.0 pin", None)]
    got = decided("let's pin stripe to 7.9.0 for now. 8.x changed how idempotency keys work.", line)
    assert got == [
        ("let's unpin stripe and go to 8.2.0, drop the 7.9.0 pin", "let's pin stripe to 7.9.0 for now")
    ]
    assert (
        reversal_score(
            "let's unpin stripe and go to 8.2.0, drop the 7.9.0 pin", "let's pin stripe to 7.9.0 for now"
        )
        > 1.7
    )


def test_a_plan_is_no_reusable_knowledge_and_the_users_overrule_is_a_decision() -> None:
    """Tester #43 defect 3: the assistant's plan the user then overruled became Reusable knowledge
    (and a wiki pattern), and the user's choice was lost."""
    said = [
        ("user", "we need a --json flag for `ll export` for the reconciliation scripts."),
        (
            "assistant",
            "#302 is fixed. For `--json`, I'm planning to hand-write the JSON lines with `format!` to avoid "
            "adding serde to the binary; the structs are flat so it's a few lines.",
        ),
        (
            "user",
            "no, use serde_json. hand-rolled json always ends up with an escaping bug (account names have "
            "quotes in them). serde is already in the tree via the config loader anyway.\n\n"
            "and keep the human table as the default output, --json is opt-in.",
        ),
        (
            "assistant",
            "Switched to serde_json with `#[derive(Serialize)]` on `ExportRow`; the table stays the default.",
        ),
    ]
    turns = [Turn(r, t, "message", T0 + timedelta(minutes=i), i + 1, 0) for i, (r, t) in enumerate(said)]
    session = Session(agent="worf", session_id="s", source=Path("x.jsonl"), kind="codex", turns=turns)
    found = anchors.extract(session)
    summary = (
        ExtractiveCompressor().compress(session, found, entry_budget(CompressCfg(), 12_000, found)).summary
    )
    assert not any("planning to" in k for k in summary.knowledge), summary.knowledge
    assert summary.decisions == [
        "use serde_json",
        "keep the human table as the default output, --json is opt-in",
    ], summary.decisions

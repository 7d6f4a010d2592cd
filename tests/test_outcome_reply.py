"""The outcome of a session whose work ended, then a follow-up the agent answered without a tool
call: the work's conclusion, then the reply (an exploratory tester's Claude session ended "Ok,
dropping the XLSX export. Nothing else is pending on the export work." and lost "Deployed: stack
kelpie-prod updated in eu-west-1")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scribed.compress import entry_fit, outcome
from scribed.models import Turn

T0 = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
WORK = "Deployed: stack kelpie-prod updated in eu-west-1. Cold start is now 1.4 s."


def _turns(*spec: tuple[str, str, str]) -> list[Turn]:
    return [
        Turn(
            role,
            text,
            kind,
            T0 + timedelta(minutes=i),
            i + 1,
            (i + 1) * 100,
            "Bash" if kind == "tool_call" else None,
        )  # type: ignore[arg-type]
        for i, (role, text, kind) in enumerate(spec)
    ]


def _session(follow_up: str, reply: str, *, reply_works: bool = False) -> list[Turn]:
    spec = [
        ("user", "Piotr granted s3:PutObject, run the deploy again?", "message"),
        ("assistant", "Bash sam deploy --stack-name kelpie-prod", "tool_call"),
        ("tool", "Successfully created/updated stack - kelpie-prod in eu-west-1", "tool_result"),
        ("assistant", WORK, "message"),
        ("user", follow_up, "message"),
    ]
    if reply_works:
        spec += [
            ("assistant", "Bash sam logs -n ExportFn --tail", "tool_call"),
            ("tool", "no errors", "tool_result"),
        ]
    return _turns(*spec, ("assistant", reply, "message"))


@pytest.mark.parametrize(
    ("follow_up", "reply"),
    [
        (
            "Great. And scratch the XLSX export, the CSV is enough.",
            "Ok, dropping the XLSX export. Nothing else is pending.",
        ),
        # held out: phrasings the rule was not written from
        ("thanks! what was the cold start before the change?", "It was 6.2 s with pandas in the bundle."),
        (
            "cool, can you tell Piotr it's out?",
            "I can't message Piotr from here; tell him kelpie-prod is on the new build.",
        ),
        ("nice. no need to update the changelog", "Understood, I'll leave CHANGELOG.md as it is."),
    ],
)
def test_a_reply_without_work_comes_after_the_works_conclusion(follow_up: str, reply: str) -> None:
    got = outcome.conclusion(_session(follow_up, reply))
    assert got.startswith(WORK + " Then: "), got
    # cut to fit, the conclusion goes whole or stays whole, and no "Then:" is left leading
    shorter = got
    while shorter:
        assert not shorter.startswith("Then:"), shorter
        shorter = entry_fit.fewer_sentences(shorter)


@pytest.mark.parametrize(
    ("follow_up", "reply", "works"),
    [
        ("check the logs too", "The logs are clean: no errors since the deploy.", True),  # it did work
        (
            "anything left?",
            "Done: deployed, and the XLSX export is dropped.",
            False,
        ),  # a Done: line concludes
    ],
)
def test_a_reply_that_worked_or_says_done_is_the_outcome(follow_up: str, reply: str, works: bool) -> None:
    assert outcome.conclusion(_session(follow_up, reply, reply_works=works)) == reply


def test_a_session_without_work_keeps_its_last_reply() -> None:
    turns = _turns(
        ("user", "What does the export do with empty rows?", "message"),
        ("assistant", "It skips them: export_csv() filters rows without an accession id.", "message"),
        ("user", "ok and the header?", "message"),
        ("assistant", "The header comes from FIELDS in kelpie/export.py.", "message"),
    )
    assert outcome.conclusion(turns) == "The header comes from FIELDS in kelpie/export.py."


def test_a_long_reply_that_takes_the_work_back_is_not_dropped() -> None:
    """A review's: the reply "No. … the migration step was skipped … the deploy is effectively
    broken" was over the room left beside the conclusion, and the outcome kept the conclusion
    alone ("the rollout is complete"). The reply alone is the outcome then, as before."""
    reply = (
        "No. Looking at the stack events again, the migration step was skipped because the "
        "MIGRATE_ON_DEPLOY flag is false in prod, so the new columns do not exist and the deploy is "
        "effectively broken for every write path until someone runs alembic upgrade head by hand."
    )
    got = outcome.conclusion(_session("did the migration actually run?", reply))
    assert "effectively broken" in got and WORK not in got, got

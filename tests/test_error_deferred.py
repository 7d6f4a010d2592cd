"""A failure the user defers stays open: "Piotr has to grant the role, I'll ask him tomorrow, leave
the deploy for now" leaves the failed deploy unresolved (a Blocker for the next spawn, in the cold
entry and in the live hot file), whatever the agent reports clean afterwards about other work, and
the deferral is no request (the live Current task stays the work asked before it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from scribed.compress import deferral, error_fixes, request
from scribed.models import Session, Turn
from scribed.tiers import live, seed_text

T0 = datetime(2026, 11, 24, 14, 0, tzinfo=UTC)
DEPLOY_ERR = (
    "Error: Failed to upload artifacts: An error occurred (AccessDenied) when calling the PutObject "
    "operation: Access Denied for bucket kelpie-artifacts"
)
# The message the fix was written from (explore44, session B).
SEEN = (
    "Yeah that's the bucket policy, Piotr has to grant our deploy role s3:PutObject on "
    "kelpie-artifacts. I'll ask him tomorrow, leave the deploy for now."
)
# Held out: phrasings the fix was not written from.
HELD_OUT = [
    "Ops has to open the firewall for that. We'll deal with it next week, skip the deploy for the moment.",
    "That needs a new API key from the vendor, I'll request one tomorrow. Park the upload until then.",
    "ok I'm going to talk to the DBA about the permissions, don't touch the deploy yet",
    "Let's leave the artifact upload for later.",
    "hmm, I'll sort the bucket policy out with Marta after lunch",
    "Not your problem, the platform team owns that role. I will ping them on Monday.",
    "That's blocked on the infra team; we'll come back to it later.",
    # a review's: the work waits
    "Not now, the deploy can wait until Piotr is back next week.",
    "The deploy will have to wait until the grant lands.",
]
NOT_DEFERRED = [
    "Piotr granted the permission, run the deploy again",
    "Leave the logging as it is and fix the deploy",
    "I'll be honest, I don't know this error. Can you look into the bucket policy?",
    "Run the migration tomorrow morning",  # work asked at a time, not put off
    "poll every 2s until the job finishes",  # how long, not when
    # a stopgap asked now "for now" (a review's): the failure it works around is fixed by it
    "mock the cache client for now so the tests run",
    "use SQLite for now and rerun the suite",
    "hardcode the region for now and redeploy",
    "just comment out the cache warmup for now",
]


def _turns(*spec: tuple[str, str, str, str | None]) -> list[Turn]:
    return [
        Turn(role, text, kind, T0 + timedelta(minutes=i), i + 1, (i + 1) * 100, tool)  # type: ignore[arg-type]
        for i, (role, text, kind, tool) in enumerate(spec)
    ]


def _deferred_session(user: str) -> list[Turn]:
    return _turns(
        ("user", "Rewrite export_csv() with csv.DictWriter and deploy it.", "message", None),
        ("assistant", 'Edit {"file_path": "kelpie/export.py"}', "tool_call", "Edit"),
        ("tool", "The file kelpie/export.py has been updated.", "tool_result", "Edit"),
        ("assistant", "Bash pytest -q tests/", "tool_call", "Bash"),
        ("tool", "312 passed in 3.02s", "tool_result", "Bash"),
        ("assistant", "Bash sam deploy --stack-name kelpie-prod", "tool_call", "Bash"),
        ("tool", f"error: {DEPLOY_ERR}", "tool_result", "Bash"),
        ("user", user, "message", None),
        (
            "assistant",
            "Understood, the deploy waits for the s3:PutObject grant on kelpie-artifacts. The export now "
            "uses csv.DictWriter with viability formatted as f'{v:.2f}'; all 312 tests pass.",
            "message",
            None,
        ),
        ("user", "ok thanks", "message", None),
    )


def _open_in_cold(turns: list[Turn]) -> list[str]:
    pairs = error_fixes.pair(turns)
    assert len(pairs) == 1, pairs
    return seed_text.unresolved(pairs, [])


def test_a_deferred_failure_stays_unresolved_and_is_a_blocker() -> None:
    # unfixed code: "→ Understood, the deploy waits for …" (the report that tests pass settled it)
    pairs = error_fixes.pair(_deferred_session(SEEN))
    assert "→ unresolved" in pairs[0], pairs
    assert "leave the deploy for now" in pairs[0]  # why it is open: the user's words
    assert _open_in_cold(_deferred_session(SEEN)), pairs


@pytest.mark.parametrize("user", HELD_OUT)
def test_held_out_deferrals_leave_the_failure_open(user: str) -> None:
    assert _open_in_cold(_deferred_session(user)), error_fixes.pair(_deferred_session(user))


@pytest.mark.parametrize("user", [SEEN, *HELD_OUT])
def test_a_deferral_is_no_request(user: str) -> None:
    assert deferral.defers(user)
    assert request.request(user) == ""


@pytest.mark.parametrize("user", NOT_DEFERRED)
def test_a_message_asking_for_work_now_defers_nothing(user: str) -> None:
    assert not deferral.defers(user)
    assert request.request(user)


@pytest.mark.parametrize(
    ("user", "asked"),
    [
        ("Ignore the deploy for now and finish the export docs", "Finish the export docs"),
        (
            "I'll ask Piotr for the grant tomorrow, leave the deploy for now. Meanwhile add a --dry-run flag.",
            "Meanwhile add a --dry-run flag.",
        ),
    ],
)
def test_a_failure_put_off_while_other_work_is_asked_stays_open(user: str, asked: str) -> None:
    assert deferral.defers(user)
    assert request.request(user) == asked
    assert _open_in_cold(_deferred_session(user))


# Genuine misses: an order to stop with no word of time, or a wait on an event, is not read as
# putting the failure off (the deploy's later report "all 312 tests pass" settles it).
MISSED = [
    "Forget the deploy, it needs Piotr's grant first.",
    "Hold off on the deploy until Piotr grants it",
    "Let's not bother with the deploy today, Piotr will sort the grant.",
]


@pytest.mark.parametrize("user", MISSED)
@pytest.mark.xfail(
    reason="no word of time: 'forget X', 'hold off until <event>' are not read as putting off", strict=True
)
def test_deferrals_without_a_word_of_time(user: str) -> None:
    assert deferral.defers(user)


def test_a_deferral_followed_by_a_request_asks_the_request() -> None:
    text = "I'll ask Piotr for the grant tomorrow, leave the deploy for now. Meanwhile add a --dry-run flag."
    assert request.request(text) == "Meanwhile add a --dry-run flag."
    assert request.request("Add retries to the client. I'll deploy it myself tomorrow.").startswith(
        "Add retries"
    )


def test_a_deferred_failure_fixed_later_in_the_session_is_fixed() -> None:
    turns = _deferred_session(SEEN)[:-1] + _turns(
        ("user", "Piotr granted it, run the deploy again please", "message", None),
        ("assistant", "Bash sam deploy --stack-name kelpie-prod", "tool_call", "Bash"),
        ("tool", "Successfully created/updated stack - kelpie-prod in eu-west-1", "tool_result", "Bash"),
    )
    for k, t in enumerate(turns):
        t.line = k + 1
    assert not _open_in_cold(turns), error_fixes.pair(turns)


def _live(turns: list[Turn]) -> Session:
    return Session(agent="juno", session_id="b", source=Path("/x.jsonl"), kind="claude", turns=turns)


@pytest.mark.parametrize("user", [SEEN, *HELD_OUT[:3]])
def test_the_live_hot_file_keeps_a_deferred_failure_as_a_blocker_and_the_task(user: str) -> None:
    # unfixed code: Blockers: (none), and Current task the deferral itself
    s = _live(_deferred_session(user)[:-1])
    blockers = live._blockers(s)
    assert any("AccessDenied" in b for b in blockers), blockers
    assert live._current_task(s).startswith("Rewrite export_csv()"), live._current_task(s)

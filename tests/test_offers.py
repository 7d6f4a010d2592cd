"""What a reader of the memory met (stop 42): an FYI as the live task, the reply to it as the
outcome, a preamble and a report as the goal, a side remark as the outcome, the request cut from the
goal. Each rule is tested on its reproducer (the exploratory tester's transcripts, /tmp/explore_d)
and on phrasings written after the rule, not used while writing it (the "fresh" tables); the ones
the rule gets wrong are kept as strict xfails, not taught to it one phrase at a time.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from scribed.compress import entry, entry_fit, extractive, outcome, sections
from scribed.compress import request as req
from scribed.compress.request import request
from scribed.models import Session, Turn
from scribed.session.door import redact_session
from scribed.tiers import live

T0 = datetime(2026, 12, 7, 3, 0, tzinfo=UTC)


def _turns(*spec: tuple[str, str] | tuple[str, str, str]) -> list[Turn]:
    """Turns from (role, text) or (role, kind, text)."""
    out = []
    for i, s in enumerate(spec):
        role, kind, text = (s[0], "message", s[1]) if len(s) == 2 else s
        out.append(Turn(role, text, kind, T0 + timedelta(minutes=i), i + 1, 10 * (i + 1)))  # type: ignore[arg-type]
    return out


def _task(turns: list[Turn]) -> str:
    s = Session(agent="riker", session_id="s-1", source=Path("/x/s.jsonl"), kind="claude", turns=turns)
    return live.render_live(redact_session(s), "claude").split("Current task: ")[1].split("\n")[0]


# --- 1. an FYI is no task (R3) ----------------------------------------------------------------------
RENAME = (
    "Rename the CLI flag --legacy-queue to --redis-queue in services/billing/cli.py and keep the old name "
    "as a hidden alias until v3.0.0. The release manager is Tomás Ortega."
)
HOOK = "here's the deploy hook if you need it: https://hooks.acme.io/deploy?token=7d9f3e2a1b0c4d5e6f7a8b9c0d1e2f3a"
R3 = (
    ("user", RENAME),
    ("assistant", "tool_call", 'TodoWrite {"todos": []}'),
    ("assistant", "I'll use argparse's `dest` to keep both flags pointing at one option."),
    ("user", "sounds good, go ahead"),
    ("assistant", "tool_call", "Edit /repo/services/billing/cli.py"),
    ("tool", "tool_result", "The file /repo/services/billing/cli.py has been updated."),
    ("user", "lgtm"),
    ("user", HOOK),
    ("assistant", "Thanks; not needed for this change."),
    ("user", "ok thanks!"),
)


def test_r3_a_link_offered_if_needed_leaves_the_live_task() -> None:
    assert request(HOOK) == "" and req.offered(HOOK)
    for n in range(1, len(R3) + 1):
        assert _task(_turns(*R3[:n])) == RENAME, n


def test_r3_the_reply_to_an_offer_is_no_outcome() -> None:
    turns = _turns(*R3)
    assert outcome.conclusion(turns) == ""  # no message concludes the work: nothing, not the reply
    # with a conclusion before the FYI, that one stays the outcome
    done = "Done: --redis-queue replaces --legacy-queue, which stays as a hidden alias."
    turns = _turns(*R3[:7], ("assistant", done), *R3[7:])
    assert outcome.conclusion(turns) == done
    # a reply with a "Done:" line still concludes
    said = "Thanks.\nDone: the rename is in and `--help` shows only --redis-queue."
    turns = _turns(*R3[:8], ("assistant", said))
    assert outcome.conclusion(turns) == "Done: the rename is in and `--help` shows only --redis-queue."


# Written after the rule (request.py, "what a clause does"), none of them used while writing it.
FRESH_OFFERS = [
    "Sharing the runbook in case it's handy: https://wiki.acme.io/runbooks/billing",
    "for context, the old importer ran nightly at 02:00 UTC",
    "Here are the prod logs from last night, should you need them:\n"
    "2026-03-04 02:00:01 ERROR worker crashed\n2026-03-04 02:00:02 ERROR worker crashed",
    "fyi the release branch is cut on Thursdays",
    "Dropping the Sentry link here too if useful: https://sentry.io/acme/issues/4411",
    "oh and the API docs are at docs.acme.io/api if that helps",
    "just so you know, Dmitri owns the haproxy config",
    "heads up: CI will be down between 3 and 4 pm for the runner upgrade",
]
# What the user will do himself asks nothing of the agent either.
FRESH_OWN = [
    "I'll check with the DBA about the grant and get back to you",
    "I'll review the PR tonight",
    "I'm going to grab lunch, back in 30",
]
# First run: 8 of 11 right. Missed: two FYIs marked by an idiom ("just so you know", "heads up"),
# and "back in 30" (a figure reads as a thing named). The first run also found "should you need
# them" read as an obligation ("should") and "FYI …; can you look into why?" losing its question:
# both fixed in the rule (an inverted "should" is a condition; a request runs to its last question).
# "back in 30" reads right since stop 44: a message holding the user's own plan and nothing asked of
# the agent now gives no request (deferral.defers' reading).
FRESH_MISSED = {FRESH_OFFERS[6], FRESH_OFFERS[7]}


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(x, marks=pytest.mark.xfail(strict=True, reason="an idiom")) if x in FRESH_MISSED else x
        for x in FRESH_OFFERS + FRESH_OWN
    ],
)
def test_an_offer_an_fyi_or_the_users_own_plan_asks_nothing(text: str) -> None:
    assert request(text) == "", text
    assert _task(_turns(("user", "Port the CSV exporter to streaming writes (#812)"), ("user", text))) == (
        "Port the CSV exporter to streaming writes (#812)"
    )


# Requests that hand something over, are polite, or ask a question: still requests (the first is
# the brief's own example; the others are fresh). Guards: most were requests before the rule too.
FRESH_REQUESTS = [
    ("here's the traceback, can you fix it?", "here's the traceback, can you fix it?"),
    ("Would you mind bumping the timeout to 30s?", "Would you mind bumping the timeout to 30s?"),
    (
        "If you get a minute, please add a retry around the upload call",
        "please add a retry around the upload",
    ),
    ("Here is the failing test output — what's causing the off-by-one?", "what's causing the off-by-one?"),
    ("FYI the nightly job failed again; can you look into why?", "can you look into why?"),
    (
        "In case you need it, the token is in vault. Also, rotate it after the deploy.",
        "rotate it after the deploy",
    ),
    ("Here's the schema; migrate the orders table to it", "migrate the orders table to it"),
    ("I'd appreciate it if you could rename the flag", "rename the flag"),
]


@pytest.mark.parametrize(("text", "asked"), FRESH_REQUESTS)
def test_a_request_that_hands_something_over_is_still_one(text: str, asked: str) -> None:
    got = request(text)
    assert asked.lower() in got.lower(), (text, got)
    assert not req.offered(text)


# --- 3. a preamble is no goal (W2); a handed-over credential is no second goal ---------------------------
W2_ASK = (
    "Finish WEB-884. Marcus approved the web.yml change. But Vitest is out, Jest is back in: SonarQube "
    "can't read Vitest's coverage (lcov paths are relative to apps/web and Sonar wants repo-relative). "
    "Keep Jest 29.7.0 with babel-jest for now, and get the Table date-sort test green."
)
TOKEN = (
    "the CI token got rotated btw, new one: NPM_TOKEN=npm_Z1y2X3w4V5u6T7s8R9q0P1o2N3m4L5k6J7i8 — set it in "
    "the repo secrets, not in the file"
)


def test_w2_a_preamble_is_no_goal_and_the_goal_keeps_what_is_asked() -> None:
    assert request("morning. quick one before standup") == ""
    turns = _turns(
        ("user", "morning. quick one before standup"),
        ("assistant", "Morning! What do you need?"),
        ("user", W2_ASK),
        ("user", TOKEN),
        ("user", "fine, done"),
        ("user", "ok I'll push it after standup. thx"),
    )
    goal = sections.goal(turns)
    assert goal == (
        "Finish WEB-884. Marcus approved the web.yml change. Keep Jest 29.7.0 with babel-jest for now, and "
        "get the Table date-sort test green."
    )
    assert _task(turns).startswith("the CI token got rotated"), "it asks: set it in the repo secrets"


# --- 4. a report of what someone did is no goal (R2) -------------------------------------------------
R2_ASK = (
    "great. Priya looked at the migration this morning. Two things from her: (1) the table goes in the "
    "billing schema as billing.jobs, not public.billing_jobs; (2) LISTEN/NOTIFY is out, polling is in — "
    "prod goes through pgbouncer 1.21 in transaction mode, which breaks LISTEN. Poll every 2s."
)


def test_r2_a_report_gives_way_to_what_is_asked() -> None:
    turns = _turns(
        ("user", "continue where we left off"),
        ("user", R2_ASK),
        ("user", "ugh. I'll ask Priya for the grant. carry on with the polling change meanwhile"),
        ("user", "ok cool"),
        ("user", "actually one more: how many workers are in prod again?"),
        ("user", "skip the load test, Dmitri will do it during the cutover. wrap up"),
    )
    goal = sections.goal(turns)
    assert "Priya looked at" not in goal
    assert goal.startswith("Two things from her: (1) the table goes in the billing schema as billing.jobs")
    assert "Poll every 2s. · then: skip the load test" in goal
    assert _task(turns[:3]) == "Carry on with the polling change meanwhile"


FRESH_RANKS = [
    ("Lena reviewed the schema yesterday.", "REPORT"),
    ("The on-call team restarted the consumer twice overnight.", "REPORT"),
    ("The export is slow on tenants with more than 10k invoices.", "STATE"),
    ("Our SLA says 2 hours.", "STATE"),
    ("Please profile export_job.py and cut its runtime under 30 minutes.", "ASK"),
    ("Split the users table into users and profiles.", "ASK"),
    ("Could the cache key include the locale?", "ASK"),
    ("We need to keep the v1 endpoint until June.", "ASK"),
]


@pytest.mark.parametrize(("sentence", "rank"), FRESH_RANKS)
def test_a_sentence_asks_states_or_reports(sentence: str, rank: str) -> None:
    assert req.sentence_rank(sentence) == getattr(req, rank)


def test_a_long_request_keeps_what_it_asks_over_its_context() -> None:
    text = (
        "Lena reviewed the export schema yesterday and left a long list of comments on the pull request. "
        "The nightly export has been timing out since the move to the new cluster, with three pages this "
        "week. Please profile export_job.py and cut its runtime under 30 minutes."
    )
    goal = sections.goal(_turns(("user", text)))
    assert goal.endswith("Please profile export_job.py and cut its runtime under 30 minutes."), goal
    assert "Lena reviewed" not in goal


# --- 5. the outcome is no side remark (D2); the cut goal keeps the request (D1) ------------------------
D2_REPLY = (
    "Thanks! Everything on the list is done except the Grafana panel, which needs edit rights from Lena "
    "Fischer. Raw `r.URL.Path` as a label can explode cardinality with IDs in paths (/v1/orders/123); "
    "consider the route template instead."
)


@pytest.mark.parametrize(
    ("reply", "concluded"),
    [
        (
            D2_REPLY,
            "Everything on the list is done except the Grafana panel, which needs edit rights from Lena Fischer.",
        ),
        # fresh: written after the rule
        (
            "All 12 migrations applied cleanly on staging. You may want to vacuum the invoices table afterwards.",
            "All 12 migrations applied cleanly on staging.",
        ),
        (
            "The exporter now streams rows and peak memory dropped from 2.1 GB to 180 MB. Try it on the March backfill first.",
            "The exporter now streams rows and peak memory dropped from 2.1 GB to 180 MB.",
        ),
        (
            "Fixed: the retry loop now backs off exponentially. Make sure the alert threshold matches the new timings.",
            "Fixed: the retry loop now backs off exponentially.",
        ),
        # a message that only advises is left as it is; so is a plan's list of steps
        ("Run `make docs` to regenerate the CLI page.", "Run `make docs` to regenerate the CLI page."),
        (
            "Plan for tomorrow:\n1. Split the users table.\n2. Backfill the profiles table.",
            "Plan for tomorrow: 1. Split the users table. 2. Backfill the profiles table.",
        ),
    ],
)
def test_the_outcome_is_no_advice_said_after_it(reply: str, concluded: str) -> None:
    turns = _turns(("user", "Add the counter and the eviction"), ("assistant", reply))
    assert outcome.conclusion(turns) == concluded


D1_GOAL = (
    "The gateway's limiter in api/ratelimit.go is a fixed 1-minute window and lets through bursts of 2x at "
    "window edges (incident INC-4471 on 2026-03-04). Replace it with a token bucket: 100 requests/minute per "
    "API key, burst 20."
)


def test_d1_a_goal_cut_to_fit_keeps_its_request() -> None:
    ask = "Replace it with a token bucket: 100 requests/minute per API key, burst 20."
    assert extractive._informative(D1_GOAL, entry.TITLE_CHARS) == ask
    assert entry_fit._without_last_sentence(D1_GOAL) == ask
    # without a sentence that asks, the first stays (as before)
    told = "The limiter is a fixed window. It lets bursts through at window edges."
    assert entry_fit._without_last_sentence(told) == "The limiter is a fixed window."


def test_kinds_name_what_each_clause_does() -> None:
    assert req.kinds(HOOK) == ["offers", "tells"]
    assert req.kinds("ok I'll push it after standup. thx") == ["own", "tells"]
    assert req.kinds("Rename the flag, please") == ["asks", "asks"]

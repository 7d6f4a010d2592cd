"""Tester #44, defects 1-3: a decision reversed in other words stayed current.

1. In one session, the user's "no Redis please … keep the window in memory in the process" after
   the agent's "Decision: the window lives in Redis" names Redis and the window that decision placed
   in Redis: it is the decision now, and supersedes the Redis one (cold, hot, wiki).
2. Across sessions, "On second thought, keep fpdf2 for the labels: legal says reportlab's … is a
   problem for the herbarium's print shop" after "Switch kelpie/labels.py from fpdf2 to reportlab"
   chooses again what the earlier change left, on its subject: the wiki files the switch under
   Superseded. (A reason's "for the herbarium's print shop" is no scope of the decision.)
3. "Scratch the UUIDs: we keep bigserial ids for seed_lots." is a decision, also as a session's
   first line (its entry's title), so promotion keeps it.

Each table holds the phrasings the fix was written from, then held-out phrasings written before
the fix's output was read (a genuine miss is marked ``xfail`` with its reason, not deleted), and
the cases that must not supersede (another subject, a scope, no negation)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from test_decisions_imperative import decided
from test_wiki import doc, fact

from scribed.compress import anchors
from scribed.compress.reversal import reversal_score
from scribed.models import Session, Turn

T0 = datetime(2026, 12, 7, tzinfo=UTC)


def session(*turns: tuple[str, str]) -> list[tuple[str, str | None]]:
    ts = [Turn(role, x, "message", T0, i + 1, (i + 1) * 10) for i, (role, x) in enumerate(turns)]
    s = Session(agent="k", session_id="s", source=Path("/x.md"), kind="markdown", turns=ts)
    return [(a.text, a.superseded) for a in anchors.extract(s) if a.type == "decision"]


# (the agent's decision, the user's later turn, whether the turn reverses it)
SAME_SESSION = [
    (
        "the window lives in Redis (key `vault:{id}:readings`) so all three alert workers see the same history.",
        "Hmm, no Redis please, the vault box runs offline when the uplink drops. Keep the window in memory "
        "in the process, we only run one alert worker there.",
        True,
    ),
]
HELD_OUT_SAME_SESSION = [
    (
        "store the rate-limit counters in Memcached.",
        "no Memcached, it's one more service to run. keep the counters in Postgres.",
        True,
    ),
    (
        "the upload queue lives in SQS so the workers can scale out.",
        "not SQS please, we are on-prem. keep the upload queue on disk in the spool directory.",
        True,
    ),
    (
        "keep the session tokens in Redis with a 1h TTL.",
        "hmm, without Redis please. keep the session tokens in signed cookies.",
        True,
    ),
    pytest.param(
        "cache the thumbnails in Redis.",
        "No Redis. Cache the thumbnails on the local filesystem instead.",
        True,
        marks=pytest.mark.xfail(
            reason="'cache X' is no verb of choosing the imperative reads ('instead' marks a choice "
            "only after use/do and the verbs of choosing)",
            strict=True,
        ),
    ),
    # another subject, a scope, or no negation of what the decision chose: it stays
    ("the window lives in Redis.", "no Redis for the test suite, keep the fixtures in memory.", False),
    ("the window lives in Redis.", "no rush. keep the window at 15 minutes.", False),
    ("the window lives in Redis.", "keep the window in memory for the unit tests, no Redis there.", False),
    (
        "store the rate-limit counters in Memcached.",
        "no Memcached in CI. keep the counters in a dict there.",
        False,
    ),
]


@pytest.mark.parametrize(("old", "new", "want"), [*SAME_SESSION, *HELD_OUT_SAME_SESSION])
def test_a_users_no_x_keep_the_subject_elsewhere_supersedes_the_decision(
    old: str, new: str, want: bool
) -> None:
    got = session(("assistant", f"Decision: {old}"), ("user", new))
    old = old.rstrip(".")
    if want:
        assert got[-1][1] == old, got
        assert old not in [t for t, _ in got], got  # not shown as current
    else:
        assert (old, None) in got, got
        assert all(s is None for _, s in got), got


# (an earlier decision, a later one, whether the later reverses it in the wiki)
CROSS_SESSION = [
    (
        "Switch kelpie/labels.py from fpdf2 to reportlab and render the barcode as a vector, not a PNG",
        "keep fpdf2 for the labels: legal says reportlab's commercial add-ons licence is a problem for "
        "the herbarium's print shop",
        True,
    ),
]
HELD_OUT_CROSS_SESSION = [
    ("Move the task queue from Celery to RQ", "keep Celery for the task queue: the ops team knows it", True),
    ("switch the docs site from MkDocs to Sphinx", "go back to MkDocs for the docs site", True),
    (
        "migrate the frontend tests from Jest to Vitest",
        "revert to Jest for the frontend tests, Vitest breaks our snapshot serializer",
        True,
    ),
    (
        "upgrade the base image from Debian 11 to Debian 12",
        "stay on Debian 11 for the base image until the glibc bug is fixed",
        True,
    ),
    # another subject (a scope), or what the change left only named as a part of another thing
    ("Move the task queue from Celery to RQ", "keep Celery for the cron jobs", False),
    (
        "switch the docs site from MkDocs to Sphinx",
        "keep the MkDocs theme colours in the new Sphinx theme",
        False,
    ),
    (
        "migrate the frontend tests from Jest to Vitest",
        "keep the Jest config file around until Friday",
        False,
    ),
]


@pytest.mark.parametrize(("old", "new", "want"), [*CROSS_SESSION, *HELD_OUT_CROSS_SESSION])
def test_choosing_again_what_an_earlier_change_left_reverses_it(old: str, new: str, want: bool) -> None:
    assert (reversal_score(new, old) > 0) == want
    d = doc(fact(old, date="2026-11-22", ref="e-1"))
    r = d.add(fact(new, date="2026-11-26", ref="e-2"))
    assert bool(r.superseded) == want, r
    if want:  # promoted out of order too
        d = doc(fact(new, date="2026-11-26", ref="e-2"))
        assert d.add(fact(old, date="2026-11-22", ref="e-1")).superseded_by


# Stop 47: the wiki's test for a choice again listed its words anew, "back to" as one literal, so a
# "go back to X" wrapped or spaced twice chose again by reversal_wording's rule (``back\s+to``) and
# reversed nothing in the wiki. Written before the fix; the last two passed before it too.
SPACED_RETURNS = [
    ("switch the docs site from MkDocs to Sphinx", "go back\nto MkDocs for the docs site"),
    ("Move the task queue from Celery to RQ", "we went back  to Celery for the task queue"),
    ("upgrade the base image from Debian 11 to Debian 12", "let's go back\tto Debian 11 for the base image"),
    ("migrate the frontend tests from Jest to Vitest", "stick\n  with Jest for the frontend tests"),
    ("Move the task queue from Celery to RQ", "keep  Celery for the task queue"),
]


@pytest.mark.parametrize(("old", "new"), SPACED_RETURNS)
def test_a_choice_again_spaced_or_wrapped_reverses_in_the_wiki_as_in_the_rule(old: str, new: str) -> None:
    assert reversal_score(new, old) > 0
    d = doc(fact(old, date="2026-11-22", ref="e-1"))
    assert d.add(fact(new, date="2026-11-26", ref="e-2")).superseded


def test_the_aider_reversal_supersedes_in_its_session_too() -> None:
    old, new = CROSS_SESSION[0][:2]
    got = session(
        ("user", f"The seed packet labels print blurry on the Zebra printer. {old}."),
        ("user", f"On second thought, {new}. Revert to fpdf2 but keep the 100x50 mm page."),
    )
    assert got == [(new, old)], got


# (a user's line, the decision it states)
SCRATCH = [
    (
        "Scratch the UUIDs: we keep bigserial ids for seed_lots. Our pglogical version can't replicate "
        "tables whose primary key is a uuid to the reporting replica.",
        "Scratch the UUIDs: we keep bigserial ids for seed_lots",
    ),
]
HELD_OUT_SCRATCH = [
    (
        "scratch the Kafka consumer: we poll the jobs table every 5 s.",
        "scratch the Kafka consumer: we poll the jobs table every 5 s",
    ),
    (
        "Scratch the GraphQL layer, we expose plain REST endpoints.",
        "Scratch the GraphQL layer, we expose plain REST endpoints",
    ),
    ("ok scratch the Helm chart. plain manifests are enough", "scratch the Helm chart"),
]
NOT_SCRATCH = ["scratch my last message", "scratch the last paragraph of the README", "scratch it"]
# Stop 45, defect 2: scratching what the speaker said (a comment, a question, "what I said") takes
# back words, it chooses nothing; the topic after "about" is not what is scratched
NOT_SCRATCH_SAID = ["scratch my earlier comment about CI"]
HELD_OUT_NOT_SCRATCH_SAID = [
    "scratch what I said about the cache",
    "scratch my last question about Redis",
    "ok scratch my suggestion regarding the retries",
    "Scratch my earlier reply about the flaky tests.",
    "scratch the comment about the CI matrix",
]
HELD_OUT_SCRATCH_STILL = [
    ("scratch my Redis idea: sessions stay in Postgres.", "scratch my Redis idea: sessions stay in Postgres"),
    (
        "Scratch the S3 bucket for uploads, we store them on the NFS share.",
        "Scratch the S3 bucket for uploads, we store them on the NFS share",
    ),
    (
        "Scratch our Kafka consumer, we poll the jobs table.",
        "Scratch our Kafka consumer, we poll the jobs table",
    ),
]


@pytest.mark.parametrize(("line", "want"), [*SCRATCH, *HELD_OUT_SCRATCH])
def test_scratching_a_named_thing_is_a_decision(line: str, want: str) -> None:
    assert decided(line) == [(want, None)]
    assert session(("user", line)) == [(want, None)]  # a session's first line (its title) too


@pytest.mark.parametrize("line", [*NOT_SCRATCH, *NOT_SCRATCH_SAID, *HELD_OUT_NOT_SCRATCH_SAID])
def test_scratching_a_place_in_the_work_or_a_pronoun_is_none(line: str) -> None:
    assert decided(line) == []


@pytest.mark.parametrize(("line", "want"), HELD_OUT_SCRATCH_STILL)
def test_scratching_a_named_thing_the_speaker_had_is_a_decision(line: str, want: str) -> None:
    assert decided(line) == [(want, None)]


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [  # a review's: a choice again said bare names the change's subject by its X alone
        ("We'll switch the test runner from Jest to Vitest.", "On second thought, keep Jest.", True),
        ("We'll switch the test runner from Jest to Vitest.", "stick with Jest", True),
        ("We'll move the task queue from Celery to RQ.", "hmm, RQ lacks retries. keep Celery.", True),
        (
            "We'll switch the test runner from Jest to Vitest.",
            "keep the Jest config file",
            False,
        ),  # a file of it
        (
            "We'll switch the test runner from Jest to Vitest.",
            "keep Jest for the e2e suite",
            False,
        ),  # a scope
        # stop 45, defect 3: "revert to X" goes back to X, it does not revert X (the reason's
        # "tests" had read as a thing reverted, out of the change's scope)
        (
            "We'll switch the test runner from Jest to Vitest.",
            "revert to Jest: Vitest broke the snapshot tests",
            True,
        ),
    ],
)
def test_a_bare_choice_again_reverses_the_change(old: str, new: str, want: bool) -> None:
    assert (reversal_score(new, old) > 0) is want


# Stop 45, defect 3: going back to what a change left, with a reason after it (held out: written
# before the fix's output was read), and what must not supersede (another subject, a scope, a place)
BACK_WITH_A_REASON = [
    (
        "We'll switch the test runner from Jest to Vitest.",
        "revert to Jest: Vitest broke the snapshot tests",
        True,
    ),
    ("Let's move the task queue from Celery to RQ.", "revert to Celery: RQ dropped our retry settings", True),
    pytest.param(
        "We're moving the bundler from webpack to Vite.",
        "reverting to webpack, Vite breaks the legacy plugin tests",
        True,
        marks=pytest.mark.xfail(
            reason="the wiki's reversal holds, but in the session a user's 'reverting to X' (a gerund, "
            "no imperative nor a committing 'we') states no decision",
            strict=True,
        ),
    ),
    (
        "We'll switch the docs site from MkDocs to Sphinx.",
        "go back to MkDocs: Sphinx mangles the tables",
        True,
    ),
    # stop 45 review, defect 5: "revert back to X" goes back to X as "revert to X" does
    (
        "We'll switch the test runner from Jest to Vitest.",
        "revert back to Jest: Vitest broke the snapshot tests",
        True,
    ),
    (
        "We'll switch the test runner from Jest to Vitest.",
        "revert back to Jest, Vitest broke the snapshot tests",
        True,
    ),
    # fresh, written after the fix
    (
        "We'll switch the docs site from MkDocs to Sphinx.",
        "revert back to MkDocs: Sphinx mangles the tables",
        True,
    ),
    ("Let's move the task queue from Celery to RQ.", "revert back to Celery; RQ dropped our retries", True),
    (
        "We'll switch the test runner from Jest to Vitest.",
        "revert back to the last commit, the tests broke",
        False,
    ),
    (
        "We'll switch the test runner from Jest to Vitest.",
        "revert back to yarn: pnpm broke the lockfile",
        False,
    ),
    pytest.param(
        "We'll switch the test runner from Jest to Vitest.",
        "let's revert back to Jest, Vitest broke the snapshot tests",
        True,
        marks=pytest.mark.xfail(
            reason="the session supersedes, but the wiki's reversal_score reads no 'let's'-led return "
            '(as for "let\'s revert to Jest, …", before this fix too)',
            strict=True,
        ),
    ),
    ("We'll switch the test runner from Jest to Vitest.", "revert to Jest for the e2e suite", False),
    ("We'll switch the test runner from Jest to Vitest.", "revert to yarn: pnpm broke the lockfile", False),
    (
        "We'll switch the test runner from Jest to Vitest.",
        "revert to the last commit, the tests broke",
        False,
    ),
]


@pytest.mark.parametrize(("old", "new", "want"), BACK_WITH_A_REASON)
def test_going_back_with_a_reason_supersedes_the_change(old: str, new: str, want: bool) -> None:
    assert (reversal_score(new, old) > 0) is want
    got = session(("user", old), ("user", new))
    old = old.rstrip(".")
    if want:
        assert got[-1][1] == old, got
        assert old not in [t for t, _ in got], got  # not shown as current
    else:
        assert (old, None) in got, got

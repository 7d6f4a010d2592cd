"""A decision changed "from X to Z", restated with another figure, or negated supersedes the earlier
one, in a session and in the wiki; a decision's clauses after ";" are kept.

Each table holds the review's examples and fresh phrasings written after the rule (not the rule's
own examples), with the cases that must not supersede: a decision asked about, wished or proposed
by someone else, rejected, hedged, of another subject, a part or an exception."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from test_wiki import doc, fact

from scribed.compress import anchors
from scribed.compress.restate import statement
from scribed.compress.reversal import reversal_score
from scribed.compress.reversal_wording import CHANGE
from scribed.compress.terms import near_dup
from scribed.models import Session, Turn
from scribed.tiers.wiki import Wiki

T0 = datetime(2026, 12, 7, tzinfo=UTC)


def decisions(*texts: str) -> list[tuple[str, str | None]]:
    turns = [Turn("assistant", x, "message", T0, i + 1, (i + 1) * 10) for i, x in enumerate(texts)]
    s = Session(agent="k", session_id="s", source=Path("/x.md"), kind="markdown", turns=turns)
    return [(a.text, a.superseded) for a in anchors.extract(s) if a.type == "decision"]


def supersedes(old: str, new: str) -> tuple[bool, bool]:
    """Whether ``new`` supersedes ``old``: stated in one session ("Decision: …"), and as wiki facts."""
    got = decisions(f"Decision: {old}", f"Decision: {new}")
    in_session = got[-1][1] == old.rstrip(".") and len(got) == 1
    assert in_session or got[-1][1] is None, got  # nothing else superseded
    return in_session, reversal_score(new, old) > 0


# (earlier decision, later decision, whether the later supersedes it)
CHANGES = [
    # the review's
    ("Use Memcached for the cache.", "Switch the cache from Memcached to Redis.", True),
    ("Use Memcached for the cache.", "Switch the cache from Memcached over to Redis.", True),
    # fresh phrasings: other verbs and nouns of change, code spans, a change of X everywhere
    ("Move the job queue to RabbitMQ.", "Migrate the job queue from RabbitMQ over to SQS.", True),
    ("Run the unit tests with Jest.", "We are switching the unit tests from Jest to Vitest.", True),
    ("Serve static files from nginx.", "Change static file serving from nginx to Caddy.", True),
    ("Use `poetry` for dependency locking.", "Move dependency locking from `poetry` to `uv`.", True),
    ("Store uploads in S3.", "Migrate from S3 to GCS.", True),
    ("Target Python 3.11.", "Upgrade Python from 3.11 to 3.13.", True),
    # not a change: a copy, another subject, a part, asked, wished, decided against
    ("Store uploads in S3.", "Copy the nightly backups from S3 to GCS.", False),
    ("Write errors to stdout in dev.", "Switch the access logs from stdout to a file.", False),
    ("Use Memcached for the session store.", "Switch the page cache from Memcached to Redis.", False),
    ("Use Memcached for the cache.", "Priya wants to switch the cache from Memcached to Redis.", False),
    ("Use Memcached for the cache.", "We will not switch the cache from Memcached to Redis.", False),
    ("Use Memcached for the cache.", "Consider moving the cache from Memcached to Redis.", False),
    # stop 49: a change that names its subject counts it with X ("Redis" alone was one term in five:
    # the fact stayed current); a plural is its singular; "off X onto Z"; rows written after the fix
    (
        "Use Redis for the session cache in src/app/cache.py.",
        "Switch the session cache from Redis to Memcached in src/app/cache.py.",
        True,
    ),
    ("Use Redis for the session cache in src/app/cache.py.", "Move sessions from Redis to Memcached.", True),
    (
        "Use Redis for the session cache in src/app/cache.py.",
        "Swap the cache backend from Redis to Memcached for sessions.",
        True,
    ),
    (
        "Serve the marketing site with nginx on the edge boxes in deploy/edge.conf.",
        "Switch deploy/edge.conf from nginx over to Caddy for the marketing site.",
        True,
    ),
    (
        "Keep user avatars in the uploads bucket on S3 with a CDN in front.",
        "Migrate user avatars off S3 onto R2.",
        True,
    ),
    # ... but not another subject in its scope, a copy, a hedge
    (
        "Use Celery with Redis as the broker for background jobs in worker/tasks.py.",
        "Switch the broker for the cron jobs from Redis to RabbitMQ.",
        False,
    ),
    ("Use Redis for the session cache in src/app/cache.py.", "Switch the queue from Redis to SQS.", False),
    (
        "Use Redis for the session cache in src/app/cache.py.",
        "Copy the session cache from Redis to Memcached.",
        False,
    ),
    ("Use Redis for sessions.", "We might switch from Redis to Memcached.", False),
    ("Use Redis for sessions.", "Maybe move sessions from Redis to Memcached next quarter.", False),
    # stop 49: a change named as a thing, its -ing taken by a preposition, is talked about, not made
    # (a real Squad history: "Assessed test impact of changing relationship from bidirectional to
    # UUID-only" retired a current constraint); a finite, imperative or done one is made
    (
        "Cascade persistence requires bidirectional relationship awareness at mapping time.",
        "Analysis Completed: Assessed test impact of changing relationship from bidirectional to UUID-only.",
        False,
    ),
    ("Use Memcached for the cache.", "Estimate the cost of moving the cache from Memcached to Redis.", False),
    ("Use Memcached for the cache.", "Draft a plan for switching the cache from Memcached to Redis.", False),
    (
        "Use Memcached for the cache.",
        "Benchmark Redis before migrating the cache from Memcached to it.",
        False,
    ),
    (
        "Cascade persistence requires bidirectional relationship awareness at mapping time.",
        "Changed the relationship from bidirectional to UUID-only.",
        True,
    ),
    ("Use Memcached for the cache.", "We switched the cache from Memcached to Redis.", True),
    ("Use Memcached for the cache.", "Latency fell after switching the cache from Memcached to Redis.", True),
    # rows written after the fix
    (
        "Run the unit tests with Jest.",
        "Wrote up the risks of migrating the unit tests from Jest to Vitest.",
        False,
    ),
    ("Store uploads in S3.", "Opened a ticket about moving uploads from S3 to GCS.", False),
    ("Target Python 3.11.", "Measured the build without upgrading Python from 3.11 to 3.13.", False),
    (
        "Serve static files from nginx.",
        "Research into switching static file serving from nginx to Caddy is done.",
        False,
    ),
    (
        "Use `poetry` for dependency locking.",
        "Collected feedback regarding moving dependency locking from `poetry` to `uv`.",
        False,
    ),
    (
        "Keep the job queue on RabbitMQ.",
        "Estimated the effort of shifting the job queue from RabbitMQ to SQS.",
        False,
    ),
    ("Run the unit tests with Jest.", "Migrated the unit tests from Jest to Vitest last sprint.", True),
    ("Store uploads in S3.", "Uploads are moving from S3 to GCS this week.", True),
    ("Target Python 3.11.", "Fixed the build by upgrading Python from 3.11 to 3.13.", True),
    (
        "Serve static files from nginx.",
        "Since switching static file serving from nginx to Caddy, cold starts are faster.",
        True,
    ),
    # the stop's second review: an -ing act taken by another verb, or the subject of a supposition
    (
        "Use Redis for the session cache in src/app/cache.py.",
        "We are evaluating moving the session cache from Redis to Memcached in src/app/cache.py.",
        False,
    ),
    (
        "Use Redis for the session cache.",
        "Investigate switching the session cache from Redis to Memcached.",
        False,
    ),
    (
        "Use Redis for the session cache.",
        "Switching the session cache from Redis to Memcached would cut latency.",
        False,
    ),
    ("Use Redis for the session cache.", "We're switching the session cache from Redis to Memcached.", True),
    # rows written after that fix
    ("Store uploads in S3.", "Consider moving uploads from S3 to GCS next quarter.", False),
    ("Target Python 3.11.", "Upgrading Python from 3.11 to 3.13 could break the wheels.", False),
    ("Run the unit tests with Jest.", "The team is migrating the unit tests from Jest to Vitest.", True),
    # what a change is about is said in its sentence, not elsewhere in a long fact (a real Squad
    # decision's bullet switched two pages "from API key auth to admin JWT")
    (
        "Skip the key check on portal routes: the portal uses JWT, not API key auth.",
        "Admin dashboard. Switch the traces page from API key auth to admin JWT. Add a tenant filter to portal routes.",
        False,
    ),
]

FIGURES = [
    # the review's
    ("Target Python 3.11.", "Target Python 3.13.", True),
    ("Pin Django to 4.2.", "Pin Django to 5.0.", True),
    ("Bump Node to 20.", "Bump Node to 22.", True),
    ("Set the timeout to 30 s.", "Set the retry count to 3.", False),
    # fresh phrasings: quantities, units, dates, a version after a name, a broader restatement
    ("Keep logs for 30 days.", "Keep logs for 90 days.", True),
    ("Run 4 gunicorn workers per pod.", "Run 8 gunicorn workers per pod.", True),
    ("Require Go 1.21.", "We will require Go 1.22.", True),
    ("Ship the release on 2026-03-01.", "Ship the release on 2026-03-15.", True),
    ("Set the upload limit to 10MB.", "Set the upload limit to 25MB.", True),
    ("Target Python 3.11 for the API.", "Target Python 3.13.", True),
    # other subjects, a narrower one, a label's number, asked, wished, hedged, negated
    ("Target Python 3.11.", "Target Python 3.13 for the scripts.", False),
    ("Keep logs for 30 days.", "Keep metrics for 90 days.", False),
    ("Pin Django to 4.2.", "Pin Celery to 5.3.", False),
    (
        "Allow 100 requests per minute for free users.",
        "Allow 1000 requests per minute for paid users.",
        False,
    ),
    ("Use Redis for kalo writes (ticket 12).", "Use Redis for kalo writes (ticket 31).", False),
    ("Target Python 3.11.", "Should we target Python 3.13?", False),
    ("Target Python 3.11.", "Priya wants to target Python 3.13.", False),
    ("Target Python 3.11.", "We could target Python 3.13.", False),
    ("Target Python 3.11.", "Don't target Python 3.13.", False),
]

NEGATIONS = [
    # the review's
    ("Use Redis for sessions.", "Don't use Redis for sessions.", True),
    ("Use Redis for sessions.", "We will not use Redis for sessions.", True),
    ("Use Redis for sessions.", "Stop using Redis for sessions.", True),
    ("Don't use Redis.", "Use Redis after all.", True),
    # fresh phrasings: do not / never / won't, the inverse, a broader negation
    ("Cache rendered pages in Varnish.", "Do not cache rendered pages in Varnish.", True),
    ("Deploy on Fridays.", "We will never deploy on Fridays.", True),
    ("Expose the admin API publicly.", "We won't expose the admin API publicly.", True),
    ("Don't add a CDN.", "Add a CDN after all.", True),
    ("Never squash merge.", "Squash merge from now on.", True),
    ("Use GraphQL for the mobile API.", "Don't use GraphQL.", True),
    ("Remove the advisory lock.", "Don't remove the advisory lock.", True),
    # another subject, someone else's, rejected, asked, an exception, a part, a qualifier added
    ("Use Redis for sessions.", "Don't use Redis for rate limiting.", False),
    ("Use Redis for sessions.", "Priya says not to use Redis for sessions.", False),
    ("Use Redis for sessions.", "The proposal to not use Redis for sessions was rejected.", False),
    ("Use Redis for sessions.", "Should we not use Redis for sessions?", False),
    ("Don't use Redis.", "Use Redis for the queue.", False),
    ("Use the cache warmup on deploy.", "Don't use the cache.", False),
    ("Use Redis for sessions.", "Use Redis for sessions without a TTL.", False),
    ("Use a Postgres advisory lock for the scheduler.", "Don't remove the advisory lock.", False),
]


# "instead of X" reverses a fact that says to do X, not one that keeps X out itself (stop 49: a real
# Squad directive said again, "report the blocker instead of failing silently", retired itself)
INSTEAD = [
    (
        "If `gh pr merge` fails due to required reviews, the agent should report the blocker instead of"
        " failing silently.",
        "When `gh pr merge` fails due to required checks, agents must report the blocker instead of failing"
        " silently.",
        False,
    ),
    (
        "Don't use moment.js for date formatting.",
        "Use date-fns instead of moment.js for date formatting.",
        False,
    ),
    ("Use moment.js for date formatting.", "Use date-fns instead of moment.js for date formatting.", True),
    # rows written after the fix
    (
        "Never store secrets in plain env files.",
        "Keep secrets in the vault instead of plain env files.",
        False,
    ),
    (
        "Avoid global mutable state in the scheduler.",
        "Pass a context object through the scheduler instead of global mutable state.",
        False,
    ),
    (
        "Return a typed error rather than panicking in the parser.",
        "The parser must return a typed error instead of panicking.",
        False,
    ),
    ("Store secrets in plain env files.", "Keep secrets in the vault instead of plain env files.", True),
    (
        "Use global mutable state in the scheduler for speed.",
        "Pass a context object through the scheduler instead of global mutable state.",
        True,
    ),
]


@pytest.mark.parametrize(("old", "new", "want"), [*CHANGES, *FIGURES, *NEGATIONS, *INSTEAD])
def test_a_changed_restated_or_negated_decision_supersedes_the_earlier(
    old: str, new: str, want: bool
) -> None:
    assert supersedes(old, new) == (want, want)


def test_change_needs_its_verb_and_from_to() -> None:
    for text in (
        "switch the cache from A to B",
        "the migration from Jest to Vitest",
        "went from 3 to 4 pods",
    ):
        assert CHANGE.search(text), text
    for text in ("copy the files from S3 to GCS", "from now to then", "switch to Redis"):
        assert not CHANGE.search(text), text


def test_what_a_statement_is_made_of() -> None:
    st = statement("We will not use `Redis` for the sessions, after all.")
    assert st is not None and st.words == ("use", "redis", "for", "sessions") and st.negated
    assert st.shapes == ("use redis for sessions", "use redis")  # covered up to its qualifier
    st = statement("Pin Django to 4.2 (ticket 12)")
    assert st is not None and st.figures == ("4.2",) and st.words[-2:] == ("ticket", "12")
    st = statement("No, use Postgres for the store")  # an answer, not a negation
    assert st is not None and not st.negated
    assert statement("Should we target Python 3.13?") is None  # a question states nothing
    assert statement("Bump to 22.") is None  # a figure and a verb: of nothing


def test_near_duplicates_with_another_figure_or_polarity_are_two_facts() -> None:
    """Token-set Jaccard took a long fact with one figure changed, or "Do not" added, for the
    same fact: the new one merged into the old block, which stayed active as it was."""
    old = (
        "Keep the nightly Postgres backups of the billing, auth, search, reporting and audit databases "
        "in the encrypted eu-west storage bucket owned by the platform team for 30 days"
    )
    for new in (old.replace("30 days", "90 days"), "Do not k" + old[1:]):
        assert not near_dup(new, old)
        d = doc(fact(old))
        r = d.add(fact(new, date="2026-10-01", ref="e-2"))
        assert r.action == "added" and not d.blocks[0].active and d.blocks[1].active, new
    assert near_dup(old, old.replace("Keep the", "Keep our"))  # alike words, the same statement


def test_a_restatement_supersedes_across_sessions_topics_and_out_of_order(tmp_path: Path) -> None:
    d = doc(fact("Target Python 3.13", date="2026-10-01", ref="e-2"))
    r = d.add(fact("Target Python 3.11", date="2026-09-01", ref="e-1"))  # the older one, promoted later
    assert r.superseded_by == "2026-10-01: Target Python 3.13" and d.blocks[0].active
    d = doc(fact("Target Python 3.11", ref="e-1"))
    d.add(fact("Target Python 3.13", ref="e-1"))  # one session's facts do not reverse each other
    assert all(b.active for b in d.blocks)
    w = Wiki(tmp_path / "wiki", tmp_path)
    w.add(fact("Use Redis for sessions", topic="decisions", ref="e-3"))
    r = w.add(fact("Don't use Redis for sessions", topic="constraints", date="2026-10-02", ref="e-4"))
    assert r.superseded == ["2026-09-01: Use Redis for sessions"]


def test_a_decision_keeps_its_clauses_after_a_semicolon() -> None:
    assert decisions("Decision: use Postgres; keep SQLite for tests.") == [
        ("use Postgres; keep SQLite for tests", None)
    ]
    assert decisions("Reversing the earlier call: use Postgres; keep SQLite for tests") == [
        ("use Postgres; keep SQLite for tests", None)
    ]
    # said again in fewer clauses: one decision, which keeps what it said besides
    assert decisions("Decision: use Postgres; keep SQLite for tests.", "Decision: use `Postgres`.") == [
        ("use Postgres; keep SQLite for tests", None)
    ]
    # or in more: the fuller one stands for both; with other clauses, two decisions (none lost)
    assert decisions("Decision: use Postgres.", "Decision: use Postgres; keep SQLite for tests.") == [
        ("use Postgres; keep SQLite for tests", None)
    ]
    assert decisions(
        "Decision: use Postgres; keep SQLite for tests.", "Decision: use Postgres; seed it nightly."
    ) == [
        ("use Postgres; keep SQLite for tests", None),
        ("use Postgres; seed it nightly", None),
    ]
    # a later clause that reverses an earlier one's supersedes it
    assert decisions(
        "Decision: use Postgres; keep SQLite for tests.", "Decision: use Postgres; drop SQLite."
    ) == [("use Postgres; drop SQLite", "use Postgres; keep SQLite for tests")]


def test_a_cold_restatement_supersedes_before_its_own_ttl(tmp_path: Path) -> None:
    """A decision said again with another figure (or negated) in a cold entry still within the TTL
    is promoted early, as a reversal in words is: the wiki never keeps the old figure current."""
    from test_promote import cold_entry

    from scribed.config import from_dict
    from scribed.core import promote
    from scribed.tiers.cold import Layout
    from scribed.tiers.wiki import WikiDoc

    sept, octo = datetime(2026, 9, 1, 10, tzinfo=UTC), datetime(2026, 10, 6, 10, tzinfo=UTC)
    layout = Layout(tmp_path)
    (tmp_path / ".squad").mkdir()
    cfg = from_dict({"root": str(tmp_path)})
    cold_entry(layout, "picard", sept, "e-000000000901", decisions=["Target Python 3.11 for the API"])
    promote.promote(cfg, as_of=datetime(2026, 10, 5, tzinfo=UTC), clock=lambda: octo)
    cold_entry(layout, "riker", octo, "e-000000001006", decisions=["We will target Python 3.13"])
    out = promote.promote(cfg, as_of=datetime(2026, 10, 7, tzinfo=UTC), clock=lambda: octo).to_json()
    assert out["promoted"] == [] and [r["entry"] for r in out["reversals"]] == ["e-000000001006"]
    new, old = WikiDoc.parse(
        "decisions", (layout.wiki / "decisions.md").read_text()
    ).blocks  # old: under Superseded
    assert new.active and old.status == "superseded by 2026-10-06: We will target Python 3.13"


def test_a_label_or_two_figures_changed_is_another_statement_and_the_last_written_wins() -> None:
    """A review's: "retry 5 times on 429" superseded "retry 3 times on 503" (two figures changed:
    another case, not another value), "the v2 endpoint …" superseded "the v1 endpoint …" (a
    figure naming which one), and in the wiki a same-day restatement was filed backwards."""
    from scribed.compress.restate import restates

    assert not restates("Decision: retry 5 times on 429.", "Decision: retry 3 times on 503.")
    assert not restates("the v2 endpoint stays read-only", "the v1 endpoint stays read-only")
    assert restates("retry 5 times on 503", "retry 3 times on 503")
    assert restates("Use 8 workers for the importer", "Use 4 workers for the importer")


def test_a_same_day_restatement_in_the_wiki_supersedes_the_one_before_it() -> None:
    for old, new in (
        ("Target Python 3.11 for the API.", "Target Python 3.13 for the API."),
        ("Use Redis for sessions.", "Don't use Redis for sessions."),
    ):
        d = doc(fact(old, date="2026-12-07"))
        d.add(fact(new, date="2026-12-07", ref="e-000000000002", agent="riker"))
        active = [b.text for b in d.blocks if b.active]
        assert any(new.rstrip(".") in t for t in active), (old, new, active)
        assert not any(old.rstrip(".") in t for t in active), (old, new, active)


@pytest.mark.parametrize(
    ("earlier", "later", "superseded"),
    [
        # an exploratory tester's: the user's "X is out, Y is in" left the old decision current
        (
            "Decision: wake workers with LISTEN/NOTIFY on channel `billing_jobs`.",
            "Two things: LISTEN/NOTIFY is out, polling is in — prod goes through pgbouncer.",
            "wake workers with LISTEN/NOTIFY on channel `billing_jobs`",
        ),
        (
            "Decision: use Jest for the unit tests.",
            "Jest is out, Vitest is in.",
            "use Jest for the unit tests",
        ),
        ("Decision: use Jest for the unit tests.", "He is out, Bob is in charge.", None),
        ("Decision: use Jest for the unit tests.", "The cache is out of date, the index is in sync.", None),
    ],
)
def test_out_and_in_replaces_the_decision_naming_what_is_out(
    earlier: str, later: str, superseded: str | None
) -> None:
    turns = [
        Turn("assistant", earlier, "message", datetime(2026, 1, 1, tzinfo=UTC), 1, 100),
        Turn("user", later, "message", datetime(2026, 1, 1, 0, 1, tzinfo=UTC), 2, 200),
    ]
    s = Session(agent="a", session_id="s", source=Path("/x.md"), kind="markdown", turns=turns)
    found = [(a.text, a.superseded) for a in anchors.extract(s) if a.type == "decision"]
    if superseded is None:
        assert [x for x, _ in found] == [earlier.removeprefix("Decision: ").rstrip(".")], found
    else:
        assert found[-1][1] == superseded, found


def test_a_decisions_label_states_them() -> None:
    said = "Understood. Decisions: table renamed to `billing.jobs`; drop LISTEN/NOTIFY and poll every 2 s."
    turns = [
        Turn(
            "assistant",
            "Decision: wake workers with LISTEN/NOTIFY.",
            "message",
            datetime(2026, 1, 1, tzinfo=UTC),
            1,
            100,
        ),
        Turn("assistant", said, "message", datetime(2026, 1, 1, 0, 1, tzinfo=UTC), 2, 200),
    ]
    s = Session(agent="a", session_id="s", source=Path("/x.md"), kind="markdown", turns=turns)
    found = [(a.text, a.superseded) for a in anchors.extract(s) if a.type == "decision"]
    assert found == [
        (
            "table renamed to `billing.jobs`; drop LISTEN/NOTIFY and poll every 2 s",
            "wake workers with LISTEN/NOTIFY",
        )
    ], found


@pytest.mark.parametrize(
    "line",
    [
        "Decision: `.squad/decisions/inbox/oracle-copilot-sdk-research.md`",  # real Squad histories'
        "Decision: /Users/me/projects/loom/.squad/decisions/inbox/keaton-architecture-approved.md",
        "Merged decisions: 5 Wave 3 entries)",
        "Decisions: none yet",
    ],
)
def test_a_decision_label_over_a_file_or_a_count_is_no_decision(line: str) -> None:
    turns = [Turn("assistant", line, "message", datetime(2026, 1, 1, tzinfo=UTC), 1, 100)]
    s = Session(agent="a", session_id="s", source=Path("/x.md"), kind="markdown", turns=turns)
    assert [a.text for a in anchors.extract(s) if a.type == "decision"] == []


OLD_CACHE = "Use Redis for the session cache in src/app/cache.py."
NEW_CACHE = "Switch the session cache from Redis to Memcached in src/app/cache.py."


@pytest.mark.parametrize(("how", "topic"), [("cli", "decisions"), ("cli", "ops"), ("mcp", "ops")])
def test_a_change_of_the_subject_leaves_only_the_new_fact_current(
    tmp_path: Path, how: str, topic: str
) -> None:
    """Stop 49: ``wiki-write`` of "switch the session cache from Redis to Memcached in
    src/app/cache.py" after "use Redis for the session cache in src/app/cache.py" left both active,
    and ``context --query`` showed the reversed one as current (one Redis in five terms was not "a
    quarter" of the fact; the index, by the same bound, never offered it across topics)."""
    from click.testing import CliRunner

    from scribed import config
    from scribed.cli import mcp_server
    from scribed.cli.main import main
    from scribed.tiers.cold import Layout

    (tmp_path / ".squad").mkdir()
    root = ["--root", str(tmp_path)]
    run = CliRunner().invoke
    assert run(main, ["wiki-write", "decisions", "--agent", "picard", *root], input=OLD_CACHE).exit_code == 0
    if how == "cli":
        assert run(main, ["wiki-write", topic, "--agent", "riker", *root], input=NEW_CACHE).exit_code == 0
    else:
        cfg = config.from_dict({"root": str(tmp_path)})
        mcp_server.tool_wiki_write(Layout(tmp_path), topic, "riker", text=NEW_CACHE, cfg=cfg)
    page = (tmp_path / ".squad/memory/wiki/decisions.md").read_text()
    current, _, retired = page.partition("## Superseded")
    assert OLD_CACHE in retired and "*Status:* superseded by" in retired and OLD_CACHE not in current
    out = run(main, ["context", "picard", "--query", "session cache", *root]).output
    assert NEW_CACHE in out and OLD_CACHE not in out, out


def test_a_cold_change_of_the_subject_supersedes_before_its_own_ttl(tmp_path: Path) -> None:
    """A cold decision changing a wiki fact's subject "from X to Z" is promoted early, as any reversal."""
    from test_promote import cold_entry

    from scribed.config import from_dict
    from scribed.core import promote
    from scribed.tiers.cold import Layout
    from scribed.tiers.wiki import WikiDoc

    sept, octo = datetime(2026, 9, 1, 10, tzinfo=UTC), datetime(2026, 10, 6, 10, tzinfo=UTC)
    layout = Layout(tmp_path)
    (tmp_path / ".squad").mkdir()
    cfg = from_dict({"root": str(tmp_path)})
    cold_entry(layout, "picard", sept, "e-000000000901", decisions=[OLD_CACHE.rstrip(".")])
    promote.promote(cfg, as_of=datetime(2026, 10, 5, tzinfo=UTC), clock=lambda: octo)
    cold_entry(layout, "riker", octo, "e-000000001006", decisions=[NEW_CACHE.rstrip(".")])
    out = promote.promote(cfg, as_of=datetime(2026, 10, 7, tzinfo=UTC), clock=lambda: octo).to_json()
    assert [r["entry"] for r in out["reversals"]] == ["e-000000001006"]
    new, old = WikiDoc.parse("decisions", (layout.wiki / "decisions.md").read_text()).blocks
    assert new.active and not old.active and old.status.startswith("superseded by 2026-10-06: Switch")


def test_instead_of_counts_what_it_shares_with_the_fact() -> None:
    """ "Use Memcached instead of Redis for the session cache" names Redis and the session cache: the
    fact's terms it says, not Redis's alone, make the quarter (it left the fact current)."""
    assert reversal_score("Use Memcached instead of Redis for the session cache.", OLD_CACHE) > 0
    assert reversal_score("Use Memcached instead of Redis for the rate limiter.", OLD_CACHE) == 0

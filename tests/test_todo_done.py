"""Open items the agent later reports done in its own words leave the open items (a helper's
memory showed "delete the Kafka consumer" as open work after "Deleted the Kafka consumer ...")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from scribed.compress import anchors, todo_done, todo_item
from scribed.models import Session, Turn

T0 = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)

# (open item, a later sentence, closes it?): phrasings written apart from the rule, and those an
# exploratory tester found wrongly closing or missing (a different object or version, partial work,
# work taken back, a plan, a hedge; passive and bare reports)
CASES = [
    (
        "remove the deprecated --legacy-auth flag from cli/main.py",
        "Removed --legacy-auth from cli/main.py; the help text no longer lists the deprecated flag.",
        True,
    ),
    (
        "rename fetch_all to fetch_pages in api/client.py",
        "I renamed fetch_all to fetch_pages in api/client.py and updated both callers.",
        True,
    ),
    (
        "write integration tests for the billing webhook",
        "Wrote three integration tests covering the billing webhook retries.",
        True,
    ),
    (
        "migrate the cron jobs to systemd timers",
        "Migrated the cron jobs; every one is now a systemd timer.",
        True,
    ),
    ("copy the fixtures into testdata/", "Copied the fixtures into testdata/ (14 files).", True),
    ("stop the staging cluster after the demo", "Stopped the staging cluster at 17:05.", True),
    ("add rate limiting to the upload endpoint", "Rate limiting was added to the upload endpoint.", True),
    ("document the retry policy in docs/retries.md", "Documented the retry policy.", True),
    ("drop the legacy_events table", "Dropped legacy_events.", True),
    ("clean up the temp files", "Cleaned up the temp files under /tmp/build.", True),
    (
        "delete the Kafka consumer in ingest/kafka.go",
        "The Kafka consumer in ingest/kafka.go has been deleted.",
        True,
    ),
    ("remove the retry loop in ingest/retry.go", "Retry loop removed.", True),
    ("migrate the users table", "Finished migrating the users table.", True),
    # negated, hedged, planned, asked, partial, taken back: still open
    (
        "remove the deprecated --legacy-auth flag from cli/main.py",
        "I haven't removed --legacy-auth from cli/main.py: two scripts still pass it.",
        False,
    ),
    (
        "rename fetch_all to fetch_pages in api/client.py",
        "Should I have renamed fetch_all to fetch_pages in api/client.py as well?",
        False,
    ),
    (
        "write integration tests for the billing webhook",
        "Once the sandbox is up I'll have written the integration tests for the billing webhook.",
        False,
    ),
    ("remove the retry loop", "Partially removed the retry loop.", False),
    ("remove the retry loop", "Removed most of the retry loop.", False),
    ("remove the retry loop", "Removed the retry loop, then reverted it because tests broke.", False),
    ("remove the retry loop", "I think I removed the retry loop.", False),
    (
        "delete the Kafka consumer in ingest/kafka.go",
        "Step 3 will be: Deleted the Kafka consumer in ingest/kafka.go.",
        False,
    ),
    (
        "delete the Kafka consumer in ingest/kafka.go",
        "Deleted the Kafka consumer in ingest/kafka.go — wait, no, that was the producer.",
        False,
    ),
    ("delete the Kafka consumer in ingest/kafka.go", "Deleted the Kafka consumer?", False),
    # the same verb on something else, or the item's name without its verb
    (
        "remove the deprecated --legacy-auth flag from cli/main.py",
        "Removed the unused import from cli/main.py.",
        False,
    ),
    ("write integration tests for the billing webhook", "Wrote unit tests for the invoice parser.", False),
    ("migrate the cron jobs to systemd timers", "The cron jobs and the systemd timers both run now.", False),
    ("bump the Go version to 1.22 in go.mod", "Bumped the Go version in go.mod to 1.21 for now.", False),
    ("bump the Go version to 1.22", "Bumped the Node version to 1.22.", False),
    ("delete the Kafka consumer in ingest/kafka.go", "Deleted the Kafka producer in ingest/kafka.go.", False),
    (
        "delete the Kafka consumer in ingest/kafka.go",
        "Deleted the Kafka consumer test in ingest/kafka.go.",
        False,
    ),
    (
        "delete the Kafka consumer in ingest/kafka.go",
        "Deleted the Kafka consumer in ingest/legacy.go.",
        False,
    ),
    ("remove the retry loop", "Removed the retry loop's dead branch.", False),
    ("update the README", "Updated the README badge link only; the rest still needs a rewrite.", False),
    # a review's: another place or destination, someone else, a bare head noun, not pushed
    ("remove the debug prints from server.py", "Removed the debug prints from the test helpers.", False),
    (
        "remove the debug prints from server.py",
        "Removed debug prints from client.py; server.py still has them.",
        False,
    ),
    ("add retry logic to the upload client", "Added retry logic to the download client.", False),
    ("migrate the cron jobs to systemd timers", "Migrated the cron jobs to Kubernetes CronJobs.", False),
    ("fix the flaky login test", "Fixed the test.", False),
    (
        "delete the Kafka consumer in ingest/kafka.go",
        "The user deleted the Kafka consumer in ingest/kafka.go.",
        False,
    ),
    (
        "delete the Kafka consumer in ingest/kafka.go",
        "Apparently someone already deleted the Kafka consumer.",
        False,
    ),
    (
        "delete the Kafka consumer in ingest/kafka.go",
        "Deleted the Kafka consumer (only in my local branch, not pushed).",
        False,
    ),
    ("remove the debug prints from server.py", "Removed the debug prints from server.py.", True),
    # a second exploratory round's: taken back, partial, a draft or an example, adverbs, particles
    (
        "migrate the billing tables to Postgres",
        "Migrated the billing tables to Postgres and then rolled it back after the smoke test failed.",
        False,
    ),
    (
        "migrate the billing tables to Postgres",
        "I migrated the billing tables to Postgres but had to roll it back.",
        False,
    ),
    (
        "migrate the billing tables to Postgres",
        "Migrated the billing tables to Postgres, except the invoices table.",
        False,
    ),
    (
        "migrate the billing tables to Postgres",
        "Migrated the billing tables to Postgres in staging; production is still pending.",
        False,
    ),
    ("migrate the billing tables to Postgres", "Dry-run: migrated the billing tables to Postgres.", False),
    (
        "delete the unused fixtures in tests/data",
        "Commit message draft: `Deleted the unused fixtures in tests/data`",
        False,
    ),
    (
        "delete the unused fixtures in tests/data",
        "Example output when it works: Deleted the unused fixtures in tests/data.",
        False,
    ),
    (
        "migrate the billing tables to Postgres",
        "The billing tables were successfully migrated to Postgres.",
        True,
    ),
    (
        "migrate the billing tables to Postgres",
        "The billing tables were migrated to Postgres successfully.",
        True,
    ),
    ("remove the legacy cache from api/server.py", "Ripped out the legacy cache in api/server.py.", True),
    ("fix the flaky login test", "I fixed the login test by waiting for the redirect.", True),
    # a review's: the act named by its noun, said to be over; a removal's thing said to be gone
    ("migrate the invoices table", "Migration of the invoices table is complete.", True),
    ("migrate the invoices table", "Completed the invoices table migration.", True),
    ("migrate the invoices table", "The invoices table migration is done.", True),
    ("delete the Kafka consumer", "The Kafka consumer is gone now.", True),
    ("delete the Kafka consumer", "The code no longer has the Kafka consumer.", True),
    # phrasings written after those rules, apart from them: other nouns, verbs and states
    (
        "migrate the billing tables to Postgres",
        "The migration of the billing tables to Postgres has finished.",
        True,
    ),
    ("implement the retry budget", "The retry budget implementation is finished and covered by tests.", True),
    ("refactor the session store", "I've completed the refactor of the session store.", True),
    ("configure the nginx proxy", "Configuration of the nginx proxy: done.", True),
    ("upgrade pydantic to 2.9", "The pydantic upgrade to 2.9 is complete.", True),
    ("clean up the temp files", "Cleanup of the temp files finished.", True),
    ("fix the flaky login test", "The fix for the flaky login test is done.", True),
    (
        "delete the Kafka consumer in ingest/kafka.go",
        "I've finished the deletion of the Kafka consumer.",
        True,
    ),
    ("delete the unused fixtures", "Done: deletion of the unused fixtures.", True),
    ("remove the retry loop in ingest/retry.go", "Removal of the retry loop is done.", True),
    ("delete the unused fixtures in tests/data", "The unused fixtures are gone from tests/data.", True),
    ("drop the legacy_events table", "legacy_events no longer exists.", True),
    ("remove the debug prints from main.py", "main.py no longer includes the debug prints.", True),
    ("migrate the invoices table", "As mentioned, the invoices table migration succeeded.", True),
    # … and what must not close: hedged, asked, someone else's, another object or place, to come
    ("migrate the invoices table", "The migration of the invoices table should be complete.", False),
    ("migrate the invoices table", "Is the migration of the invoices table complete?", False),
    ("migrate the invoices table", "Bob says the migration of the invoices table is complete.", False),
    ("migrate the invoices table", "Bob says: the invoices table migration is done.", False),
    ("upgrade pydantic to 2.9", "Priya confirmed: the pydantic upgrade is complete.", False),
    ("migrate the invoices table", "According to the CI log, the invoices table migration is done.", False),
    ("migrate the invoices table", "I was told the invoices table migration is done.", False),
    ("migrate the invoices table", "Migration of the orders table is complete.", False),
    ("migrate the invoices table", "The second invoices table migration is done.", False),
    ("migrate the invoices table", "The invoices table migration will be complete by Friday.", False),
    (
        "migrate the invoices table",
        "Once the invoices table migration is complete, drop the old table.",
        False,
    ),
    ("migrate the invoices table", "The invoices table migration is not complete.", False),
    ("migrate the invoices table", "The invoices table migration is almost complete.", False),
    ("migrate the invoices table", "The invoices table migration is complete in staging.", False),
    ("migrate the invoices table", "I think the invoices table migration is done.", False),
    ("migrate the invoices table", "Bob completed the invoices table migration.", False),
    ("migrate the invoices table", "The migration is complete.", False),  # of what?
    ("migrate the invoices table", "Completed the invoices table migration script.", False),
    ("migrate the invoices table", "Commit subject: `Migration of the invoices table is complete`", False),
    (
        "migrate the billing tables to Postgres",
        "The migration of the billing tables to MySQL has finished.",
        False,
    ),
    ("upgrade pydantic to 2.9", "The pydantic upgrade to 2.10 is complete.", False),
    (
        "migrate the invoices table to Postgres",
        "Migration of the invoices table to Postgres is complete, but only for the EU shard.",
        False,
    ),
    ("delete the Kafka consumer", "The deletion of the Kafka consumer is blocked.", False),
    ("delete the Kafka consumer in ingest/kafka.go", "The Kafka producer is gone now.", False),
    (
        "delete the Kafka consumer in ingest/kafka.go",
        "The Kafka consumer is gone from ingest/legacy.go.",
        False,
    ),
    (
        "delete the Kafka consumer in ingest/kafka.go",
        "ingest/legacy.go no longer contains the Kafka consumer.",
        False,
    ),
    ("delete the Kafka consumer in ingest/kafka.go", "The Kafka consumer isn't gone yet.", False),
    ("delete the Kafka consumer in ingest/kafka.go", "The code no longer uses the Kafka consumer.", False),
    ("delete the Kafka consumer in ingest/kafka.go", "The Kafka consumer will be gone after this PR.", False),
    ("delete the Kafka consumer in ingest/kafka.go", "The user says the Kafka consumer is gone.", False),
    ("delete the Kafka consumer in ingest/kafka.go", "The Kafka consumer has gone stale.", False),
    # someone else's report after a colon or a comma (it closed the item before)
    ("remove the retry loop", "Bob says: the retry loop has been removed.", False),
    ("remove the retry loop", "According to Bob, the retry loop has been removed.", False),
]


@pytest.mark.parametrize(("item", "sentence", "closes"), CASES)
def test_a_report_in_the_agents_words_closes_its_item(item: str, sentence: str, closes: bool) -> None:
    parsed = todo_item.parse(item, 1)
    assert parsed is not None
    assert todo_done._closes(parsed, sentence) is closes


def test_an_item_that_is_no_order_is_never_closed_by_prose() -> None:
    assert todo_item.parse("the flaky login test on CI", 1) is None  # no verb first
    assert todo_item.parse("check", 1) is None  # nothing it acts on


def _turn(i: int, role: str, text: str) -> Turn:
    return Turn(role, text, "message", T0 + timedelta(minutes=i), i + 1, (i + 1) * 100)  # type: ignore[arg-type]


def _todos(*texts: tuple[str, str]) -> list[str]:
    turns = [_turn(i, role, text) for i, (role, text) in enumerate(texts)]
    s = Session(agent="kim", session_id="s1", source=Path("/x.md"), kind="markdown", turns=turns)
    return [a.text for a in anchors.extract(s) if a.type == "todo"]


def test_a_done_report_leaves_the_sessions_open_items() -> None:
    todos = _todos(
        ("user", "The ingest service should read from NATS only."),
        (
            "assistant",
            "Plan noted.\n\nTODO: delete the Kafka consumer in ingest/kafka.go\n"
            "TODO: add a NATS reconnect test to ingest/nats_test.go",
        ),
        ("assistant", "Deleted the Kafka consumer (ingest/kafka.go) and its config block."),
    )
    assert todos == ["add a NATS reconnect test to ingest/nats_test.go"]


def test_a_later_restore_opens_the_item_again() -> None:
    todos = _todos(
        ("assistant", "TODO: delete the Kafka consumer in ingest/kafka.go"),
        ("assistant", "Deleted the Kafka consumer in ingest/kafka.go."),
        ("user", "Put it back, the billing team still reads from Kafka."),
        ("assistant", "Restored the Kafka consumer from the last commit."),
    )
    assert todos == ["delete the Kafka consumer in ingest/kafka.go"]


def test_a_report_before_the_item_or_by_the_user_closes_nothing() -> None:
    todos = _todos(
        ("assistant", "Deleted the Kafka consumer in ingest/kafka.go last week."),
        ("assistant", "TODO: delete the Kafka consumer in ingest/kafka.go"),
        ("user", "I deleted the Kafka consumer in ingest/kafka.go myself."),
    )
    assert todos == ["delete the Kafka consumer in ingest/kafka.go"]


@pytest.mark.parametrize(
    ("item", "sentence"),
    [
        (
            "drop the kafka section from config/ingest.yaml",
            "Removed the kafka section from config/ingest.yaml.",
        ),
        (
            "fix the off-by-one in pager.go",
            "Corrected the off-by-one in pager.go (the last page was skipped).",
        ),
        ("upgrade pydantic to 2.9", "Bumped pydantic to 2.9 in the lock file."),
    ],
)
def test_a_report_may_use_another_verb_of_the_same_act(item: str, sentence: str) -> None:
    parsed = todo_item.parse(item, 1)
    assert parsed is not None and todo_done._closes(parsed, sentence)


def test_a_todo_stated_again_after_a_report_stays_open() -> None:
    """A review's: the revert brought it back and the TODO was stated again; the report before
    that second statement does not close it."""
    todos = _todos(
        ("assistant", "TODO: delete the Kafka consumer in ingest/kafka.go"),
        ("assistant", "Deleted the Kafka consumer in ingest/kafka.go."),
        ("assistant", "The revert brought it back.\nTODO: delete the Kafka consumer in ingest/kafka.go"),
    )
    assert todos == ["delete the Kafka consumer in ingest/kafka.go"]


def test_a_report_in_code_or_quoted_closes_nothing() -> None:
    for text in (
        'Next I will commit:\n```\ngit commit -m "Deleted the Kafka consumer in ingest/kafka.go"\n```',
        'The PR description says "Deleted the Kafka consumer in ingest/kafka.go" but the diff does not.',
        "> Deleted the Kafka consumer in ingest/kafka.go",
    ):
        todos = _todos(
            ("assistant", "TODO: delete the Kafka consumer in ingest/kafka.go"), ("assistant", text)
        )
        assert todos == ["delete the Kafka consumer in ingest/kafka.go"], text


def test_many_items_and_messages_stay_fast() -> None:
    """A review's: 150 pasted TODOs and 4,000 messages took 13-20 s (every item judged against
    every sentence, each tokenised again); each sentence is read once and only the items whose
    verb it holds are judged."""
    import time

    paste = "\n".join(f"# TODO: remove the handler_{i} shim from api/h{i}.py" for i in range(150))
    turns = [("user", paste)] + [
        ("assistant", f"Updated the parser in step {i}; removed a stale comment and added a test.")
        for i in range(4000)
    ]
    t0 = time.process_time()
    todos = _todos(*turns)
    assert time.process_time() - t0 < 5.0
    assert len(todos) >= 24


def test_a_later_revert_opens_the_item_again() -> None:
    """A second exploratory round's: "Reverted it." in a later message, or a revert naming the work,
    left the item closed (only "Restored <object>" reopened it)."""
    item = "TODO: migrate the billing tables to Postgres"
    done = "Migrated the billing tables to Postgres."
    for later in (
        "Reverted it.",
        "Rolled back: the smoke test failed.",
        "Undid the migration of the billing tables to Postgres.",
        "Ugh, the smoke test failed, so I reverted it.",
    ):
        todos = _todos(("assistant", item), ("assistant", done), ("assistant", later))
        assert todos == ["migrate the billing tables to Postgres"], later
    # a revert of something else leaves it closed
    todos = _todos(("assistant", item), ("assistant", done), ("assistant", "Reverted the README typo fix."))
    assert todos == []


def test_an_indented_code_block_closes_nothing() -> None:
    todos = _todos(
        ("assistant", "TODO: delete the unused fixtures in tests/data"),
        ("assistant", "The script prints:\n\n    Deleted the unused fixtures in tests/data\n"),
    )
    assert todos == ["delete the unused fixtures in tests/data"]


@pytest.mark.parametrize(
    ("items", "message", "still_open"),
    [
        # a review's: partial work stated in the next sentence
        (
            ["migrate the orders table", "migrate the invoices table"],
            "Migrated the orders table. The invoices table still needs to be migrated.",
            ["migrate the invoices table"],
        ),
        (
            ["migrate the invoices table"],
            "Migrated the tables. The invoices table still needs work.",
            ["migrate the invoices table"],
        ),
        # phrasings written after the rule: the object named with work to do after the report
        (
            ["migrate the orders table", "migrate the invoices table"],
            "Migrated the orders table, then migrated the invoices table. The invoices table still "
            "needs its foreign keys.",
            ["migrate the invoices table"],
        ),
        (
            ["migrate the invoices table"],
            "Migrated the invoices table, but the invoices table still needs its indexes.",
            ["migrate the invoices table"],
        ),
        (
            ["migrate the invoices table"],
            "Migrated the invoices table. The invoices table isn't done yet: the archive partition is left.",
            ["migrate the invoices table"],
        ),
        (
            ["migrate the invoices table"],
            "Migrated the invoices table. Left to do: the invoices table.",
            ["migrate the invoices table"],
        ),
        (
            ["migrate the invoices table"],
            "Migrated the invoices table.\n\nThe invoices table will be migrated again after the freeze.",
            ["migrate the invoices table"],
        ),
        (
            ["remove the retry loop"],
            "Removed the retry loop. The retry loop in ingest/backoff.go still needs to go.",
            ["remove the retry loop"],
        ),
        (
            ["migrate the invoices table"],
            "Completed the invoices table migration. The invoices table migration is still pending on prod.",
            ["migrate the invoices table"],
        ),
        # … and what leaves it closed: another object or place, nothing left, a question, said before
        (
            ["migrate the invoices table"],
            "Migrated the invoices table. The orders table still needs work.",
            [],
        ),
        (
            ["migrate the users table"],
            "Migrated the users table; the users table needs no further changes.",
            [],
        ),
        (
            ["migrate the users table"],
            "Migrated the users table. Nothing else needs the users table now.",
            [],
        ),
        (
            ["migrate the users table"],
            "Migrated the users table. The users table won't need migrating again.",
            [],
        ),
        (["migrate the invoices table"], "Migrated the invoices table; no other table needs it.", []),
        (
            ["migrate the invoices table"],
            "Migrated the invoices table. Does the invoices table still need work?",
            [],
        ),
        (
            ["migrate the invoices table"],
            "The invoices table still needs to be migrated. Migrated the invoices table.",
            [],
        ),
        (
            ["remove the retry loop in ingest/retry.go"],
            "Removed the retry loop in ingest/retry.go. The retry loop in ingest/backoff.go still needs to go.",
            [],
        ),
        (
            ["delete the Kafka consumer"],
            "Deleted the Kafka consumer. Its config block in ingest/config.yaml still needs removing.",
            [],
        ),
        (
            ["delete the Kafka consumer"],
            "Deleted the Kafka consumer. I'll remove the Kafka consumer's Helm chart next.",
            [],
        ),
    ],
)
def test_work_the_rest_of_the_message_says_remains_stays_open(
    items: list[str], message: str, still_open: list[str]
) -> None:
    """A review's: "Migrated the orders table. The invoices table still needs to be migrated." A
    later sentence of the report's message naming the object with work to do keeps it open."""
    todos = _todos(("assistant", "\n".join(f"TODO: {i}" for i in items)), ("assistant", message))
    assert sorted(todos) == sorted(still_open)


def test_reports_by_noun_and_work_still_to_do_stay_fast() -> None:
    """Reports naming the act's noun or a thing gone, and sentences saying work remains, judged
    against 150 pasted TODOs over 4,000 messages (each sentence read once, a remaining-work
    sentence only in a message that closed something)."""
    import time

    paste = "\n".join(
        f"# TODO: remove the handler_{i} shim from api/h{i}.py\n# TODO: migrate the table_{i} rows"
        for i in range(150)
    )
    turns = [("user", paste)] + [
        (
            "assistant",
            f"The handler_{i % 150} shim removal is done. The handler_{(i + 1) % 150} shim is gone now. "
            f"Migration of the table_{i % 150} rows is complete. The table_{i % 150} rows still need an "
            "index. The shim is no longer needed; the rows are gone from the old store.",
        )
        for i in range(4000)
    ]
    t0 = time.process_time()
    todos = _todos(*turns)
    assert time.process_time() - t0 < 5.0
    assert len(todos) >= 24


def _checklist_session(*later: tuple[str, str, str]) -> list[str]:
    """A user's checklist, restated with an item struck through, then ``later`` turns (an Aider
    session of an exploratory tester's)."""
    first = "Plan:\n- [ ] token bucket per key\n- [ ] evict idle buckets after 10 minutes\n- [ ] Redis backend so limits hold across the 6 gateway pods"
    again = "Updated list:\n- [x] token bucket per key\n- [ ] evict idle buckets after 10 minutes\n- [ ] ~~Redis backend~~ dropped: sticky routing on the LB"
    turns = [
        Turn("user", first, "message", T0, 1, 100),
        Turn("assistant", "Added the token bucket in api/bucket.go.", "message", T0, 2, 200),
        Turn("user", again, "message", T0, 3, 300),
    ]
    for i, (role, text, kind) in enumerate(later):
        turns.append(Turn(role, text, kind, T0, 4 + i, (4 + i) * 100))  # type: ignore[arg-type]
    s = Session(agent="data", session_id="s1", source=Path("/x.md"), kind="markdown", turns=turns)
    return [a.text for a in anchors.extract(s) if a.type == "todo"]


def test_a_struck_item_is_dropped_and_a_commit_naming_an_item_closes_it() -> None:
    assert _checklist_session() == ["evict idle buckets after 10 minutes"]
    commit = ("tool", "> Commit e2f5d90 feat: evict idle buckets after 10 minutes", "tool_result")
    assert _checklist_session(commit) == []
    shell = (
        "assistant",
        'git commit -am "feat(api): evict idle buckets after 10 minutes (#41)"',
        "tool_call",
    )
    assert _checklist_session(shell) == []
    # a commit of another thing, or of more than the item, closes nothing
    other = ("tool", "> Commit 1234567 feat: evict idle buckets metrics exporter", "tool_result")
    assert _checklist_session(other) == ["evict idle buckets after 10 minutes"]
    said = ("user", 'I ran git commit -m "evict idle buckets after 10 minutes" myself', "message")
    assert _checklist_session(said) == ["evict idle buckets after 10 minutes"]


def test_a_commit_planned_rejected_or_reverted_closes_nothing_and_a_correction_stays_open() -> None:
    """A review's: a commit only said ("I'll run git commit -m …"), one a hook rejected, and a
    revert closed the item; a struck word corrected in place ("~~Redis~~ Memcached backend") dropped
    the item and an unrelated one naming Redis."""
    item = ["evict idle buckets after 10 minutes"]
    planned = (
        "assistant",
        'Once you review, I\'ll run git commit -m "feat: evict idle buckets after 10 minutes".',
        "message",
    )
    assert _checklist_session(planned) == item
    run = ("assistant", 'Bash git commit -m "feat: evict idle buckets after 10 minutes"', "tool_call")
    hook = (
        "tool",
        "ruff....................................................Failed\n- exit code: 1",
        "tool_result",
    )
    assert _checklist_session(run, hook) == item
    assert _checklist_session(run, ("tool", "[main 1a2b3c4] feat: evict idle buckets", "tool_result")) == []
    revert = ("tool", "> Commit 9e8f7a6 revert: evict idle buckets after 10 minutes", "tool_result")
    assert _checklist_session(revert) == item
    written = (
        "assistant",
        'Write {"file_path": "release.sh", "content": "git commit -m \\"evict idle buckets after 10 minutes\\""}',
        "tool_call",
    )
    assert _checklist_session(written) == item

    text = "- [ ] ~~Redis~~ Memcached backend for the rate limiter\n- [ ] Redis TLS certificates for staging"
    s = Session(
        agent="data",
        session_id="s2",
        source=Path("/x.md"),
        kind="markdown",
        turns=[Turn("user", text, "message", T0, 1, 100)],
    )
    assert [a.text for a in anchors.extract(s) if a.type == "todo"] == [
        "Memcached backend for the rate limiter",
        "Redis TLS certificates for staging",
    ]


def test_a_struck_item_with_a_note_after_a_comma_and_a_follow_up_in_prose() -> None:
    """An exploratory tester's markdown log: "~~delete products_v7 after 24h~~ dropped, keep v7 …"
    became the item "dropped, keep v7 …", and "leaving the swap for a follow-up with a dry run
    against staging first" the item "with a dry run against staging first"."""
    text = (
        "- [ ] delete products_v7 after 24h\n- [ ] swap alias `products` atomically\n\n"
        "Leaving the swap for a follow-up with a dry run against staging first.\n"
        "- [ ] ~~delete products_v7 after 24h~~ dropped, keep v7 for a week as rollback"
    )
    s = Session(
        agent="troi",
        session_id="s3",
        source=Path("/x.md"),
        kind="markdown",
        turns=[Turn("user", text, "message", T0, 1, 100)],
    )
    assert [a.text for a in anchors.extract(s) if a.type == "todo"] == ["swap alias `products` atomically"]
    follow = "Follow-up: rotate the staging key"
    s2 = Session(
        agent="troi",
        session_id="s4",
        source=Path("/x.md"),
        kind="markdown",
        turns=[Turn("user", follow, "message", T0, 1, 100)],
    )
    assert [a.text for a in anchors.extract(s2) if a.type == "todo"] == ["rotate the staging key"]

"""What promotion must not put into the wiki (progress chatter, unresolved errors, fragments, a
config value read as a rule, reversals of unrelated facts) and what it must not lose (directives).

The fixtures are written in the shapes an audit saw in real Aider, SpecStory and Squad histories."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from test_core import sess
from test_promote import cold_entry

from scribed.compress import anchors
from scribed.compress.entry import split_entries
from scribed.compress.reversal import reversal_score
from scribed.core import promote
from scribed.tiers.cold import Layout
from scribed.tiers.wiki import Fact, Source, WikiDoc

WHEN = datetime(2026, 3, 15, 21, tzinfo=UTC)


def _fact(text: str, date: str, ref: str, topic: str = "patterns") -> Fact:
    src = Source(date=date, ref=ref, agent="mouse", session=f"s-{ref[-4:]}")
    return Fact(topic=topic, kind="pattern", text=text, date=date, source=src)


# --- a reversal names the fact it reverses ------------------------------------------------------
FIX_NOTE = "Fix Applied:** Replace `@Getter` with explicit accessors that skip the lazy collections:"
UNRELATED = [
    "Pattern: no container, in-memory stores, getter helpers for fixtures, matchers for checks",
    "`.squad/skills/getter-helper-pattern/SKILL.md` — how fixtures are built",
    "Flaky infrastructure and getter setup problems must be sorted out first.",
]


def test_a_one_word_replacement_does_not_reverse_facts_that_merely_share_the_word() -> None:
    for old in UNRELATED:
        assert reversal_score(FIX_NOTE, old) == 0, old
    d = WikiDoc.parse("patterns", "")
    for i, old in enumerate(UNRELATED):
        d.add(_fact(old, "2026-02-20", f"e-00000000000{i}"))
    d.add(_fact(FIX_NOTE, "2026-02-26", "e-0000000000f9"))
    assert all(b.active for b in d.blocks)


def test_a_one_word_replacement_still_reverses_the_fact_it_names() -> None:
    named = "Entities carry Lombok `@Getter` on every field, lazy collections and back references included"
    assert reversal_score(FIX_NOTE, named) > 0
    assert reversal_score(FIX_NOTE, "Put @Getter on entities") > 0  # a short fact is about its term
    long_cache = "Cache the sessions in Valkey with a 5-minute TTL for the auth and the billing services"
    assert reversal_score("We dropped Valkey.", long_cache) > 0  # a name, written as here
    assert reversal_score("We dropped caching.", long_cache + " and the caching layer") == 0


# --- a user's directive is a convention or a constraint ------------------------------------------
def _facts(tmp_path: Path, **sections: object) -> set[tuple[str, str]]:
    text = cold_entry(Layout(tmp_path), "robot", WHEN, "e-0000000000d1", goal="Port the arm code", **sections)
    facts, _ = promote.extract_facts(split_entries(text)[1][0], "robot")
    return {(f.topic, f.text) for f in facts}


def test_directives_restored_under_key_facts_reach_the_wiki(tmp_path: Path) -> None:
    got = _facts(
        tmp_path,
        key_facts=[
            "path: `arm/ArmSubsystem.java`",
            "directive: Do NOT use any 2019, 2020, or 2021 syntax. Use only 2022 APIs",
            "directive: do not add the vision lib as a vendordep",
            "directive: Never wait longer than 20 seconds on one download",
            "directive: make sure to keep the elevator presets in Constants",
            "user: Don't ask before switching to the fallback mirror",
            "user: the simulator is slow on this laptop",
            "user: don't like the blue header, please change it",  # "I don't like …": no rule
            "user: Do not guess the file. Just put this code into the one in the chat:",
        ],
    )
    assert got == {
        ("constraints", "Do NOT use any 2019, 2020, or 2021 syntax. Use only 2022 APIs"),
        ("constraints", "do not add the vision lib as a vendordep"),
        ("conventions", "Never wait longer than 20 seconds on one download"),
        ("conventions", "make sure to keep the elevator presets in Constants"),
        ("constraints", "Don't ask before switching to the fallback mirror"),
    }


def test_a_config_key_ending_in_a_directive_word_is_no_directive() -> None:
    s = sess(
        ("user", "#### yes-always: false\nmy .aider.conf.yml has auto-commits: true and never-ask: on"),
        ("user", "we run an always-on worker for the must-have queue"),
        ("user", "Always run the linter before committing. Don't push to main."),
    )
    got = sorted(a.text for a in anchors.extract(s) if a.type == "directive")
    assert got == ["Always run the linter before committing", "Don't push to main"]  # one a sentence


def test_a_directive_word_saying_nothing_to_do_is_no_directive() -> None:
    """A directive names an action on something of the project (issue 30: chat lines such as "She
    says tomatoes don't plant themselves." became ``user:`` Key facts). Written after the rule."""
    s = sess(
        ("user", "Grandpa says weeds never pull themselves."),
        ("user", "Always. Sleep well!"),
        ("user", "Never mind, it was my mistake."),
        ("user", "I must say, that went well."),
        ("user", "The painting must be shipped in a crate."),
        ("user", "I tried again and I don't see the chart anymore."),
        ("user", "Never commit the .env file. You must rotate the staging key weekly."),
        ("user", "please don't reformat `legacy_io.py`"),
        ("user", "The session token must stay in the cookie, and every handler must log its latency."),
        ("user", "The API token must be sent in a header."),
        ("user", "- Retries are capped, do not raise the limit"),
    )
    got = sorted(a.text for a in anchors.extract(s) if a.type == "directive")
    assert got == [
        "Never commit the .env file",
        "do not raise the limit",
        "must be sent in a header",
        "must log its latency",
        "must rotate the staging key weekly",
        "please don't reformat `legacy_io.py`",
    ]


# --- known issues name a fix ---------------------------------------------------------------------
def test_an_error_without_a_real_fix_is_no_known_issue(tmp_path: Path) -> None:
    got = _facts(
        tmp_path,
        errors=[
            "`fatal: could not lock config file .git/config` → unresolved",
            "`fatal: could not lock config file .git/config` → I'll fix the prop types in the `Card` "
            "component. (after it recurred)",
            "`TypeError: fmt is not a function` → I'll help sort out the `fmt` helper error.",
            "`Error: (none)` → Renamed `Event.kt` fields to match the API. (after it recurred)",
            "`PermissionError: [Errno 13] /var/run/app.sock` → The fix is working!",
            "`ModuleNotFoundError: No module named 'yaml'` → Added `pyyaml` to requirements.txt.",
        ],
    )
    assert got == {
        (
            "patterns",
            "Known issue: `ModuleNotFoundError: No module named 'yaml'` → Added `pyyaml` to requirements.txt.",
        )
    }


def test_a_status_alone_is_no_known_issue(tmp_path: Path) -> None:
    """`exit status 1 → Fixed by upgrading nats.go` told a later reader to upgrade NATS for any
    command that exits 1: an error that is only a status names nothing of what went wrong."""
    got = _facts(
        tmp_path,
        errors=[
            "`exit status 1` → Fixed by upgrading to github.com/nats-io/nats.go v1.37.0.",
            "`npm ERR! code 2` → Added the currency field to InvoiceDTO.",
            "`Process exited with code 4` → Bumped pydantic to 2.6.4 in requirements.lock.",
            "`undefined: nats.JetStreamContext` → Fixed by upgrading to github.com/nats-io/nats.go v1.37.0.",
        ],
    )
    assert got == {
        (
            "patterns",
            "Known issue: `undefined: nats.JetStreamContext` → Fixed by upgrading to "
            "github.com/nats-io/nats.go v1.37.0.",
        )
    }


# --- progress reports and chatter are not knowledge ---------------------------------------------
def test_progress_reports_and_chatter_are_not_promoted(tmp_path: Path) -> None:
    got = _facts(
        tmp_path,
        knowledge=[
            "The tests passed.",
            "All unit tests passed successfully!",
            "The fix is working!",
            "The fix is **verified and working correctly**!",
            "Here's the fix:",
            "Here's a summary of what was done:",
            "The error should be resolved now.",
            "Let's fix this by narrowing the search block to only the header section.",
            "+- [x] Fix the widget resize issue.",
            "Extra Fixes",
            # knowledge stays
            "The bitmap is drawn at a fixed 800x400, so a large widget is upscaled and blurry.",
            "The tests passed only after pinning `tzdata` because the CI image ships an old one.",
            "Retries need jitter because the workers all wake on the same tick.",
        ],
    )
    assert got == {
        ("patterns", "The bitmap is drawn at a fixed 800x400, so a large widget is upscaled and blurry."),
        (
            "constraints",
            "The tests passed only after pinning `tzdata` because the CI image ships an old one.",
        ),
        ("patterns", "Retries need jitter because the workers all wake on the same tick."),
    }


# --- fragments are not facts --------------------------------------------------------------------
def test_fragments_are_not_facts(tmp_path: Path) -> None:
    got = _facts(
        tmp_path,
        decisions=[
            "3be91c2` (the changelog commit)",
            ") and the rest of the release notes",
            "and then tag it as v1.0",
            "pin the release build to commit `3be91c2` so the store can reproduce it",
        ],
        knowledge=['Remove unused imports" warning is still shown for `src/util/dates.ts`.'],
    )
    assert got == {("decisions", "pin the release build to commit `3be91c2` so the store can reproduce it")}


def test_a_quote_inside_code_is_no_fragment(tmp_path: Path) -> None:
    line = 'Escapes in the spec are `\\\\` and `\\"`, and `_`-prefixed names are private.'
    assert _facts(tmp_path, knowledge=[line]) == {("patterns", line)}


def test_real_rules_that_look_like_junk_are_still_promoted(tmp_path: Path) -> None:
    """The junk filters must not drop real rules (found by review): a decision ending on "in" or
    "on" or starting with a dot, a short imperative rule, and narration that states a rule."""
    got = _facts(
        tmp_path,
        decisions=[
            "Users must be logged in",
            "Keep the feature flag turned on",
            ".env files are never committed; secrets come from Vault",
        ],
        knowledge=[
            "Always use pnpm",
            "Use UTC everywhere",
            "To fix flaky tests, always inject the clock instead of sleeping.",
            "You can only call the billing API from the worker process.",
            "Here is the rule: every migration must be reversible.",
        ],
    )
    texts = {text for _, text in got}
    for rule in (
        "Users must be logged in",
        "Keep the feature flag turned on",
        ".env files are never committed",
        "Always use pnpm",
        "Use UTC everywhere",
        "always inject the clock",
        "You can only call the billing API",
        "every migration must be reversible",
    ):
        assert any(rule in t for t in texts), (rule, texts)

"""Legacy Squad files as teams write them (scribed.squad.legacy): decisions.md in several layouts at once,
history.md with Core Context, Learnings and dated bullets. The fixtures are written here, in the
shapes real teams use, and every line of a file must land in exactly one block."""

from __future__ import annotations

from datetime import UTC, datetime

from scribed.squad.legacy import clean, is_priority, is_question, parse_decisions, parse_history

DECISIONS = """# Squad Decisions

> Append-only. Scribe merges the inbox here.

## Active Decisions

### 2026-04-02: Store uploads in the object store
**By:** Vela (Backend)
**What:** Uploaded files go to the `uploads` bucket, never to local disk.
**Why:** Pods are ephemeral; local files vanish on a reschedule.

---

### Keep the CLI single-binary (Orion)
We ship one static binary per platform. No plugin loader until 2.0.

### Pagination cursor format (2026-04-03)
**By:** Lyra | **Date:** 2026-04-03 | **Status:** ✅ APPROVED

Cursors are opaque base64 strings; clients must not parse them.

#### Notes
The old offset parameter keeps working for one release.

### Should we drop Python 3.10?
Undecided; revisit after the survey.

### P2 — polish the settings page
Later this quarter.

### Release status
| Component | State |
|---|---|
| api | green |

## 2026-04-05 — Rate limits for the public API

**By:** Vela

### Context
Abuse from a few keys starved the rest.

### Decision
Each API key gets 100 requests per minute, enforced in `gateway/limits.py`.

### Rationale
A per-key budget isolates noisy clients.

### Rollout plan
Enable it tenant by tenant over one week.

```
### this is not a heading: it sits in a fence
```

## 2026-04-07

### Retry failed webhooks three times
**What:** Webhook deliveries retry 3 times with exponential backoff.

### Log format is JSON lines
**What:** All services log JSON lines with a `trace_id` field.

## 2026-04-09

# Decision
Queue consumers are idempotent: a message may arrive twice.

# Why
The broker redelivers after a consumer crash.

# Decision: Nightly builds come from main

## Context
QA wants a fresh build every morning.

## Decision
The nightly workflow builds `main` at 02:00 UTC and publishes it to the staging channel.

## Why
Feature branches are too unstable for QA.
"""

HISTORY = """# Vela — History

## Core Context

**Role:** Backend developer for the upload service.
**Owner:** Sam
**Focus:**

---

- Owns `uploads/` and the `Bucket` client (#88).
**

## Learnings

### 2026-03-01: Multipart uploads
Large files need multipart uploads above 100 MB; the SDK default is 8 MB parts.

```python
## not a heading: a comment in a fence
client.upload(path, part_size=8 * 1024 * 1024)
```

### Signed URLs expire (2026-03-04)
Signed URLs expire after 15 minutes; the frontend must refresh them.

## Recent Updates

- 2026-03-10: Moved thumbnails to a worker queue (`thumbs` topic).
  - the worker runs in `workers/thumbs.py`
- 2026-03-12: Bucket lifecycle rule deletes temp files after a day.
"""


def covered(text: str, blocks: list) -> None:  # type: ignore[type-arg]
    lines = text.splitlines()
    owner: dict[int, int] = {}
    for n, b in enumerate(blocks):
        for i in range(b.first, b.last + 1):
            assert i not in owner, f"line {i} in two blocks"
            owner[i] = n
        assert b.text == "\n".join(lines[b.first - 1 : b.last])
    missing = [i for i in range(1, len(lines) + 1) if lines[i - 1].strip() and i not in owner]
    assert not missing, missing


def test_decisions_in_every_layout_keep_their_titles() -> None:
    blocks = parse_decisions(DECISIONS)
    covered(DECISIONS, blocks)
    decisions = [b for b in blocks if b.kind == "decision"]
    assert [(b.title, b.by, b.date.date().isoformat() if b.date else None) for b in decisions] == [
        ("Store uploads in the object store", "vela", "2026-04-02"),
        ("Keep the CLI single-binary (Orion)", "orion", None),
        ("Pagination cursor format", "lyra", "2026-04-03"),
        ("Rate limits for the public API", "vela", "2026-04-05"),
        ("Retry failed webhooks three times", "", "2026-04-07"),
        ("Log format is JSON lines", "", "2026-04-07"),
        ("Queue consumers are idempotent: a message may arrive twice.", "", "2026-04-09"),
        ("Nightly builds come from main", "", None),
    ]
    # sub-sections after a date-only heading, with no title: one untitled decision
    idem = decisions[-2]
    assert not idem.titled and "# Why" in idem.text
    assert idem.statement.endswith("**Why:** The broker redelivers after a consumer crash.")
    by = {b.title: b for b in decisions}
    # By/What/Why kept as written, the separator and the date line left out
    assert by["Store uploads in the object store"].statement == (
        "**By:** Vela (Backend)\n**What:** Uploaded files go to the `uploads` bucket, never to local disk.\n"
        "**Why:** Pods are ephemeral; local files vanish on a reschedule."
    )
    assert by["Keep the CLI single-binary (Orion)"].statement.startswith("We ship one static binary")
    # a field line (By | Date | Status) leads; the statement is the paragraph after it
    assert by["Pagination cursor format"].statement == (
        "**By:** Lyra | **Date:** 2026-04-03 | **Status:** ✅ APPROVED\n"
        "Cursors are opaque base64 strings; clients must not parse them."
    )
    assert "#### Notes" in by["Pagination cursor format"].text, "a nested sub-section belongs to its block"
    # ## DATE — Title owns its ### sub-sections; its statement is the Decision section (and why)
    rate = by["Rate limits for the public API"]
    assert "### Context" in rate.text and "### Rationale" in rate.text and "not a heading" in rate.text
    assert "### Rollout plan" in rate.text, "any ### under ## DATE — Title belongs to it"
    assert rate.statement == (
        "**By:** Vela\nEach API key gets 100 requests per minute, enforced in `gateway/limits.py`.\n\n"
        "**Rationale:** A per-key budget isolates noisy clients."
    )
    nightly = by["Nightly builds come from main"]
    assert nightly.statement.startswith("The nightly workflow builds `main` at 02:00 UTC")
    assert "**Why:** Feature branches are too unstable" in nightly.statement
    # not decisions, each with its reason; sub-sections never become decisions
    others = {b.title: b.reason for b in blocks if b.kind == "other" and b.reason != "section"}
    assert others == {
        "Should we drop Python 3.10?": "question",
        "P2 — polish the settings page": "priority",
        "Release status": "table",
    }
    titles = {b.title for b in blocks}
    assert not titles & {"Context", "Decision", "Rationale", "Why", "Notes", "Locked Decisions"}


def test_history_sections_entries_and_dated_bullets() -> None:
    blocks = parse_history(HISTORY)
    covered(HISTORY, blocks)
    core = [b for b in blocks if b.kind == "core"]
    assert len(core) == 1
    # the Core Context without its debris: the empty label, the rule, the lone "**"
    assert core[0].statement == (
        "**Role:** Backend developer for the upload service.\n**Owner:** Sam\n\n"
        "- Owns `uploads/` and the `Bucket` client (#88)."
    )
    entries = [(b.title, b.date.date().isoformat() if b.date else None) for b in blocks if b.kind == "entry"]
    assert entries == [
        ("Multipart uploads", "2026-03-01"),
        ("Signed URLs expire", "2026-03-04"),
        ("Moved thumbnails to a worker queue (`thumbs` topic).", "2026-03-10"),
        ("Bucket lifecycle rule deletes temp files after a day.", "2026-03-12"),
    ]
    multipart = next(b for b in blocks if b.title == "Multipart uploads")
    assert "## not a heading" in multipart.text, "a fence never ends an entry"
    thumbs = next(b for b in blocks if b.title.startswith("Moved thumbnails"))
    assert "workers/thumbs.py" in thumbs.text, "a nested bullet belongs to the dated bullet above it"


def test_clean_drops_debris_only() -> None:
    text = "**Why:**\n- because\n\n**Empty:**\n\n---\n**\n- \n```\n---\n**\n```\nplain **bold** text\n"
    assert clean(text) == "**Why:**\n- because\n\n```\n---\n**\n```\nplain **bold** text"


def test_questions_and_priority_labels() -> None:
    for q in (
        "Should we shard the ledger?",
        "Open question: who owns billing",
        "Is this right?",
        "Can we ship it",
    ):
        assert is_question(q), q
    for s in ("Do not refactor the parser yet", "Why ENDED stays enabled: no reset", "Ship on Tuesdays"):
        assert not is_question(s), s
    assert is_priority("P1 — cost dashboards") and is_priority("High priority: fix login")
    assert not is_priority("Pagination cursor format")


def test_dates_in_headings() -> None:
    blocks = parse_decisions("### 2026-03-18T21-10Z: Decision — CI review merged\n**What:** merged PR #32\n")
    assert blocks[0].date == datetime(2026, 3, 18, 21, 10, tzinfo=UTC)
    assert blocks[0].title == "Decision — CI review merged"


# A merged inbox file (``# Decision: T``) left at level 1 in the middle of decisions.md, with the
# file's usual ``###``/``##`` dated decisions after it; a design doc with a nested ``### Decision: T``
# and numbered sections after it; a title-only ``## Decision: T`` over a dated directive.
MERGED = """# Team Decisions

# Decision: Cache build artifacts per branch

**Author:** Vela
**Date:** 2026-05-02

## Context

CI rebuilt every dependency on each push.

## Decision

Artifacts are cached under a key made of the branch and the lockfile hash.

## Design choices

### One cache per branch, not per commit

Commits on one branch share most of their dependencies.

### 2026-05-03: Allow manual runs of the release workflow
**By:** Orion (CI), asked by Sam
**What:** `release.yml` gets a manual trigger so a maintainer can cut a build on demand.
**Why:** Waiting for the nightly schedule delayed hotfixes by a day.

### Retry flaky uploads once
**By:** Lyra
**What:** The upload step retries once after a 30 second pause.

## 2026-05-04: Lint job runs on every pull request

### Decision
No path filter: the linter is fast enough to run always.

## Governance

- Decisions land here through the inbox

## 2026-05-05: Merged inbox records

--- orion-notes.md ---
### 2026-05-05T09:30Z: Keep release notes in the repo
**By:** Orion
**What:** Release notes live in `docs/releases/`, one file per version.

# Tenant model redesign

**Date:** 2026-05-06
**By:** Vela

## 1. Problem

One user belongs to one tenant only.

## 2. Tokens

### Decision: Tokens carry the active tenant

**Rationale:** Every route already reads the tenant from the token.

## 3. Endpoints

### Changed endpoints
- `/login` takes an optional tenant

## Decision: Squash commits per topic
### 2026-05-07T08:00:00Z: User directive
**By:** Sam (via Copilot)
**What:** Commits are squashed per topic before merge.
"""


def test_a_decision_nested_under_another_is_a_decision_of_its_own() -> None:
    blocks = parse_decisions(MERGED)
    covered(MERGED, blocks)
    decisions = [
        (b.title, b.by, b.date.date().isoformat() if b.date else None) for b in blocks if b.kind == "decision"
    ]
    assert decisions == [
        ("Cache build artifacts per branch", "", "2026-05-02"),
        ("Allow manual runs of the release workflow", "orion", "2026-05-03"),
        ("Retry flaky uploads once", "lyra", "2026-05-02"),  # undated: the date of the one it is in
        ("Lint job runs on every pull request", "", "2026-05-04"),
        ("Merged inbox records", "orion", "2026-05-05"),
        ("Tenant model redesign", "vela", "2026-05-06"),
        ("Tokens carry the active tenant", "", "2026-05-06"),
        ("Squash commits per topic", "sam", "2026-05-07"),
    ]
    by = {b.title: b for b in blocks}
    cache = by["Cache build artifacts per branch"]
    assert "Artifacts are cached under a key" in cache.statement
    assert "### One cache per branch" in cache.text, "an undated design note stays in its decision"
    assert "release.yml" not in cache.text and "**By:**" not in cache.text
    assert by["Allow manual runs of the release workflow"].statement.startswith("**By:** Orion (CI)")
    assert by["Lint job runs on every pull request"].statement.startswith("No path filter")
    assert by["Governance"].kind == "other", "a grouping heading after nested decisions groups again"
    # the numbered sections after a nested decision are its text, never facts of their own
    assert "### Changed endpoints" in by["Tokens carry the active tenant"].text
    assert not {"Changed endpoints", "3. Endpoints"} & set(by)
    assert by["Squash commits per topic"].statement.startswith("**By:** Sam")


def test_dated_bullets_keep_their_time_zone_and_a_clean_title() -> None:
    text = (
        "# Wren\n\n## Learnings\n\n"
        "- **2026-05-01T09:15:30.250+02:00 retry storm triage:** the queue backs off per tenant now\n"
        "- 2026-05-02T23:40:00-05:00: moved the cron to UTC\n"
        "- **2026-05-03:** cache warm-up runs after each deploy\n"
        "- 2026-05-04T07-05Z — nightly export is idempotent\n"
    )
    blocks = [b for b in parse_history(text) if b.kind == "entry"]
    assert [(b.title, b.date.astimezone(UTC) if b.date else None) for b in blocks] == [
        (
            "retry storm triage: the queue backs off per tenant now",
            datetime(2026, 5, 1, 7, 15, 30, 250000, tzinfo=UTC),
        ),
        ("moved the cron to UTC", datetime(2026, 5, 3, 4, 40, tzinfo=UTC)),
        ("cache warm-up runs after each deploy", datetime(2026, 5, 3, tzinfo=UTC)),
        ("nightly export is idempotent", datetime(2026, 5, 4, 7, 5, tzinfo=UTC)),
    ]


GOVERNED_INBOX = """---
id: 7c1d9e2a-0b3f-4d5e-8a6b-1c2d3e4f5a6b
class: DECISION
loadGuidance: [ALWAYS]
title: "Deploys freeze on Fridays after 15:00"
author: "Orion"
createdAt: 2026-04-18T16:05:00.000Z
metadata: {}
---

No production deploy starts on a Friday after 15:00 UTC; hotfixes need the on-call lead.
"""


def test_a_governed_inbox_file_is_one_decision_under_its_title() -> None:
    blocks = parse_decisions(GOVERNED_INBOX)
    covered(GOVERNED_INBOX, blocks)
    [b] = [b for b in blocks if b.kind == "decision"]
    assert (b.title, b.by, b.date) == (
        "Deploys freeze on Fridays after 15:00",
        "orion",
        datetime(2026, 4, 18, 16, 5, tzinfo=UTC),
    )
    assert b.statement.startswith("No production deploy starts on a Friday") and "class:" not in b.statement


def test_governed_files_and_decide_blocks_merged_into_a_log_are_each_one_decision() -> None:
    """After ``squad nap``: inbox files appended under ``## Governance`` (a governed one, a block the
    ``squad_decide`` tool wrote); a rule between two notes and a header in a code fence are text."""
    local = GOVERNED_INBOX.replace("class: DECISION", "class: LOCAL").replace("Deploys freeze", "Scratch")
    text = (
        "# Squad Decisions\n\n## Active Decisions\n\n---\n\nNothing yet.\n\n---\n\n"
        "## Governance\n\n- All meaningful changes require team consensus\n\n"
        + GOVERNED_INBOX
        + "\n### 2026-04-19T08-30-00: Tag releases from main only\n\n**By:** Lyra\n"
        "**What:** Release tags are cut from `main`, never from a feature branch.\n\n"
        "**Why:** Two hotfix tags missed commits.\n\n"
        + local
        + "\n```yaml\n---\ntitle: not a header\n---\n```\n"
    )
    blocks = parse_decisions(text)
    covered(text, blocks)
    decisions = [(b.title, b.by) for b in blocks if b.kind == "decision"]
    assert decisions == [
        ("Deploys freeze on Fridays after 15:00", "orion"),
        ("Tag releases from main only", "lyra"),
    ]
    gov = next(b for b in blocks if b.title == "Governance")
    assert "id:" not in gov.text  # the header is the decision's, not the section's


def test_a_long_statement_cut_after_a_label_does_not_end_on_the_label() -> None:
    """The statement is clipped to a bound; a ``**Rationale:**`` whose text fell past the cut is
    dropped, never left as a line that carries nothing."""
    what = "**What:** " + " ".join(f"Service `svc_{i}` moves to pool p{i}." for i in range(40))
    text = "### Pools move\n**By:** Kes\n" + what[:1440] + "\n**Rationale:**\n- " + "load " * 300 + "\n"
    [b] = [b for b in parse_decisions(text) if b.kind == "decision"]
    last = b.statement.splitlines()[-1]
    assert last.startswith("**What:**") and last.endswith(" …"), last[-80:]
    assert "Rationale" not in b.statement

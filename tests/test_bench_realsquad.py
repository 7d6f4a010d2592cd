"""bench/realsquad.py on a small Squad tree written here: it never changes its input, skips a
missing path, and its measures (titled decisions, debris, junk facts) are right by hand."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "bench") not in sys.path:
    sys.path.insert(0, str(ROOT / "bench"))

import realsquad  # noqa: E402

DECISIONS = """# Team Decisions

## Active Decisions

### 2026-03-02: Keep the queue in Postgres
**By:** Nova
**What:** The job queue stays in `jobs.queue` on Postgres 16.
**Why:** One fewer service to run.

### Retry budget per tenant (Nova)
Retries are capped at 5 per tenant per minute in src/retry/budget.py.

### Should we shard the ledger?
Nobody knows yet.

### P2 — tidy the admin screens
Later.

## 2026-03-05 — Cache layout for the gateway

### Context
The gateway reads tenant config on every request.

### Rationale
Reads dominate writes 200 to 1.

```
### not a heading: inside a fence
```

# Decision: Ship nightly builds from main
## Context
Testers want fresh builds.
## Decision
Nightly builds come from `main` at 02:00 UTC.
"""

HISTORY = """# Nova — History

## Core Context
**Role:**
- Owns the job queue (#41) and `RetryBudget`.

---

## Learnings

### 2026-03-03: Queue latency
Measured p99 of 40 ms on `jobs.queue` after the index on `run_at`.
"""


def write_tree(base: Path) -> Path:
    squad = base / "team" / ".squad"
    (squad / "agents" / "nova").mkdir(parents=True)
    (squad / "agents" / "nova" / "history.md").write_text(HISTORY)
    (squad / "agents" / "nova" / "charter.md").write_text("# Nova\n\nBackend.\n")
    (squad / "decisions.md").write_text(DECISIONS)
    (squad / "memory" / "tombstones").mkdir(parents=True)
    (squad / "memory" / "tombstones" / "t1.json").write_text('{"id": "t1"}\n')
    (squad / "memory" / "audit.jsonl").write_text('{"op": "squad"}\n')
    return squad


def test_titled_decisions_follow_the_layouts() -> None:
    titles = realsquad.titled_decisions(DECISIONS)
    assert [realsquad.norm_title(t) for t in titles] == [
        "keep the queue in postgres",
        "retry budget per tenant",
        "cache layout for the gateway",
        "ship nightly builds from main",
    ]


def test_debris_and_junk_by_hand() -> None:
    text = "### A\n**\n---\n- **Why:**\n\n### B\n**Why:**\n- because\n- \n```\n---\n```\n**By:** Nova\n"
    assert realsquad.debris_lines(text) == ["**", "---", "- **Why:**", "- "]
    assert realsquad.is_junk("Should we shard the ledger")
    assert realsquad.is_junk("2026-03-01: Is this right?")
    assert realsquad.is_junk("P2 — tidy the admin screens")
    assert not realsquad.is_junk("Why ENDED stays enabled: no reset button")
    assert not realsquad.is_junk("Keep the queue in Postgres")


def test_bench_runs_and_never_changes_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    squad = write_tree(tmp_path)
    before = realsquad.digests(squad)
    code = realsquad.main([str(squad.parent), str(tmp_path / "absent"), "--json", "--as-of", "2026-12-01"])
    assert code == 0
    captured = capsys.readouterr()
    assert "skipped:" in captured.err and "absent" in captured.err
    data = json.loads(captured.out)
    assert realsquad.digests(squad) == before
    [r] = data["repos"]
    assert r["repo"] == "team" and r["identical"] and r["governed_created"] == []
    assert r["titled_decisions"] == 4 and r["legacy_files"] == 2
    assert r["identifiers"] > 0 and r["kept"] is not None
    assert 0 <= r["titled_in_wiki"] <= 4
    assert set(r["agents"]) == {"nova"}


def test_no_data_exits_cleanly(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert realsquad.main([str(tmp_path / "nothing")]) == 0
    out = capsys.readouterr().out
    assert "not found" in out and "DEV.md" in out

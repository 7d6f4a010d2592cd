"""Reversals across sessions, review before promotion and the audit log (issue 12 items 4 and 5).

A decision promoted in September is reversed a month later: by a cold entry still within the TTL,
by an inbox drop, by a wiki-write, whatever the topic, with the identifier spelled another way. In
review mode nothing reaches the wiki before approval, approve and reject are idempotent, a rejected
fact is never proposed again, and every wiki change has exactly one audit record, even when an
approval is interrupted by a crash.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_promote import cold_entry, memory_bytes

from scribed.cli.main import main
from scribed.compress.entry import split_entries
from scribed.config import from_dict
from scribed.core import promote
from scribed.curate import review
from scribed.tiers import audit
from scribed.tiers.cold import Layout
from scribed.tiers.wiki import WikiDoc

SEPT = datetime(2026, 9, 1, 10, 0, tzinfo=UTC)
OCT = datetime(2026, 10, 6, 10, 0, tzinfo=UTC)
OLD = "use `scheduler-p1` for the nightly export jobs"
# the identifier is the only thing the reversal names, spelled another way
REVERSAL = "We reversed the earlier decision to use Scheduler_P1; exports now run from cron."


def cfg(root: Path, mode: str = "auto") -> Any:
    return from_dict({"root": str(root), "promote": {"mode": mode}})


def clock_at(when: datetime) -> Any:
    return lambda: when


def seed_september(root: Path, mode: str = "auto") -> Layout:
    """A September decision, promoted to the wiki in October (it is past the 30-day TTL)."""
    layout = Layout(root)
    (root / ".squad").mkdir(exist_ok=True)
    cold_entry(layout, "picard", SEPT, "e-000000000901", decisions=[OLD])
    promote.promote(cfg(root, mode), as_of=datetime(2026, 10, 5, tzinfo=UTC), clock=clock_at(OCT))
    return layout


def decisions(layout: Layout, topic: str = "decisions") -> WikiDoc:
    return WikiDoc.parse(topic, (layout.wiki / f"{topic}.md").read_text())


def test_a_cold_reversal_a_month_later_supersedes_before_its_own_ttl(tmp_path: Path) -> None:
    layout = seed_september(tmp_path)
    assert decisions(layout).blocks[0].active
    cold_entry(layout, "riker", OCT, "e-000000001006", decisions=[REVERSAL])
    out = promote.promote(
        cfg(tmp_path), as_of=datetime(2026, 10, 7, tzinfo=UTC), clock=clock_at(OCT)
    ).to_json()
    assert out["promoted"] == [] and out["kept"] == 1, "the October entry is not due"
    assert [r["entry"] for r in out["reversals"]] == ["e-000000001006"]
    doc = decisions(layout)
    new, old = doc.blocks
    assert new.active and "cron" in new.text and old.title == OLD
    assert old.status.startswith("superseded by 2026-10-06: We reversed the earlier decision")
    text = (layout.wiki / "decisions.md").read_text()
    assert text.index("## Superseded") < text.index(f"### {OLD}"), "both shown, the old one under Superseded"
    # the entry stays in cold, and its later promotion adds nothing twice
    assert [e.entry_id for e in split_entries((layout.cold / "riker.md").read_text())[1]] == [
        "e-000000001006"
    ]
    promote.promote(cfg(tmp_path), as_of=datetime(2026, 12, 1, tzinfo=UTC), clock=clock_at(OCT))
    assert len(decisions(layout).blocks) == 2
    changes = [(r["change"], r["topic"]) for r in audit.read(layout)]
    assert changes.count(("superseded", "decisions")) == 1


def test_inbox_and_wiki_write_reversals_cross_topics(tmp_path: Path) -> None:
    layout = seed_september(tmp_path)
    box = layout.memory / "inbox" / "wiki"
    box.mkdir(parents=True)
    (box / "ops.md").write_text(f"---\ntopic: ops\nagent: worf\n---\n{REVERSAL}\n")
    promote.apply_inbox(layout, cfg(tmp_path), clock_at(OCT))
    assert not decisions(layout).blocks[0].active, "an inbox drop in another topic reverses it"
    assert "ops/" not in decisions(layout).blocks[0].status
    recs = [r for r in audit.read(layout) if r["change"] == "superseded"]
    assert len(recs) == 1 and recs[0]["topic"] == "decisions" and recs[0]["action"] == "inbox"

    # a wiki-write reverses a convention, identifier spelled with spaces and capitals
    promote.write_agent_fact(layout, "conventions", "data", "Always tag images with the `build-id` label.",
                             clock=clock_at(SEPT))  # fmt: skip
    promote.write_agent_fact(
        layout, "deploys", "data", "We no longer tag images with the Build ID label; digests are enough.",
        clock=clock_at(OCT),
    )  # fmt: skip
    assert not decisions(layout, "conventions").blocks[0].active


def test_review_mode_proposes_then_approve_and_reject(tmp_path: Path) -> None:
    root = tmp_path
    layout = seed_september(root, mode="review")
    assert not (layout.wiki / "decisions.md").exists(), "nothing reaches the wiki before approval"
    assert split_entries((layout.cold / "picard.md").read_text())[1] == [], "the entry is archived"
    pending = review.listing(layout)
    assert [(p.topic, p.title, p.source) for p in pending] == [("decisions", OLD, "e-000000000901")]
    pid = pending[0].id
    assert not any(audit.read(layout)), "a proposal is not a wiki change"

    # the CLI lists, approves (twice: the second is a no-op), shows the history
    (root / "scribed.toml").write_text(f'root = "{root}"\n\n[promote]\nmode = "review"\n')
    run = CliRunner()
    base = ["--config", str(root / "scribed.toml")]
    listed = run.invoke(main, [*base, "review", "--json"])
    assert listed.exit_code == 0, listed.output
    assert [p["id"] for p in json.loads(listed.output)["proposals"]] == [pid]
    ok = run.invoke(main, [*base, "review", "approve", pid])
    assert ok.exit_code == 0 and "approved" in ok.output, ok.output
    snap = memory_bytes(root)
    again = run.invoke(main, [*base, "review", "approve", pid])
    assert again.exit_code == 0 and "already approved" in again.output
    assert memory_bytes(root) == snap
    assert decisions(layout).blocks[0].title == OLD
    hist = run.invoke(main, [*base, "wiki", "history", "decisions", "--json"])
    assert hist.exit_code == 0, hist.output
    rows = json.loads(hist.output)["records"]
    assert [(r["action"], r["change"], r["proposal"]) for r in rows] == [("approve", "added", pid)]
    text = run.invoke(main, [*base, "wiki", "history", "decisions"])
    assert "approve" in text.output and OLD in text.output

    # a rejected proposal never comes back, and reject is idempotent
    cold_entry(layout, "riker", datetime(2026, 9, 2, tzinfo=UTC), "e-000000000902",
               decisions=["keep the export files for 90 days"])  # fmt: skip
    promote.promote(cfg(root, "review"), as_of=datetime(2026, 10, 5, tzinfo=UTC), clock=clock_at(OCT))
    [p2] = review.listing(layout)
    assert run.invoke(main, [*base, "review", "reject", p2.id]).exit_code == 0
    assert "already rejected" in run.invoke(main, [*base, "review", "reject", p2.id]).output
    assert "already rejected" in run.invoke(main, [*base, "review", "approve", p2.id]).output
    cold_entry(layout, "riker", datetime(2026, 9, 2, tzinfo=UTC), "e-000000000902",
               decisions=["keep the export files for 90 days"])  # fmt: skip
    promote.promote(cfg(root, "review"), as_of=datetime(2026, 10, 5, tzinfo=UTC), clock=clock_at(OCT))
    assert review.listing(layout) == [], "rejected: never proposed again"
    assert "90 days" not in (layout.wiki / "decisions.md").read_text()
    unknown = run.invoke(main, [*base, "review", "approve", "p-nope"])
    assert unknown.exit_code == 2 and "p-nope" in unknown.output


def test_import_in_review_mode_writes_proposals_only(tmp_path: Path) -> None:
    from test_import import build_mixed

    from scribed.core.importer import import_squad

    root = tmp_path / "repo"
    root.mkdir()
    build_mixed(root)
    out = import_squad(cfg(root, "review"), None, as_of=datetime(2026, 5, 1, tzinfo=UTC)).to_json()
    layout = Layout(root)
    assert out["mode"] == "review" and {d["action"] for d in out["decisions"]} == {"proposed"}
    assert not layout.wiki.exists() or not list(layout.wiki.glob("*.md"))
    assert len(review.listing(layout)) >= len(out["decisions"])
    again = import_squad(cfg(root, "review"), None, as_of=datetime(2026, 5, 1, tzinfo=UTC)).to_json()
    assert again["decisions"] == [], "proposed once"


def test_a_crash_mid_approval_leaves_one_record_per_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = seed_september(tmp_path, mode="review")
    cold_entry(layout, "riker", datetime(2026, 9, 3, tzinfo=UTC), "e-000000000903",
               decisions=["store export files in the `exports` bucket"])  # fmt: skip
    promote.promote(cfg(tmp_path, "review"), as_of=datetime(2026, 10, 5, tzinfo=UTC), clock=clock_at(OCT))
    ids = [p.id for p in review.listing(layout)]
    assert len(ids) == 2

    def crash(*_: Any, **__: Any) -> None:
        raise OSError("disk gone")

    # 1. crash after the wiki write, before its audit records
    monkeypatch.setattr(audit, "append", crash)
    with pytest.raises(OSError, match="disk gone"):
        review.approve(layout, ids, clock_at(OCT))
    monkeypatch.undo()
    wiki_text = (layout.wiki / "decisions.md").read_text()
    assert wiki_text.count("\n### ") == 2, "the wiki file is whole"
    assert [p.status for p in review.listing(layout, everything=True)] == ["pending", "pending"]
    review.approve(layout, ids, clock_at(OCT))
    assert (layout.wiki / "decisions.md").read_text() == wiki_text, "nothing merged twice"
    recs = [r for r in audit.read(layout) if r.get("proposal")]
    assert sorted(r["proposal"] for r in recs) == sorted(ids), "one record per change"

    # 2. crash after the audit records, before the proposals file: the rerun adds no record
    cold_entry(layout, "worf", datetime(2026, 9, 4, tzinfo=UTC), "e-000000000904",
               decisions=["page the on-call after two failed exports"])  # fmt: skip
    promote.promote(cfg(tmp_path, "review"), as_of=datetime(2026, 10, 5, tzinfo=UTC), clock=clock_at(OCT))
    [p3] = [p.id for p in review.listing(layout)]
    monkeypatch.setattr(review.Proposals, "save", crash)
    with pytest.raises(OSError, match="disk gone"):
        review.approve(layout, [p3], clock_at(OCT))
    monkeypatch.undo()
    review.approve(layout, [p3], clock_at(OCT))
    assert [r["proposal"] for r in audit.read(layout) if r.get("proposal") == p3] == [p3]
    assert review.listing(layout) == []

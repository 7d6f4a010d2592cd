"""``scribed import`` across ``squad nap``: ids come from what a unit says, so material nap moves (history
sections into ``history-archive.md``, inbox files into ``decisions.md``, old decisions into
``decisions-archive.md``) is recognised and never imported twice, and no evidence count rises.

The trees are written here by hand in the shapes Squad writes (a governed inbox file with YAML front
matter, a ``squad_decide`` block, ``## Governance``); the moves are the ones nap makes, done by hand.
The real CLI is exercised in tests/test_squad_cli.py.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from scribed.config import from_dict
from scribed.core import import_units
from scribed.core.importer import import_squad
from scribed.tiers.cold import Layout

AS_OF = datetime(2026, 5, 20, tzinfo=UTC)
OLD_SECTIONS = (
    "## Learnings\n\n### 2026-01-05: Ledger replay\nReplaying `ledger.wal` needs the `--from-seq` flag; "
    "without it the replay starts at zero.\n\n"
    "## 2026-02-11: Gateway timeouts\nThe gateway must keep its upstream timeout under 30 s; "
    "`gateway/limits.py` holds it.\n\n"
)
NEW_SECTIONS = (
    "## 2026-05-12: Retry budget\nRetries never exceed three per request; `retry.py` enforces the cap.\n\n"
    "## Learnings\n\n- 2026-05-14: The `orders` index needs a rebuild after each schema bump.\n"
)
HISTORY_HEAD = "# Wren — History\n\n## Core Context\n\nOwns the gateway and the ledger replay tooling.\n\n"
GOVERNED = (
    "---\nid: 5b0c2d1e-7f4a-4c1b-9e3d-2a6f8b1c0d9e\nclass: DECISION\nloadGuidance: [ALWAYS]\n"
    'title: "Ship the gateway behind a feature flag"\nauthor: "wren"\n'
    "createdAt: 2026-05-15T09:30:00.000Z\nmetadata: {}\n---\n\n"
    "The new gateway ships behind the `gateway_v2` flag until the load test passes.\n"
)
DECIDE = (
    "### 2026-05-16T10-20-30: Pin the ledger schema at v4\n\n**By:** wren\n"
    "**What:** The ledger schema stays at v4 until the replay tool reads v5.\n\n"
    "**Why:** Replays of v5 files fail today.\n"
)
OLD_DECISION = (
    "### 2026-01-20: Use `scheduler_p1` for nightly jobs\n**By:** Wren\n"
    "**What:** Nightly jobs run on the `scheduler_p1` pool.\n\n"
)
DECISIONS_HEAD = "# Squad Decisions\n\n## Active Decisions\n\n"
GOVERNANCE = "## Governance\n\n- All meaningful changes require team consensus\n"


def _write(root: Path, files: dict[str, str]) -> None:
    squad = root / ".squad"
    for rel in list(p.relative_to(squad).as_posix() for p in squad.rglob("*.md")) if squad.is_dir() else []:
        if not rel.startswith("memory/") and rel not in files:
            (squad / rel).unlink()
    for rel, text in files.items():
        (squad / rel).parent.mkdir(parents=True, exist_ok=True)
        (squad / rel).write_text(text)


def before_nap() -> dict[str, str]:
    return {
        "agents/wren/history.md": HISTORY_HEAD + OLD_SECTIONS + NEW_SECTIONS,
        "agents/wren/charter.md": "# Wren\n\nGateway.\n",
        "decisions.md": DECISIONS_HEAD + OLD_DECISION + GOVERNANCE,
        "decisions/inbox/wren-ship-the-gateway-behind-a-feature-flag-5b0c2d1e.md": GOVERNED,
        "decisions/inbox/wren-pin-the-ledger-schema-at-v4.md": DECIDE,
    }


def after_nap() -> dict[str, str]:
    """What nap leaves: old history sections archived, the inbox appended to decisions.md (under
    ``## Governance``, its last section) and emptied, the old ``###`` decision archived."""
    decisions = DECISIONS_HEAD + GOVERNANCE + "\n" + GOVERNED.rstrip() + "\n" + "\n" + DECIDE.rstrip() + "\n"
    return {
        "agents/wren/history.md": HISTORY_HEAD + NEW_SECTIONS,
        "agents/wren/history-archive.md": OLD_SECTIONS + "\n",
        "agents/wren/charter.md": "# Wren\n\nGateway.\n",
        "decisions.md": decisions,
        "decisions-archive.md": OLD_DECISION,
    }


def squad_bytes(root: Path) -> dict[str, bytes]:
    squad = root / ".squad"
    return {
        p.relative_to(squad).as_posix(): p.read_bytes()
        for p in sorted(squad.rglob("*"))
        if p.is_file() and "memory" not in p.relative_to(squad).parts
    }


def tiers(root: Path) -> dict[str, str]:
    mem = root / ".squad" / "memory"
    return {p.relative_to(mem).as_posix(): p.read_text() for p in sorted(mem.glob("*/*.md"))}


def evidence(root: Path) -> list[str]:
    """Every fact's confidence (``N sessions, M agents``), in file order."""
    return re.findall(r"confidence: [^|\n]*", "".join(tiers(root).values()))


def run(root: Path) -> dict[str, object]:
    before = squad_bytes(root)
    out = import_squad(from_dict({"root": str(root)}), None, as_of=AS_OF).to_json()
    assert squad_bytes(root) == before, "scribed import changed a Squad file"
    return out


def test_nap_moves_are_recognised_and_nothing_is_counted_twice(tmp_path: Path) -> None:
    _write(tmp_path, before_nap())
    first = run(tmp_path)
    units = [*first["cold"], *first["promoted"], *first["archived"]]  # type: ignore[misc]
    assert len(units) == 4 and len(first["cold"]) == 2 and len(first["decisions"]) == 3  # type: ignore[arg-type]
    wiki = tiers(tmp_path)["wiki/decisions.md"]
    for title in (
        "Ship the gateway behind a feature flag",
        "Pin the ledger schema at v4",
        "Use `scheduler_p1` for nightly jobs",
    ):
        assert f"### {title}\n" in wiki
    snap, counts = tiers(tmp_path), evidence(tmp_path)
    _write(tmp_path, after_nap())
    again = run(tmp_path)
    assert again["cold"] == [] and again["decisions"] == [] and again["promoted"] == []
    assert evidence(tmp_path) == counts
    assert tiers(tmp_path) == snap
    assert run(tmp_path)["skipped"] == again["skipped"]  # and a third import after it, neither


def test_a_root_imported_with_path_ids_is_not_imported_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A root an earlier version imported (ids hashed the file): unmoved units match by their old id,
    moved ones by their content (cold entry sha256, wiki title and text)."""
    _write(tmp_path, before_nap())
    with monkeypatch.context() as m:
        m.setattr(import_units.Unit, "ref", import_units.Unit.legacy_ref)
        run(tmp_path)
    snap, counts = tiers(tmp_path), evidence(tmp_path)
    same = run(tmp_path)
    assert same["cold"] == [] and same["decisions"] == [] and tiers(tmp_path) == snap
    _write(tmp_path, after_nap())
    moved = run(tmp_path)
    assert moved["cold"] == [] and moved["decisions"] == [] and moved["promoted"] == []
    assert evidence(tmp_path) == counts and tiers(tmp_path) == snap


def test_old_entries_promoted_then_moved_add_no_evidence(tmp_path: Path) -> None:
    """Entries past the cold TTL go through promotion; moved to the archive, they promote nothing
    again (a fact's session count rises only with new sessions)."""
    _write(tmp_path, before_nap())
    late = datetime(2026, 12, 1, tzinfo=UTC)
    out = import_squad(from_dict({"root": str(tmp_path)}), None, as_of=late).to_json()
    assert out["promoted"] or out["archived"]
    snap, counts = tiers(tmp_path), evidence(tmp_path)
    _write(tmp_path, after_nap())
    again = import_squad(from_dict({"root": str(tmp_path)}), None, as_of=late).to_json()
    assert again["promoted"] == [] and again["archived"] == [] and again["decisions"] == []
    assert evidence(tmp_path) == counts and tiers(tmp_path) == snap


def test_same_first_entry_in_every_agent_is_each_agents_own(tmp_path: Path) -> None:
    """``squad init`` writes the same Learnings line into every agent's history: one entry each."""
    files = {
        f"agents/{a}/history.md": "# H\n\n## Learnings\n\nInitial setup complete.\n" for a in ("ada", "bo")
    }
    _write(tmp_path, files)
    out = run(tmp_path)
    assert sorted(e["agent"] for e in out["cold"]) == ["ada", "bo"]  # type: ignore[union-attr]
    layout = Layout(tmp_path)
    assert layout.cold_file("ada").is_file() and layout.cold_file("bo").is_file()


def test_a_new_agent_with_the_same_first_entry_still_gets_it(tmp_path: Path) -> None:
    """An agent added later whose first entry reads like another's is not taken as imported."""
    first = "# H\n\n## Learnings\n\nInitial setup complete.\n"
    _write(tmp_path, {"agents/ada/history.md": first})
    run(tmp_path)
    _write(tmp_path, {"agents/ada/history.md": first, "agents/bo/history.md": first})
    out = run(tmp_path)
    assert [e["agent"] for e in out["cold"]] == ["bo"]  # type: ignore[union-attr]


def test_ids_do_not_depend_on_the_file(tmp_path: Path) -> None:
    """The same decision read from its inbox file and from decisions.md (where nap appended it, after
    other blocks), and the same history section from history.md and history-archive.md: one id."""
    from scribed.core.import_read import parse_decisions, parse_history

    _write(tmp_path, before_nap())
    squad = tmp_path / ".squad"
    inbox = sorted((squad / "decisions" / "inbox").glob("*.md"))
    ids = {u.title: u.ref for p in inbox for u in parse_decisions(p, str(p))[0]}
    _write(tmp_path, after_nap())
    merged = {u.title: u.ref for u in parse_decisions(squad / "decisions.md", "decisions.md")[0]}
    assert ids and all(merged[t] == r for t, r in ids.items())
    archived = {u.title: u.ref for u in parse_decisions(squad / "decisions-archive.md", "a.md")[0]}
    _write(tmp_path, before_nap())
    live = {u.title: u.ref for u in parse_decisions(squad / "decisions.md", "decisions.md")[0]}
    assert archived and all(live[t] == r for t, r in archived.items())
    hist = squad / "agents" / "wren" / "history.md"
    before = {u.title: u.ref for u in parse_history("wren", hist, "h.md").units}
    _write(tmp_path, after_nap())
    moved = parse_history("wren", squad / "agents/wren/history-archive.md", "a.md", pinned=False).units
    assert len(moved) == 2 and all(before[u.title] == u.ref for u in moved)


def test_an_undated_team_update_keeps_its_id_when_the_file_changes(tmp_path: Path) -> None:
    """An undated ``📌 Team update`` takes its file's date; the file's date moves with every edit (and
    nap), the update's id and its evidence count do not."""
    import os

    text = (
        HISTORY_HEAD
        + "📌 **Team update (sprint 4):** the gateway owns rate limiting — decided by Wren\n\n"
        + NEW_SECTIONS
    )
    _write(tmp_path, {"agents/wren/history.md": text})
    run(tmp_path)
    snap, counts = tiers(tmp_path), evidence(tmp_path)
    assert "### the gateway owns rate limiting\n" in snap["wiki/decisions.md"]
    hist = tmp_path / ".squad" / "agents" / "wren" / "history.md"
    later = datetime(2026, 5, 19, tzinfo=UTC).timestamp()
    os.utime(hist, (later, later))
    run(tmp_path)
    assert evidence(tmp_path) == counts
    assert tiers(tmp_path)["wiki/decisions.md"] == snap["wiki/decisions.md"]  # no second source


SHAPES = """# Decisions

## 2026-05-02

### Adopt trunk-based flow (Kestrel)
**What:**
Every change merges to `main` behind a flag.

**Why:**
Long branches drifted for weeks.

### Cache warmers run hourly
The warmers in `jobs/warm.py` now run hourly; the daily run missed the morning peak.

**Rationale:**

### Run nightly jobs on Scheduler_P1
**By:** Kestrel
**What:** Nightly jobs run on the `Scheduler_P1` pool.
"""
REVERSAL = GOVERNED.replace(
    "Ship the gateway behind a feature flag", "Nightly jobs leave scheduler-p1"
).replace(
    "The new gateway ships behind the `gateway_v2` flag until the load test passes.",
    "We reverse the earlier decision to run nightly jobs on `scheduler-p1`; they run from cron now.",
)


def test_every_titled_shape_reaches_the_wiki_and_a_reversal_matches_any_spelling(tmp_path: Path) -> None:
    """``### Title (Agent)`` under a ``## DATE``, free prose with no What/Why, labels with their text on
    the next line; a label with nothing after it is no fact line; the old decision, also copied into
    the archive, is one fact, superseded by a governed reversal spelled ``scheduler-p1``."""
    _write(
        tmp_path,
        {
            "agents/wren/history.md": HISTORY_HEAD + NEW_SECTIONS,
            "decisions.md": SHAPES,
            "decisions-archive.md": SHAPES.split("## 2026-05-02\n\n")[1].split("### Run")[0]
            + "### Run"
            + SHAPES.split("### Run")[1],
            "decisions/inbox/wren-nightly-jobs-leave-scheduler-p1-5b0c2d1e.md": REVERSAL,
        },
    )
    run(tmp_path)
    wiki = tiers(tmp_path)["wiki/decisions.md"]
    active, _, superseded = wiki.partition("## Superseded")
    for title in (
        "Adopt trunk-based flow (Kestrel)",
        "Cache warmers run hourly",
        "Nightly jobs leave scheduler-p1",
    ):
        assert active.count(f"### {title}\n") == 1, title
    assert "Every change merges to `main` behind a flag." in active
    assert wiki.count("### Run nightly jobs on Scheduler_P1\n") == 1
    assert "### Run nightly jobs on Scheduler_P1\n" in superseded
    sys_path = Path(__file__).resolve().parents[1] / "bench"
    import sys

    sys.path.insert(0, str(sys_path))
    import realsquad

    assert realsquad.debris_lines(wiki) == []
    assert "**Rationale:**" not in wiki

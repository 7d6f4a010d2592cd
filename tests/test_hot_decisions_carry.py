"""A seeded hot file's Active decisions after a session that decided nothing are the last deciding
session's, dated (an exploratory tester's spawn lost "use the stdlib csv module, not pandas" when the
next session was about the deploy); only that session's, so an older decision it may have reversed
in other words is never shown beside it as current (a review's)."""

from __future__ import annotations

from pathlib import Path

from scribed.tiers import cold, hot_seed, seed_text
from scribed.tiers.cold import Layout


class _Log:
    def info(self, *_a: object, **_k: object) -> None: ...
    def warning(self, *_a: object, **_k: object) -> None: ...
    def debug(self, *_a: object, **_k: object) -> None: ...


def _entry(eid: str, when: str, decisions: list[str]) -> str:
    return (
        f"### {when}: Work of {eid}\n"
        f"- provenance: id={eid} · agent=juno · session=s-{eid} · source=`x.jsonl` (claude) · lines 1–9\n\n"
        f"#### Goal\nWork of {eid}\n#### Outcome\nDone with {eid}.\n"
        + ("#### Decisions\n" + "".join(f"- {d}\n" for d in decisions) if decisions else "")
    )


def _active(tmp: Path, *entries: str, sid: str) -> str:
    layout = Layout(tmp)
    layout.cold.mkdir(parents=True, exist_ok=True)
    layout.cold_file("juno").write_text(cold.preamble("juno") + "\n" + "\n".join(entries))
    assert hot_seed.reseed(layout, "juno", "claude", sid, _Log())  # type: ignore[arg-type]
    text = layout.hot_file("juno").read_text()
    return text.split("Active decisions:")[1].split("Last actions:")[0]


def test_a_session_that_decided_nothing_shows_the_last_deciding_sessions_decisions(tmp_path: Path) -> None:
    got = _active(
        tmp_path,
        _entry(
            "e-000000000001", "2026-11-23T09:00:00Z", ["use the stdlib csv module for the export, not pandas"]
        ),
        _entry("e-000000000002", "2026-11-24T09:00:00Z", []),
        sid="s-e-000000000002",
    )
    assert "- use the stdlib csv module for the export, not pandas (2026-11-23)" in got, got


def test_only_the_last_deciding_session_and_never_beside_the_current_ones(tmp_path: Path) -> None:
    older = _entry("e-000000000001", "2026-11-20T09:00:00Z", ["Use Postgres for the job queue"])
    newer = _entry("e-000000000002", "2026-11-22T09:00:00Z", ["Move background jobs onto SQS"])
    got = _active(
        tmp_path, older, newer, _entry("e-000000000003", "2026-11-24T09:00:00Z", []), sid="s-e-000000000003"
    )
    assert "- Move background jobs onto SQS (2026-11-22)" in got and "Postgres" not in got, got
    got = _active(tmp_path / "b", older, newer, sid="s-e-000000000002")  # it decided: its own only, undated
    assert got.strip() == "- Move background jobs onto SQS", got


def test_decisions_further_back_than_carry_back_are_not_read(tmp_path: Path) -> None:
    entries = [_entry("e-000000000001", "2026-11-01T09:00:00Z", ["pin numpy to 1.26"])]
    entries += [
        _entry(f"e-00000000001{i}", f"2026-11-0{i + 2}T09:00:00Z", [])
        for i in range(seed_text.CARRY_BACK + 1)
    ]
    got = _active(tmp_path, *entries, sid=f"s-e-00000000001{seed_text.CARRY_BACK}")
    assert "numpy" not in got, got
